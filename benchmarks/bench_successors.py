#!/usr/bin/env python
"""CPU seconds of the width-based lookaheads with a grounded vs pymimir's lifted applicable-action
generator (``planarena.core.successors``), side by side in one run, on real IPC 2023 Learning Track
problems (``--suite``: a folder outside the repository, docs/params.md#third-party-folders).

For each problem, on a fresh parse per generator, one lookahead of ``--kind`` at every
``--every``-th state of the suite's reference plan (``plans/``):
the states a policy meets on its way to the goal (a lookahead from the initial state alone is far
cheaper than from a state with spanners in hand). The two generators must build the same trees (the
script stops otherwise); the table gives their lookaheads, successors generated, CPU seconds, the
microseconds per generated successor and the ratio lifted / grounded.

Example::

    python benchmarks/bench_successors.py --domain spanner --problems testing/medium/p18 testing/medium/p30 \\
        --json out.json --markdown out.md
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = ROOT.parent / "shared" / "benchmarks" / "ipc2023-learning"


def plan_states(suite: Path, domain: str, name: str) -> list[str]:
    """The suite's reference plan of problem ``name`` (``plans/<name>.plan``: action texts).

    Raises:
        SystemExit: no plan file there."""
    path = suite / domain / "plans" / f"{name}.plan"
    if not path.is_file():
        raise SystemExit(f"--suite {suite}: no reference plan {path}")
    return [line.strip() for line in path.read_text().splitlines() if line.strip().startswith("(")]


def run_generator(domain_file: Path, problem_file: Path, plan: list[str], kind: str, every: int,
                  grounded: bool) -> tuple[dict, list]:
    """Lookaheads along ``plan`` with one generator: (row, trees as comparable tuples)."""
    from planarena.core.pddl import parse_problem
    from planarena.core.successors import Successors
    from planarena.methods.rgnn_policies.lookahead import AtomFeatures, lookahead, object_types

    problem = parse_problem(domain_file, problem_file)
    start = time.process_time()
    succs = Successors(problem, grounded=grounded)
    setup = time.process_time() - start
    novelty = {"iw": "iw", "aiw": "aiw", "caiw": "aiw", "baiw": "baiw"}[kind]
    features = AtomFeatures(problem, novelty, object_types(problem_file, domain_file))
    state, cpu, generated, trees = problem.get_initial_state(), 0.0, 0, []
    for step, text in enumerate(plan):
        if step % every == 0:
            start = time.process_time()
            tree = lookahead(problem, state, kind, features, successors=succs)
            cpu += time.process_time() - start
            generated += tree.generated
            trees.append(([tuple(str(a) for a in j.actions) for j in tree.jumps], tree.expanded, tree.generated))
        state = next(a for a in state.generate_applicable_actions() if str(a) == text).apply(state)
    return {"generator": "grounded" if succs.grounded else "lifted", "setup_cpu_s": round(setup, 3),
            "lookaheads": len(trees), "generated": generated, "cpu_s": round(cpu, 3),
            "us_per_generated": round(cpu / max(generated, 1) * 1e6, 2)}, trees


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", type=Path, default=DEFAULT_SUITE, help="the IPC 2023 Learning Track folder")
    ap.add_argument("--domain", default="spanner")
    ap.add_argument("--problems", nargs="+", default=["testing/medium/p18", "testing/medium/p30"],
                    help="problem files relative to the domain folder, without .pddl")
    ap.add_argument("--kind", default="aiw", choices=["iw", "aiw", "caiw", "baiw"])
    ap.add_argument("--every", type=int, default=5, help="a lookahead at every n-th state of the plan")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()
    domain_file = args.suite / args.domain / "domain.pddl"
    if not domain_file.is_file():
        raise SystemExit(f"--suite {args.suite}: no {args.domain}/domain.pddl there")
    rows = []
    for name in args.problems:
        problem_file = args.suite / args.domain / f"{name}.pddl"
        plan = plan_states(args.suite, args.domain, name)
        got = {}
        for grounded in (True, False):
            row, trees = run_generator(domain_file, problem_file, plan, args.kind, args.every, grounded)
            got[row["generator"]] = (row, trees)
        if got["grounded"][1] != got["lifted"][1]:
            raise SystemExit(f"{problem_file}: the grounded and lifted generators built different trees")
        g, lifted = got["grounded"][0], got["lifted"][0]
        rows.append({"problem": f"{args.domain}/{name}", "plan_length": len(plan), "kind": args.kind,
                     "grounded": g, "lifted": lifted, "ratio_lifted_over_grounded": round(lifted["cpu_s"] / max(g["cpu_s"], 1e-9), 2)})
        print(json.dumps(rows[-1]))
    info = {"cpu": platform.processor() or platform.machine(), "python": platform.python_version()}
    try:
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "rows": rows}, indent=1) + "\n")
    if args.markdown:
        lines = [f"Lookaheads ({args.kind}) along the reference plan, every {args.every}th state; {info['cpu']}.", "",
                 "| problem | plan | lookaheads | generated | grounded CPU s | lifted CPU s | us/generated (grounded, lifted) | lifted / grounded |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            g, lifted = r["grounded"], r["lifted"]
            lines.append(f"| {r['problem']} | {r['plan_length']} | {g['lookaheads']} | {g['generated']} | {g['cpu_s']} | "
                         f"{lifted['cpu_s']} | {g['us_per_generated']}, {lifted['us_per_generated']} | {r['ratio_lifted_over_grounded']} |")
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
