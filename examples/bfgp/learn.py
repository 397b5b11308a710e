#!/usr/bin/env python3
"""BFGP++ under the IPC 2023 Learning Track contract:  learn.py [OPTIONS] DK DOMAIN TASK1 ... TASKN

Synthesises a generalized plan (a program with pointers over objects; Segovia-Aguas, Jiménez and
Jonsson, "Generalized planning as heuristic search", ICAPS 2021, and BFGP++) from the smallest
training tasks and writes it to DK. Program sizes are tried from --min-lines up to --max-lines; the
first program found is kept. A size whose search space holds no program ends quickly; the track's
CPU limit (SIGTERM) ends a long one, and then DK stays unwritten (nothing was synthesised).

Options (before DK):  --tasks K (default 3)  --min-lines N (default 4)  --max-lines N (default 10)
                      --theory cpp|actions_strips|... (default cpp, BFGP++'s own default)

Needs the `up-bfgp` wheel and `tarski` (`make outside` installs them in .venv-outside).
"""
import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bfgp_files import main_bin, translate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=3)
    ap.add_argument("--min-lines", type=int, default=4)
    ap.add_argument("--max-lines", type=int, default=10)
    ap.add_argument("--theory", default="cpp")
    ap.add_argument("dk")
    ap.add_argument("domain")
    ap.add_argument("tasks_", nargs="+", metavar="TASK")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bfgp-learn-") as tmp:
        folder = Path(tmp)
        for i, task in enumerate(args.tasks_[: args.tasks], start=1):
            translate(args.domain, task, folder, i)
        for lines in range(args.min_lines, args.max_lines + 1):
            print(f"BFGP++ synthesis with {lines} program lines on {min(args.tasks, len(args.tasks_))} tasks",
                  flush=True)
            out = subprocess.run([str(main_bin()), "-m", "synthesis", "-t", args.theory, "-f", str(folder) + "/",
                                  "-l", str(lines), "-o", str(folder / "dk")], capture_output=True, text=True)
            program = folder / "dk.prog"
            if program.is_file():
                shutil.copy(program, args.dk)
                print(program.read_text(), flush=True)
                return
            last = [l for l in out.stdout.splitlines() if l.startswith("[INFO]")][-3:]
            print("  " + " | ".join(last), flush=True)
    sys.exit(f"no program of {args.min_lines}-{args.max_lines} lines solves the training tasks")


if __name__ == "__main__":
    main()
