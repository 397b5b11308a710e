"""``planarena compare A B`` and the ablations page (planarena.report.compare;
docs/concepts.md#comparing-two-methods): the discordant problems, the paired tests on hand-computed
cases, seed matching, the scatter files, the CLI's one-line error and the declared ablation pairs on
``detail/ablations.md``."""

from __future__ import annotations

import json
import math

import pytest
from test_report import INFO, entry, rec

from planarena.core.io import write_jsonl
from planarena.methods.base import ReportTraits
from planarena.report import compare as cmp
from planarena.report import leaderboard as report
from planarena.report.markdown import DASH
from planarena.report.records import ReportInputs

PROBLEMS = [f"p{i}" for i in range(1, 9)]


def manifest():
    return [entry("blocksworld", "validation", p, 3 + i) for i, p in enumerate(PROBLEMS)] + [
        entry("blocksworld", "train", "t1", 3), entry("gripper", "validation", "g1", 2)]


def plan(method, problem, seed=13, solved=True, domain="blocksworld", split="validation", length=4, **kw):
    outcome = "solved" if solved else kw.pop("outcome", "timeout")
    return rec(method, domain, split, problem, seed, outcome, plan_length=length if solved else None,
               wall_time=kw.pop("wall_time", 2.0 if solved else 9.0), **kw)


def five_zero():
    """Of the 8 validation problems (one run each) A solves p1..p7, B solves p6 and p7: 5 problems
    only A solves, none only B solves, p8 neither. Plus what must not count: a train problem only A
    solves, and a problem (g1) only A attempted."""
    a = [plan("A", p, solved=p in PROBLEMS[:7]) for p in PROBLEMS]
    b = [plan("B", p, solved=p in ("p6", "p7"), length=6) for p in PROBLEMS]
    a += [plan("A", "t1", split="train"), plan("A", "g1", domain="gripper")]
    b += [plan("B", "t1", split="train", solved=False)]
    return a + b


def test_discordant_table_lists_exactly_the_discordant_problems_and_mcnemar_p():
    c = cmp.compare(five_zero(), "A", "B")
    assert c.n == 8 and c.splits == ("validation",)  # g1 only A attempted; t1 is a train problem
    assert c.seeds_a == c.seeds_b == (13,) and c.matched
    t = c.coverage
    assert (t.test, t.n, t.a_better, t.b_better) == ("mcnemar", 8, 5, 0)
    assert t.p == pytest.approx(2 * 0.5 ** 5)  # McNemar exact: two-sided binomial on 0 of 5 = 0.0625
    table = cmp.discordant_table(c)
    assert table["problem"].tolist() == ["p1", "p2", "p3", "p4", "p5"]
    assert table["A solved"].tolist() == ["yes"] * 5 and table["B solved"].tolist() == ["no"] * 5
    assert table["B outcome"].tolist() == ["timeout"] * 5 and table["B length"].tolist() == [DASH] * 5
    line = cmp.coverage_line(c)
    assert "`A` solves 7, `B` 2" in line and "`A` better on 5, `B` better on 0" in line
    assert "McNemar's exact test, p = 0.0625" in line
    # the train problem comes in only when asked for
    assert cmp.compare(five_zero(), "A", "B", splits=("train", "validation")).coverage.a_better == 6


def test_mcnemar_both_ways_and_no_discordance():
    recs = [plan("A", p, solved=p in ("p1", "p2", "p3")) for p in PROBLEMS[:4]]
    recs += [plan("B", p, solved=p in ("p3", "p4")) for p in PROBLEMS[:4]]
    t = cmp.compare(recs, "A", "B").coverage
    assert (t.a_better, t.b_better) == (2, 1)
    assert t.p == pytest.approx(1.0)  # binomial: P(X <= 1 | 3, 1/2) * 2 = 2 * 4/8 = 1
    same = [plan(m, p) for m in "AB" for p in PROBLEMS[:3]]
    c = cmp.compare(same, "A", "B")
    assert (c.coverage.a_better, c.coverage.b_better, c.coverage.p) == (0, 0, 1.0)
    assert cmp.discordant_table(c).empty
    assert "None: both methods solve the same problems." in cmp.render(c)


