"""The verdict rules a reviewer checks first (issue 47): problem units, intervals that never have
zero width, Holm over the `better` atoms of a union only, per-domain verdicts with a conjunctive
claim refuted by one domain, equivalence and k-of-n-seeds atoms, the stratified trend atom, the
power check and the committed records a verdict is recomputed from."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from test_claims import _pool, _write
from test_report import entry, rec

from planarena import stats
from planarena.claims.spec import load_claim
from planarena.claims.verdict import evaluate, holm_family
from planarena.report.records import instance_index

TWO_DOMAINS = """
id: {id}
paper: dias-action-schemas
where: Table 1
claim: A beats B in both domains.
experiment:
  suite: generated
  methods: [a, b]
  seeds: [13]
cost: {{cpu_minutes: 5}}
gate:
  - {{at_least: [a, 0.0], split: test}}
confirm:
  all:
    - {{better: [a, b], split: test, domain: d1}}
    - {{better: [a, b], split: test, domain: d2}}
refute:
  all:
    - {{better: [b, a], split: test, domain: d1}}
    - {{better: [b, a], split: test, domain: d2}}
"""


def _two_domain_records(a1: int, b1: int, a2: int, b2: int, n: int = 12):
    out = []
    for d, (ka, kb) in (("d1", (a1, b1)), ("d2", (a2, b2))):
        for i in range(n):
            out.append(rec("a", d, "test", f"p{i}", 13, "solved" if i < ka else "unsolved"))
            out.append(rec("b", d, "test", f"p{i}", 13, "solved" if i < kb else "unsolved"))
    return out


def _index(records, n=12):
    return instance_index([entry(d, "test", f"p{i}") for d in ("d1", "d2") for i in range(n)], records)


def test_all_zero_multi_seed_cell_has_an_interval_of_nonzero_width():
    iv = stats.proportion_interval(np.zeros((20, 3)), seed=0)
    one = stats.proportion_interval(np.zeros((20, 1)), seed=0)
    assert iv.low == 0 and iv.high > 0.1 and math.isclose(iv.high, one.high)   # 0/60 is no surer than 0/20
    full = stats.proportion_interval(np.ones((20, 3)), seed=0)
    assert full.high == 1 and full.low < 0.9
    gap = stats.paired_difference_nested(np.zeros((10, 3)), np.zeros((10, 1)), seed=0)
    assert gap.value == 0 and gap.low < 0 < gap.high and gap.method == "newcombe"


def test_gap_interval_bootstraps_problems_then_seeds():
    # one seed of three solves nothing: averaging seeds first would hide it, nesting widens the interval
    a = np.ones((10, 3))
    a[:, 2] = 0
    b = np.zeros((10, 1))
    nested = stats.paired_difference_nested(a, b, seed=1)
    flat = stats.paired_difference(a.mean(axis=1), b.mean(axis=1), seed=1)
    assert math.isclose(nested.value, 2 / 3) and flat.high - flat.low < 1e-9 < nested.high - nested.low


def test_conjunctive_claim_is_refuted_when_one_domain_is(tmp_path):
    claim = load_claim(_write(tmp_path, TWO_DOMAINS, "two-domains"))
    # d1: a clearly better (10 vs 0); d2: b clearly better (0 vs 10): the pooled refute `all` fails
    records = _two_domain_records(10, 0, 0, 10)
    v = evaluate(claim, records, _index(records))
    assert v.blocks["refute"] is False and v.domains == {"d1": "confirmed", "d2": "refuted"}
    assert v.verdict == "refuted"
    # both domains confirmed: the claim is
    records = _two_domain_records(10, 0, 10, 0)
    v = evaluate(claim, records, _index(records))
    assert v.domains == {"d1": "confirmed", "d2": "confirmed"} and v.verdict == "confirmed"


def test_holm_runs_over_the_better_atoms_of_a_union_only(tmp_path):
    claim = load_claim(_write(tmp_path, TWO_DOMAINS.replace("refute:\n  all:", "refute:\n  any:"), "two-domains"))
    assert holm_family(claim.confirm) == []                     # all: intersection-union, each at alpha
    assert len(holm_family(claim.refute)) == 2                  # any: a union, Holm over both
    records = _two_domain_records(7, 0, 7, 0)                   # 7 discordant each: p = 2 / 2**7 = 0.0156
    v = evaluate(claim, records, _index(records))
    assert all(r.p is None and r.holds for r in v.results["confirm"])
    # Holm over the two: each two-sided p doubled (the smallest of 2) and monotone; neither holds (b is worse)
    assert all(r.p is not None and math.isclose(r.p, 2 * r.test.p) and not r.holds for r in v.results["refute"])


def test_not_better_atoms_stay_outside_holm(tmp_path):
    text = TWO_DOMAINS.replace("""refute:
  all:
    - {{better: [b, a], split: test, domain: d1}}
    - {{better: [b, a], split: test, domain: d2}}""", """refute:
  any:
    - {{better: [b, a], split: test, domain: d1}}
    - {{not_better: [a, b], split: test, domain: d2}}""")
    claim = load_claim(_write(tmp_path, text, "two-domains"))
    fam = holm_family(claim.refute)
    assert [a.kind for a in fam] == ["better"]
    records = _two_domain_records(7, 0, 7, 0)
    v = evaluate(claim, records, _index(records))
    nb = v.results["refute"][1]
    assert nb.p is None and nb.holds is False and "retired" in nb.describe()


def test_equivalence_atom_is_two_sided(tmp_path):
    text = TWO_DOMAINS.replace("- {{better: [a, b], split: test, domain: d1}}",
                               "- {{equivalent: [a, b, 0.2], split: test, domain: d1}}")
    claim = load_claim(_write(tmp_path, text, "two-domains"))
    n = 60
    same = _two_domain_records(30, 30, 10, 0, n=n)
    v = evaluate(claim, same, _index(same, n))
    assert v.results["confirm"][0].holds
    worse = _two_domain_records(10, 40, 10, 0, n=n)   # a much worse than b: not equivalent either way
    v = evaluate(claim, worse, _index(worse, n))
    assert not v.results["confirm"][0].holds


def test_in_seeds_counts_the_seeds_meeting_the_threshold(tmp_path):
    text = TWO_DOMAINS.replace("seeds: [13]", "seeds: [13, 14, 15]").replace(
        "- {{at_least: [a, 0.0], split: test}}", "- {{at_least: [a, 0.5], split: test, domain: d1, in_seeds: 2}}")
    claim = load_claim(_write(tmp_path, text, "two-domains"))
    records = _two_domain_records(10, 0, 10, 0)
    records += [rec("a", "d1", "test", f"p{i}", s, "solved" if ok else "unsolved")
                for s, ok in ((14, True), (15, False)) for i in range(12)]
    v = evaluate(claim, records, _index(records))
    [g] = v.results["gate"]
    assert g.holds and g.note == "2 of 3 seeds"


def test_duplicated_queries_do_not_create_significance(tmp_path):
    from test_claims import HIT_CLAIM

    claim = load_claim(_write(tmp_path, HIT_CLAIM, "hierarchy"))

    def records(copies: int):
        # three problems; interpolation hits 2 of 3 queries, extrapolation 1 of 3: every query copied
        probs = [f"p{i}" for i in range(3) for _ in range(3 * copies)]
        q = [(j // copies) % 3 for j in range(9 * copies)]
        return [_pool("mlp", "interpolation", "bw", [0 if j < 2 else 50 for j in q], probs),
                _pool("untrained", "interpolation", "bw", [50] * len(q), probs),
                _pool("mlp", "extrapolation", "bw", [0 if j < 1 else 50 for j in q], probs)]

    once, many = (evaluate(claim, records(c), {}) for c in (1, 50))
    a, b = once.results["confirm"][0], many.results["confirm"][0]
    assert a.units == b.units == "problems" and a.test.n == b.test.n == 3
    assert a.test.p == b.test.p and not b.holds


def test_trend_atom_is_stratified_by_domain():
    from planarena.claims import measure
    from planarena.claims.spec import Atom

    rows = []
    # within each domain the ratio falls with size; across domains the level rises with size
    for d, (base, level) in {"x": (5, 1.0), "y": (50, 100.0)}.items():
        for j, objects in enumerate(range(base, base + 6)):
            rows.append({"domain": d, "split": "t", "problem": f"{d}{j}", "objects": objects, "side": "A",
                         "completed": True, "values": {"n": level * (0.5 ** j)}})
            rows.append({"domain": d, "split": "t", "problem": f"{d}{j}", "objects": objects, "side": "B",
                         "completed": True, "values": {"n": 1.0}})
    atom = Atom("ratio_falls_with", ("A", "B"), "", None, None, "n")
    _, test, _, _, note = measure._measure(atom, rows, 0)
    assert test.diff < -0.9 and test.p < 0.05 and test.a_better == 2 and "x: rho -1.00" in note


def test_power_check_separates_the_paper_from_the_floor(tmp_path):
    from planarena.claims import power

    text = TWO_DOMAINS.replace("methods: [a, b]", "methods: [a, b]\n  domains: [d1, d2]") + \
        "power: {{paper: {{a: 0.9, b: 0.1}}, floor: {{a: 0.1}}}}\n"
    claim = load_claim(_write(tmp_path, text, "two-domains"))
    design = power.Design(problems={(d, "test"): [f"p{i}" for i in range(20)] for d in ("d1", "d2")},
                          seeds={"a": [13], "b": [13]})
    rates = power.Rates(claim, design, "paper")
    assert rates.rate("a", "d1", "test") == 0.9 and rates.rate("b", "d2", "test") == 0.1
    floor = power.Rates(claim, design, "floor")
    assert floor.rate("a", "d1", "test") == 0.1
    outcome = {}
    for sc in ("paper", "floor"):
        r = power.Rates(claim, design, sc)
        rng = np.random.default_rng(0)
        from planarena.claims.verdict import evaluate_data
        got = [evaluate_data(claim, s, s, s, 0, intervals=False).verdict
               for s in (power.SimulatedData(design, r, rng, 0.5) for _ in range(30))]
        outcome[sc] = got.count("confirmed") / len(got)
    assert outcome["paper"] >= 0.8 and outcome["floor"] <= 0.05


def test_power_check_of_a_committed_claim_runs_and_fails_a_retired_atom():
    from pathlib import Path

    from planarena.claims import power, run

    claim = load_claim(Path(__file__).resolve().parents[1] / "claims" / "state-centric-sample-efficiency-vs-plangpt.yaml")
    params = run.claim_params(claim, (run.REPO / "params.yaml").read_text())
    rep = power.check(claim, params, draws=4)
    assert not rep.passes and any("retired" in p for p in rep.problems)
    assert rep.table()[0].startswith("Power check (4 simulated runs")


def test_committed_records_round_trip_byte_stable(tmp_path):
    from planarena.claims import provenance as pv

    work = tmp_path / "ws"
    (work / "data" / "results").mkdir(parents=True)
    (work / "data" / "models" / "m" / "d" / "13").mkdir(parents=True)
    (work / "data" / "models" / "m" / "d" / "13" / "facts.json").write_text(json.dumps({"best_step": 7}))
    records = _two_domain_records(3, 1, 2, 2)
    (work / "data" / "results" / "a.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in records))
    index = _index(records)
    out1, out2 = tmp_path / "o1", tmp_path / "o2"
    assert pv.commit_records(work, out1, index) == {"records": len(records), "models": 1}
    pv.commit_records(work, out2, index)
    assert (out1 / "records" / "a.jsonl.gz").read_bytes() == (out2 / "records" / "a.jsonl.gz").read_bytes()
    got, got_index = pv.load_committed(out1)
    assert [r.to_dict() for r in got] == [r.to_dict() for r in records] and got_index == index
    assert json.loads((out1 / "training.json").read_text())["facts"] == {"m/d/13": {"best_step": 7}}


def test_attempts_follow_supersedes(tmp_path):
    from planarena.claims import provenance as pv

    first = load_claim(_write(tmp_path, TWO_DOMAINS, "first"))
    second = load_claim(_write(tmp_path, TWO_DOMAINS + "supersedes: first\n", "second"))
    assert pv.attempts(first, [first, second]) == (1, 2, ["first", "second"])
    assert pv.attempts(second, [first, second]) == (2, 2, ["first", "second"])
    # the old page links forward to its successor, the new one back
    from planarena.claims.page import provenance_lines

    old_page, new_page = "\n".join(provenance_lines(first)), "\n".join(provenance_lines(second))
    # neither has a page in reports/claims: the links go to the claim files
    assert "**Superseded** by [`second`](../../../claims/second.yaml) (not run yet)" in old_page
    assert "Supersedes [`first`](../../../claims/first.yaml)" in new_page
    assert "Supersedes" not in old_page and "Superseded**" not in new_page
    # verdict.json names the successor, so the front page counts each paper claim once
    from planarena.claims.page import provenance_facts

    assert provenance_facts(first)["superseded_by"] == "second" and provenance_facts(second)["superseded_by"] is None


@pytest.mark.parametrize("node, message", [
    ("{{at_least: [a, 0.5], split: test, in_seeds: 0}}", "in_seeds takes a positive integer"),
    ("{{better: [a, b], split: test, in_seeds: 2}}", "in_seeds takes a positive integer"),
    ("{{equivalent: [a, b, 0], split: test}}", "margin must be a fraction"),
])
def test_new_atoms_reject_bad_input_in_one_line(tmp_path, node, message):
    from planarena.config import ConfigError

    text = TWO_DOMAINS.replace("- {{at_least: [a, 0.0], split: test}}", f"- {node}")
    path = _write(tmp_path, text, "two-domains")
    with pytest.raises(ConfigError, match=message) as info:
        load_claim(path)
    assert "\n" not in str(info.value)


def test_claims_report_recomputes_from_committed_records_or_says_not_recomputable(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from planarena.claims import provenance as pv
    from planarena.cli import app

    text = TWO_DOMAINS.replace("[a, b]", "[random_walk, random_walk_novisit]").replace(
        "[b, a]", "[random_walk_novisit, random_walk]").replace("[a, 0.0]", "[random_walk, 0.0]")
    (tmp_path / "claims").mkdir()
    for name in ("kept", "lost"):
        _write(tmp_path / "claims", text, name)
        folder = tmp_path / "reports" / "claims" / name
        folder.mkdir(parents=True)
        (folder / "verdict.json").write_text(json.dumps({"claim": name, "verdict": "confirmed", "cost": {},
                                                         "commit": "abc1234"}))
    records = [rec(m, d, "test", f"p{i}", 13, "solved" if (m == "random_walk" and i < 10) else "unsolved")
               for m in ("random_walk", "random_walk_novisit") for d in ("d1", "d2") for i in range(12)]
    work = tmp_path / "ws"
    (work / "data" / "results").mkdir(parents=True)
    (work / "data" / "results" / "r.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in records))
    pv.commit_records(work, tmp_path / "reports" / "claims" / "kept", _index(records))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLANARENA_CLAIMS_WORK", str(tmp_path / "none"))
    out = CliRunner().invoke(app, ["claims", "report", "--draws", "2"])
    assert out.exit_code == 0, out.output
    assert "claim kept: confirmed" in out.output and "claim lost: not recomputable: records not kept" in out.output
    lost = json.loads((tmp_path / "reports" / "claims" / "lost" / "verdict.json").read_text())
    assert lost["verdict"] == "not recomputable" and lost["previous"]["verdict"] == "confirmed"
    kept = (tmp_path / "reports" / "claims" / "kept" / "claim.md").read_text()
    assert kept.startswith("# Claim `kept`: **confirmed**") and "Per domain: d1 **confirmed**; d2 **confirmed**" in kept
    assert "Power check (2 simulated runs" in kept


def test_claims_report_gives_an_unrun_claim_a_not_run_page_with_what_it_needs(tmp_path, monkeypatch):
    """A registered claim without a run gets a "not run" page (its power table, its conditions and
    the `needs` paragraph of its file), stays "not run" on the next report (not "not recomputable"),
    and the front page's Claims table shows why it has not run."""
    from typer.testing import CliRunner

    from planarena.cli import app
    from planarena.report.sections.claims import load_verdicts, table

    text = TWO_DOMAINS.replace("[a, b]", "[random_walk, random_walk_novisit]").replace(
        "[b, a]", "[random_walk_novisit, random_walk]").replace("[a, 0.0]", "[random_walk, 0.0]")
    (tmp_path / "claims").mkdir()
    _write(tmp_path / "claims", text + "needs: >\n  36 A100-hours: the model at the\n  paper's size.\n", "big")
    _write(tmp_path / "claims", text, "later")
    _write(tmp_path / "claims", text + "supersedes: later\n", "newest")   # registered after "later" ran never
    # a run that started and was stopped: its workspace holds data but no finished run
    (tmp_path / "work" / "later" / "data" / "results").mkdir(parents=True)
    (tmp_path / "work" / "later" / "data" / "results" / "random_walk.jsonl").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("planarena.claims.run.DEFAULT_WORK", tmp_path / "work")
    for _ in range(2):
        out = CliRunner().invoke(app, ["claims", "report", "--draws", "2"])
        assert out.exit_code == 0, out.output
        assert "claim big: not run" in out.output and "claim later: not run" in out.output
    page = (tmp_path / "reports" / "claims" / "big" / "claim.md").read_text()
    assert page.startswith("# Claim `big`: **not run**")
    assert "**Not run here: 36 A100-hours: the model at the paper's size.**" in page
    assert "Power check (2 simulated runs" in page and "- confirm (all of): " in page
    later = (tmp_path / "reports" / "claims" / "later" / "claim.md").read_text()
    assert "**Superseded before it ran** by [`newest`]" in later and "`claims run --all` skips it" in later
    assert "Registered, not run yet" not in later
    rows = table(load_verdicts(tmp_path / "reports" / "claims")).set_index("claim")["verdict"].tolist()
    assert rows == ["**not run**: 36 A100-hours: the model at the paper's size.",
                    "**not run**: superseded before it ran by `newest`", "**not run** yet"]
    listed = CliRunner().invoke(app, ["claims", "list"])
    assert "-> not run (needs: 36 A100-hours: the model at the paper's size.)" in listed.output

