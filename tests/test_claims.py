"""Claim files and verdicts (``planarena.claims``): parsing with one-line errors, and the verdict of
hand-made records: gate first, then confirm / refute, paired tests Holm-corrected per block."""

from __future__ import annotations

import json
import math

import pytest
from test_report import entry, rec

from planarena.claims.spec import load_claim
from planarena.claims.verdict import evaluate
from planarena.config import ConfigError
from planarena.report.records import instance_index

CLAIM = """
id: {id}
paper: state-centric-transition-models
where: Table 1
claim: Delta beats state out of distribution.
experiment:
  suite: generated
  methods: [delta, state, walk]
  seeds: [13]
cost: {{cpu_minutes: 5}}
published: {{delta: 0.9, state: 0.4}}
gate:
  - {{better: [delta, walk], split: validation}}
confirm:
  all:
    - {{better: [delta, state], split: extrapolation}}
refute:
  any:
    - {{not_better: [delta, state], split: extrapolation}}
"""


def _write(tmp_path, text, name="delta-beats-state"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text.format(id=name))
    return path


def _records(delta_x: int, state_x: int, delta_v: int = 10):
    out = []
    for i in range(10):
        out.append(rec("delta", "bw", "validation", f"v{i}", 13, "solved" if i < delta_v else "unsolved"))
        out.append(rec("walk", "bw", "validation", f"v{i}", 13, "unsolved"))
        out.append(rec("delta", "bw", "extrapolation", f"x{i}", 13, "solved" if i < delta_x else "unsolved"))
        out.append(rec("state", "bw", "extrapolation", f"x{i}", 13, "solved" if i < state_x else "unsolved"))
    return out


def _index(records):
    manifest = [entry("bw", s, f"{p}{i}") for s, p in (("validation", "v"), ("extrapolation", "x")) for i in range(10)]
    return instance_index(manifest, records)


