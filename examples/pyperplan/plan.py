#!/usr/bin/env python3
"""pyperplan under the IPC 2023 Learning Track contract:  plan.py [OPTIONS] DK DOMAIN TASK PLAN

A classical planner with nothing to learn (its row has no `learn` command, so DK is empty): runs
pyperplan's search (Alkhazraji et al., pyperplan 2.1) on TASK and writes the plan to PLAN.
Options (before DK): --search gbf|astar|wastar|bfs|ehs|ids|sat (default gbf)
                     --heuristic hff|hadd|hmax|hsa|lmcut|landmark|blind|goalcount (default hff)
The harness's CPU-time limit ends a long search (SIGTERM); then no PLAN is written.

Needs `pyperplan` (`make outside` installs it in .venv-outside).
"""
import argparse
import logging
import sys
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--search", default="gbf")
    ap.add_argument("--heuristic", default="hff")
    ap.add_argument("dk")
    ap.add_argument("domain")
    ap.add_argument("task")
    ap.add_argument("plan")
    args = ap.parse_args()
    try:
        from pyperplan.planner import HEURISTICS, SEARCHES, search_plan
    except ImportError:
        sys.exit("pyperplan is not installed in this Python: run `make outside` (pip install pyperplan)")
    logging.basicConfig(level=logging.WARNING)
    if args.search not in SEARCHES or args.heuristic not in HEURISTICS:
        sys.exit(f"unknown --search {args.search!r} or --heuristic {args.heuristic!r}; "
                 f"searches: {sorted(SEARCHES)}, heuristics: {sorted(HEURISTICS)}")
    heuristic = None if args.search in ("bfs", "ids", "sat") else HEURISTICS[args.heuristic]
    solution = search_plan(args.domain, args.task, SEARCHES[args.search], heuristic)
    if solution is None:
        print("pyperplan found no plan", flush=True)
        return
    Path(args.plan).write_text("".join(op.name + "\n" for op in solution))


if __name__ == "__main__":
    main()