def test_power_design_runs_a_deterministic_row_once():
    """The design simulates the seeds a row will run: a state-centric XGBoost row (deterministic,
    `stochastic` decided by its block) runs the first seed only, its LSTM sibling and the walks every
    seed. (The class attribute alone once gave XGBoost three seeds: a power check three seeds
    too optimistic.)"""
    from pathlib import Path

    from planarena.claims import power, run

    claim = load_claim(Path(__file__).resolve().parents[1] / "claims" / "state-centric-delta-fresh-extrapolation.yaml")
    params = run.claim_params(claim, (run.REPO / "params.yaml").read_text())
    seeds = power.design_of(claim, params).seeds
    assert seeds["wl_xgb_delta"] == seeds["wl_xgb_state"] == [21]
    assert seeds["random_walk_novisit"] == [21, 22, 23]


def test_claim_page_shows_each_seeds_kept_checkpoint(tmp_path):
    """The page's training table: per unit (and per decoding strategy when each kept its own) the
    best step, the final training loss and the teacher-forced accuracy / L_pred at the kept step."""
    from planarena.claims.page import training_lines, training_rows

    claim = load_claim(_write(tmp_path, TWO_DOMAINS, "two-domains"))
    facts = {"a/d1/seed13": {"steps_run": 3000, "final_loss": 0.05, "best_step": 600, "selected_with": "own",
                             "best_score": [0.5, -0.5, 0, 0, 0.7, -0.9, 600],
                             "selection": {"greedy": {"best_step": 600, "best_score": [0.5, -0.5, 0, 0, 0.7, -0.9, 600]},
                                           "regrounding": {"best_step": 2800,
                                                           "best_score": [1.0, 0, 0, 0, 0.95, -0.1, 2800]}}},
             "a/d1/seed14": {"untrained": True, "best_step": None},
             "other/d1/seed13": {"best_step": 5, "best_score": [1, 5]}}
    rows = training_rows(claim, facts)
    assert [(r["strategy"], r["best_step"], r["accuracy"], r["validation_loss"]) for r in rows] == \
        [("greedy", 600, 0.7, 0.9), ("regrounding", 2800, 0.95, 0.1)]
    text = "\n".join(training_lines(rows))
    assert "| `a` | d1 | 13 | regrounding | 3000 | 2800 | 0.050 | 0.950 | 0.100 | - |" in text
    # a DQN unit (R-GNN policies): episodes for steps, its selection rule a string
    dqn = {"a/d1/seed15": {"status": "trained", "episodes_run": 60, "best_episode": 40, "best_score": [1.0, -35.0],
                           "selection": "validation coverage, then shorter plans", "diverged_at": None}}
    assert [(r["strategy"], r["steps_run"], r["best_step"], r["accuracy"]) for r in training_rows(claim, dqn)] == \
        [("validation coverage, then shorter plans", 60, 40, None)]


