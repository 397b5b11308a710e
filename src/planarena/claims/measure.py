"""Measurement claims: a claim about a cost or size the paper states (e.g. "AIW(1) expands far fewer
nodes than IW(1) as objects grow"), measured per problem for each side, not by a pipeline run.

The claim file's ``experiment.measure`` names a ``module:function`` of the family that contributes
the measurement (shared code knows no family): ``function(params, sides, args, done)`` yields one
row per (problem, side), ``{"domain", "split", "problem", "objects", "side", "completed", "values":
{metric: number}}``, skipping the ``(domain, split, problem, side)`` keys of ``done``; ``params``
are the project's params with the claim's overlay (:func:`planarena.claims.run.claim_params`),
``sides`` the claim's ``experiment.methods``, ``args`` its ``experiment.args``. The rows go to
``<workspace>/measurements.jsonl`` as they come (a rerun resumes) and beside the verdict
(``reports/claims/<id>/measurements.jsonl``: the page regenerates from it). ``experiment.units``
names what a row's ``problem`` is when it is not a problem (e.g. ``seed pairs``).

Atoms (:data:`planarena.claims.spec.MEASURE_ATOMS`), over the problems both sides measured (a side
that did not complete within its limit counts as larger than any completed value):

* ``lower: [A, B]``: A's metric is lower than B's, Wilcoxon signed-rank test on log values (ties
  dropped; not completed = +inf, so it ranks largest), Holm-corrected over the block's ``lower``
  atoms at the claim's alpha;
* ``lower_in_most: [A, B]``: A's metric is lower than B's on more units than chance: the exact
  one-sided sign test (binomial, p = 1/2, ties dropped; not completed = +inf, so a diverged run
  counts as the higher value), in the same Holm family as ``lower``. For paired runs whose
  magnitudes do not compare across units (e.g. seeds trained with and without a loss term,
  SATr Table E.2): only the direction of each pair counts;
* ``ratio_at_most: [A, B, x]`` / ``ratio_at_least``: the geometric mean of A / B over the problems
  both completed, with a percentile bootstrap 95 % interval over those problems; holds when the
  whole interval is at or below / at or above x;
* ``ratio_falls_with: [A, B]``: the ratio falls as problems grow, **within domains**: per domain
  where ``objects`` varies (at least 3 problems both completed, 2 distinct sizes), Spearman's rank
  correlation between ``objects`` and log(A / B) with its one-sided p-value; the domains are
  combined by Stouffer's weighted Z (weights sqrt(n), Whitlock 2005), which must be negative at the
  claim's alpha. Pooling domains into one correlation would mix each domain's level with the
  trend. With ``in_domains: k`` the atom holds instead when at least k domains fall on their own
  (one-sided p < alpha);
* ``completed_at_least: [A, x]``: A completed on at least a fraction x of its problems.
"""

from __future__ import annotations

import importlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
from scipy import stats as sstats

from planarena import stats
from planarena.claims.spec import BLOCKS, Atom, Claim
from planarena.core.io import atomic_write_text, read_jsonl

ROWS = "measurements.jsonl"
#: The page's line on how the measurement atoms are tested.
RULE = ("Measurement atoms: `lower` is the Wilcoxon signed-rank test on the per-problem log ratio (a side "
        "past its limit ranks largest), `lower_in_most` the exact one-sided sign test over the paired units, "
        "both Holm-corrected within a block; `ratio_*` compare the 95 % bootstrap "
        "interval of the geometric-mean ratio over the problems both sides completed with the threshold; "
        "`ratio_falls_with` is Spearman's one-sided rank correlation of log ratio and objects within each domain, "
        "combined by Stouffer's weighted Z (or counted per domain with `in_domains`).")


def measure_function(claim: Claim):
    """The claim's measurement function (``experiment.measure``, ``module:function``).

    Raises:
        ValueError: the module or function does not exist (names the claim file).
    """
    spec = claim.experiment["measure"]
    module, _, name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{claim.source}: experiment.measure {spec!r} cannot be loaded ({exc})") from None


