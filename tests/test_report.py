"""Tests of the report stage (planarena.report.leaderboard): section order, stage outputs and
their determinism, input errors. The other test_report_*.py modules import the record and
markdown helpers defined here."""

from __future__ import annotations

import json

import pytest

from planarena.config import Layout
from planarena.core.io import write_jsonl
from planarena.core.problemset import ProblemEntry
from planarena.core.records import ResultRecord
from planarena.report import leaderboard as report
from planarena.report.pages import Plot
from planarena.report.records import ReportInputs, declared_domains, declared_splits

INFO = {
    "git_revision": "abc1234",
    "git_dirty": False,
    "params_hash": "0123456789ab",
    "profile": "smoke",
    "suite": "generated",
    "cpu_model": "Test CPU",
    "cpu_count": 2,
    "python": "3.11.0",
    "packages": {"pandas": "1.0"},
}


def entry(domain: str, split: str, problem: str, size: int | None = None) -> ProblemEntry:
    return ProblemEntry(
        domain=domain,
        split=split,
        problem=problem,
        path=f"{domain}/{split}/{problem}.pddl",
        size_param="blocks",
        size=size,
        objects=(size or 0) + 1,
        seed=0,
        origin="test",
    )


def rec(
    method, domain, split, problem, seed, outcome="solved", validated=None, **kw
) -> ResultRecord:
    if validated is None:
        validated = outcome == "solved"
    kw.setdefault("validated_by", "unified-planning" if outcome == "solved" else None)
    kw.setdefault("family", "test-family")
    kw.setdefault("wall_time", 1.0)
    return ResultRecord(
        method=method,
        domain=domain,
        split=split,
        problem=problem,
        seed=seed,
        outcome=outcome,
        validated=validated,
        **kw,
    )


def manifest_3() -> list[ProblemEntry]:
    """blocksworld: 3 validation, 2 extrapolation; gripper: 1 validation, 0 extrapolation."""
    return [
        entry("blocksworld", "validation", "p1", 4),
        entry("blocksworld", "validation", "p2", 5),
        entry("blocksworld", "validation", "p3", 5),
        entry("blocksworld", "extrapolation", "q1", 9),
        entry("blocksworld", "extrapolation", "q2", 10),
        entry("gripper", "validation", "g1", 2),
    ]


def seeds_2_1_3(method="m") -> list[ResultRecord]:
    """Seeds 0, 1, 2 solve 2/3, 1/3, 3/3 of blocksworld/validation."""
    solved = {0: {"p1", "p2"}, 1: {"p1"}, 2: {"p1", "p2", "p3"}}
    return [
        rec(method, "blocksworld", "validation", p, s, "solved" if p in solved[s] else "unsolved")
        for s in (0, 1, 2)
        for p in ("p1", "p2", "p3")
    ]


def section(md: str, title: str) -> str:
    """Text of ``## title`` up to the next ``## `` heading."""
    start = md.index(f"\n## {title}\n")
    end = md.find("\n## ", start + 1)
    return md[start : end if end != -1 else len(md)]


def subsection(md: str, title: str) -> str:
    """Text of ``### title`` up to the next ``## `` or ``### `` heading."""
    start = md.index(f"\n### {title}\n")
    ends = [i for i in (md.find("\n## ", start + 1), md.find("\n### ", start + 1)) if i != -1]
    return md[start : min(ends) if ends else len(md)]


def table_rows(text: str) -> list[list[str]]:
    """Cells of every markdown table row in ``text`` (padding stripped)."""
    return [
        [c.strip() for c in line.strip().strip("|").split(" | ")]
        for line in text.splitlines()
        if line.startswith("|") and not line.startswith("|:") and not line.startswith("|-")
    ]


PLOTS = [Plot("Coverage", "plots/c.png", "coverage.md")]


def render_pages(records, manifest, plan_records=(), **kw) -> dict[str, str]:
    """Every page (front page first) of the records, by path relative to ``reports/``."""
    inputs = ReportInputs(list(records), list(plan_records), list(manifest), **kw)
    return report.render_pages(report.analyse(inputs), INFO, PLOTS)


