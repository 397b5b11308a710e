#!/usr/bin/env python3
"""Example learner under the IPC 2023 Learning Track contract:  learn.py DK DOMAIN TASK1 ... TASKN

It "learns" one number from the training tasks (given smallest first): the most states a
goal-count greedy search expanded on them, which plan.py then uses as its expansion budget (x4).
It uses pymimir (PDDL parsing and successors) and knows nothing of planarena.
"""
import json
import sys

from search import gbfs


def main(dk: str, domain: str, *tasks: str) -> None:
    most = 0
    for task in tasks:
        _, expanded = gbfs(domain, task, budget=100_000)
        most = max(most, expanded)
    with open(dk, "w") as fh:
        json.dump({"budget": 4 * max(most, 100), "tasks": len(tasks)}, fh)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: learn.py DK DOMAIN TASK...")
    main(*sys.argv[1:])
