#!/usr/bin/env python3
"""BFGP++ under the IPC 2023 Learning Track contract:  plan.py DK DOMAIN TASK PLAN

Runs the generalized plan in DK (written by learn.py) on TASK with BFGP++'s interpreter and writes
the actions it executes to PLAN, in the task's own names. When the program does not reach the goal
on TASK (BFGP++: "INVALID GENERAL PLAN"), no PLAN is written: the task is unsolved.
"""
import subprocess
import sys
import tempfile
from pathlib import Path

from bfgp_files import main_bin, pddl_names, translate


def main(dk: str, domain: str, task: str, plan: str, theory: str = "cpp") -> None:
    if not Path(dk).is_file() or not Path(dk).read_text().strip():
        sys.exit("no program in DK (learn synthesised none)")
    with tempfile.TemporaryDirectory(prefix="bfgp-plan-") as tmp:
        folder = Path(tmp)
        translate(domain, task, folder, 1)
        program = folder / "dk.prog"
        program.write_text(Path(dk).read_text())
        out = subprocess.run([str(main_bin()), "-m", "validation-prog", "-t", theory, "-f", str(folder) + "/",
                              "-p", str(program), "-o", str(folder) + "/", "-plans", "True"],
                             capture_output=True, text=True)
        if "INVALID" in out.stdout or not (folder / "plan.1").is_file():
            said = [l for l in out.stdout.splitlines() if l.startswith("[ERROR]") or "INVALID" in l][:1]
            print("the program does not reach the goal on this task" + (f": {said[0]}" if said else ""), flush=True)
            return
        names = pddl_names(domain, task)
        actions = []
        for line in (folder / "plan.1").read_text().splitlines():
            line = line.strip()
            if line and not line.startswith(";"):
                words = line.strip("()").split()
                actions.append("(" + " ".join(names.get(w, w) for w in words) + ")")
        Path(plan).write_text("\n".join(actions) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: plan.py DK DOMAIN TASK PLAN")
    main(*sys.argv[1:])