def test_claim_file_parses(tmp_path):
    c = load_claim(_write(tmp_path, CLAIM))
    assert c.id == "delta-beats-state" and c.methods == ["delta", "state", "walk"]
    assert [a.label() for a in c.confirm.atoms()] == ["better(delta, state) on all domains/extrapolation"]
    assert len(c.digest) == 12 and c.published == {"delta": 0.9, "state": 0.4}


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("id: {id}", "id: other"), "must equal the file name"),
    (lambda t: t.replace("split: validation", "domain: bw"), "needs a split"),
    (lambda t: t.replace("[delta, walk]", "[delta, nobody]"), "nobody, not in experiment.methods"),
    (lambda t: t.replace("better: [delta, walk]", "between: [delta, walk]"), "exactly one of"),
    (lambda t: t.replace("cost: {{cpu_minutes: 5}}\n", ""), r"missing field\(s\) cost"),
])
def test_malformed_claim_is_one_line_naming_the_file(tmp_path, edit, message):
    path = _write(tmp_path, edit(CLAIM))
    with pytest.raises(ConfigError, match=message) as info:
        load_claim(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_confirmed_when_the_gate_holds_and_the_paired_test_says_better(tmp_path):
    claim = load_claim(_write(tmp_path, CLAIM))
    records = _records(delta_x=9, state_x=1)  # 8 discordant, all for delta: p = 2 / 2**8
    v = evaluate(claim, records, _index(records))
    assert v.verdict == "confirmed" and v.blocks == {"gate": True, "confirm": True, "refute": False}
    [r] = v.results["confirm"]
    # one better atom under `all`: an intersection-union test at alpha, outside Holm (p is None)
    assert (r.test.a_better, r.test.b_better) == (8, 0) and math.isclose(r.test.p, 2 / 2 ** 8) and r.p is None
    assert r.coverage["delta"].value == 0.9 and "holds" in r.describe()
    assert v.to_json()["atoms"]["confirm"][0]["holds"] is True
    # the measured values keep the atom's order (A, B), whatever the names' alphabetical order
    assert [c["method"] for c in v.to_json()["atoms"]["confirm"][0]["coverage"]] == ["delta", "state"]
    gate = v.to_json()["atoms"]["gate"][0]["coverage"]
    assert [c["method"] for c in gate] == ["delta", "walk"]


def test_refuted_when_the_gate_holds_and_state_matches(tmp_path):
    claim = load_claim(_write(tmp_path, CLAIM))
    records = _records(delta_x=3, state_x=3)
    v = evaluate(claim, records, _index(records))
    assert v.verdict == "refuted" and v.blocks["gate"] and not v.blocks["confirm"]


def test_inconclusive_when_the_gate_fails_whatever_the_test_says(tmp_path):
    claim = load_claim(_write(tmp_path, CLAIM))
    records = _records(delta_x=9, state_x=1, delta_v=0)  # the model never beats the walk on validation
    v = evaluate(claim, records, _index(records))
    assert v.verdict == "inconclusive" and not v.blocks["gate"] and v.blocks["confirm"]


def test_at_least_thresholds_and_missing_records(tmp_path):
    text = CLAIM.replace("- {{better: [delta, walk], split: validation}}",
                         "- {{at_least: [delta, 0.5], split: validation}}")
    claim = load_claim(_write(tmp_path, text))
    records = [r for r in _records(9, 1, delta_v=6) if r.method != "state"]  # state never ran
    v = evaluate(claim, records, _index(records))
    assert v.blocks["gate"] is True
    [r] = v.results["confirm"]
    assert r.test.test == "no records" and r.holds is False and v.verdict == "refuted"


def test_seed_atoms_read_one_seed_and_fail_without_its_records(tmp_path):
    text = CLAIM.replace("seeds: [13]", "seeds: [13, 14]").replace(
        "- {{better: [delta, walk], split: validation}}",
        "- {{at_least: [delta, 0.5], split: validation, seed: 13}}\n"
        "  - {{at_least: [delta, 0.5], split: validation, seed: 14}}")
    claim = load_claim(_write(tmp_path, text))
    assert [a.label() for a in claim.gate.atoms()][1] == "at_least(delta, 0.5) on all domains/validation, seed 14"
    records = _records(9, 1, delta_v=6)
    # seed 14: delta solves only v0 on validation; seed 13 solves 6 of 10
    records += [rec("delta", "bw", "validation", f"v{i}", 14, "solved" if i == 0 else "unsolved") for i in range(10)]
    v = evaluate(claim, records, _index(records))
    first, second = v.results["gate"]
    assert first.coverage["delta"].value == 0.6 and first.holds
    assert second.coverage["delta"].value == 0.1 and not second.holds and not v.blocks["gate"]
    # a seed without records never holds, not even an at_most
    text = text.replace("at_least: [delta, 0.5], split: validation, seed: 14", "at_most: [delta, 0.5], split: validation, seed: 15")
    claim = load_claim(_write(tmp_path, text))
    v = evaluate(claim, _records(9, 1, delta_v=6), _index(_records(9, 1, delta_v=6)))
    assert v.results["gate"][1].holds is False


def test_claim_page_reports_the_largest_problem_solved_per_seed(tmp_path):
    from planarena.claims.page import largest_solved, render_page
    from planarena.claims.verdict import Measurements

    claim = load_claim(_write(tmp_path, CLAIM.replace("published: {{delta: 0.9, state: 0.4}}",
                                                      "published_split: extrapolation")))
    # the size is the problem's object count, not the number a file name carries (size)
    records = [rec("delta", "bw", "extrapolation", f"x{i}", 13, "solved" if i < 3 else "unsolved", size=i,
                   objects=10 + i) for i in range(10)]
    records += [rec("state", "bw", "extrapolation", f"x{i}", 13, "unsolved", size=i, objects=10 + i) for i in range(10)]
    rows = largest_solved(claim, Measurements(records, _index(records)))
    assert rows == [{"method": "delta", "domain": "bw", "split": "extrapolation", "largest": {13: 12}, "problems": 10},
                    {"method": "state", "domain": "bw", "split": "extrapolation", "largest": {13: None},
                     "problems": 10}]
    page = render_page(claim, evaluate(claim, records, _index(records)), {}, "abc", [], rows)
    assert "| bw | `delta` | extrapolation | 13: 12 | 10 |" in page and "13: none" in page


def test_seed_of_an_atom_must_be_an_integer(tmp_path):
    path = _write(tmp_path, CLAIM.replace("split: validation}}", "split: validation, seed: all}}"))
    with pytest.raises(ConfigError, match="seed must be an integer") as info:
        load_claim(path)
    assert str(path) in str(info.value)


def test_claim_params_overlay_methods_suite_and_seeds(tmp_path):
    from planarena.claims.run import REPO, claim_params

    text = CLAIM.replace("suite: generated", "suite: satr\n  domains: [blocksworld]").replace(
        "methods: [delta, state, walk]", "methods: [wl_xgb_delta, random_walk]\n  params: {{planners: {{splits: [train]}}}}")
    text = text.replace("[delta, walk]", "[wl_xgb_delta, random_walk]").replace("[delta, state]", "[wl_xgb_delta, random_walk]")
    claim = load_claim(_write(tmp_path, text))
    params = claim_params(claim, (REPO / "params.yaml").read_text())
    # the claim's rows, and the untrained twin of its learned row, named compactly in the workspace's params
    assert list(params["methods"]) == ["wl_xgb_delta", "wl_xgb_delta_untrained", "random_walk"]
    assert params["methods"]["wl_xgb_delta_untrained"] == {"twin_of": "wl_xgb_delta"}
    assert params["suite"] == "satr" and params["suites"]["satr"]["domains"] == ["blocksworld"]
    assert params["planners"]["splits"] == ["train"] and params["evaluation"]["seeds"] == [13]
    assert params["suites"]["satr"]["path"].startswith("/")  # the workspace is elsewhere
    assert params["profiles"] == __import__("yaml").safe_load((REPO / "params.yaml").read_text())["profiles"]
    bad = load_claim(_write(tmp_path, CLAIM.replace("[delta, state, walk]", "[delta, state, walk]"), "other"))
    with pytest.raises(ConfigError, match="not configured"):
        claim_params(bad, (REPO / "params.yaml").read_text())


def test_claim_domains_of_the_generated_suite_keep_their_blocks(tmp_path):
    """The generated suite configures a block per domain: a claim's domains keep those blocks (a
    list in their place broke its generate stage); an unconfigured domain is one line."""
    from planarena.claims.run import REPO, claim_params

    raw = (REPO / "params.yaml").read_text()
    text = CLAIM.replace("suite: generated", "suite: generated\n  domains: [gripper]").replace(
        "methods: [delta, state, walk]", "methods: [wl_xgb_delta, random_walk]")
    text = text.replace("[delta, walk]", "[wl_xgb_delta, random_walk]").replace("[delta, state]", "[wl_xgb_delta, random_walk]")
    params = claim_params(load_claim(_write(tmp_path, text)), raw)
    blocks = __import__("yaml").safe_load(raw)["suites"]["generated"]["domains"]
    assert params["suites"]["generated"]["domains"] == {"gripper": blocks["gripper"]}
    bad = load_claim(_write(tmp_path, text.replace("domains: [gripper]", "domains: [nosuch]"), "other"))
    with pytest.raises(ConfigError, match="nosuch not configured under suites.generated.domains"):
        claim_params(bad, raw)


def test_front_page_claims_table_from_verdict_files(tmp_path):
    from planarena.claims.page import render_page
    from planarena.report.sections import claims as section

    claim = load_claim(_write(tmp_path, CLAIM))
    records = _records(delta_x=9, state_x=1)
    v = evaluate(claim, records, _index(records))
    folder = tmp_path / "reports" / "claims" / claim.id
    folder.mkdir(parents=True)
    (folder / "verdict.json").write_text(__import__("json").dumps(
        {**v.to_json(), "paper": claim.paper, "where": claim.where, "published": claim.published,
         "cost": {"wall_s": 600.0}, "expected_cpu_minutes": 5, "posthoc": ["reports/x (commit abc)"],
         "power": {"simulated": True, "passes": False, "outcome": {"paper": {"confirmed": 0.62},
                                                                  "floor": {"confirmed": 0.01}}}}))
    [row] = section.table(section.load_verdicts(tmp_path / "reports" / "claims")).to_dict("records")
    # one short line: the section, the numbers (no published_check here: the deciding atom's, with
    # n), the verdict with its marks and reason, the power check, the cost
    assert row["verdict"] == "**confirmed**; *post-hoc*: the confirm atom holds"
    assert row["power: paper / floor"] == "0.62 / 0.01 (fails)" and row["cost"] == "~5 CPU min; ran 10 min"
    assert row["published vs measured"] == \
        "better(delta, state) on all domains/extrapolation: 0.90 vs 0.10, p=0.00781, n=10"
    assert row["paper section"] == claim.where
    page = render_page(claim, v, {"wall_s": 600.0, "runs": 1}, "abc1234")
    assert page.startswith("# Claim `delta-beats-state`: **confirmed**") and "code at `abc1234`" in page
    assert "## Gate (all of): holds" in page and "p=0.008" in page


def test_claims_list_shows_cost_and_verdict(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from planarena.cli import app

    folder = tmp_path / "claims"
    folder.mkdir()
    _write(folder, CLAIM)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(app, ["claims", "list"])
    assert out.exit_code == 0 and "delta-beats-state" in out.output and "~5 CPU min" in out.output
    assert "not run" in out.output and "min wall" not in out.output
    # a committed page: its verdict and the wall time its run took beside the estimate
    page = tmp_path / "reports" / "claims" / "delta-beats-state"
    page.mkdir(parents=True)
    (page / "verdict.json").write_text(json.dumps({"verdict": "refuted", "cost": {"wall_s": 1830.0, "runs": 1}}))
    out = CliRunner().invoke(app, ["claims", "list"])
    assert "~5 CPU min (its run took 30 min wall)  -> refuted" in out.output


def test_published_values_are_checked_against_the_measured_interval(tmp_path):
    from planarena.claims.page import published_check
    from planarena.claims.verdict import Measurements

    text = CLAIM.replace("published: {{delta: 0.9, state: 0.4}}",
                         "published_split: extrapolation\npublished: {{bw: {{delta: 90, state: 80}}}}")
    claim = load_claim(_write(tmp_path, text))
    records = _records(delta_x=9, state_x=1)
    checks = {c["method"]: c for c in published_check(claim, Measurements(records, _index(records)))}
    assert checks["delta"]["inside"] is True and checks["delta"]["measured"] == 0.9
    assert checks["state"]["inside"] is False and checks["state"]["published"] == 0.8


def test_a_paper_that_reports_its_best_run_gets_the_best_seed_beside_it(tmp_path):
    """The paper's own protocol (best of N runs on test) is shown apart, labelled, and no condition
    reads it: the pooled interval stays the measured value."""
    from planarena.claims.page import published_check, render_page
    from planarena.claims.verdict import Measurements

    text = CLAIM.replace("published: {{delta: 0.9, state: 0.4}}",
                         "published_split: extrapolation\npublished_protocol: best of 5 runs on test (Section 7)\n"
                         "published: {{bw: {{delta: 90}}}}")
    claim = load_claim(_write(tmp_path, text))
    records = _records(delta_x=3, state_x=1)
    for i in range(10):   # a second seed of delta that solves 8 of 10
        records.append(rec("delta", "bw", "extrapolation", f"x{i}", 14, "solved" if i < 8 else "unsolved"))
    checks = published_check(claim, Measurements(records, _index(records)))
    assert checks[0]["best_seed"] == 0.8 and checks[0]["measured"] == pytest.approx(0.55)
    page = render_page(claim, evaluate(claim, records, _index(records)), {}, "abc", checks)
    assert "| best seed |" in page and "| 0.80 |" in page
    assert "the paper's own protocol (best of 5 runs on test (Section 7))" in page and "no condition reads it" in page
    plain = load_claim(_write(tmp_path, CLAIM.replace("published: {{delta: 0.9, state: 0.4}}",
                                                      "published_split: extrapolation\npublished: {{bw: {{delta: 90}}}}")))
    assert "best seed" not in render_page(plain, evaluate(plain, records, _index(records)), {}, "abc",
                                          published_check(plain, Measurements(records, _index(records))))


def test_a_claim_overlay_wins_over_the_active_profile(tmp_path):
    import yaml

    from planarena.claims.run import REPO, claim_params
    from planarena.config import resolve_profile

    text = CLAIM.replace("methods: [delta, state, walk]",
                         "methods: [delta, state, walk]\n  params: {{profile: paper, planners: {{astar_lmcut: {{time_limit: 61}}}}}}")
    claim = load_claim(_write(tmp_path, text))
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    raw["methods"].update(delta={}, state={}, walk={"method": "random_walk"})
    params = claim_params(claim, yaml.safe_dump(raw))
    # profiles.paper sets this limit (60 s): the claim's value must still be the one in force
    assert raw["profiles"]["paper"]["planners"]["astar_lmcut"]["time_limit"] == 60
    assert params["profile"] == "paper" and resolve_profile(params)["planners"]["astar_lmcut"]["time_limit"] == 61


def test_committed_params_carry_no_path_of_this_machine():
    from planarena.claims.run import REPO, portable_params

    params = {"suites": {"satr": {"path": str(REPO.parent / "shared" / "benchmarks" / "satr")},
                         "own": {"path": "/data/elsewhere"}}}
    out = portable_params(params)
    assert out["suites"]["satr"]["path"] == "../shared/benchmarks/satr"
    assert out["suites"]["own"]["path"] == "/data/elsewhere" and params["suites"]["satr"]["path"].startswith("/")


# --------------------------------------------------------------------------------------------
# Hit@k atoms (candidate-pool protocols) and gap atoms
# --------------------------------------------------------------------------------------------

HIT_CLAIM = """
id: {id}
paper: embedplan-latent-transitions
where: Appendix A.7
claim: Interpolation beats Extrapolation beats Cross-Domain.
experiment:
  methods: [mlp, untrained]
  seeds: [13]
cost: {{cpu_minutes: 5}}
gate:
  - {{better: [mlp, untrained], metric: hit@5, protocol: interpolation}}
confirm:
  all:
    - {{better: [mlp, mlp], metric: hit@5, protocol: [interpolation, extrapolation]}}
    - {{gap_at_most: [mlp, untrained, 0.05], metric: hit@5, protocol: cross_domain}}
refute:
  any:
    - {{gap_at_least: [mlp, untrained, 0.05], metric: hit@5, protocol: cross_domain}}
"""


def _pool(method, protocol, domain, ranks, problems, seed=13, split="same domain"):
    """One pool record: ``ranks`` per query, ``problems`` the problem name of each query."""
    names = sorted(set(problems))
    return rec(method, domain, split, "pool", seed, extra={
        "task": "rank_successors", "protocol": protocol, "ranks": list(ranks), "problems": names,
        "query_problem": [names.index(p) for p in problems]})


def _hit_records(interp_hits: int, extrap_hits: int, cross_mlp: int, cross_untrained: int):
    """Twelve problems p0..p11 of domain bw with 10 queries each per protocol (rank 0 = hit, 50 =
    miss); interpolation: the first ``interp_hits`` queries of each problem hit, extrapolation the
    first ``extrap_hits``; cross-domain (from gr) the first ``cross_*`` of each problem; the untrained
    network never hits under interpolation."""
    probs = [f"p{i}" for i in range(12) for _ in range(10)]
    q = [i % 10 for i in range(120)]
    out = [
        _pool("mlp", "interpolation", "bw", [0 if j < interp_hits else 50 for j in q], probs),
        _pool("untrained", "interpolation", "bw", [50] * 120, probs),
        _pool("mlp", "extrapolation", "bw", [0 if j < extrap_hits else 50 for j in q], probs),
        _pool("mlp", "cross_domain", "bw", [0 if j < cross_mlp else 50 for j in q], probs, split="from gr"),
        _pool("untrained", "cross_domain", "bw", [0 if j < cross_untrained else 50 for j in q], probs,
              split="from gr"),
    ]
    return out


def test_hit_atoms_parse_with_a_protocol_per_side(tmp_path):
    c = load_claim(_write(tmp_path, HIT_CLAIM, "hierarchy"))
    first, gap = c.confirm.atoms()
    assert first.is_hit and first.k == 5 and first.protocols == ("interpolation", "extrapolation")
    assert first.label() == "better(mlp@interpolation, mlp@extrapolation) in Hit@5 on all domains"
    assert gap.kind == "gap_at_most" and gap.threshold == 0.05 and gap.protocols == ("cross_domain",) * 2


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("protocol: interpolation}", "split: interpolation}"), "needs a protocol"),
    (lambda t: t.replace("protocol: interpolation}", "protocol: sideways}"), "unknown protocol sideways"),
    (lambda t: t.replace("metric: hit@5, protocol: interpolation", "metric: hit@3, protocol: interpolation"),
     "metric must be one of"),
    (lambda t: t.replace("[mlp, untrained, 0.05], metric: hit@5, protocol: cross_domain}}\nrefute",
                         "[mlp, untrained], metric: hit@5, protocol: cross_domain}}\nrefute"),
     "two methods and a threshold"),
])
def test_malformed_hit_atom_is_one_line_naming_the_file(tmp_path, edit, message):
    path = _write(tmp_path, edit(HIT_CLAIM), "hierarchy")
    with pytest.raises(ConfigError, match=message) as info:
        load_claim(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_hit_verdict_pairs_problems_across_protocols_and_tests_the_gap(tmp_path):
    claim = load_claim(_write(tmp_path, HIT_CLAIM, "hierarchy"))
    records = _hit_records(interp_hits=9, extrap_hits=4, cross_mlp=0, cross_untrained=0)
    v = evaluate(claim, records, {})
    order, gap = v.results["confirm"]
    # two protocols: the twelve problems are the paired units (each 0.9 vs 0.4)
    assert order.units == "problems" and order.test.n == 12 and order.test.a_better == 12 and order.holds
    assert math.isclose(order.coverage["mlp@interpolation"].value, 0.9)
    assert math.isclose(order.coverage["mlp@extrapolation"].value, 0.4)
    # 0 vs 0 on twelve problems cannot rule out a gap of 0.05: the interval never has zero width
    assert gap.gap is not None and gap.gap.value == 0 and gap.gap.high > 0.05 and not gap.holds
    assert gap.gap.method == "newcombe" and "problems" in gap.describe() and "A - B" in gap.describe()
    assert v.blocks == {"gate": True, "confirm": False, "refute": False} and v.verdict == "inconclusive"
    js = v.to_json()["atoms"]["confirm"][1]
    assert js["units"] == "problems" and js["gap"]["high"] > 0.05


def test_gap_at_least_refutes_when_the_whole_interval_is_above_the_margin(tmp_path):
    claim = load_claim(_write(tmp_path, HIT_CLAIM, "hierarchy"))
    records = _hit_records(interp_hits=9, extrap_hits=4, cross_mlp=5, cross_untrained=0)
    v = evaluate(claim, records, {})
    _, gap = v.results["confirm"]
    assert not gap.holds and gap.gap.low >= 0.05
    assert v.blocks["refute"] and v.verdict == "refuted"


def test_pool_units_keep_the_cross_domain_source():
    """Two sources of one test domain are two query lists, not one overwritten by the other."""
    from planarena.report.sections.ranking import unit_scores

    probs = ["p0"] * 4
    records = [_pool("mlp", "cross_domain", "bw", [0, 0, 0, 0], probs, split="from gr"),
               _pool("mlp", "cross_domain", "bw", [50, 50, 50, 50], probs, split="from fe")]
    units = unit_scores(records, 5)[("mlp", "cross_domain")]
    assert len(units) == 8 and sum(v[13] for v in units.values()) == 4


def test_published_hit_values_are_checked_against_the_measured_interval(tmp_path):
    from planarena.claims.page import published_check
    from planarena.claims.verdict import HitMeasurements, Measurements

    text = HIT_CLAIM + "published_metric: hit@5\npublished: {{extrapolation: {{mlp: 40}}, interpolation: {{mlp: 20}}}}\n"
    claim = load_claim(_write(tmp_path, text, "hierarchy"))
    records = _hit_records(interp_hits=9, extrap_hits=4, cross_mlp=0, cross_untrained=0)
    rows = published_check(claim, Measurements(records, {}), 0, HitMeasurements(records))
    by = {r["split"]: r for r in rows}
    assert by["extrapolation (Hit@5)"]["inside"] and math.isclose(by["extrapolation (Hit@5)"]["measured"], 0.4)
    assert not by["interpolation (Hit@5)"]["inside"]


def test_a_run_records_the_commit_its_workspace_copied_not_the_one_at_its_end(tmp_path, monkeypatch):
    """The code is copied into the workspace when the run starts; a commit made while it runs must
    not be written into its ``cost.json`` (a claim page names the code its numbers came from)."""
    import subprocess

    from planarena.claims import run as claims_run

    heads = iter(["aaaaaaa", "bbbbbbb"])
    monkeypatch.setattr(claims_run, "git_head", lambda: next(heads))
    monkeypatch.setattr(claims_run, "prepare", lambda claim, work, **kw: claims_run.git_head())

    class Done:
        pid = -1   # no process: nothing to give the run's niceness to
        stdout = iter(["Running stage 'x':\n"])

        def wait(self):
            return 0

    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: Done())
    monkeypatch.setattr(claims_run, "stop_group", lambda proc, grace_s: None)   # no real process group
    claim = load_claim(_write(tmp_path, CLAIM))
    claims_run.run(claim, tmp_path, echo=lambda line: None)
    import json
    assert json.loads((tmp_path / "cost.json").read_text())["commit"] == "aaaaaaa"


