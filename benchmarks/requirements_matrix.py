#!/usr/bin/env python
"""Which rows handle which PDDL requirement, established by running them.

Writes five tiny flat domain folders, each exercising one requirement beyond STRIPS on every
problem (its plans need the construct): ``briefcase`` (conditional effects: ``when`` under a
``forall``, the classic Briefcase World), ``reset`` (universal effects: a ``forall`` effect without
``when``), ``chain`` (negative preconditions), ``typed-gripper`` (typing) and ``toll`` (action
costs: ``increase (total-cost)``), six problems each of growing size, plus a plain STRIPS control.
It then runs the smoke profile on that folder of folders as a user would (a fresh clone,
``dvc exp run -S profile=smoke -S suite=<folder>``) and tabulates, per row and domain, the attempts
by outcome and the first error reason. A row *handles* a requirement when no attempt on its domain
errs (``error`` outcome); solving is not required (the smoke profile trains almost nothing).

Usage: python benchmarks/requirements_matrix.py [--work DIR] [--out FILE]   (after `make setup`)
Default out: benchmarks/results/requirements-matrix-<date>.md (the declarations in
``Method.requirements`` cite it).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def briefcase(n: int) -> tuple[str, str]:
    domain = """(define (domain briefcase)
  (:requirements :strips :conditional-effects)
  (:predicates (at ?o ?l) (in ?o) (bat ?l) (loc ?l) (obj ?o))
  (:action move :parameters (?from ?to)
    :precondition (and (bat ?from) (loc ?to))
    :effect (and (bat ?to) (not (bat ?from))
                 (forall (?o) (when (and (in ?o) (obj ?o)) (and (at ?o ?to) (not (at ?o ?from)))))))
  (:action put-in :parameters (?o ?l)
    :precondition (and (obj ?o) (at ?o ?l) (bat ?l))
    :effect (in ?o))
  (:action take-out :parameters (?o)
    :precondition (in ?o)
    :effect (not (in ?o))))
"""
    locs = [f"l{i}" for i in range(n + 1)]
    objs = [f"o{i}" for i in range(1, n + 1)]
    init = [f"(loc {l})" for l in locs] + [f"(obj {o})" for o in objs] + ["(bat l0)"]
    init += [f"(at o{i} l{i})" for i in range(1, n + 1)]
    goal = [f"(at o{i} l{(i % n) + 1 if n > 1 else 0})" for i in range(1, n + 1)]
    return domain, _problem("briefcase", locs + objs, init, goal)


def reset(n: int) -> tuple[str, str]:
    domain = """(define (domain reset)
  (:requirements :strips :conditional-effects)
  (:predicates (item ?x) (marked ?x) (cleared))
  (:action mark :parameters (?x) :precondition (and (item ?x) (cleared)) :effect (marked ?x))
  (:action clear-all :parameters () :precondition (and)
    :effect (and (cleared) (forall (?x) (not (marked ?x))))))
"""
    items = [f"x{i}" for i in range(1, n + 1)]
    init = [f"(item {x})" for x in items] + [f"(marked {x})" for x in items[: n // 2]]
    return domain, _problem("reset", items, init, ["(cleared)"] + [f"(marked {x})" for x in items])


def chain(n: int) -> tuple[str, str]:
    domain = """(define (domain chain)
  (:requirements :strips :negative-preconditions)
  (:predicates (on ?b) (next ?a ?b) (first ?b))
  (:action start :parameters (?b) :precondition (and (first ?b) (not (on ?b))) :effect (on ?b))
  (:action turn-on :parameters (?a ?b) :precondition (and (next ?a ?b) (on ?a) (not (on ?b))) :effect (on ?b)))
