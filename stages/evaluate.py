"""DVC stage `evaluate@<method>`: evaluate one method, resumable (see planarena.runner.stages). Usage: evaluate.py METHOD
"""
import sys

from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("evaluate", sys.argv[1])
