"""DVC stage `generate`: build data/problems for params `suite` (see planarena.datasets.suites)."""
from planarena.cli import stage_main
from planarena.datasets.suites import run_stage

if __name__ == "__main__":
    stage_main(run_stage)