"""
    bulbs = [f"b{i}" for i in range(1, n + 2)]
    init = ["(first b1)"] + [f"(next b{i} b{i + 1})" for i in range(1, n + 1)]
    return domain, _problem("chain", bulbs, init, [f"(on {b})" for b in bulbs])


def typed_gripper(n: int) -> tuple[str, str]:
    domain = """(define (domain typed-gripper)
  (:requirements :strips :typing)
  (:types room ball gripper)
  (:predicates (at-robby ?r - room) (at ?b - ball ?r - room) (free ?g - gripper) (carry ?b - ball ?g - gripper))
  (:action move :parameters (?from ?to - room) :precondition (at-robby ?from)
    :effect (and (at-robby ?to) (not (at-robby ?from))))
  (:action pick :parameters (?b - ball ?r - room ?g - gripper)
    :precondition (and (at ?b ?r) (at-robby ?r) (free ?g))
    :effect (and (carry ?b ?g) (not (at ?b ?r)) (not (free ?g))))
  (:action drop :parameters (?b - ball ?r - room ?g - gripper)
    :precondition (and (carry ?b ?g) (at-robby ?r))
    :effect (and (at ?b ?r) (free ?g) (not (carry ?b ?g)))))
"""
    balls = [f"ball{i}" for i in range(1, n + 1)]
    objects = ["rooma rooma2 roomb - room", f"{' '.join(balls)} - ball", "left right - gripper"]
    init = ["(at-robby rooma)", "(free left)", "(free right)"] + [f"(at {b} rooma)" for b in balls]
    return domain, _problem("typed-gripper", objects, init, [f"(at {b} roomb)" for b in balls])


def toll(n: int) -> tuple[str, str]:
    domain = """(define (domain toll)
  (:requirements :strips :action-costs)
  (:predicates (at ?l) (road ?a ?b) (toll ?a ?b))
  (:functions (total-cost) - number)
  (:action drive :parameters (?a ?b) :precondition (and (at ?a) (road ?a ?b))
    :effect (and (at ?b) (not (at ?a)) (increase (total-cost) 1)))
  (:action drive-toll :parameters (?a ?b) :precondition (and (at ?a) (toll ?a ?b))
    :effect (and (at ?b) (not (at ?a)) (increase (total-cost) 5))))
"""
    locs = [f"c{i}" for i in range(n + 2)]
    init = ["(at c0)", "(= (total-cost) 0)"]
    init += [f"(road c{i} c{i + 1})" for i in range(n + 1)] + [f"(road c{i + 1} c{i})" for i in range(n + 1)]
    init += [f"(toll c0 c{n + 1})"]
    return domain, _problem("toll", locs, init, [f"(at c{n + 1})"], metric=True)


def strips(n: int) -> tuple[str, str]:
    domain = """(define (domain line)
  (:requirements :strips)
  (:predicates (at ?l) (road ?a ?b))
  (:action drive :parameters (?a ?b) :precondition (and (at ?a) (road ?a ?b)) :effect (and (at ?b) (not (at ?a)))))