def test_cells_on_instances_generated_for_the_claim_cannot_be_post_hoc(tmp_path):
    """A confirm cell on a split the claim generates fresh (`suites.<suite>.generate`), or a Hit@k
    cell when the claim's own seed generates the pool data, is on instances no earlier report can
    hold: the post-hoc check does not count it, and the page says where the instances came from."""
    from planarena.claims import provenance as pv
    from planarena.claims.page import provenance_lines

    text = """
id: {id}
paper: state-centric-transition-models
where: Table 1
claim: A beats B on fresh instances.
experiment:
  suite: satr
  domains: [blocksworld, visitall]
  methods: [a, b]
  seeds: [13]
  params:
    suites: {{satr: {{generate: {{seed: 99, domains: {{blocksworld: {{sizes: {{extrapolation: [9]}}}}}}}}}}}}
cost: {{cpu_minutes: 5}}
gate:
  - {{at_least: [a, 0.0], split: validation}}
confirm:
  all:
    - {{better: [a, b], split: extrapolation, domain: blocksworld}}
    - {{better: [a, b], split: extrapolation, domain: visitall}}
    - {{better: [a, b], split: extrapolation}}
refute:
  - {{better: [b, a], split: extrapolation}}
"""
    claim = load_claim(_write(tmp_path, text, "fresh"))
    fresh = pv.fresh_data(claim)
    assert fresh == {"splits": {("blocksworld", "extrapolation")}, "hit": False, "seeds": [99]}
    # blocksworld's extrapolation is fresh; visitall's, and both domains together, are not
    assert [(s, d) for _, s, d in pv._cells(claim)] == [("extrapolation", "visitall"), ("extrapolation", None)]
    assert "Test instances generated for this claim (seed 99), which no earlier report used: " \
           "blocksworld/extrapolation." in "\n".join(provenance_lines(claim))
    hit = load_claim(_write(tmp_path, TWO_DOMAINS.replace("methods: [a, b]", "methods: [a, b]\n  params: {{seed: 7}}"),
                            "hit"))
    assert pv.fresh_data(hit) == {"splits": set(), "hit": True, "seeds": [7]}


def test_first_report_is_the_first_committed_decided_verdict(tmp_path, monkeypatch):
    """The first committed ``verdict.json`` that decides (not ``not run``) is the claim's first
    report; a later committed page with another verdict is named as the change."""
    import subprocess

    from planarena.claims import provenance as pv

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@t")
    git("config", "user.name", "t")
    page = tmp_path / "reports" / "claims" / "c" / "verdict.json"
    page.parent.mkdir(parents=True)
    monkeypatch.setattr(pv, "REPO", tmp_path)
    assert pv.first_report("c") is None                       # nothing committed
    for verdict in ("not run", "inconclusive", "inconclusive", "confirmed", "refuted"):
        page.write_text(json.dumps({"verdict": verdict, "n": len(verdict) + page.stat().st_size if page.exists() else 0}))
        git("add", "-A")
        git("commit", "-qm", verdict)
    first = pv.first_report("c")
    log = subprocess.run(["git", "log", "--reverse", "--format=%h %s"], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.split("\n")
    commits = {s: h for h, s in (ln.split(" ", 1) for ln in log if ln)}
    assert (first.verdict, first.changed_in) == ("inconclusive", commits["confirmed"])
    assert first.commit == log[1].split()[0]                   # the first inconclusive, not the "not run" page