def render(records, manifest, plan_records=(), **kw) -> str:
    """The detail pages joined in page order (their ``## `` sections: Problems, Coverage, ...)."""
    pages = render_pages(records, manifest, plan_records, **kw)
    return "\n".join(text for path, text in pages.items() if path != "leaderboard.md")


def front(records, manifest, plan_records=(), **kw) -> str:
    """The front page ``leaderboard.md``."""
    return render_pages(records, manifest, plan_records, **kw)["leaderboard.md"]


def test_pages_sections_in_order_and_hitk_not_faked():
    pages = render_pages(seeds_2_1_3(), manifest_3())
    assert list(pages) == ["leaderboard.md", "detail/problems.md", "detail/coverage.md", "detail/per-domain.md",
                           "detail/hitk.md", "detail/pool.md", "detail/schema.md", "detail/ablations.md", "detail/cost.md",
                           "detail/published.md", "detail/info.md"]
    titles = [line[3:] for line in pages["leaderboard.md"].splitlines() if line.startswith("## ")]
    assert titles == ["At a glance", "Problems", "Plan coverage", "Successor ranking", "Methods", "Detail pages and plots"]
    md = render(seeds_2_1_3(), manifest_3())
    titles = [line[3:] for line in md.splitlines() if line.startswith("## ")]
    assert titles == ["Problems", "How to read the headline tables", "Coverage", "Plan quality", "Plots", "Per-domain detail", "Hit@k",
                      "Candidate-pool Hit@k (EmbedPlan protocols)", "Schema learning", "Ablations", "Cost",
                      "Published reference rows", "Info"]
    hitk = section(md, "Hit@k")
    assert "No `rank_successors` method has results yet" in hitk and "|" not in hitk
    assert "No `rank_successors` method has results yet" in pages["leaderboard.md"]
    assert "![Coverage](../plots/c.png)" in pages["detail/coverage.md"]
    assert "[Coverage](plots/c.png)" in pages["leaderboard.md"]
    for path in pages:
        if path != "leaderboard.md":
            assert f"({path})" in pages["leaderboard.md"]  # every detail page is linked


def write_inputs(tmp_path, records, plans=(), manifest=None) -> Layout:
    layout = Layout(root=tmp_path / "data")
    write_jsonl(
        layout.problems / "manifest.jsonl", [e.to_dict() for e in (manifest or manifest_3())]
    )
    by_method: dict[str, list[dict]] = {}
    for r in records:
        by_method.setdefault(r.method, []).append(r.to_dict())
    for m, rows in by_method.items():
        write_jsonl(layout.results / f"{m}.jsonl", rows)
    write_jsonl(layout.plans / "records.jsonl", list(plans))
    return layout