def test_one_run_against_three_seeds_compares_solved_fractions():
    recs = [plan("det", p) for p in ("p1", "p2", "p3")]  # deterministic: seed 13 only
    solved = {"p1": {13, 14, 15}, "p2": {13}, "p3": set()}
    recs += [plan("pol", p, seed=s, solved=s in solved[p]) for p in solved for s in (13, 14, 15)]
    c = cmp.compare(recs, "det", "pol")
    assert c.seeds_a == (13,) and c.seeds_b == (13, 14, 15) and not c.matched
    assert c.problems["b_solved"].tolist() == pytest.approx([1.0, 1 / 3, 0.0])
    t = c.coverage
    assert t.test == "sign-flip permutation" and (t.a_better, t.b_better) == (2, 0)
    # exact sign-flip test on d = (2/3, 1): |mean| of all 4 sign patterns >= observed only for ++ and --
    assert t.p == pytest.approx(0.5)
    table = cmp.discordant_table(c)
    assert table["problem"].tolist() == ["p2", "p3"]
    assert table["pol solved"].tolist() == ["1/3", "0/3"] and table["det solved"].tolist() == ["yes", "yes"]
    assert table["pol outcome"].tolist() == ["solved, timeout ×2", "timeout ×3"]


def test_seeds_matched_where_both_ran_them_and_missing_counts_unsolved():
    recs = [plan("A", p, seed=s) for p in ("p1", "p2") for s in (13, 14, 15, 16)]
    recs += [plan("B", p, seed=s, solved=False) for p in ("p1", "p2") for s in (13, 14, 15)]
    recs = [r for r in recs if not (r.method == "B" and r.problem == "p2" and r.seed == 15)]
    c = cmp.compare(recs, "A", "B")
    assert c.matched and c.seeds_a == c.seeds_b == (13, 14, 15)
    assert c.missing == 1 and "1 selected attempts have no record" in cmp.setting_line(c)
    assert c.problems["b_outcomes"].tolist() == ["timeout ×3", "missing, timeout ×2"]


def test_plan_length_wilcoxon_and_largest_differences():
    lengths = {"p1": (4, 6), "p2": (5, 5), "p3": (8, 4), "p4": (3, 4)}
    recs = [plan("A", p, length=la) for p, (la, _) in lengths.items()]
    recs += [plan("B", p, length=lb) for p, (_, lb) in lengths.items()]
    c = cmp.compare(recs, "A", "B")
    t = c.length
    assert (t.test, t.n, t.a_better, t.b_better) == ("wilcoxon", 4, 1, 2)
    assert t.diff == pytest.approx((-2 + 0 + 4 - 1) / 4)
    # exact Wilcoxon on d = (-2, 4, -1) (zero dropped): ranks 2, 3, 1; W+ = 3, W- = 3 -> p = 1
    assert t.p == pytest.approx(1.0)
    diffs = cmp.length_diff_table(c)
    assert diffs["problem"].tolist() == ["p3", "p1", "p4"]  # |4|, |2|, |1|; p2 (equal) left out
    assert diffs["A - B"].tolist() == ["+4", "-2", "-1"]


def test_unknown_method_and_same_method_are_one_line_errors():
    with pytest.raises(ValueError, match=r"no plan records of method 'nope'; methods with plan records: A, B$"):
        cmp.compare(five_zero(), "A", "nope")
    with pytest.raises(ValueError, match="same"):
        cmp.compare(five_zero(), "A", "A")
    with pytest.raises(ValueError, match=r"no plan records of method 'b' \(did you mean 'B'\?\); methods"):
        cmp.compare(five_zero(), "A", "b")


def test_scatter_rows_time_at_limit_and_expansions_where_recorded(tmp_path):
    recs = [plan("A", "p1", extra={"expansions": 10}), plan("A", "p2", solved=False),
            plan("A", "p3", extra={"expansions": 7})]
    recs += [plan("B", "p1", extra={"expansions": 100}, wall_time=0.5), plan("B", "p2", wall_time=3.0),
             plan("B", "p3")]
    c = cmp.compare(recs, "A", "B", time_limit=60)
    rows = cmp.scatter_rows(c)
    time_rows = {r["problem"]: r for r in rows if r["metric"] == "time (s)"}
    assert time_rows["p2"]["a"] == 60 and time_rows["p2"]["solved"] == "B only"  # unsolved drawn at T
    assert time_rows["p1"]["b"] == 0.5
    exp = [r for r in rows if r["metric"] == "expansions"]
    assert [(r["problem"], r["a"], r["b"]) for r in exp] == [("p1", 10, 100)]  # p3: B records none
    assert [p.metric for p in cmp.scatter_panels(c)] == ["plan length", "time (s)", "expansions"]
    # without a given limit, T is the largest time recorded for the pair
    assert cmp.compare(recs, "A", "B").time_limit == 9.0


