"""Where a claim's run stands (``planarena claims status``): its workspace's code, cost and
machines, its training units (finished, still training), its evaluation records against the
attempts its design expects, and what a committed partial run carries.

A claim takes hours on 2 cores and is carried from machine to machine (:mod:`planarena.claims.partial`);
this is the one place that says how far it got without reading DVC logs. Expected attempts come
from the claim's design (:func:`planarena.claims.power.design_of`: the problems of each evaluated
(domain, split) times the row's seeds; a schema-learning row's runs per domain).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from planarena.claims import partial
from planarena.claims.spec import Claim
from planarena.config import is_held_out


def _attempts(records: list[dict], task: str) -> int:
    """Distinct attempts of ``task`` among ``records``: (domain, split, problem, seed)."""
    return len({(r.get("domain"), r.get("split"), r.get("problem"), r.get("seed")) for r in records
                if (r.get("extra") or {}).get("task", "plan") == task})


def expected_attempts(claim: Claim, params: dict) -> dict[str, tuple[str, int | None]]:
    """Per method of the claim, ``(task, attempts its run makes)``: for a plan row, the problems of
    every evaluated (domain, split) (``evaluation.splits``, else the held-out splits) times its
    seeds; for a schema-learning row, its runs (seeds) per domain (``learn_schema`` records); for a
    successor-ranking row, None (its records are per protocol and domain, not per attempt)."""
    from planarena.claims.power import design_of
    from planarena.methods import resolve, with_twins

    design = design_of(claim, params)
    splits = (params.get("evaluation") or {}).get("splits")
    evaluated = [k for k in design.problems if (k[1] in splits if splits else is_held_out(k[1]))]
    full = with_twins(params)
    out: dict[str, tuple[str, int | None]] = {}
    for m in claim.methods:
        try:
            tasks = tuple(getattr(resolve(m, full)[0], "tasks", ("plan",)))
        except KeyError:
            tasks = ("plan",)
        runs = sum(n for (row, _), n in design.runs.items() if row == m)
        if runs:
            out[m] = ("learn_schema", runs)
        elif "plan" in tasks:
            out[m] = ("plan", sum(len(design.problems[k]) for k in evaluated) * len(design.seeds.get(m) or [0]))
        else:
            out[m] = ("rank_successors", None)
    return out


def status(claim: Claim, work: Path, page_dir: Path) -> list[str]:
    """Lines saying where ``claim``'s run stands, from its workspace ``work`` (when this machine has
    one) and its committed partial run under ``page_dir/partial/``."""
    lines = [f"claim {claim.id}:"]
    saved = Path(page_dir) / partial.PARTIAL
    results = Path(work) / "data" / partial.RESULTS
    source = results if results.is_dir() else saved / partial.RESULTS
    params_file = Path(work) / "params.yaml"
    if (Path(work) / partial.CODE).exists():
        code = json.loads((Path(work) / partial.CODE).read_text())
        cost_file = Path(work) / partial.COST
        cost = json.loads(cost_file.read_text()) if cost_file.exists() else {}
        from planarena.claims.run import finished

        lines.append(f"  workspace {work}: code of commit {code.get('commit')}, "
                     f"{cost.get('wall_s', 0) / 60:.0f} min wall in {cost.get('runs', 0)} ended run(s)"
                     + (f" on {'; '.join(cost['machines'])}" if cost.get("machines") else "")
                     + ("; finished (its verdict: `planarena claims report`)" if finished(Path(work)) else ""))
        lines.append(f"  training: {len(partial.units(work))} finished units, "
                     f"{len(partial.checkpoints(work))} still training (checkpoints)")
    else:
        lines.append(f"  no workspace on this machine ({work})")
    described = partial.describe(page_dir)
    lines.append(f"  beside its page: {described}" if described else "  beside its page: no partial run")
    if params_file.exists():
        params = yaml.safe_load(params_file.read_text()) or {}
        cells, done_all, expected_all = [], 0, 0
        for m, (task, expected) in expected_attempts(claim, params).items():
            records = partial.complete_records(source / f"{m}.jsonl")
            if expected is None:
                cells.append(f"{m} {len(records)} records")
                continue
            done = _attempts(records, task)
            cells.append(f"{m} {done}/{expected}")
            done_all, expected_all = done_all + done, expected_all + expected
        where = "the workspace" if source == results else "the partial run beside its page"
        lines.append(f"  evaluation (attempts recorded / expected, from {where}): " + ", ".join(cells)
                     + (f"; {done_all} of {expected_all} in all" if expected_all else ""))
    return lines


__all__ = ["expected_attempts", "status"]