def row_key(row: dict) -> tuple:
    """What identifies a measurement row: ``(domain, split, problem, side)``."""
    return row["domain"], row["split"], row["problem"], row["side"]


def run(claim: Claim, work: Path, params: dict, echo=print, code: str | None = None) -> list[dict]:
    """Measure into ``work/measurements.jsonl`` (appending; rows already there are not measured
    again) and return every row. Each new row records ``code``, the commit of the code that
    measured it (a measurement runs in this process, so a run resumed after a commit mixes code
    versions, and its page names each)."""
    work.mkdir(parents=True, exist_ok=True)
    path = work / ROWS
    rows = read_jsonl(path) if path.exists() else []
    done = {row_key(r) for r in rows}
    fn = measure_function(claim)
    with open(path, "a") as out:
        for row in fn(params, list(claim.methods), dict(claim.experiment.get("args") or {}), done):
            if code:
                row = {**row, "code": code}
            out.write(json.dumps(row) + "\n")
            out.flush()
            rows.append(row)
            state = "ok" if row["completed"] else "limit"
            echo(f"[{claim.id}] {row['domain']}/{row['split']}/{row['problem']} {row['side']}: {state}")
    return rows


@dataclass(frozen=True)
class MeasureResult:
    """One measurement atom: ``holds``; ``coverage`` (the name the verdict files use) each side's
    geometric mean of the metric over its completed problems (for ``completed_at_least``: the
    completed fraction); ``test`` and its Holm-adjusted ``p`` (``lower``, ``ratio_falls_with``);
    ``gap`` the geometric-mean ratio A / B with its interval."""

    atom: Atom
    holds: bool
    coverage: dict
    test: stats.PairedTest | None = None
    p: float | None = None
    gap: stats.Interval | None = None
    units: str = "problems"
    note: str = ""

    def describe(self) -> str:
        """One line: the atom, each side's value, the test or ratio, the outcome."""
        if self.atom.kind == "completed_at_least":
            cells = "; ".join(f"`{m}` completed {iv.k}/{iv.n} problems" for m, iv in self.coverage.items())
        else:
            cells = "; ".join(f"`{m}` geometric mean {iv.value:.4g} over its {iv.n} completed problems"
                              for m, iv in self.coverage.items())
        extra = ""
        if self.test is not None:
            p = stats.format_p(self.p if self.p is not None else self.test.p)
            extra = (f"; {self.test.test}: A lower on {self.test.b_better}, higher on {self.test.a_better} of "
                     f"{self.test.n} {self.units}, {'Holm ' if self.p is not None else ''}{p}"
                     f"{' (one-sided)' if self.test.test == 'sign' else ''}"
                     if self.test.test in ("wilcoxon", "sign") else
                     f"; {self.test.test}: weighted rho {self.test.diff:+.2f} over {self.test.n} problems in "
                     f"{self.test.b_better} domains, Stouffer one-sided {p}")
        if self.gap is not None:
            extra += f"; A / B {self.gap.value:.3g} {stats.format_interval(self.gap, '.3g')}"
        return (f"{self.atom.label()}: {'holds' if self.holds else 'does not hold'} ({cells}{extra}"
                f"{'; ' + self.note if self.note else ''})")


def _select(rows: Iterable[dict], atom: Atom) -> dict:
    """``{side: {(domain, split, problem): row}}`` of the atom's sides on its domain / split."""
    out: dict = defaultdict(dict)
    for r in rows:
        if r["side"] in atom.methods and (not atom.domain or r["domain"] == atom.domain) and \
                (not atom.split or r["split"] == atom.split):
            out[r["side"]][(r["domain"], r["split"], r["problem"])] = r
    return out


