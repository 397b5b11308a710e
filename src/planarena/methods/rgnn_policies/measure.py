"""Measurements of the width-based policies' lookaheads, for measurement claims
(:mod:`planarena.claims.measure`) and ``benchmarks/bench_lookahead.py``.

Source: Aichmüller et al. (docs/papers/rgnn-policies.md), Section 3 ("Abstracted IW(k)"): IW(1) is
linear in the number of ground atoms, which grows polynomially with the objects; AIW(1)'s novelty
table is bounded by O(t^(m-1) |O|), linear in the objects, "Consequently, Abstracted IW(1) evaluates
significantly faster". A lookahead from a problem's initial state is the unit measured: nodes
expanded, successors generated, candidates, novelty-table size and CPU seconds; one past its CPU
limit is recorded as not completed (its counters unknown).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

from planarena.config import get

#: Values of one lookahead row (the metrics a claim atom can name). ``goals_left``: the positive
#: fluent goal atoms still false in the tree's best state (the root included; 0: the tree reaches the
#: goal); ``subgoal``: 1 when some state of the tree satisfies more of them than the root, else 0 (does
#: the lookahead capture a subgoal, Section 3's "while still capturing meaningful subgoals");
#: ``gained``: one plus the goal atoms the tree's best state satisfies beyond the root's (1: no
#: progress; the one keeps a ratio of two sides defined where neither gains).
METRICS = ("expanded", "generated", "jumps", "novelty_features", "max_depth", "cpu_s", "goals_left", "subgoal",
           "gained")
#: The side without a lookahead: the root state alone (the floor of a subgoal claim: no search, so no
#: subgoal; ``gained`` 1, ``goals_left`` the root's).
ROOT = "root"


def lookahead_row(domain_file: Path, problem_file: Path, kind: str, time_limit: float) -> dict:
    """One ``kind`` lookahead (:data:`planarena.methods.rgnn_policies.lookahead.KINDS`, or :data:`ROOT`:
    none) from the initial state of ``problem_file``: ``objects``, ``atoms`` (fluent atoms true
    initially), ``parse_s``, ``completed`` and, when completed, ``expanded``, ``generated``, ``jumps``,
    ``novelty_features``, ``max_depth``, ``goals_left``, ``subgoal``, ``gained`` (:data:`METRICS`);
    ``cpu_s`` the lookahead's CPU seconds, building the problem's grounded successor generator
    included. ``time_limit`` is a CPU-time limit (a loaded machine does not change whether a
    lookahead completes), checked once the search runs: a grounding that alone takes longer is not
    interrupted (large IPC 2023 Sokoban problems: 3-7 CPU minutes), so ``cpu_s`` can exceed it.
    Objects and constants get their declared types (AIW's r(o)). The problem is parsed anew
    (:func:`planarena.core.pddl.parse_problem`), so a second side does not reuse the first's
    grounding. A gzipped problem (``.pddl.gz``, the IPC 2023 layout) is read from a decompressed
    temporary copy."""
    from planarena.core.pddl import atom_indices, parse_problem
    from planarena.methods.rgnn_policies.lookahead import AtomFeatures, LookaheadTimeout, lookahead, object_types

    if str(problem_file).endswith(".gz"):
        import gzip
        import tempfile

        with tempfile.TemporaryDirectory(prefix="planarena-measure-") as tmp:
            plain = Path(tmp) / Path(problem_file).name[:-3]
            plain.write_bytes(gzip.decompress(Path(problem_file).read_bytes()))
            return lookahead_row(domain_file, plain, kind, time_limit)
    t0 = time.perf_counter()
    problem = parse_problem(domain_file, problem_file)  # uncached: no grounding from another side's search
    state = problem.get_initial_state()
    row = {"objects": len(problem.get_objects()), "atoms": len(atom_indices(state)[0]),
           "parse_s": round(time.perf_counter() - t0, 3)}
    goal = {int(lit.get_atom().get_index()) for lit in problem.get_goal_condition()
            if lit.get_polarity() and lit.get_atom().is_fluent()}
    root = len(goal.intersection(atom_indices(state)[0]))
    if kind == ROOT:
        return {**row, "completed": True, "expanded": 0, "generated": 0, "jumps": 0, "novelty_features": 0,
                "max_depth": 0, "cpu_s": 0.0, "goals_left": len(goal) - root, "subgoal": 0, "gained": 1}
    feats = AtomFeatures(problem, kind, object_types(problem_file, domain_file)) if kind != "flat" else None
    c0 = time.process_time()
    try:
        tree = lookahead(problem, state, kind, feats, deadline=c0 + time_limit)
    except LookaheadTimeout:
        return {**row, "completed": False, "cpu_s": round(time.process_time() - c0, 3)}
    cpu = round(time.process_time() - c0, 4)
    best = max([root, *(len(goal.intersection(atom_indices(j.state)[0])) for j in tree.jumps)])
    return {**row, "completed": True, "expanded": tree.expanded, "generated": tree.generated,
            "jumps": len(tree.jumps), "novelty_features": tree.novelty_features, "max_depth": tree.max_depth,
            "cpu_s": cpu, "goals_left": len(goal) - best, "subgoal": int(best > root), "gained": 1 + best - root}


def spread(files: list[Path], n: int | None) -> list[Path]:
    """``n`` of ``files`` (sorted by size) evenly spread over the list, the first and last included;
    all of them when ``n`` is None or at least their number."""
    if n is None or len(files) <= n:
        return list(files)
    if n <= 1:
        return files[-1:] if n == 1 else []
    picks = [round(i * (len(files) - 1) / (n - 1)) for i in range(n)]
    return [files[i] for i in dict.fromkeys(picks)]


def lookahead_cost(params: dict, sides: list[str], args: dict, done: set) -> Iterator[dict]:
    """The measurement of a lookahead-cost claim: for every domain of the params' external suite
    (``suite``, ``suites.<suite>.path`` and ``.domains``), the problems of ``args["splits"]``
    (split names of the suite's layout, e.g. ``test-easy``; ``args["per_split"]`` of each, spread
    over the size range, :func:`spread`), one lookahead per side (``sides``: lookahead kinds, e.g.
    ``[iw, aiw]``) from the initial state under ``args["time_limit"]`` CPU seconds.

    Yields rows ``{"domain", "split", "problem", "objects", "atoms", "side", "completed",
    "values": {metric: value}}``, skipping the ``(domain, split, problem, side)`` keys in ``done``
    (a resumed run). ``args["exclude"]``: measurement files (``measurements.jsonl``, paths relative
    to the directory planarena runs in, the repository root, or absolute) whose problems are left out before the spread is taken, so
    that a second claim measures problems disjoint from the first's.

    Raises:
        ValueError: the params name no external suite, a split is not in its layout, or an
            ``exclude`` file does not exist (one line).
    """
    from planarena.datasets.suites import LAYOUTS
    from planarena.methods.rgnn_policies.lookahead import KINDS

    suite = params.get("suite")
    if suite not in LAYOUTS:
        raise ValueError(f"lookahead_cost: suite {suite!r} has no file layout (one of {', '.join(LAYOUTS)})")
    bad = [s for s in sides if s not in KINDS and s != ROOT]
    if bad:
        raise ValueError(f"lookahead_cost: unknown lookahead(s) {', '.join(bad)}; one of {', '.join(KINDS)}, "
                         f"or {ROOT} (no lookahead)")
    root = Path(get(params, f"suites.{suite}.path"))
    folders = {split: folder for folder, split in LAYOUTS[suite]}
    splits = list(args.get("splits") or folders)
    unknown = [s for s in splits if s not in folders]
    if unknown:
        raise ValueError(f"lookahead_cost: split(s) {', '.join(unknown)} not in the {suite} layout "
                         f"({', '.join(folders)})")
    limit = float(args.get("time_limit", 60.0))
    excluded = _excluded(args.get("exclude") or [])
    for domain in get(params, f"suites.{suite}.domains"):
        domain_file = root / domain / "domain.pddl"
        for split in splits:
            files = sorted((root / domain / folders[split]).glob("*.pddl*"), key=lambda f: f.name)
            files = [f for f in files if f.name.endswith((".pddl", ".pddl.gz"))
                     and (domain, split, f.name.split(".pddl")[0]) not in excluded]
            for f in spread(files, args.get("per_split")):
                for side in sides:
                    name = f.name.split(".pddl")[0]
                    if (domain, split, name, side) in done:
                        continue
                    row = lookahead_row(domain_file, f, side, limit)
                    values = {k: row[k] for k in METRICS if k in row}
                    yield {"domain": domain, "split": split, "problem": name, "objects": row["objects"],
                           "atoms": row["atoms"], "side": side, "completed": row["completed"], "values": values}


def _excluded(files: list[str]) -> set[tuple[str, str, str]]:
    """``(domain, split, problem)`` of every row of the measurement ``files``.

    Raises:
        ValueError: a file does not exist (one line naming it).
    """
    from planarena.core.io import read_jsonl

    out: set = set()
    for f in files:
        path = Path(f).expanduser().resolve()   # relative: to where planarena runs (the repository root)
        if not path.exists():
            raise ValueError(f"lookahead_cost: args.exclude {f!r}: no such measurement file ({path})")
        out |= {(r["domain"], r["split"], r["problem"]) for r in read_jsonl(path)}
    return out


__all__ = ["METRICS", "lookahead_cost", "lookahead_row", "spread"]