def test_the_recorded_commit_is_marked_dirty_when_the_copied_code_is_not_committed(monkeypatch):
    import subprocess

    from planarena.claims import workspace

    def fake(cmd, **kw):
        out = "abc1234\n" if "rev-parse" in cmd else " M src/planarena/cli.py\n"
        return subprocess.CompletedProcess(cmd, 0, stdout=out, stderr="")

    monkeypatch.setattr(workspace.subprocess, "run", fake)
    assert workspace.git_head() == "abc1234-dirty"


SCHEMA_CLAIM = """
id: {id}
paper: dias-action-schemas
where: Table 1
claim: Names-only DIAS learns sound and complete schemas.
experiment:
  suite: generated
  methods: [names, true_domain, floor]
  seeds: [13, 14, 15, 16, 17]
cost: {{cpu_minutes: 5}}
gate:
  all:
    - {{at_least: [names, 1.0], metric: trained, split: schema-test}}
    - {{at_least: [true_domain, 1.0], metric: sound_complete, split: schema-test, domain: blocks3}}
    - {{at_most: [floor, 0], metric: sound, split: schema-test, domain: blocks3}}
confirm:
  - {{at_least: [names, 0.8], metric: sound_complete, split: schema-test, domain: blocks3}}
refute:
  - {{at_most: [names, 0.2], metric: sound_complete, split: schema-test, domain: blocks3}}
"""