def _value(row: dict, metric: str) -> float:
    """The row's metric; +inf when the side did not complete (larger than any completed value)."""
    if not row["completed"]:
        return math.inf
    v = row["values"].get(metric)
    if v is None:
        raise ValueError(f"measurement row {row['domain']}/{row['problem']} ({row['side']}) has no {metric!r}")
    return float(v)


def _geomean(values: list[float]) -> float:
    positive = [max(v, 1e-12) for v in values]
    return float(np.exp(np.mean(np.log(positive)))) if positive else math.nan


def _measure(atom: Atom, rows: list[dict], seed: int):
    by = _select(rows, atom)
    a = by.get(atom.methods[0], {})
    if atom.kind == "completed_at_least":
        done = sum(r["completed"] for r in a.values())
        frac = done / len(a) if a else math.nan
        iv = stats.wilson(done, len(a))
        return {atom.methods[0]: iv}, None, None, frac, ""
    b = by.get(atom.methods[1], {})
    common = sorted(set(a) & set(b))
    both = [k for k in common if a[k]["completed"] and b[k]["completed"]]
    sides = {m: stats.Interval(_geomean([_value(side[k], atom.metric) for k in side if side[k]["completed"]]),
                               math.nan, math.nan, sum(r["completed"] for r in side.values()), 1, None, "geomean")
             for m, side in ((atom.methods[0], a), (atom.methods[1], b))}
    logs = np.log([max(_value(a[k], atom.metric), 1e-12) / max(_value(b[k], atom.metric), 1e-12) for k in both])
    ratio = None
    if len(logs):
        rng = np.random.default_rng(seed)
        means = logs[rng.integers(0, len(logs), size=(stats.RESAMPLES, len(logs)))].mean(axis=1)
        low, high = np.quantile(means, [0.025, 0.975])
        ratio = stats.Interval(float(np.exp(logs.mean())), float(np.exp(low)), float(np.exp(high)), len(logs), 1,
                               None, "bootstrap")
    test = None
    if atom.kind == "lower":
        xa = [_value(a[k], atom.metric) for k in common]
        xb = [_value(b[k], atom.metric) for k in common]
        # ranks of A - B on a log scale; a side past its limit (+inf) is larger than any value
        d = []
        for x, y in zip(xa, xb):
            d.append(0.0 if x == y else (math.inf if math.isinf(x) else -math.inf if math.isinf(y)
                                         else math.log(max(x, 1e-12) / max(y, 1e-12))))
        d = np.array(d, dtype=float)
        finite = d[np.isfinite(d)]
        big = 2 * (np.abs(finite).max() if finite.size else 1.0) + 1.0
        d = np.where(np.isposinf(d), big, np.where(np.isneginf(d), -big, d))
        nz = d[d != 0]
        p = float(sstats.wilcoxon(nz, zero_method="wilcox").pvalue) if nz.size else 1.0
        # diff: the median log ratio A / B (negative: A lower)
        test = stats.PairedTest("wilcoxon", len(d), int((d > 0).sum()), int((d < 0).sum()),
                                float(np.median(d)) if d.size else math.nan, p)
    elif atom.kind == "lower_in_most":
        lower = sum(_value(a[k], atom.metric) < _value(b[k], atom.metric) for k in common)
        higher = sum(_value(a[k], atom.metric) > _value(b[k], atom.metric) for k in common)
        p = float(sstats.binomtest(lower, lower + higher, 0.5, alternative="greater").pvalue) if lower + higher else 1.0
        # diff: the share of the untied units on which A is lower, minus one half (positive: A lower)
        test = stats.PairedTest("sign", len(common), higher, lower,
                                lower / (lower + higher) - 0.5 if lower + higher else math.nan, p)
    elif atom.kind == "ratio_falls_with":
        test, note = falls_within_domains(atom, a, both, logs)
        return sides, test, ratio, None, note
    return sides, test, ratio, None, ""