"""
    locs = [f"c{i}" for i in range(n + 2)]
    init = ["(at c0)"] + [f"(road c{i} c{i + 1})" for i in range(n + 1)] + [f"(road c{i + 1} c{i})" for i in range(n + 1)]
    return domain, _problem("line", locs, init, [f"(at c{n + 1})"])


def _problem(domain: str, objects: list[str], init: list[str], goal: list[str], metric: bool = False) -> str:
    nl = "\n    "
    text = (f"(define (problem {domain}-p)\n  (:domain {domain})\n  (:objects {' '.join(objects)})\n"
            f"  (:init\n    {nl.join(init)})\n  (:goal (and\n    {nl.join(goal)}))")
    return text + ("\n  (:metric minimize (total-cost)))\n" if metric else ")\n")


DOMAINS = {"briefcase": (briefcase, ":conditional-effects (when under forall)"),
           "reset": (reset, ":conditional-effects (a forall effect, no when)"),
           "chain": (chain, ":negative-preconditions"),
           "typed-gripper": (typed_gripper, ":typing"),
           "toll": (toll, ":action-costs"),
           "line": (strips, ":strips (control)")}


def write_domains(root: Path, count: int = 6) -> None:
    """One flat folder per domain of :data:`DOMAINS` under ``root``: domain.pddl, p1..p<count>."""
    for name, (make, _) in DOMAINS.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(1, count + 1):
            domain, problem = make(i)
            (folder / f"p{i}.pddl").write_text(problem)
        (folder / "domain.pddl").write_text(domain)


def tabulate(results: Path) -> tuple[list[str], dict]:
    """Markdown lines: per row and domain, outcomes of the held-out and train attempts and the
    first error; and ``{row: {domain: "ok" | "error: ..."}}``."""
    table: dict[str, dict[str, collections.Counter]] = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    first_error: dict[tuple[str, str], str] = {}
    for f in sorted(results.glob("*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if r.get("domain") not in DOMAINS:
                continue
            table[r["method"]][r["domain"]][r["outcome"]] += 1
            if r["outcome"] in ("error", "not_applicable"):
                first_error.setdefault((r["method"], r["domain"]), (r.get("failure_reason") or "")[:160])
    verdict: dict = {}
    lines = ["| row | " + " | ".join(f"{d} ({DOMAINS[d][1]})" for d in DOMAINS) + " |",
             "|---|" + "---|" * len(DOMAINS)]
    for m in sorted(table):
        cells = []
        for d in DOMAINS:
            c = table[m].get(d)
            if not c:
                cells.append("–")
                continue
            bad = c.get("error", 0)
            verdict.setdefault(m, {})[d] = "ok" if not bad and not c.get("not_applicable") else \
                f"{'not applicable' if c.get('not_applicable') else 'error'}: {first_error.get((m, d), '')}"
            cells.append(", ".join(f"{k} {v}" for k, v in sorted(c.items())))
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return lines, verdict


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/planarena-requirements"))
    ap.add_argument("--out", type=Path,
                    default=REPO / "benchmarks" / "results" / f"requirements-matrix-{datetime.date.today()}.md")
    args = ap.parse_args()
    if args.work.exists():
        shutil.rmtree(args.work)
    suite = args.work / "domains"
    write_domains(suite)
    clone = args.work / "planarena"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    (clone / ".venv").symlink_to(REPO / ".venv")
    env = {**os.environ, "PATH": f"{REPO / '.venv' / 'bin'}:{os.environ['PATH']}", "PYTHONPATH": str(clone / "src"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    start = time.time()
    with open(args.work / "run.log", "w") as log:
        run = subprocess.run(["dvc", "exp", "run", "-S", "profile=smoke", "-S", f"suite={suite}"], cwd=clone, env=env,
                             stdout=log, stderr=subprocess.STDOUT)
    wall = time.time() - start
    lines, verdict = tabulate(clone / "data" / "results")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True).stdout.strip()
    head = [f"# Requirements matrix ({datetime.date.today()}, code {commit})", "",
            f"`python benchmarks/requirements_matrix.py`: the smoke profile on six tiny flat domains (six problems "
            f"each), one requirement beyond STRIPS each; `dvc exp run` exit code {run.returncode}, {wall:.0f} s wall. "
            "Cells: attempts by outcome (train and held-out splits, smoke seeds). A row handles a requirement when "
            "no attempt on its domain is an `error`.", ""]
    errors = [f"- `{m}` on `{d}`: {v}" for m, ds in sorted(verdict.items()) for d, v in ds.items() if v != "ok"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(head + lines + ["", "Errors and drops:", ""] + (errors or ["none"])) + "\n")
    (args.out.with_suffix(".json")).write_text(json.dumps(verdict, indent=1, sort_keys=True) + "\n")
    print(args.out.read_text())
    sys.exit(0 if run.returncode == 0 else 1)


if __name__ == "__main__":
    main()
