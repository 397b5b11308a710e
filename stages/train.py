"""DVC stage `train@<method>`: train one method (see planarena.runner.stages). Usage: train.py METHOD"""
import sys

from planarena.cli import stage_main
from planarena.runner.stages import run_train_stage

if __name__ == "__main__":
    stage_main(run_train_stage, sys.argv[1])
