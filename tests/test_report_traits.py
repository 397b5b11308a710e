"""What methods declare for the report (Method.report_traits), and that the report itself holds
no method-family knowledge: roles, variants, Info rows and notes come from the hook."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest
from conftest import smoke_profile_params
from test_report import INFO, manifest_3, rec, section, write_inputs

from planarena.methods import REGISTRY, method_class
from planarena.methods.base import ReportTraits
from planarena.report import leaderboard as report
from planarena.report.sections.pool import pool_papers, pool_summary
from planarena.report.sections.pool_reading import reading_notes
from planarena.report.traits import PLAIN, info_rows, method_traits, section_notes

REPORT_SRC = Path(__file__).resolve().parents[1] / "src" / "planarena" / "report"


@pytest.fixture(scope="module")
def traits():
    return method_traits(smoke_profile_params(), ["not_configured"])


def test_hook_gives_roles_and_variants_from_the_params_blocks(traits):
    assert traits["embedplan_untrained"].role == "floor"
    # budget and ablations: tests/test_report_budgets.py
    assert traits["embedplan_mlp"] == ReportTraits(role="model", variant="mlp", notes=traits["embedplan_mlp"].notes,
                                                   floor_group="text encoding", budget=traits["embedplan_mlp"].budget,
                                                   ablations=traits["embedplan_mlp"].ablations)
    # identity floors: one per encoding, each model read against its own; not the paper's floor
    assert traits["embedplan_identity"].role == "floor" and traits["embedplan_identity"].variant == "identity"
    assert traits["wl_identity"].role == "floor" and traits["wl_identity"].floor_group == "WL encoding"
    assert traits["fsf_xgb_delta"].floor_group == "FSF encoding"
    assert traits["embedplan_hyper"].variant == "hyper"
    assert traits["random_walk"].role == "floor"
    assert traits["wl_xgb_delta"].role == "model"
    assert traits["fd_astar_lmcut"] == PLAIN
    assert traits["not_configured"] == PLAIN


def test_info_rows_and_notes_come_from_the_families(traits):
    rows = info_rows(traits)
    # once, not 9 times; the L1 ablation block (wl_xgb_delta_l1) adds its own row; the 14 SATr
    # blocks share two (the family, the PlanGPT baseline); the 12 width-based policy blocks three
    # (the family, Table 5's switches, Table 6's encodings); the 7 DIAS blocks one
    assert [item for item, _ in rows] == ["WL histogram (state-centric models)",
                                          "WL histogram (blocks with `model_params.normalise: l1`)",
                                          "Symmetry-aware transformers", "PlanGPT", "Width-based R-GNN policies",
                                          "AIW-AD ablations (Appendix C, Table 5)",
                                          "Internal / Internal-Delta encodings (Appendix C, Table 6)",
                                          "WL-GOOSE", "DIAS (schema learning)"]
    assert rows[0][1].startswith("raw colour counts (`transition_models.<lstm|xgb>.normalise`;")
    assert rows[1][1].startswith("L1-normalised: the histogram ablation")
    params = smoke_profile_params()
    params["transition_models"]["lstm"]["normalise"] = "l1"
    row = info_rows(method_traits(params))[0]
    assert row[1].startswith("lstm: L1-normalised; xgb: raw colour counts (")
    notes = section_notes(traits, "pool", {"state-centric-transition-models": ["wl_xgb_delta", "fsf_xgb_state"],
                                            "embedplan-latent-transitions": ["embedplan_mlp"]})  # fmt: skip
    assert len(notes) == 2 and notes[0].startswith("EmbedPlan (state, action)")
    assert notes[1].startswith("The state-centric WL/FSF models")
    assert section_notes(traits, "pool", {"classical": ["random_walk"]}) == []


def test_info_section_shows_what_configured_methods_declare(tmp_path):
    layout = write_inputs(tmp_path, [rec("wl", "blocksworld", "validation", "p1", 0)])
    params = {"profile": "smoke", "methods": {"wl": {"method": "state_centric"}}}
    report.run_stage(params, layout, tmp_path / "with")
    info = section((tmp_path / "with" / "detail" / "info.md").read_text(), "Info")
    assert "| WL histogram (state-centric models) | raw colour counts" in info
    report.run_stage({"profile": "smoke", "methods": {"rw": {"method": "random_walk"}}}, layout, tmp_path / "without")
    assert not [p for p in (tmp_path / "without").rglob("*.md") if "WL histogram" in p.read_text()]


def _pool_rec(method, family, protocol, domain, seed, hit5):
    return rec(method, domain, "same domain", "enc", seed, family=family,
               extra={"task": "rank_successors", "protocol": protocol, "hit@5": hit5, "inputs": "state, action"})  # fmt: skip


def test_published_values_follow_the_declared_role_and_variant_not_the_name():
    fam = pool_papers()[0].family
    # names chosen so that no substring of them says floor or variant
    records = [
        _pool_rec(m, f, p, d, s, h)
        for m, f, h in (("net_a", fam, 0.5), ("net_b", fam, 0.4), ("untrained_lookalike", fam, 0.3),
                        ("zero", fam, 0.05), ("other", "another-family", 0.9))
        for p in ("interpolation", "extrapolation", "cross_domain")
        for d in ("blocksworld", "ferry")
        for s in (13, 14)
    ]  # fmt: skip
    traits = {"net_b": ReportTraits(variant="hyper"), "zero": ReportTraits(role="floor")}
    summary = pool_summary(records, traits).set_index(["protocol", "method"])
    llama, mpnet = "published Llama-3.3-70B (Table 4)", "published MPNet (Tables 1, 20)"
    assert summary.loc[("Extrapolation", "net_a"), mpnet] == "26.8"
    assert summary.loc[("Extrapolation", "net_b"), mpnet] == "22.8"  # the HyperNetwork column
    assert summary.loc[("Interpolation", "net_b"), mpnet] == "70.0"
    assert summary.loc[("Extrapolation", "untrained_lookalike"), llama] == "54.6"  # a model
    assert summary.loc[("Extrapolation", "zero"), llama] == "3.9"  # the paper's floor
    assert summary.loc[("Extrapolation", "zero"), mpnet] == "–"
    assert (summary.loc[(slice(None), "other"), [llama, mpnet]] == "–").all().all()  # other family
    assert summary.loc[("Cross-Domain", "net_a"), "Hit@5"] == "50.0 ± 0.0"
    notes = reading_notes(records, traits, pool_papers()[0])
    assert any(n.startswith("- Untrained floor 5.0 % Hit@5") for n in notes)
    assert any("Interpolation 40.0 % vs Extrapolation 40.0 %" in n for n in notes)
    assert reading_notes([r for r in records if r.method == "zero"], traits, pool_papers()[0]) == []


def test_report_code_names_no_family_and_tests_no_method_name():
    families = {method_class(name).family for name in REGISTRY}
    for path in sorted(REPORT_SRC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("planarena.methods"):
                assert node.module in ("planarena.methods", "planarena.methods.base"), (path, node.module)
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("planarena.methods.") for a in node.names), path
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value not in families - {"classical", "unknown"}, (path, node.value)
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) \
                    and isinstance(node.left.value, str):
                # `"untrained" in label` / `"hyper" in r.method`-style tests of names
                right = " ".join(ast.unparse(c) for c in node.comparators)
                assert not any(w in right for w in ("label", "method", "name")), (path, ast.unparse(node))


def test_a_method_block_naming_an_unregistered_method_is_an_error():
    params = copy.deepcopy(smoke_profile_params())
    params["methods"]["bad"] = {"method": "no_such_method"}
    with pytest.raises(KeyError, match="unknown method 'no_such_method'"):
        method_traits(params)


def test_render_leaderboard_with_no_traits_treats_every_method_as_a_model():
    inputs = report.ReportInputs([rec("m", "blocksworld", "validation", "p1", 0)], [], manifest_3())
    pages = report.render_pages(report.analyse(inputs), INFO)
    assert not [p for p, text in pages.items() if "WL histogram" in text]
    assert "| m *(floor)*" not in pages["leaderboard.md"] and "## Detail pages and plots" in pages["leaderboard.md"]


def test_pool_summary_gives_each_model_its_lift_over_the_floor_of_its_group():
    hit5 = {"wl_model": {"blocksworld": 0.6, "ferry": 0.4}, "wl_floor": {"blocksworld": 0.5, "ferry": 0.1},
            "fsf_model": {"blocksworld": 0.3, "ferry": 0.3}}
    records = [_pool_rec(m, "state-centric-transition-models", "extrapolation", d, 13, v)
               for m, by_domain in hit5.items() for d, v in by_domain.items()]
    traits = {"wl_model": ReportTraits(floor_group="WL"), "wl_floor": ReportTraits(role="floor", floor_group="WL"),
              "fsf_model": ReportTraits(floor_group="FSF")}
    summary = pool_summary(records, traits).set_index(["protocol", "method"])
    # (0.6 - 0.5 + 0.4 - 0.1) / 2 = +20 points
    assert summary.loc[("Extrapolation", "wl_model"), "lift over floor (Hit@5)"] == "+20.0 vs `wl_floor`"
    assert summary.loc[("Extrapolation", "fsf_model"), "lift over floor (Hit@5)"] == "–"  # no FSF floor
    assert summary.loc[("Extrapolation", "wl_floor"), "lift over floor (Hit@5)"] == "–"
