"""DVC stage `evaluate@<method>`: evaluate one method, resumable (see planarena.runner.stages). Usage: evaluate.py METHOD"""
import sys

from planarena.cli import stage_main
from planarena.runner.stages import run_evaluate_stage

if __name__ == "__main__":
    stage_main(run_evaluate_stage, sys.argv[1])