def _schema_runs(sound_complete: int, diverged: int = 0):
    """5 names-only runs on blocks3 (the first ``sound_complete`` sound and complete, the last
    ``diverged`` diverged), one true-domain and one floor run; plan records that must not count."""
    out = []
    for i, seed in enumerate(range(13, 18)):
        outcome = "diverged" if i >= 5 - diverged else "solved"
        ok = i < sound_complete
        out.append(rec("names", "blocks3", "schema-test", "blocks3", seed, outcome,
                       extra={"task": "learn_schema", "sound": ok, "complete": ok}))
        out.append(rec("names", "blocks3", "schema-test", "p1", seed, "solved"))
    out.append(rec("true_domain", "blocks3", "schema-test", "blocks3", 13, "solved",
                   extra={"task": "learn_schema", "sound": True, "complete": True}))
    out.append(rec("floor", "blocks3", "schema-test", "blocks3", 13, "solved",
                   extra={"task": "learn_schema", "sound": False, "complete": True}))
    return out


@pytest.mark.parametrize("sc,diverged,verdict", [(4, 0, "confirmed"), (5, 0, "confirmed"), (1, 0, "refuted"),
                                                  (3, 0, "inconclusive"), (4, 1, "inconclusive")])
def test_schema_run_atoms_count_sound_and_complete_runs(tmp_path, sc, diverged, verdict):
    """DIAS Table 1's N_sc: the fraction of a method's learn_schema records (one per run) that are
    sound and complete; a diverged run fails the `trained` gate."""
    claim = load_claim(_write(tmp_path, SCHEMA_CLAIM, "dias-names"))
    records = _schema_runs(sc, diverged)
    v = evaluate(claim, records, instance_index([entry("blocks3", "schema-test", "p1")], records), seed=0)
    assert v.verdict == verdict
    confirm = v.results["confirm"][0]
    assert confirm.coverage["names"].k == sc and confirm.coverage["names"].n == 5
    assert f"{sc}/5 runs" in confirm.describe()


