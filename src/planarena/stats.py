"""Intervals and paired tests for the leaderboard's headline numbers.

Every headline cell carries its count and a 95 % interval, and "better" means better by a paired
test on the same problems (and seeds). The statistics come from :mod:`scipy.stats`; this module only
chooses which one fits a cell and keeps the resampling seeded, so a report is byte-stable:

* a proportion of one run (coverage of a deterministic planner): the **Wilson score interval**
  (Wilson 1927; ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``);
* a mean over several seeds: a **hierarchical percentile bootstrap**: resample the problems (or
  queries), then the seeds, with replacement (Davison & Hinkley 1997, section 3.8, "two-stage
  sampling"), :data:`RESAMPLES` resamples from a generator seeded by the caller;
* a paired coverage comparison of two methods on the same problems: **McNemar's exact test** when
  each method ran once (the two-sided binomial test on the discordant problems,
  ``scipy.stats.binomtest``); with several seeds, the exact (or, past :data:`EXACT_LIMIT` discordant
  problems, seeded Monte-Carlo with :data:`PERMUTATIONS` patterns) **paired sign-flip permutation test** on the per-problem solved
  fractions (``scipy.stats.permutation_test``, ``permutation_type="samples"``). Problems are the
  unit in both: the seeds of one problem are not independent draws, so pairing (problem, seed)
  units as if they were would overstate significance. For 0/1 data of one seed the two tests are
  the same test;
* a paired comparison of per-query scores (Hit@k, plan quality): the **Wilcoxon signed-rank test**
  (``scipy.stats.wilcoxon``, zero differences dropped, Wilcoxon 1945);
* several comparisons in one table: **Holm's step-down correction** (Holm 1979), which controls the
  family-wise error rate without assuming independence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from scipy import stats

#: Confidence level of every interval in the report.
CONFIDENCE = 0.95
#: Significance level of every paired test (after Holm's correction where a table holds several).
ALPHA = 0.05
#: Bootstrap resamples per interval.
RESAMPLES = 2000
#: Largest number of discordant problems for which the permutation test enumerates every sign
#: pattern (2**EXACT_LIMIT patterns); above it, PERMUTATIONS seeded Monte-Carlo patterns.
EXACT_LIMIT = 16
#: Monte-Carlo sign patterns of the permutation test past EXACT_LIMIT: its smallest p-value is
#: about 2 / PERMUTATIONS, which must stay far below ALPHA after Holm's correction over a table of
#: some 50 tests (2,000 patterns floored every p at 0.001, and Holm made 0.001 x 50 insignificant)
PERMUTATIONS = 200_000

INTERVAL_METHODS = {
    "wilson": "Wilson score interval of k/n (one run)",
    "bootstrap": f"hierarchical percentile bootstrap ({RESAMPLES} resamples: problems, then seeds)",
    "wilson-problems": "Wilson score interval on the problems (k = the sum of each problem's solved fraction over "
                       "its seeds, n = problems), used where the bootstrap degenerates (every draw the same: all "
                       "solved or none): an interval never has zero width when n > 0",
    "newcombe": "Newcombe's hybrid score interval of a difference (each side's problem-level Wilson interval), "
                "used where the bootstrap of a gap degenerates",
}


@dataclass(frozen=True)
class Interval:
    """A point estimate with its ``CONFIDENCE`` interval.

    Attributes:
        value: the estimate (a fraction in [0, 1] for coverage; whatever unit the caller's values
            have otherwise).
        low, high: the interval's ends, same unit; NaN when undefined (no data).
        n: problems (or queries) the estimate rests on.
        runs: seeds averaged.
        k: solved count when the estimate is a proportion of one run (``value == k / n``), else None.
        method: a key of :data:`INTERVAL_METHODS`.
    """

    value: float
    low: float
    high: float
    n: int
    runs: int
    k: int | None
    method: str


def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> Interval:
    """``k`` successes out of ``n`` with the Wilson score interval.

    ``k = 0`` gives ``[0, z^2 / (n + z^2)]``; ``k = n`` its mirror; ``n = 0`` gives NaN for every
    field but the counts.

    Raises:
        ValueError: ``k`` outside ``[0, n]``.
    """
    if not 0 <= k <= n:
        raise ValueError(f"wilson: k={k} outside [0, n={n}]")
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, 1, 0, "wilson")
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return Interval(k / n, float(ci.low), float(ci.high), int(n), 1, int(k), "wilson")


def wilson_fraction(k: float, n: int, confidence: float = CONFIDENCE) -> Interval:
    """The Wilson score interval of ``k`` successes out of ``n`` where ``k`` may be fractional (the sum
    of per-problem solved fractions over seeds): the closed form of Wilson (1927),
    ``(p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``. Equal to :func:`wilson` for an
    integer ``k``. ``method`` is ``"wilson-problems"``; NaN for ``n = 0``.

    Raises:
        ValueError: ``k`` outside ``[0, n]``.
    """
    if not -1e-9 <= k <= n + 1e-9:
        raise ValueError(f"wilson_fraction: k={k} outside [0, n={n}]")
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, 1, None, "wilson-problems")
    z = float(stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0))
    p = min(max(k / n, 0.0), 1.0)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if p == 0 else max(0.0, centre - half)
    high = 1.0 if p == 1 else min(1.0, centre + half)
    return Interval(p, low, high, int(n), 1, None, "wilson-problems")


def _nondegenerate(iv: Interval, values: np.ndarray) -> Interval:
    """``iv`` unless it has zero width over ``values`` (problems, seeds) in [0, 1] (solved, or a
    share such as a problem's Hit@k) with ``n > 0``: then :func:`wilson_fraction` on the problems
    (k = the sum of the problems' means), with ``runs`` kept."""
    if iv.n and not math.isnan(iv.low) and iv.high - iv.low <= 1e-12 and ((values >= 0) & (values <= 1)).all():
        w = wilson_fraction(float(values.mean(axis=1).sum()), values.shape[0])
        return Interval(iv.value, w.low, w.high, iv.n, iv.runs, None, w.method)
    return iv


def hierarchical_bootstrap(
    values: np.ndarray, seed: int, resamples: int = RESAMPLES, confidence: float = CONFIDENCE
) -> Interval:
    """Mean of ``values`` (shape ``(units, seeds)``: problems or queries by seeds) with a two-stage
    percentile bootstrap interval: each resample draws the units with replacement, then the seeds
    with replacement, and takes the mean of the drawn block.

    With one seed this is the ordinary bootstrap over units. ``seed`` seeds numpy's generator, so
    the same values and seed give the same interval. An empty array gives NaN.

    Raises:
        ValueError: ``values`` is not two-dimensional.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"hierarchical_bootstrap: values must be (units, seeds), got shape {values.shape}")
    units, runs = values.shape
    if units == 0 or runs == 0:
        return Interval(math.nan, math.nan, math.nan, units, runs, None, "bootstrap")
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, units, size=(resamples, units))
    cols = rng.integers(0, runs, size=(resamples, runs))
    # mean over the drawn block = mean over drawn units of the mean over drawn seeds
    per_seed = values[rows]  # (resamples, units, runs)
    means = np.take_along_axis(per_seed, cols[:, None, :].repeat(units, axis=1), axis=2).mean(axis=(1, 2))
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return _nondegenerate(Interval(float(values.mean()), float(low), float(high), units, runs, None, "bootstrap"),
                          values)


def stratified_bootstrap(
    strata: Sequence[np.ndarray], seed: int, resamples: int = RESAMPLES, confidence: float = CONFIDENCE
) -> Interval:
    """Mean over strata (e.g. domains) of each stratum's mean, with a two-stage percentile bootstrap:
    each resample draws the seeds with replacement (the same draw for every stratum), then within
    each stratum its units (queries) with replacement.

    ``strata``: one array per stratum, shape ``(units_i, seeds)`` with the same seed count; a
    stratum without units is left out. ``n`` of the result is the total unit count. Seeded like
    :func:`hierarchical_bootstrap`.

    Raises:
        ValueError: an array is not two-dimensional or the seed counts differ.
    """
    strata = [np.asarray(a, dtype=float) for a in strata]
    if any(a.ndim != 2 for a in strata) or len({a.shape[1] for a in strata}) > 1:
        raise ValueError("stratified_bootstrap: each stratum must be (units, seeds) with the same seeds")
    strata = [a for a in strata if a.shape[0]]
    if not strata or strata[0].shape[1] == 0:
        return Interval(math.nan, math.nan, math.nan, 0, 0, None, "bootstrap")
    runs = strata[0].shape[1]
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, runs, size=(resamples, runs))
    means = np.zeros(resamples)
    for a in strata:
        rows = rng.integers(0, a.shape[0], size=(resamples, a.shape[0]))
        # mean over the drawn block = mean over drawn units of the per-unit mean over drawn seeds
        seed_mean = a[:, cols].mean(axis=2)  # (units, resamples): each unit under each seed draw
        means += np.take_along_axis(seed_mean.T, rows, axis=1).mean(axis=1)
    means /= len(strata)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    value = float(np.mean([a.mean() for a in strata]))
    return Interval(value, float(low), float(high), sum(a.shape[0] for a in strata), runs, None, "bootstrap")


def proportion_interval(solved: np.ndarray, seed: int) -> Interval:
    """The interval of a coverage cell from its solved matrix (shape ``(problems, seeds)``, 0/1):
    Wilson for one run, the hierarchical bootstrap for several (:data:`INTERVAL_METHODS`), Wilson on
    the problems where the bootstrap degenerates (all solved or none: never a zero-width interval)."""
    solved = np.asarray(solved, dtype=float)
    if solved.ndim != 2:
        raise ValueError(f"proportion_interval: solved must be (problems, seeds), got shape {solved.shape}")
    if solved.shape[1] == 1:
        return wilson(int(solved.sum()), solved.shape[0])
    return hierarchical_bootstrap(solved, seed)


@dataclass(frozen=True)
class PairedTest:
    """A paired comparison of method A against method B on the same units.

    Attributes:
        test: ``"mcnemar"``, ``"sign-flip permutation"`` or ``"wilcoxon"``.
        n: paired units (problems or queries).
        a_better, b_better: units where A scored higher, where B scored higher (the discordant
            problems of McNemar's test).
        diff: mean of A - B over the units.
        p: two-sided p-value (1.0 when no unit differs).
    """

    test: str
    n: int
    a_better: int
    b_better: int
    diff: float
    p: float


def paired_coverage(a: np.ndarray, b: np.ndarray, seed: int) -> PairedTest:
    """Paired test of two methods' coverage on the same problems.

    ``a`` and ``b``: solved matrices of shape ``(problems, seeds_a)`` and ``(problems, seeds_b)``
    (0/1), rows in the same problem order; the seed counts may differ (a deterministic planner
    against a learned policy of three seeds). Each problem's solved fraction over its seeds is
    compared. One seed each: McNemar's exact test; otherwise the paired sign-flip permutation test
    of the mean difference (exact up to :data:`EXACT_LIMIT` differing problems, else seeded
    Monte-Carlo with :data:`RESAMPLES` patterns).

    Raises:
        ValueError: the problem counts differ or a matrix is not two-dimensional.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0]:
        raise ValueError(f"paired_coverage: matrices must be (problems, seeds) over the same problems, "
                         f"got {a.shape} and {b.shape}")
    d = a.mean(axis=1) - b.mean(axis=1)
    n = len(d)
    a_better, b_better = int((d > 0).sum()), int((d < 0).sum())
    diff = float(d.mean()) if n else math.nan
    if a_better + b_better == 0:
        test = "mcnemar" if a.shape[1] == b.shape[1] == 1 else "sign-flip permutation"
        return PairedTest(test, n, 0, 0, diff, 1.0)
    if a.shape[1] == 1 and b.shape[1] == 1:
        p = stats.binomtest(min(a_better, b_better), a_better + b_better, 0.5).pvalue
        return PairedTest("mcnemar", n, a_better, b_better, diff, float(min(1.0, p)))
    nonzero = d[d != 0]
    if len(nonzero) == 1:  # two sign patterns, both as extreme: p = 1 (scipy needs two observations)
        return PairedTest("sign-flip permutation", n, a_better, b_better, diff, 1.0)
    res = stats.permutation_test(
        (nonzero,), np.mean, permutation_type="samples", alternative="two-sided",
        n_resamples=np.inf if len(nonzero) <= EXACT_LIMIT else PERMUTATIONS,
        rng=np.random.default_rng(seed),
    )
    return PairedTest("sign-flip permutation", n, a_better, b_better, diff, float(min(1.0, res.pvalue)))


def _paired_units(a: Sequence[float], b: Sequence[float], who: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``a``, ``b`` as float arrays and their differences ``a - b``; ValueError naming ``who`` when
    the lengths differ."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"{who}: {a.shape} vs {b.shape} units")
    return a, b, a - b


def paired_scores(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """Wilcoxon signed-rank test of two methods' per-unit scores (Hit@k per query, plan quality
    per problem) on the same units, zero differences dropped (``zero_method="wilcox"``); exact
    distribution where scipy uses it (small n without ties).

    Raises:
        ValueError: ``a`` and ``b`` differ in length.
    """
    a, b, d = _paired_units(a, b, "paired_scores")
    n = len(d)
    a_better, b_better = int((d > 0).sum()), int((d < 0).sum())
    diff = float(d.mean()) if n else math.nan
    if a_better + b_better == 0:
        return PairedTest("wilcoxon", n, 0, 0, diff, 1.0)
    p = stats.wilcoxon(a, b, zero_method="wilcox").pvalue
    return PairedTest("wilcoxon", n, a_better, b_better, diff, float(p))


def paired_difference(a: Sequence[float], b: Sequence[float], seed: int, resamples: int = RESAMPLES,
                      confidence: float = CONFIDENCE) -> Interval:
    """Mean of the paired differences ``a - b`` over units (queries, problems or domains) with a
    percentile bootstrap interval over the units (``resamples`` draws, seeded); NaN without units.
    Used to test a gap against a margin (equivalence: the whole interval inside it).

    Raises:
        ValueError: ``a`` and ``b`` differ in length.
    """
    _, _, d = _paired_units(a, b, "paired_difference")
    if d.size == 0:
        return Interval(math.nan, math.nan, math.nan, 0, 1, None, "bootstrap")
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(resamples, d.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Interval(float(d.mean()), float(low), float(high), int(d.size), 1, None, "bootstrap")


def paired_difference_nested(a: np.ndarray, b: np.ndarray, seed: int, resamples: int = RESAMPLES,
                             confidence: float = CONFIDENCE) -> Interval:
    """Mean over problems of A's minus B's solved fraction, with a two-stage percentile bootstrap:
    each resample draws the problems with replacement, then each side's seeds with replacement
    (seeds nested in problems; Davison & Hinkley 1997, section 3.8).

    ``a``, ``b``: shape ``(problems, seeds_a)`` and ``(problems, seeds_b)``, the same problems in
    the same order; values in [0, 1] (solved) or any score. Where every draw gives the same
    difference (e.g. 0 vs 0) and ``n > 0``, the interval is Newcombe's hybrid score interval from
    each side's :func:`wilson_fraction` on the problems (method ``"newcombe"``): never zero width.
    NaN without problems. ``runs`` of the result is ``min(seeds_a, seeds_b)``.

    Raises:
        ValueError: shapes that are not two-dimensional over the same problems.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0]:
        raise ValueError(f"paired_difference_nested: matrices must be (problems, seeds) over the same problems, "
                         f"got {a.shape} and {b.shape}")
    n = a.shape[0]
    if n == 0 or a.shape[1] == 0 or b.shape[1] == 0:
        return Interval(math.nan, math.nan, math.nan, n, 0, None, "bootstrap")
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n, size=(resamples, n))
    ca = rng.integers(0, a.shape[1], size=(resamples, a.shape[1]))
    cb = rng.integers(0, b.shape[1], size=(resamples, b.shape[1]))
    # each problem's mean over each resample's seed draw: (resamples, problems)
    ma = a[:, ca].mean(axis=2).T
    mb = b[:, cb].mean(axis=2).T
    d = np.take_along_axis(ma - mb, rows, axis=1).mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(d, [tail, 1.0 - tail])
    value = float(a.mean(axis=1).mean() - b.mean(axis=1).mean())
    runs = min(a.shape[1], b.shape[1])
    if high - low > 1e-12:
        return Interval(value, float(low), float(high), n, runs, None, "bootstrap")
    wa = wilson_fraction(float(np.clip(a.mean(axis=1), 0, 1).sum()), n, confidence)
    wb = wilson_fraction(float(np.clip(b.mean(axis=1), 0, 1).sum()), n, confidence)
    lo = value - math.sqrt((wa.value - wa.low) ** 2 + (wb.high - wb.value) ** 2)
    hi = value + math.sqrt((wa.high - wa.value) ** 2 + (wb.value - wb.low) ** 2)
    return Interval(value, lo, hi, n, runs, None, "newcombe")


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), in the input order.

    Sorted ascending, the i-th smallest (0-based) of m is multiplied by ``m - i``, made monotone
    by a running maximum, and capped at 1. NaN entries are left NaN and do not count in ``m``.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    order = ok[np.argsort(p[ok], kind="stable")]
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out.tolist()


def format_p(p: float) -> str:
    """A p-value as the tables print it: ``p<0.001``, ``p=0.049`` (three decimals below 0.1, so
    that 0.049 and 0.051 read apart), else ``p=0.41``."""
    if p < 0.001:
        return "p<0.001"
    return f"p={p:.3f}" if p < 0.1 else f"p={p:.2f}"


def _above_all(tests: Sequence[tuple[str, PairedTest, float]]) -> bool:
    return bool(tests) and all(t.diff > 0 and p < ALPHA for _, t, p in tests)


def verdict(tests: Sequence[tuple[str, PairedTest, float]],
            by_domain: Mapping[str, Sequence[tuple[str, PairedTest, float]]] | None = None) -> str:
    """The *above floor* cell from ``(floor, test, Holm-adjusted p)`` of one row against each of
    its floors on the pooled problems, and optionally the same per domain (``by_domain``, Holm over
    its own family): ``yes (p=...)`` when it is significantly above every floor pooled (the largest
    adjusted p); else ``on d1, d2 (p=...)`` naming the domains where it is above every floor (with
    ``; below `floor` pooled (p=...)`` when pooled it is significantly below one); else
    ``below `floor` (p=...)``; else ``at floor at this budget: `floor` p=...`` naming the floor it is
    least clearly above; ``"–"`` without tests."""
    if not tests:
        return "–"
    if _above_all(tests):
        return f"yes ({format_p(max(p for _, _, p in tests))})"
    below = [(f, p) for f, t, p in tests if t.diff < 0 and p < ALPHA]
    worst = min(below, key=lambda x: x[1]) if below else None
    wins = {d: max(p for _, _, p in ts) for d, ts in sorted((by_domain or {}).items()) if _above_all(ts)}
    if wins:
        pooled = f"; below `{worst[0]}` pooled ({format_p(worst[1])})" if worst else ""
        return f"on {', '.join(wins)} ({format_p(max(wins.values()))}){pooled}"
    if worst:
        return f"below `{worst[0]}` ({format_p(worst[1])})"
    f, _, p = max(tests, key=lambda x: (not (x[1].diff > 0), x[2]))
    return f"at floor at this budget: `{f}` {format_p(p)}"


def format_interval(iv: Interval, spec: str = ".2f", scale: float = 1.0) -> str:
    """``"[0.41, 0.73]"`` (values times ``scale``); ``"[n/a]"`` when undefined."""
    if math.isnan(iv.low):
        return "[n/a]"
    return f"[{iv.low * scale:{spec}}, {iv.high * scale:{spec}}]"


__all__ = [
    "ALPHA", "CONFIDENCE", "EXACT_LIMIT", "PERMUTATIONS", "INTERVAL_METHODS", "RESAMPLES", "Interval", "PairedTest",
    "format_interval", "format_p", "hierarchical_bootstrap", "holm", "stratified_bootstrap", "paired_coverage",
    "paired_difference", "paired_difference_nested", "paired_scores", "wilson_fraction",
    "proportion_interval", "verdict", "wilson",
]