def test_write_compare_writes_page_png_data_template_byte_stable(tmp_path):
    c = cmp.compare(five_zero(), "A", "B", time_limit=10)
    page = cmp.write_compare(c, tmp_path / "out")
    files = {p.name for p in (tmp_path / "out").iterdir()}
    assert files == {"compare.md", "scatter.png", "scatter.json", "scatter.vl.json"}
    text = page.read_text()
    assert text.startswith("# `A` vs `B`\n") and "## Discordant problems" in text and "](./scatter.png)" in text
    data = json.loads((tmp_path / "out" / "scatter.json").read_text())
    assert {r["metric"] for r in data} == {"plan length", "time (s)"}  # no expansions recorded
    assert len([r for r in data if r["metric"] == "time (s)"]) == 8
    assert "<DVC_METRIC_DATA>" in (tmp_path / "out" / "scatter.vl.json").read_text()
    assert (tmp_path / "out" / "scatter.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    before = {n: (tmp_path / "out" / n).read_bytes() for n in files}
    cmp.write_compare(cmp.compare(five_zero(), "A", "B", time_limit=10), tmp_path / "out")
    assert {n: (tmp_path / "out" / n).read_bytes() for n in files} == before


def test_cli_unknown_method_exits_1_with_one_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from planarena.cli import app

    (tmp_path / "params.yaml").write_text("profile: t\nprofiles: {t: {}}\nevaluation: {time_limit: 5}\nmethods: {}\n")
    write_jsonl(tmp_path / "data" / "results" / "x.jsonl", [r.to_dict() for r in five_zero()])
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["compare", "A", "nope"])
    assert res.exit_code == 1
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert lines == ["error: compare: no plan records of method 'nope'; methods with plan records: A, B"]
    ok = CliRunner().invoke(app, ["compare", "A", "B"])
    assert ok.exit_code == 0, ok.output
    assert "p = 0.0625" in ok.output
    out = tmp_path / "reports" / "compare" / "A-vs-B"
    assert (out / "compare.md").exists() and (out / "scatter.png").exists()
    # T from params: evaluation.time_limit, since neither method has a params block
    assert "T = 5 s (time limit)" in (out / "compare.md").read_text()


def test_ablation_page_lists_declared_pairs_with_records(tmp_path):
    traits = {"A": ReportTraits(ablations=(("B", "delta vs state"), ("C", "no records of C"))),
              "B": ReportTraits(ablations=(("A", "state vs delta"),))}
    assert cmp.ablation_pairs(traits, ["A", "B"]) == [("A", "B", "delta vs state")]  # once; C has none
    inputs = ReportInputs(five_zero(), [], manifest(), traits=traits, time_limits={"A": 5.0, "B": 10.0})
    a = report.write_report(inputs, INFO, tmp_path / "reports")
    page = (tmp_path / "reports" / "detail" / "ablations.md").read_text()
    assert "T = 10 s (time limit)" in page  # the larger of the pair's limits
    assert "| `A` | `B` | delta vs state | 8 " in page
    assert "### `A` vs `B`" in page and "What differs: delta vs state." in page
    assert "McNemar's exact test, p = 0.0625" in page
    assert "`C`" not in page
    assert "](../plots/ablations/A-vs-B/scatter.png)" in page
    pair = tmp_path / "reports" / "plots" / "ablations" / "A-vs-B"
    assert {p.name for p in pair.iterdir()} == {"scatter.png", "scatter.json", "scatter.vl.json"}
    assert len(a.ablations) == 1 and not math.isnan(a.ablations[0].comparison.coverage.p)
    front = (tmp_path / "reports" / "leaderboard.md").read_text()
    assert "(detail/ablations.md)" in front
    # a pair no longer declared loses its plot folder on the next run
    report.write_report(ReportInputs(five_zero(), [], manifest(), traits={}), INFO, tmp_path / "reports")
    assert not pair.exists()
    assert "No declared ablation pair" in (tmp_path / "reports" / "detail" / "ablations.md").read_text()
