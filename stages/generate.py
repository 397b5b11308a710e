"""DVC stage `generate`: build data/problems for params `suite` (see planarena.datasets.suites).
"""
from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("generate")