def test_schema_run_atom_without_runs_holds_neither_way(tmp_path):
    claim = load_claim(_write(tmp_path, SCHEMA_CLAIM, "dias-names"))
    records = [r for r in _schema_runs(5) if r.method != "floor"]
    v = evaluate(claim, records, instance_index([entry("blocks3", "schema-test", "p1")], records), seed=0)
    assert v.blocks["gate"] is False and v.verdict == "inconclusive"


def test_schema_run_metric_takes_at_least_or_at_most_only(tmp_path):
    bad = SCHEMA_CLAIM.replace("{{at_least: [names, 0.8], metric: sound_complete",
                               "{{better: [names, floor], metric: sound_complete")
    with pytest.raises(ConfigError, match="takes at_least / at_most"):
        load_claim(_write(tmp_path, bad, "dias-names"))


def test_claim_page_lists_schema_runs_with_n_s_n_c_n_sc_and_arities(tmp_path):
    from planarena.claims.page import render_page, schema_run_summary

    claim = load_claim(_write(tmp_path, SCHEMA_CLAIM, "dias-names"))
    records = _schema_runs(2)
    records[0].extra.update(precision=1.0, recall=1.0, arities={"move": 3})
    rows = schema_run_summary(claim, records)
    names = next(r for r in rows if r["method"] == "names")
    assert (names["runs"], names["sound"], names["complete"], names["sound_complete"]) == (5, 2, 2, 2)
    assert names["measured"] == 1 and names["precision"] == 1.0 and names["arities"][13] == {"move": 3}
    v = evaluate(claim, records, instance_index([entry("blocks3", "schema-test", "p1")], records), seed=0)
    page = render_page(claim, v, {}, "abc", schema=rows)
    assert "| blocks3 | `names` | 5 | 2 | 2 | 2 | 1.000 | 1.000 | 1/5 | 13: move/3; 14: none" in page