def test_run_stage_writes_outputs_deterministically(tmp_path):
    records = (
        seeds_2_1_3("wl_xgb")
        + seeds_2_1_3("astar")
        + [
            rec(
                "wl_xgb", "blocksworld", "extrapolation", q, s, "solved" if q == "q1" else "timeout"
            )
            for q in ("q1", "q2")
            for s in (0, 1, 2)
        ]
    )
    layout = write_inputs(tmp_path, records)
    params = {
        "profile": "smoke",
        "suite": "generated",
        "suites": {"generated": {"domains": {"blocksworld": {}, "gripper": {}, "logistics": {}}}},
        "evaluation": {"splits": ["validation", "extrapolation"]},
    }
    out = tmp_path / "reports"
    report.run_stage(params, layout, out)
    md1 = (out / "leaderboard.md").read_bytes()
    detail1 = {p.name: p.read_bytes() for p in sorted((out / "detail").glob("*.md"))}
    metrics1 = (out / "metrics.json").read_bytes()
    png1 = (out / "plots" / "coverage_by_size.png").read_bytes()
    data1 = (out / "plots" / "coverage_by_size.json").read_bytes()
    assert png1.startswith(b"\x89PNG\r\n\x1a\n")
    assert b"(plots/coverage_by_size.png)" in md1
    assert b"![coverage vs instance size](../plots/coverage_by_size.png)" in detail1["coverage.md"]
    assert b"`logistics/validation`: no instances" in detail1["problems.md"]
    assert b"`logistics/validation`" not in md1  # an empty split is expected: not in the problems box
    assert {r["method"] for r in json.loads(data1)} == {"wl_xgb", "astar"}
    for name in ("coverage_by_size", "hit5_by_protocol", "coverage_by_domain"):
        assert json.loads((out / "plots" / f"{name}.vl.json").read_text())["data"] == {"values": "<DVC_METRIC_DATA>"}
    # the domain x method heatmap: held-out cells only, mean over seeds of solved / instances
    heat = json.loads((out / "plots" / "coverage_by_domain.json").read_text())
    cell = {(r["method"], r["domain"]): r for r in heat}
    assert cell[("wl_xgb", "blocksworld")]["coverage"] == pytest.approx(3 / 5, abs=1e-4)
    assert cell[("wl_xgb", "blocksworld")]["n"] == 5 and cell[("wl_xgb", "blocksworld")]["kind"] == "model"
    assert (out / "plots" / "coverage_by_domain.png").read_bytes().startswith(b"\x89PNG")
    assert b"![held-out coverage per domain and method (heatmap)](../plots/coverage_by_domain.png)" in detail1["per-domain.md"]

    metrics = json.loads(metrics1)
    # headline numbers only: one fraction per method and problem set (the pooled held-out column);
    # astar skipped extrapolation, so it has no pooled cell on this problem set
    assert metrics == {"coverage": {"held_out": {"wl_xgb": pytest.approx((2 + 1) / 5, abs=1e-4)}}}

    (out / "detail" / "stale.md").write_text("a page of an older layout")
    report.run_stage(params, layout, out)
    assert (out / "leaderboard.md").read_bytes() == md1
    assert {p.name: p.read_bytes() for p in sorted((out / "detail").glob("*.md"))} == detail1
    assert (out / "metrics.json").read_bytes() == metrics1
    assert (out / "plots" / "coverage_by_size.png").read_bytes() == png1
    assert (out / "plots" / "coverage_by_size.json").read_bytes() == data1
    assert json.loads((out / "plots" / "coverage_by_domain.json").read_text()) == heat


def test_run_stage_without_results_still_renders(tmp_path):
    layout = write_inputs(tmp_path, [])
    report.run_stage({"profile": "smoke"}, layout, tmp_path / "reports")
    md = (tmp_path / "reports" / "leaderboard.md").read_text()
    assert "No `plan` results yet" in md
    assert (tmp_path / "reports" / "plots" / "coverage_by_size.png").exists()
    assert json.loads((tmp_path / "reports" / "metrics.json").read_text())["coverage"] == {}


def test_malformed_results_line_names_file_and_line(tmp_path):
    layout = write_inputs(tmp_path, seeds_2_1_3())
    path = layout.results / "m.jsonl"
    lines = path.read_text().splitlines()
    lines.insert(1, "{not json")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"m\.jsonl:2: not valid JSON"):
        report.run_stage({"profile": "smoke"}, layout, tmp_path / "reports")


def test_missing_manifest_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="manifest"):
        report.run_stage({}, Layout(root=tmp_path / "data"), tmp_path / "reports")


def test_declared_domains_and_splits_from_params():
    params = {
        "suite": "satr",
        "suites": {"satr": {"domains": ["gripper", "visitall"]}, "generated": {"domains": {}}},
        "evaluation": {"splits": ["validation", "extrapolation"]},
    }
    assert declared_domains(params) == ("gripper", "visitall")
    assert declared_splits(params) == ("validation", "extrapolation")
    assert declared_domains({}) == () and declared_splits({}) == ()

