"""DVC stage `trajectories`: replay validated plans into state sequences (see planarena.pipeline)."""
from planarena.cli import stage_main
from planarena.pipeline import run_trajectories_stage

if __name__ == "__main__":
    stage_main(run_trajectories_stage)
