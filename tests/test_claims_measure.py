"""Measurement claims (``planarena.claims.measure``): a claim about a per-problem cost, measured by
a family's function and judged by paired tests on the rows; and the R-GNN family's lookahead-cost
measurement on a tiny IPC-layout suite."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from conftest import TINY

from planarena.claims import measure
from planarena.claims.spec import load_claim
from planarena.config import ConfigError

CLAIM = """
id: {id}
paper: aiw-ad-rgnn-policies
where: Section 3
claim: AIW expands fewer nodes than IW as objects grow.
experiment:
  measure: test_claims_measure:fake_measure
  suite: ipc2023
  methods: [iw, aiw]
  args: {{problems: 12}}
cost: {{cpu_minutes: 1}}
gate:
  - {{completed_at_least: [aiw, 0.9]}}
confirm:
  all:
    - {{lower: [aiw, iw], metric: expanded}}
    - {{ratio_at_most: [aiw, iw, 0.5], metric: expanded}}
    - {{ratio_falls_with: [aiw, iw], metric: expanded}}
refute:
  any:
    - {{lower: [iw, aiw], metric: expanded}}
    - {{ratio_at_least: [aiw, iw, 0.9], metric: expanded}}
"""

CALLS: list = []


def fake_measure(params, sides, args, done):
    """IW expands objects^2 nodes, AIW 2 * objects; IW does not complete on the largest problem."""
    CALLS.append(len(done))
    for i in range(args["problems"]):
        objects = 5 + 5 * i
        for side in sides:
            if ("d", "test", f"p{i}", side) in done:
                continue
            completed = not (side == "iw" and i == args["problems"] - 1)
            value = objects ** 2 if side == "iw" else 2 * objects
            yield {"domain": "d", "split": "test", "problem": f"p{i}", "objects": objects, "side": side,
                   "completed": completed, "values": {"expanded": value} if completed else {"cpu_s": 9.0}}


def _claim(tmp_path, text=CLAIM, name="aiw-cheaper"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text.format(id=name))
    return load_claim(path)


def test_measurement_claim_confirms_from_paired_per_problem_values(tmp_path):
    claim = _claim(tmp_path)
    assert claim.is_measure
    rows = list(fake_measure({}, claim.methods, {"problems": 12}, set()))
    v = measure.evaluate(claim, rows)
    assert v.verdict == "confirmed", [r.describe() for b in v.results.values() for r in b]
    ratio = v.results["confirm"][1].gap
    # 2n / n^2 = 2 / n over the 11 problems both completed (n = 5 .. 55): geometric mean
    expected = math.exp(sum(math.log(2 / (5 + 5 * i)) for i in range(11)) / 11)
    assert ratio.n == 11 and ratio.value == pytest.approx(expected) and ratio.high <= 0.5
    lower = v.results["confirm"][0]
    # one `lower` atom under `all`: an intersection-union test at alpha, outside Holm (p is None)
    assert lower.test.n == 12 and lower.test.b_better == 11 + 1 and lower.p is None and lower.test.p < 0.05
    # the same rows with the sides swapped in the claim: refuted
    swapped = [{**r, "side": {"iw": "aiw", "aiw": "iw"}[r["side"]]} for r in rows]
    v2 = measure.evaluate(claim, swapped)
    assert v2.verdict == "refuted" and v2.blocks["gate"] and not v2.blocks["confirm"]  # 11 of 12 completed
    # a gate of 0.95 fails there: inconclusive whatever the tests say
    strict = _claim(tmp_path, CLAIM.replace("[aiw, 0.9]", "[aiw, 0.95]"), name="aiw-cheaper-strict")
    assert measure.evaluate(strict, swapped).verdict == "inconclusive"


def test_measurement_claim_runs_resumes_and_writes_its_page(tmp_path, monkeypatch):
    from planarena.claims import run as claim_run

    claim = _claim(tmp_path)
    work = tmp_path / "work"
    CALLS.clear()
    monkeypatch.setattr(claim_run, "git_head", lambda: "aaaaaaa")
    claim_run.run(claim, work, echo=lambda line: None)
    first = (work / measure.ROWS).read_text().splitlines()
    assert len(first) == 24 and CALLS == [0]
    assert {json.loads(line)["code"] for line in first} == {"aaaaaaa"}   # each row names its code
    monkeypatch.setattr(claim_run, "git_head", lambda: "bbbbbbb")
    claim_run.run(claim, work, echo=lambda line: None)   # resumes: nothing measured twice
    assert (work / measure.ROWS).read_text().splitlines() == first and CALLS == [0, 24]
    v = claim_run.write_page(claim, work, tmp_path / "reports")
    out = tmp_path / "reports" / claim.id
    assert "code at `aaaaaaa`" in (out / "claim.md").read_text()   # the rows' code, not the last resumption's
    assert v.verdict == "confirmed"
    page = (out / "claim.md").read_text()
    assert "**confirmed**" in page and "## Per problem" in page and "| d | test | p11 | 60 | limit | 120 |" in page
    data = json.loads((out / "verdict.json").read_text())
    assert data["verdict"] == "confirmed" and data["measurements"] == 24
    assert len((out / measure.ROWS).read_text().splitlines()) == 24
    assert json.loads((work / "cost.json").read_text())["runs"] == 2
    # the front page's Claims row shows the ratio, not a coverage gap
    from planarena.report.sections import claims as section

    [row] = section.table(section.load_verdicts(tmp_path / "reports")).to_dict("records")
    assert row["verdict"].startswith("**confirmed**") and "ratio_at_most(aiw, iw, 0.5) in expanded" in row["published vs measured"]
    assert ", ratio 0.0815 [" in row["published vs measured"] and "gap" not in row["published vs measured"]


@pytest.mark.parametrize("edit, message", [
    ("measure: test_claims_measure:fake_measure", "measure: nowhere"),
    ("- {{lower: [aiw, iw], metric: expanded}}", "- {{better: [aiw, iw], split: test}}"),
    ("- {{ratio_at_most: [aiw, iw, 0.5], metric: expanded}}", "- {{ratio_at_most: [aiw, iw], metric: expanded}}"),
    ("- {{lower: [aiw, iw], metric: expanded}}", "- {{lower: [aiw, iw]}}"),
])
def test_malformed_measurement_claim_is_one_line_naming_the_file(tmp_path, edit, message):
    with pytest.raises(ConfigError, match="aiw-cheaper.yaml"):
        _claim(tmp_path, CLAIM.replace(edit, message))


def test_lookahead_cost_measures_each_side_on_fresh_parses(tmp_path):
    """The R-GNN family's measurement: one lookahead per side from the initial state of each
    problem of the named splits (an IPC-layout suite), gzipped problems included; AIW(1) on the
    untyped tiny Blocksworld expands no more than IW(1)."""
    import gzip

    from planarena.methods.rgnn_policies.measure import lookahead_cost, spread

    root = tmp_path / "ipc"
    d = root / "tiny"
    for folder in ("training/easy", "testing/easy", "testing/medium", "testing/hard"):
        (d / folder).mkdir(parents=True)
    shutil.copy(TINY / "domain.pddl", d / "domain.pddl")
    shutil.copy(TINY / "three.pddl", d / "testing" / "easy" / "p01.pddl")
    (d / "testing" / "medium" / "p01.pddl.gz").write_bytes(gzip.compress((TINY / "three.pddl").read_bytes()))
    params = {"suite": "ipc2023", "suites": {"ipc2023": {"path": str(root), "domains": ["tiny"]}}}
    rows = list(lookahead_cost(params, ["iw", "aiw"], {"splits": ["test-easy", "test-medium"], "time_limit": 10},
                               set()))
    assert [(r["split"], r["problem"], r["side"]) for r in rows] == [
        ("test-easy", "p01", "iw"), ("test-easy", "p01", "aiw"), ("test-medium", "p01", "iw"),
        ("test-medium", "p01", "aiw")]
    assert all(r["completed"] and r["objects"] == 3 for r in rows)
    assert rows[0]["values"] == rows[2]["values"] | {"cpu_s": rows[0]["values"]["cpu_s"]}
    assert rows[1]["values"]["expanded"] <= rows[0]["values"]["expanded"]
    done = {("tiny", "test-easy", "p01", "iw")}
    assert len(list(lookahead_cost(params, ["iw", "aiw"], {"splits": ["test-easy"]}, done))) == 1
    with pytest.raises(ValueError, match="test-giant"):
        list(lookahead_cost(params, ["iw"], {"splits": ["test-giant"]}, set()))
    assert spread(list(range(10)), 4) == [0, 3, 6, 9] and spread([1, 2], 5) == [1, 2]
    # subgoals: the tiny problem's goal atoms left in the tree's best state, and whether it gains one
    for r in rows:
        assert r["values"]["goals_left"] >= 0 and r["values"]["subgoal"] in (0, 1)
    assert rows[0]["values"]["subgoal"] == 1 or rows[0]["values"]["goals_left"] == 0
    # the no-lookahead floor: the root alone, no subgoal; `gained` counts the goal atoms past the root's
    floor, iw = list(lookahead_cost(params, ["root", "iw"], {"splits": ["test-easy"]}, set()))
    assert floor["completed"] and floor["values"]["expanded"] == 0 and floor["values"]["gained"] == 1
    assert floor["values"]["subgoal"] == 0
    assert iw["values"]["gained"] - 1 == floor["values"]["goals_left"] - iw["values"]["goals_left"] > 0
    with pytest.raises(ValueError, match="or root"):
        list(lookahead_cost(params, ["iw2"], {"splits": ["test-easy"]}, set()))
    # a second claim leaves out the problems the first measured (its committed rows)
    (tmp_path / "first.jsonl").write_text(json.dumps(rows[0]) + "\n")
    later = list(lookahead_cost(params, ["iw"], {"splits": ["test-easy", "test-medium"],
                                                 "exclude": [str(tmp_path / "first.jsonl")]}, set()))
    assert [(r["split"], r["problem"]) for r in later] == [("test-medium", "p01")]
    with pytest.raises(ValueError, match="no such measurement file"):
        list(lookahead_cost(params, ["iw"], {"exclude": [str(tmp_path / "absent.jsonl")]}, set()))


PAIRS = """
id: {id}
paper: symmetry-aware-transformers
where: Section 6
claim: The contrastive loss gives lower validation losses.
experiment:
  measure: test_claims_measure:fake_measure
  units: seed pairs
  domains: [d]
  methods: [cl, nocl, init]
