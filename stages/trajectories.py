"""DVC stage `trajectories`: replay validated plans into state sequences (see planarena.datasets.reference_plans)."""
from planarena.cli import stage_main
from planarena.datasets.reference_plans import run_trajectories_stage

if __name__ == "__main__":
    stage_main(run_trajectories_stage)
