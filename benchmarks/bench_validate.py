#!/usr/bin/env python
"""Plan validation at IPC size: planarena's validator (``planarena.core.validation.validate_plan``,
the ``pddl`` package's parser) against the unified-planning oracle (``validate_plan_up``).

Timing (default): each plan is validated by each validator in a fresh process (the libraries are
imported before the clock starts), the two validators alternating over ``--rounds`` rounds; per
plan it prints the steps, the parse, validate and total seconds of each validator (median over the
rounds) and whether the verdicts (valid, first bad step, cost) agree. Target: total under 5 s.

    python benchmarks/bench_validate.py [--rounds 3] [--plans rovers/testing/medium/p30 ...] [--json out.json]

Agreement (``--agreement``): every reference plan under ``<benchmarks>/ipc2023-learning/*/plans/``
and ``<benchmarks>/satr/*/*/plans/`` through both validators (one process per domain, each problem
parsed once), with ``--variants`` also the malformed variants of :func:`variants` of the plans of
``training/easy`` and SATr ``train``; prints the counts that agree per domain and every disagreement;
``--json`` writes the counts per domain and case (:func:`summarise`).

    python benchmarks/bench_validate.py --agreement [--variants] [--json out.json]

``<benchmarks>`` is ``../shared/benchmarks`` beside the checkout (``--benchmarks`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT.parent / "shared" / "benchmarks"
#: <domain>/<split>/<name> under ipc2023-learning: the three of the target, then more
DEFAULT_PLANS = ("rovers/testing/medium/p30", "satellite/testing/medium/p30", "blocksworld/testing/medium/p30",
                 "sokoban/testing/medium/p30", "transport/testing/medium/p30", "childsnack/testing/medium/p30")
VALIDATORS = ("new", "up")


def read_plan(path: Path) -> list[str]:
    """The steps of an IPC plan file (``;`` comments and blank lines dropped)."""
    return [s for s in (ln.split(";", 1)[0].strip() for ln in path.read_text().splitlines()) if s]


def ipc_files(bench: Path, spec: str) -> tuple[Path, Path, Path]:
    """(domain, problem, plan) of ``<domain>/<split...>/<name>`` in the IPC 2023 Learning Track."""
    domain, *split, name = spec.split("/")
    d = bench / "ipc2023-learning" / domain
    return d / "domain.pddl", d.joinpath(*split, f"{name}.pddl"), d.joinpath("plans", *split, f"{name}.plan")


def variants(actions: list[str]) -> dict[str, list[str]]:
    """Malformed variants of a plan, deterministic: the middle step dropped, it and the next
    swapped, the plan cut in half, an argument of the middle step replaced by the next object of
    the plan (sorted), its action renamed, its last argument dropped. ``{}`` for the empty plan."""
    n = len(actions)
    if n == 0:
        return {}
    m = n // 2
    toks = actions[m].strip("() ").split()
    objects = sorted({o for a in actions for o in a.strip("() ").split()[1:]})
    out = {"drop": actions[:m] + actions[m + 1:], "truncate": actions[:m],
           "unknown_action": actions[:m] + ["(no-such-action " + " ".join(toks[1:]) + ")"] + actions[m + 1:],
           "wrong_arity": actions[:m] + ["(" + " ".join(toks[:-1] if len(toks) > 1 else toks + toks) + ")"]
           + actions[m + 1:]}
    if n >= 2:
        out["swap"] = actions[:m - 1] + [actions[m], actions[m - 1]] + actions[m + 1:]
    if len(toks) > 1 and len(objects) > 1:
        other = objects[(objects.index(toks[-1]) + 1) % len(objects)]
        out["wrong_object"] = actions[:m] + ["(" + " ".join(toks[:-1] + [other]) + ")"] + actions[m + 1:]
    return out


def key(v) -> tuple:
    """What the two validators must agree on: valid, first bad step, cost."""
    return v.valid, v.step, v.cost


# ---------------------------------------------------------------------------------------- children


def one(which: str, domain: str, problem: str, plan: str) -> dict:
    """Parse and validate one plan with one validator, in this (fresh) process: the modules are
    imported before the clock starts; building the parsers (grammars) counts as parsing."""
    from planarena.core import validation as val

    if which == "new":
        import pddl.parser.domain  # noqa: F401
        import pddl.parser.problem  # noqa: F401

        import planarena.core.pddl_semantics  # noqa: F401
        parse = lambda: val._task(val._file_key(domain), val._file_key(problem))  # noqa: E731
        validate = val.validate_plan
    else:
        import unified_planning.engines  # noqa: F401
        import unified_planning.io  # noqa: F401
        import unified_planning.model.walkers  # noqa: F401
        import unified_planning.shortcuts  # noqa: F401

        import planarena.core.pddl  # noqa: F401 - the oracle's step checks import it
        parse, validate = (lambda: val._parsed(domain, problem)), val.validate_plan_up
    actions = read_plan(Path(plan))
    t0 = time.perf_counter()
    parse()
    t1 = time.perf_counter()
    v = validate(domain, problem, actions)
    t2 = time.perf_counter()
    return {"validator": which, "steps": len(actions), "parse_s": t1 - t0, "validate_s": t2 - t1,
            "total_s": t2 - t0, "valid": v.valid, "step": v.step, "cost": v.cost, "reason": v.reason}


def agree_domain(domain_dir: str, with_variants: bool) -> list[dict]:
    """Both validators on every reference plan of one domain folder (rows, one per plan/variant)."""
    from planarena.core.validation import validate_plan, validate_plan_up

    d = Path(domain_dir)
    rows = []
    for plan in sorted(d.rglob("*.plan")):
        rel = plan.relative_to(d)
        parts = rel.parts[1:] if rel.parts[0] == "plans" else rel.parts[:-2] + rel.parts[-1:]  # IPC | SATr
        problem = d.joinpath(*parts).with_suffix(".pddl")
        actions = read_plan(plan)
        cases = {"reference": actions}
        if with_variants and parts[0] in ("training", "train"):
            cases.update(variants(actions))
        for case, acts in cases.items():
            t0 = time.perf_counter()
            a = validate_plan(d / "domain.pddl", problem, acts)
            t1 = time.perf_counter()
            b = validate_plan_up(d / "domain.pddl", problem, acts)
            t2 = time.perf_counter()
            row = {"domain": f"{d.parent.name}/{d.name}", "plan": str(rel), "case": case, "steps": len(acts),
                   "agree": key(a) == key(b), "new": list(key(a)), "up": list(key(b)), "new_s": round(t1 - t0, 4),
                   "up_s": round(t2 - t1, 4)}
            rows.append(row if row["agree"] else {**row, "reasons": [a.reason, b.reason]})
    return rows


def child(args: list[str]) -> str:
    """Run this script in a fresh process with ``args``; its stdout (one JSON document)."""
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"{args}: exit {out.returncode}: {out.stderr[-2000:]}")
    return out.stdout.strip().splitlines()[-1]


# ------------------------------------------------------------------------------------------- modes


def timing(bench: Path, plans: list[str], rounds: int) -> list[dict]:
    rows = []
    print(f"{'plan':34} {'steps':>6} | {'validator':9} {'parse s':>8} {'valid. s':>8} {'total s':>8} | agree")
    for spec in plans:
        files = [str(f) for f in ipc_files(bench, spec)]
        runs = {w: [] for w in VALIDATORS}
        for r in range(rounds):
            for w in (VALIDATORS if r % 2 == 0 else VALIDATORS[::-1]):
                runs[w].append(json.loads(child(["--one", w, *files])))
        agree = all(key_of(a) == key_of(b) for a, b in zip(runs["new"], runs["up"]))
        for w in VALIDATORS:
            med = {k: statistics.median(r[k] for r in runs[w]) for k in ("parse_s", "validate_s", "total_s")}
            row = {"plan": spec, "validator": w, "steps": runs[w][0]["steps"], **med, "rounds": rounds,
                   "valid": runs[w][0]["valid"], "cost": runs[w][0]["cost"], "agree": agree,
                   "total_s_all": [r["total_s"] for r in runs[w]]}
            rows.append(row)
            print(f"{spec:34} {row['steps']:>6} | {w:9} {med['parse_s']:8.2f} {med['validate_s']:8.2f} "
                  f"{med['total_s']:8.2f} | {agree}", flush=True)
    return rows


def key_of(row: dict) -> tuple:
    return row["valid"], row["step"], row["cost"]


def summarise(rows: list[dict]) -> list[dict]:
    """Per domain and case (reference plan or variant kind): plans, agreeing verdicts, valid
    verdicts of each validator and their seconds; then every disagreeing row in full."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["domain"], r["case"]), []).append(r)
    out = [{"domain": d, "case": c, "plans": len(g), "agree": sum(r["agree"] for r in g),
            "valid_new": sum(r["new"][0] for r in g), "valid_up": sum(r["up"][0] for r in g),
            "new_s": round(sum(r["new_s"] for r in g), 2), "up_s": round(sum(r["up_s"] for r in g), 2)}
           for (d, c), g in groups.items()]
    return out + [{"disagreement": r} for r in rows if not r["agree"]]