cost: {{cpu_minutes: 1}}
power:
  units: 12
  paper: {{lower: {{cl: {{nocl: P_PAPER, init: 1.0}}}}}}
  floor: {{lower: {{cl: {{nocl: 0.5, init: 1.0}}}}}}
gate:
  - {{lower_in_most: [cl, init], metric: val_loss}}
confirm:
  - {{lower_in_most: [cl, nocl], metric: val_loss}}
refute:
  - {{lower_in_most: [nocl, cl], metric: val_loss}}
"""


def _pair_rows(lower: int, higher: int, diverged: int = 0) -> list[dict]:
    """Seed pairs: ``cl`` lower on ``lower`` seeds, higher on ``higher``, and ``nocl`` diverged
    (not completed) on ``diverged`` more; the initial weights above both everywhere."""
    rows = []
    for i in range(lower + higher + diverged):
        cl = 1.0 if i < lower or i >= lower + higher else 3.0
        nocl = 2.0
        for side, v, ok in (("cl", cl, True), ("nocl", nocl, i < lower + higher), ("init", 5.0, True)):
            rows.append({"domain": "d", "split": "validation", "problem": f"seed{i}", "objects": 0, "side": side,
                         "completed": ok, "values": {"val_loss": v} if ok else {"steps": 10}})
    return rows


def test_sign_test_over_seed_pairs_counts_directions_and_diverged_runs(tmp_path):
    claim = _claim(tmp_path, PAIRS.replace("P_PAPER", "0.889"), name="cl-lower")
    # 9 of 12 lower: one-sided sign test p = 0.073, not enough
    assert measure.evaluate(claim, _pair_rows(9, 3)).verdict == "inconclusive"
    # 10 of 12 lower (p = 0.019): confirmed; a diverged run without the loss counts as the higher loss
    assert measure.evaluate(claim, _pair_rows(10, 2)).verdict == "confirmed"
    v = measure.evaluate(claim, _pair_rows(8, 2, diverged=2))
    assert v.verdict == "confirmed"
    line = v.results["confirm"][0].describe()
    assert "sign: A lower on 10, higher on 2 of 12 seed pairs" in line and "(one-sided)" in line, line
    # the reverse direction refutes
    assert measure.evaluate(claim, _pair_rows(2, 10)).verdict == "refuted"
    # rows with a curve (a loss every k steps) give the page a mean-curve table and a PNG
    rows = [{**r, "curve": [[0, 5.0], [10, r["values"].get("val_loss", 9.0)]]} for r in _pair_rows(10, 2)]
    lines = measure.curve_lines(claim, rows)
    assert "![curves](curves.png)" in lines and any(l.startswith("| `cl` | 5.000 (5.000-5.000) | 1.333 (1.000-3.000)")
                                                     for l in lines), lines
    measure.write_curves(claim, rows, tmp_path)
    assert (tmp_path / measure.CURVES).stat().st_size > 1000
    assert measure.curve_lines(claim, _pair_rows(10, 2)) == []


def test_measurement_power_check_simulates_the_declared_pair_rates(tmp_path):
    from planarena.claims import measure_power

    rep = measure_power.check(_claim(tmp_path, PAIRS.replace("P_PAPER", "0.889"), name="cl-lower"), draws=200)
    assert rep.simulated and rep.passes, rep.table()
    # the exact binomial values: P(X >= 10 | 12, 0.889) = 0.86, P(X >= 10 | 12, 0.5) = 0.019
    assert abs(rep.p("paper", "confirmed") - 0.86) < 0.07 and rep.p("floor", "confirmed") < 0.06
    # the claim file publishes no number: its "paper" scenario is named as the file's own effect sizes
    assert "| the claim file's `power.paper` rates (no published number to simulate) |" in "\n".join(rep.table())
    weak = measure_power.check(_claim(tmp_path, PAIRS.replace("P_PAPER", "0.7"), name="cl-lower"), draws=200)
    assert not weak.passes and "P(confirmed | paper)" in weak.problems[0]
    # no declared model: not simulated, so `claims run` needs --force
    bare = _claim(tmp_path, PAIRS.replace("P_PAPER", "0.889").replace("  units: 12\n", ""), name="cl-lower")
    assert not measure_power.check(bare, draws=10).simulated


def test_measurement_power_rejects_contradicting_pairs(tmp_path):
    from planarena.claims import measure_power

    text = PAIRS.replace("P_PAPER", "0.889").replace("{{cl: {{nocl: 0.889, init: 1.0}}}}",
                                                   "{{cl: {{nocl: 0.889, init: 0.9}}, nocl: {{init: 0.1}}}}")
    with pytest.raises(ValueError, match="contradict"):
        measure_power.check(_claim(tmp_path, text, name="cl-lower"), draws=10)


def test_measurement_power_models_ratios_that_fall_with_size(tmp_path):
    """The lookahead-cost claim's atoms (lower, ratio_at_most, ratio_falls_with) simulated from a
    declared ratio model: a ratio of about 1/3 that falls with size confirms; no ratio (1, flat)
    never does."""
    from planarena.claims import measure_power

    text = CLAIM.replace("experiment:\n", "experiment:\n  domains: [d1, d2]\n") + """