def test_claims_run_all_runs_each_passing_claim_as_an_executor_unit(tmp_path, monkeypatch):
    """`claims run --all`: every claim file's power check first; a failing claim is skipped (named);
    the others run as units of the executor, cheapest first, and their pages are written by the
    calling process; a unit whose run fails is reported and fails the command, the others still land."""
    from types import SimpleNamespace

    from typer.testing import CliRunner

    from planarena import cli
    from planarena.claims import run as claims_run

    folder = tmp_path / "claims"
    folder.mkdir()
    for name, minutes in (("cheap", 5), ("dear", 50), ("weak", 1), ("broken", 2), ("old", 3)):
        _write(folder, CLAIM.replace("cpu_minutes: 5", f"cpu_minutes: {minutes}")
               + ("supersedes: old\n" if name == "dear" else ""), name)
    monkeypatch.setattr(claims_run, "DEFAULT_WORK", tmp_path / "work")
    passes = lambda c, draws, seed=0: SimpleNamespace(passes=c.id != "weak", problems=["P(confirmed | paper) = 0.10"])  # noqa: E731
    monkeypatch.setattr(cli, "_power", passes)
    ran, pages = [], []

    def fake_run(claim, work, echo=print):
        ran.append(claim.id)
        if claim.id == "broken":
            raise RuntimeError("dvc repro failed: see run.log")
        return 1.0

    monkeypatch.setattr(claims_run, "run", fake_run)
    monkeypatch.setattr(claims_run, "write_page", lambda c, ws, root, power=None, forced=False:
                        pages.append((c.id, ws.name, forced)) or SimpleNamespace(verdict="confirmed"))
    out = CliRunner().invoke(cli.app, ["claims", "run", "--all", "--folder", str(folder), "--jobs", "1"])
    assert out.exit_code == 1, out.output
    assert "claim weak: skipped, fails its power check" in out.output
    assert "claim old: skipped, superseded by dear" in out.output
    assert ran == ["broken", "cheap", "dear"]                 # cheapest first; weak and old never ran
    assert pages == [("cheap", "cheap", False), ("dear", "dear", False)]
    assert "claim broken: run failed: dvc repro failed: see run.log" in out.output
    bad = CliRunner().invoke(cli.app, ["claims", "run", "cheap", "--all", "--folder", str(folder)])
    assert bad.exit_code == 2 and "name one claim id, or --all" in bad.output


def test_stopping_a_claim_run_stops_its_stages_too():
    """A claim's ``dvc repro`` runs in its own process group, and stopping the run stops the group:
    a stage left running (and its workers) held the workspace lock and the core."""
    import subprocess
    import time

    from planarena.core.limits import stop_group

    proc = subprocess.Popen(["bash", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    child = int(proc.stdout.readline())
    stop_group(proc, grace_s=5)
    assert proc.poll() is not None
    for _ in range(50):   # the grandchild, a stage's worker say, is gone too
        try:
            __import__("os").kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the stage's child outlived the stopped run")