def falls_within_domains(atom: Atom, rows: dict, keys: list, logs: np.ndarray) -> tuple[stats.PairedTest, str]:
    """The stratified trend test of ``ratio_falls_with`` (module docstring): ``(test, note)``, the
    test's ``diff`` the weighted mean of the per-domain rho, ``p`` Stouffer's one-sided p-value, and
    ``a_better`` the domains that fall on their own; ``note`` lists each domain's rho, n and p."""
    by: dict[str, list[int]] = defaultdict(list)
    for i, k in enumerate(keys):
        by[k[0]].append(i)
    zs, ws, rhos, parts, falling = [], [], [], [], 0
    alpha = stats.ALPHA
    for d, idx in sorted(by.items()):
        objects = [rows[keys[i]]["objects"] for i in idx]
        if len(idx) < 3 or len(set(objects)) < 2:
            parts.append(f"{d}: not measured (n={len(idx)})")
            continue
        if np.ptp(logs[idx]) == 0:
            parts.append(f"{d}: constant ratio (n={len(idx)})")
            continue
        res = sstats.spearmanr(objects, logs[idx], alternative="less")
        # the t approximation gives p = 0 for a perfect rank correlation: floor it at the exact
        # permutation test's smallest p-value, 1 / n!
        rho, p = float(res.statistic), float(res.pvalue)
        p = min(max(p, 1.0 / math.factorial(len(idx))), 1 - 1e-16)
        zs.append(float(sstats.norm.ppf(p)))
        ws.append(math.sqrt(len(idx)))
        rhos.append(rho)
        falling += p < alpha
        parts.append(f"{d}: rho {rho:+.2f}, n={len(idx)}, {stats.format_p(p)}")
    if not zs:
        return stats.PairedTest("stratified spearman", 0, 0, 0, math.nan, 1.0), "; ".join(parts)
    z = float(np.dot(ws, zs) / math.sqrt(np.dot(ws, ws)))
    rho = float(np.dot(ws, rhos) / sum(ws))
    test = stats.PairedTest("stratified spearman", len(logs), falling, len(zs), rho, float(sstats.norm.cdf(z)))
    return test, "; ".join(parts)


def evaluate(claim: Claim, rows: list[dict], seed: int = 0):
    """The claim's :class:`~planarena.claims.verdict.Verdict` from the measurement ``rows``."""
    from planarena.claims.verdict import Verdict, _evaluate, decide, holm_family

    results, blocks = {}, {}
    for name in BLOCKS:
        cond = getattr(claim, name)
        atoms = cond.atoms()
        measured = [_measure(a, rows, seed) for a in atoms]
        family = set(holm_family(cond, ("lower", "lower_in_most")))
        lower = [i for i, a in enumerate(atoms) if a in family]
        adjusted = dict(zip(lower, stats.holm([measured[i][1].p for i in lower])))
        out = []
        for i, (a, (sides, test, ratio, frac, note)) in enumerate(zip(atoms, measured)):
            if a.kind == "completed_at_least":
                holds = not math.isnan(frac) and frac >= a.threshold
            elif a.kind == "lower":
                holds = test.diff < 0 and adjusted.get(i, test.p) < claim.alpha
            elif a.kind == "lower_in_most":
                holds = test.diff > 0 and adjusted.get(i, test.p) < claim.alpha
            elif a.kind == "ratio_falls_with":
                if a.in_domains is not None:
                    holds = test.a_better >= a.in_domains
                    note = f"falls in {test.a_better} of {test.b_better} domains; " + note
                else:
                    holds = test.diff < 0 and test.p < claim.alpha
            elif ratio is None:
                holds, note = False, "no problem both sides completed"
            elif a.kind == "ratio_at_most":
                holds = ratio.high <= a.threshold
            else:
                holds = ratio.low >= a.threshold
            out.append(MeasureResult(a, bool(holds), sides, test, adjusted.get(i), ratio,
                                     units=str(claim.experiment.get("units") or "problems"), note=note))
        results[name] = out
        blocks[name] = _evaluate(cond, {r.atom: r.holds for r in out})
    return Verdict(claim.id, decide(blocks), blocks, results)


