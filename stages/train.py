"""DVC stage `train@<method>`: train one method (see planarena.runner.stages). Usage: train.py METHOD
"""
import sys

from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("train", sys.argv[1])
