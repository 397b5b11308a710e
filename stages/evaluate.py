"""DVC stage `evaluate`: evaluate every row of `methods` that runs in the active profile and whose inputs
changed (see planarena.runner.stages.run_evaluate_rows). Usage: evaluate.py [ROW ...]  (no rows: all)
"""
import sys

from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("evaluate", *sys.argv[1:])