def table(claim: Claim, rows: list[dict]) -> list[str]:
    """Markdown lines: per problem, each side's metrics (the atoms' metrics) or ``limit``."""
    metrics = list(dict.fromkeys(a.metric for b in BLOCKS for a in getattr(claim, b).atoms()
                                 if a.kind != "completed_at_least"))
    sides = list(claim.methods)
    by: dict = defaultdict(dict)
    for r in rows:
        by[(r["domain"], r["split"], r["problem"], r["objects"])][r["side"]] = r
    head = ["domain", "split", "problem", "objects", *[f"{s} {m}" for s in sides for m in metrics]]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * 4 + "---:|" * (len(head) - 4)]
    for (d, s, p, o), got in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][3], kv[0][2])):
        cells = []
        for side in sides:
            for m in metrics:
                r = got.get(side)
                v = None if r is None or not r["completed"] else r["values"].get(m)
                cells.append("–" if r is None else "limit" if not r["completed"] else "–" if v is None else
                             f"{v:.4g}" if isinstance(v, float) and not v.is_integer() else f"{v:,}")
        out.append("| " + " | ".join([d, s, p, str(o), *cells]) + " |")
    return out


#: The PNG of the rows' curves beside a measurement claim's page.
CURVES = "curves.png"


def curves(rows: list[dict]) -> dict[str, list]:
    """``{side: [curve per unit]}`` of the rows that carry a ``curve`` (``[[x, y], ...]``, e.g. a
    validation loss every k training steps), units in row order; ``{}`` when none does."""
    out: dict[str, list] = defaultdict(list)
    for r in sorted(rows, key=lambda r: (r["domain"], r["split"], r["problem"], r["side"])):
        if r.get("curve"):
            out[r["side"]].append(r["curve"])
    return dict(out)


def curve_lines(claim: Claim, rows: list[dict]) -> list[str]:
    """Markdown lines of the curves (:func:`curves`): the image and, per side, the mean and range over
    the units at every logged x; ``[]`` without curves."""
    series = curves(rows)
    if not series:
        return []
    xs = sorted({x for cs in series.values() for c in cs for x, _ in c})
    lines = ["## Curves", "", f"![curves]({CURVES})", "",
             f"Mean over the {claim.experiment.get('units') or 'units'} (min-max) at each logged step:", "",
             "| side | " + " | ".join(f"{x:g}" for x in xs) + " |", "|---|" + "---:|" * len(xs)]
    for side, cs in series.items():
        cells = []
        for x in xs:
            ys = [y for c in cs for cx, y in c if cx == x]
            cells.append(f"{np.mean(ys):.3f} ({min(ys):.3f}-{max(ys):.3f})" if ys else "–")
        lines.append(f"| `{side}` | " + " | ".join(cells) + " |")
    return lines + [""]


def write_curves(claim: Claim, rows: list[dict], out: Path) -> None:
    """The curves' PNG (:data:`CURVES`) beside the page, when the rows carry curves."""
    from planarena.report.plots import plot_curves

    series = curves(rows)
    if series:
        metric = next((a.metric for b in BLOCKS for a in getattr(claim, b).atoms() if a.kind != "completed_at_least"),
                      "value")
        plot_curves(series, out / CURVES, metric)


def write_rows(rows: list[dict], out: Path) -> None:
    """The rows beside the verdict, one JSON object per line (sorted: the page regenerates from them)."""
    key = lambda r: (r["domain"], r["split"], r["problem"], r["side"])  # noqa: E731
    atomic_write_text(out / ROWS, "".join(json.dumps(r, sort_keys=True) + "\n" for r in sorted(rows, key=key)))


__all__ = ["CURVES", "MeasureResult", "ROWS", "RULE", "row_key", "curve_lines", "curves", "evaluate", "measure_function",
           "run", "table", "write_curves", "write_rows"]
