"""Intervals and paired tests of the leaderboard (``planarena.stats``) on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planarena import stats

Z2 = 1.959963984540054 ** 2


def test_wilson_hand_computed_including_k_0_and_k_n():
    # k = 0: [0, z^2 / (n + z^2)]; k = n: the mirror
    iv = stats.wilson(0, 10)
    assert iv.value == 0.0 and iv.low == 0.0 and math.isclose(iv.high, Z2 / (10 + Z2), rel_tol=1e-9)
    iv = stats.wilson(10, 10)
    assert iv.value == 1.0 and iv.high == 1.0 and math.isclose(iv.low, 1 - Z2 / (10 + Z2), rel_tol=1e-9)
    # k = 5 of 10: centre 0.5, half-width z sqrt(k(n-k)/n + z^2/4) / (n + z^2)
    half = math.sqrt(Z2) * math.sqrt(2.5 + Z2 / 4) / (10 + Z2)
    iv = stats.wilson(5, 10)
    assert math.isclose(iv.low, 0.5 - half, rel_tol=1e-9) and math.isclose(iv.high, 0.5 + half, rel_tol=1e-9)
    assert (iv.k, iv.n, iv.runs, iv.method) == (5, 10, 1, "wilson")
    assert math.isnan(stats.wilson(0, 0).value)
    with pytest.raises(ValueError, match="outside"):
        stats.wilson(3, 2)


def test_hierarchical_bootstrap_is_seeded_and_brackets_the_mean():
    rng = np.random.default_rng(0)
    values = (rng.random((30, 3)) < 0.4).astype(float)
    a = stats.hierarchical_bootstrap(values, seed=7)
    b = stats.hierarchical_bootstrap(values, seed=7)
    assert a == b and a.low <= a.value <= a.high and (a.n, a.runs, a.k) == (30, 3, None)
    scores = np.random.default_rng(1).random((30, 3))  # continuous: another seed, other ends
    assert stats.hierarchical_bootstrap(scores, seed=8).low != stats.hierarchical_bootstrap(scores, seed=7).low
    # all unsolved / all solved: the bootstrap degenerates, and the interval is Wilson's on the 12
    # problems (0 of 36 attempts is no surer than 0 of 12 problems), never of zero width
    zero = stats.hierarchical_bootstrap(np.zeros((12, 3)), seed=1)
    one = stats.hierarchical_bootstrap(np.ones((12, 3)), seed=1)
    assert (zero.value, zero.low) == (0.0, 0.0) and math.isclose(zero.high, stats.wilson(0, 12).high)
    assert one.high == 1.0 and math.isclose(one.low, stats.wilson(12, 12).low) and zero.method == "wilson-problems"
    # problems vary more than seeds: the interval is wider than resampling seeds alone would give
    rows = np.repeat(np.array([[1.0], [0.0]]), 10, axis=0).repeat(3, axis=1)
    wide = stats.hierarchical_bootstrap(rows, seed=3)
    assert wide.low < 0.4 and wide.high > 0.6
    with pytest.raises(ValueError, match="units, seeds"):
        stats.hierarchical_bootstrap(np.zeros(5), seed=1)


def test_proportion_interval_picks_wilson_for_one_run_and_bootstrap_for_several():
    one = stats.proportion_interval(np.array([[1], [0], [1], [1]]), seed=1)
    assert one.method == "wilson" and one.k == 3 and one.n == 4
    several = stats.proportion_interval(np.array([[1, 0], [0, 0], [1, 1]]), seed=1)
    assert several.method == "bootstrap" and several.runs == 2 and math.isclose(several.value, 0.5)


def test_mcnemar_exact_hand_computed():
    # 0 vs 5 discordant problems: p = 2 * 0.5**5
    a = np.array([[0]] * 5 + [[1]] * 3)
    b = np.array([[1]] * 5 + [[1]] * 3)
    t = stats.paired_coverage(a, b, seed=1)
    assert t.test == "mcnemar" and (t.a_better, t.b_better, t.n) == (0, 5, 8)
    assert math.isclose(t.p, 2 * 0.5 ** 5) and math.isclose(t.diff, -5 / 8)
    # 1 vs 6: p = 2 * (C(7,0) + C(7,1)) / 2**7
    a = np.array([[1]] + [[0]] * 6 + [[0]] * 2)
    b = np.array([[0]] + [[1]] * 6 + [[0]] * 2)
    assert math.isclose(stats.paired_coverage(a, b, seed=1).p, 2 * 8 / 128)
    # no discordant problem: p = 1
    same = stats.paired_coverage(np.ones((4, 1)), np.ones((4, 1)), seed=1)
    assert (same.p, same.a_better, same.b_better) == (1.0, 0, 0)
    with pytest.raises(ValueError, match="same problems"):
        stats.paired_coverage(np.ones((4, 1)), np.ones((3, 1)), seed=1)


def test_sign_flip_permutation_with_seeds_hand_computed():
    # per-problem solved fractions 3 seeds vs 1 run: differences (1, 1, 1, 1/3, 0): four nonzero,
    # all positive; of the 2**4 sign patterns only this one and its mirror are as extreme
    a = np.array([[1, 1, 1], [1, 1, 1], [1, 1, 1], [1, 0, 0], [0, 0, 0]])
    b = np.array([[0], [0], [0], [0], [0]])
    t = stats.paired_coverage(a, b, seed=1)
    assert t.test == "sign-flip permutation" and (t.a_better, t.b_better) == (4, 0)
    assert math.isclose(t.p, 2 / 16)
    assert stats.paired_coverage(a, b, seed=2).p == t.p  # exact: no dependence on the seed
    # one differing problem: its two sign patterns are equally extreme
    one = stats.paired_coverage(np.array([[1, 0], [1, 1]]), np.array([[0], [1]]), seed=1)
    assert (one.a_better, one.b_better, one.p) == (1, 0, 1.0)


def test_wilcoxon_and_holm_hand_computed():
    t = stats.paired_scores([0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [0.1] * 6)
    # all six differences positive: exact two-sided p = 2 / 2**6
    assert t.test == "wilcoxon" and (t.a_better, t.b_better) == (6, 0) and math.isclose(t.p, 2 / 64)
    assert stats.paired_scores([1, 2], [1, 2]).p == 1.0
    # Holm: 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    assert np.allclose(stats.holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    adjusted = stats.holm([0.5, float("nan"), 0.01])
    assert math.isnan(adjusted[1]) and np.allclose([adjusted[0], adjusted[2]], [0.5, 0.02])
    assert stats.holm([0.6, 0.9]) == [1.0, 1.0]


def test_format_interval():
    assert stats.format_interval(stats.wilson(5, 10)) == "[0.24, 0.76]"
    assert stats.format_interval(stats.wilson(0, 0)) == "[n/a]"


def test_stratified_bootstrap_means_over_strata():
    # two domains of different sizes: the value is the mean of the domain means, not of all queries
    a = np.ones((2, 2))
    b = np.zeros((8, 2))
    iv = stats.stratified_bootstrap([a, b], seed=3)
    assert iv.value == 0.5 and (iv.n, iv.runs) == (10, 2) and iv.low == iv.high == 0.5
    mixed = stats.stratified_bootstrap([np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])], seed=3)
    assert mixed.low < mixed.value < mixed.high
    assert stats.stratified_bootstrap([a, b], seed=3) == iv
    with pytest.raises(ValueError, match="same seeds"):
        stats.stratified_bootstrap([np.ones((2, 2)), np.ones((2, 3))], seed=1)


def test_verdict_names_the_floor_and_the_direction():
    up = stats.PairedTest("mcnemar", 10, 8, 0, 0.8, 0.008)
    flat = stats.PairedTest("mcnemar", 10, 1, 1, 0.0, 1.0)
    down = stats.PairedTest("mcnemar", 10, 0, 8, -0.8, 0.008)
    assert stats.verdict([("walk", up, 0.01), ("ident", up, 0.03)]) == "yes (p=0.030)"
    assert stats.verdict([("walk", up, 0.01), ("ident", flat, 1.0)]) == "at floor at this budget: `ident` p=1.00"
    assert stats.verdict([("ident", down, 0.0004)]) == "below `ident` (p<0.001)"
    assert stats.verdict([]) == "–"
    # not above its floors pooled, but above every floor on one domain: named
    by_domain = {"gripper": [("walk", up, 0.02), ("ident", up, 0.04)], "blocks": [("walk", flat, 1.0), ("ident", up, 0.01)]}
    assert stats.verdict([("walk", flat, 0.3), ("ident", up, 0.01)], by_domain) == "on gripper (p=0.040)"
    assert stats.verdict([("walk", flat, 0.3)], {"blocks": [("walk", flat, 1.0)]}) == "at floor at this budget: `walk` p=0.30"
    # below pooled (EmbedPlan's Cross-Domain queries outnumber the rest) yet above on one part: both said
    assert (stats.verdict([("ident", down, 0.0004)], {"Interpolation": [("ident", up, 0.002)]})
            == "on Interpolation (p=0.002); below `ident` pooled (p<0.001)")
    assert stats.verdict([("ident", down, 0.0004)], {"Interpolation": [("ident", flat, 1.0)]}) == "below `ident` (p<0.001)"


def test_monte_carlo_permutation_resolves_small_p_values():
    # 30 problems, all in favour of A with 3 seeds vs 1: past EXACT_LIMIT, yet p must be far below
    # what Holm over a 50-row table needs (2 / 2,000 resamples could not get there)
    a = np.ones((30, 3))
    b = np.zeros((30, 1))
    b[:2] = 1  # two ties
    t = stats.paired_coverage(a, b, seed=1)
    assert t.a_better == 28 and t.p < 0.05 / 50


def test_hit_floor_cell_names_the_protocol_a_row_learns_when_pooled_it_is_below():
    """A row above its floor on 15 Interpolation problems and below it on 100 Cross-Domain problems
    (the problem is the unit): pooled it is below, but the cell names the protocol it learns
    (EmbedPlan's Table 18 pattern)."""
    from test_report import rec
    from planarena.methods.base import ReportTraits
    from planarena.report.sections import ranking

    def pool(method, protocol, ranks):
        problems = 15 if protocol == "interpolation" else 100
        names = [f"p{i}" for i in range(problems)]
        return rec(method, "blocksworld", "test", protocol, 13, outcome="solved",
                   extra={"task": "rank_successors", "protocol": protocol, "ranks": ranks, "problems": names,
                          "query_problem": [i % problems for i in range(len(ranks))]})

    records = [pool("learned", "interpolation", [0] * 30), pool("ident", "interpolation", [9] * 30),
               pool("learned", "cross_domain", [9] * 200), pool("ident", "cross_domain", [0] * 200)]
    traits = {"learned": ReportTraits(floor_group="g"), "ident": ReportTraits(role="floor", floor_group="g")}
    tests = ranking.floor_tests(records, traits)
    cell = ranking.format_hit_floor(tests["learned"])
    assert cell.startswith("on Interpolation (p<0.001); below `ident` pooled (p<0.001)"), cell
    assert set(tests["learned"].by_protocol) == {"Interpolation", "Cross-Domain"}
    # the same row without the Interpolation win reads below, with nothing named
    only_cross = [r for r in records if r.extra["protocol"] == "cross_domain"]
    assert ranking.format_hit_floor(ranking.floor_tests(only_cross, traits)["learned"]) == "below `ident` (p<0.001)"