power:
  units: 12
  paper: {{ratio: {{aiw: {{iw: {{log_mean: -1.1, slope: -0.6, sd: 0.4}}}}}}}}
  floor: {{ratio: {{aiw: {{iw: {{log_mean: 0.0, slope: 0.0, sd: 0.4}}}}}}}}
"""
    claim = _claim(tmp_path, text)
    assert measure_power.cells(claim) == [("d1", ""), ("d2", "")]
    rep = measure_power.check(claim, draws=60)
    assert rep.simulated and rep.passes, rep.table()
    assert rep.p("paper", "confirmed") > 0.9 and rep.p("floor", "confirmed") == 0.0
    # a per-domain value: the ratio is flat in d2 (a predicted null), so the pooled trend weakens
    rows = measure_power.simulated_rows(claim, 12, {"iw": 0.0, "aiw": 0.0}, {}, np.random.default_rng(0),
                                        measure_power._ratios({"aiw": {"iw": {"log_mean": {"d1": -1.0, "*": 0.0},
                                                                               "sd": 0.0}}}, ["iw", "aiw"], "t"))
    by = {(r["domain"], r["problem"], r["side"]): r["values"]["expanded"] for r in rows}
    assert by[("d1", "u0", "aiw")] == pytest.approx(by[("d1", "u0", "iw")] * math.exp(-1.0))
    assert by[("d2", "u0", "aiw")] == pytest.approx(by[("d2", "u0", "iw")])
    with pytest.raises(ValueError, match="unknown key"):
        measure_power._ratios({"aiw": {"iw": {"mean": 1}}}, ["iw", "aiw"], "t")


def test_measurement_power_ratio_models_per_metric(tmp_path):
    """One ratio model per metric: expansions fall, CPU seconds do not (a per-metric null)."""
    from planarena.claims import measure_power

    ratios = measure_power._ratios({"aiw": {"iw": {"expanded": {"log_mean": -1.0, "sd": 0.0},
                                                   "cpu_s": {"log_mean": 0.0, "sd": 0.0}}}}, ["iw", "aiw"], "t")
    assert [(a, b, m) for a, b, m, _ in ratios] == [("aiw", "iw", "expanded"), ("aiw", "iw", "cpu_s")]
    claim = _claim(tmp_path, CLAIM.replace("{{lower: [iw, aiw], metric: expanded}}",
                                           "{{lower: [iw, aiw], metric: cpu_s}}"))
    rows = measure_power.simulated_rows(claim, 4, {"iw": 0.0, "aiw": 0.0}, {}, np.random.default_rng(1), ratios)
    by = {(r["problem"], r["side"]): r["values"] for r in rows}
    assert by[("u0", "aiw")]["expanded"] == pytest.approx(by[("u0", "iw")]["expanded"] * math.exp(-1.0))
    assert by[("u0", "aiw")]["cpu_s"] == pytest.approx(by[("u0", "iw")]["cpu_s"])
