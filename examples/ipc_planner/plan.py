#!/usr/bin/env python3
"""Example anytime planner under the IPC 2023 Learning Track contract:  plan.py DK DOMAIN TASK PLAN

First a goal-count greedy search (fast, often long plans) writes PLAN.1; then a breadth-first
search (shortest plans) writes PLAN.2 when it finds a shorter one. Either may be cut by the
budget learned in DK; a SIGTERM (the track's time limit) ends it with what it has written.
"""
import json
import signal
import sys

from search import bfs, gbfs


def main(dk: str, domain: str, task: str, plan: str) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))   # the plans already written count
    budget = json.load(open(dk)).get("budget", 10_000)
    found, _ = gbfs(domain, task, budget)
    if found is not None:
        write(f"{plan}.1", found)
    shortest, _ = bfs(domain, task, budget)
    if shortest is not None and (found is None or len(shortest) < len(found)):
        write(f"{plan}.2", shortest)


def write(path: str, actions: list[str]) -> None:
    with open(path, "w") as fh:
        fh.write("".join(f"{a}\n" for a in actions) + f"; cost = {len(actions)} (unit cost)\n")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: plan.py DK DOMAIN TASK PLAN")
    main(*sys.argv[1:])
