"""``planarena check-repro``: does this run agree with the committed one?

Compares the records of this checkout's run (``data/results``, after ``make repro``) with the
committed run's (``reports/records.tar.gz`` at git ``HEAD``, :mod:`planarena.report.bundle`), per
headline number of the front page (``metrics.json``: each row's pooled held-out coverage, each
ranking row's Hit@5), and says for each whether it is

* **identical**: the same outcome on every (problem, seed) attempt (coverage) or the same value
  (Hit@5);
* **within interval**: a different value inside the committed run's 95 % interval (the front
  page's: Wilson for one run, the hierarchical bootstrap over problems then seeds for several);
* **outside interval**: a different value outside it, which floats moving in the third decimal do
  not explain.

It then compares the front page's readings (:func:`readings`: a row above each floor, best of its
kind per column) and names each that changed, and names what differs between the two machines
(CPU model, vector extensions, cores, Python, the torch build, the key packages' versions:
``environment.json`` in each archive). Results are byte-identical per CPU type; across CPU types
a learned row trained once can train to another model, as another seed would, which its interval
over problems does not cover (docs/cost.md#machines, measured).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from planarena.config import Layout, is_held_out
from planarena.core.records import ResultRecord
from planarena.report.records import load_inputs
from planarena.results.records import plan_records_of
from planarena.stats import Interval

IDENTICAL, WITHIN, OUTSIDE, MISSING = "identical", "within interval", "outside interval", "missing"


@dataclass(frozen=True)
class Agreement:
    """One headline number of both runs: ``number`` (``coverage <method>`` / ``Hit@5 <method>
    <protocol>``), the committed value and its interval, this run's value (None: the row has no
    records here), the attempts whose outcome differs, and the :data:`IDENTICAL` / :data:`WITHIN` /
    :data:`OUTSIDE` / :data:`MISSING` status."""

    number: str
    committed: Interval
    local: float | None
    discordant: int
    status: str


def _outcomes(records: Sequence[ResultRecord]) -> dict[str, dict[tuple, bool]]:
    """Per method, ``(domain, split, problem, seed) -> solved`` of its latest held-out plan records."""
    out: dict[str, dict[tuple, bool]] = {}
    for r in plan_records_of(records):
        if is_held_out(r.split):
            out.setdefault(r.method, {})[(r.domain, r.split, r.problem, r.seed)] = r.counts_as_solved
    return out


def _status(committed: Interval, local: float | None, same: bool) -> str:
    if local is None:
        return MISSING
    if same:
        return IDENTICAL
    return WITHIN if committed.low - 1e-9 <= local <= committed.high + 1e-9 else OUTSIDE


def coverage_agreement(committed: Sequence[ResultRecord], local: Sequence[ResultRecord],
                       intervals: Mapping[str, Interval]) -> list[Agreement]:
    """Per plan row of ``intervals`` (the committed run's pooled held-out coverage cells), the
    comparison with this run's records over the same attempts."""
    a, b = _outcomes(committed), _outcomes(local)
    out = []
    for m in sorted(intervals):
        mine, theirs = b.get(m), a.get(m, {})
        if not mine:
            out.append(Agreement(f"coverage {m}", intervals[m], None, 0, MISSING))
            continue
        value = sum(mine.get(k, False) for k in theirs) / len(theirs) if theirs else 0.0
        discordant = sum(mine.get(k, False) != v for k, v in theirs.items()) + len(set(mine) - set(theirs))
        out.append(Agreement(f"coverage {m}", intervals[m], value, discordant,
                             _status(intervals[m], value, discordant == 0)))
    return out


def hit_agreement(committed: Sequence[ResultRecord], local: Sequence[ResultRecord], seed: int = 0) -> list[Agreement]:
    """Per (ranking row, protocol), the committed Hit@5 with its interval beside this run's."""
    from planarena.report.sections.ranking import hit_intervals

    a, b = hit_intervals(committed, 5, seed), hit_intervals(local, 5, seed)
    out = []
    for (m, proto), iv in sorted(a.items()):
        mine = b.get((m, proto))
        value = None if mine is None else mine.value
        out.append(Agreement(f"Hit@5 {m} ({proto})", iv, value, 0,
                             _status(iv, value, mine is not None and abs(mine.value - iv.value) < 1e-12)))
    return out


def environment_differences(committed: Mapping, local: Mapping) -> list[str]:
    """``"torch: 2.13.0+cpu (CPU build) -> 2.13.0+cu130 (CUDA 13.0 build)"`` for each field of the
    two ``environment.json`` that differs (packages one by one)."""
    out = []
    for key in ("cpu_model", "vector_extensions", "cpu_count", "python", "torch"):
        if committed.get(key) != local.get(key):
            out.append(f"{key}: {committed.get(key, 'unknown')} -> {local.get(key, 'unknown')}")
    cp, lp = committed.get("packages") or {}, local.get("packages") or {}
    for name in sorted(set(cp) | set(lp)):
        if cp.get(name) != lp.get(name):
            out.append(f"{name}: {cp.get(name, 'not installed')} -> {lp.get(name, 'not installed')}")
    return out


def _front_page(layout: Layout, params: Mapping):
    """``(inputs, analysis)`` of the run whose data is ``layout``, as its front page computes them
    (:func:`planarena.report.leaderboard.analyse` on its records of the running rows)."""
    from planarena.methods import running
    from planarena.report.leaderboard import analyse
    from planarena.report.records import declared_domains, declared_splits
    from planarena.report.traits import method_traits

    params = running(dict(params))
    traits = method_traits(params)
    inputs = load_inputs(layout, declared_domains(params), declared_splits(params), traits)
    inputs.records = [r for r in inputs.records if r.method in params["methods"]]
    inputs.seed = int(params.get("seed", 0) or 0)
    return inputs, analyse(inputs)


def committed_intervals(layout: Layout, params: Mapping, tables=None) -> dict[str, Interval]:
    """The committed run's pooled held-out coverage interval per plan row, as its front page
    computed them (:func:`planarena.report.leaderboard.analyse` on its records); ``tables``: its
    headline tables when already computed (:func:`readings` returns them)."""
    from planarena.report.sections import headline

    if tables is None:
        tables = _front_page(layout, params)[1].headline
    out = {}
    for table in tables:
        for m in table.methods:
            iv = table.cells.get((m, headline.HELD_OUT))
            if iv is not None and iv.n:
                out.setdefault(m, iv)
    return out


def readings(layout: Layout, params: Mapping) -> tuple[dict[str, bool], list]:
    """The front page's significance readings of the run whose data is ``layout``, each a
    statement and whether it holds there, and its headline coverage tables:

    * ``coverage: <row> above <floor>``: the row's pooled held-out coverage is significantly above
      that floor (paired test over problems, Holm across the table; the *above floor* and *vs
      untrained twin* columns);
    * ``coverage <column>: <row> best of its kind``: the row is bold in that column (significantly
      better than every other row of its kind);
    * ``Hit@5: <row> above <floor>`` (every protocol both run) and ``Hit@5 <protocol>: <row> above
      <floor>``: the Wilcoxon tests of per-problem Hit@5 behind the ranking table's *above floor*.

    A reading absent from one run (its row or floor did not run there) is absent from the dict."""
    from planarena import stats
    from planarena.report.sections import headline
    from planarena.report.sections.ranking import floor_tests

    inputs, analysis = _front_page(layout, params)
    tables = analysis.headline
    out: dict[str, bool] = {}
    for table in tables:
        for m, tests in table.floor_tests.items():
            for floor, t, p in tests:
                out[f"coverage: {m} above {floor}"] = t.diff > 0 and p < stats.ALPHA
        for column in table.columns:
            for m in table.methods:
                if (m, column) in table.cells and table.group[m] not in ("floor", "ceiling"):
                    out[f"coverage {'held-out' if column == headline.HELD_OUT else column}: {m} best of its kind"] = \
                        m in table.bold.get(column, set())
    ranked = analysis.rank_records
    for m, tests in (floor_tests(ranked, inputs.traits, 5, inputs.seed) if ranked else {}).items():
        for floor, t, p in tests.pooled:
            out[f"Hit@5: {m} above {floor}"] = t.diff > 0 and p < stats.ALPHA
        for protocol, triples in tests.by_protocol.items():
            for floor, t, p in triples:
                out[f"Hit@5 {protocol}: {m} above {floor}"] = t.diff > 0 and p < stats.ALPHA
    return out, tables


def changed_readings(committed: Mapping[str, bool], local: Mapping[str, bool]) -> list[str]:
    """``"coverage: aiw_ext above aiw_ext_untrained: no -> yes"`` for each reading both runs make
    that holds in one and not the other, sorted."""
    yes = {True: "yes", False: "no"}
    return [f"{k}: {yes[committed[k]]} -> {yes[local[k]]}" for k in sorted(set(committed) & set(local))
            if committed[k] != local[k]]


def render(rows: Sequence[Agreement], env: Sequence[str], changed: Sequence[str] | None = None,
           n_readings: int = 0) -> str:
    """The command's output: the per-number table, a count per status and the machine differences."""
    lines = ["| number | committed [95 % interval] | this run | attempts differing | status |", "|---|---|---|---|---|"]
    for r in rows:
        local = "no records" if r.local is None else f"{r.local:.4f}"
        lines.append(f"| {r.number} | {r.committed.value:.4f} [{r.committed.low:.3f}, {r.committed.high:.3f}] | {local} "
                     f"| {r.discordant or ''} | {'**' + r.status + '**' if r.status == OUTSIDE else r.status} |")
    counts = {s: sum(r.status == s for r in rows) for s in (IDENTICAL, WITHIN, OUTSIDE, MISSING)}
    lines += ["", ", ".join(f"{n} {s}" for s, n in counts.items() if n) + f" of {len(rows)} headline numbers."]
    if changed is not None:
        lines += ["", f"Readings of the front page (above floor, vs untrained twin, best of kind): "
                      f"{n_readings - len(changed)} of {n_readings} the same"
                      + (", changed:" if changed else ".")]
        lines += [f"- {c}" for c in changed]
    lines += ["", "Machine differences (committed -> this run): " + ("; ".join(env) if env else "none")
              + ". Results are byte-identical per CPU type; across CPU types floats differ, and a learned "
                "row trained once (one seed) can train to another model, like another seed, which its "
                "interval (over problems) does not cover (docs/cost.md#machines)."]
    return "\n".join(lines)


__all__ = ["Agreement", "IDENTICAL", "MISSING", "OUTSIDE", "WITHIN", "changed_readings", "committed_intervals",
           "coverage_agreement", "environment_differences", "hit_agreement", "readings", "render"]