def agreement(bench: Path, with_variants: bool) -> list[dict]:
    """Both validators on every reference plan (:func:`agree_domain`, one process per domain);
    prints a line per domain and every disagreement; returns :func:`summarise` of the rows."""
    rows = []
    for suite in ("ipc2023-learning", "satr"):
        for d in sorted(p for p in (bench / suite).iterdir() if (p / "domain.pddl").is_file()):
            got = json.loads(child(["--agree-domain", str(d), *(["--variants"] if with_variants else [])]))
            rows += got
            ok = sum(r["agree"] for r in got)
            refs = [r for r in got if r["case"] == "reference"]
            valid = [sum(r[w][0] for r in refs) for w in ("new", "up")]
            print(f"{suite}/{d.name:12} {ok:5}/{len(got):<5} agree; reference plans valid: "
                  f"{valid[0]}/{len(refs)} (new), {valid[1]}/{len(refs)} (UP); "
                  f"seconds: new {sum(r['new_s'] for r in got):.1f}, UP {sum(r['up_s'] for r in got):.1f}", flush=True)
            for r in got:
                if not r["agree"]:
                    print(f"  DISAGREE {r['plan']} [{r['case']}]: new {r['new']} | UP {r['up']}: {r['reasons']}",
                          flush=True)
    print(f"total: {sum(r['agree'] for r in rows)}/{len(rows)} agree")
    return summarise(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--benchmarks", type=Path, default=BENCHMARKS)
    ap.add_argument("--plans", nargs="+", default=list(DEFAULT_PLANS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--agreement", action="store_true")
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--one", nargs=4, metavar=("VALIDATOR", "DOMAIN", "PROBLEM", "PLAN"), help=argparse.SUPPRESS)
    ap.add_argument("--agree-domain", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(*a.one)))
        return
    if a.agree_domain:
        print(json.dumps(agree_domain(a.agree_domain, a.variants)))
        return
    if not a.benchmarks.is_dir():
        sys.exit(f"{a.benchmarks} not present (the third-party benchmark folders: docs/params.md#third-party-folders)")
    from importlib.metadata import version

    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, Python {sys.version.split()[0]}, pddl {version('pddl')}, "
          f"unified-planning {version('unified-planning')}, {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    rows = agreement(a.benchmarks, a.variants) if a.agreement else timing(a.benchmarks, a.plans, a.rounds)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
