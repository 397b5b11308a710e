"""DVC stage `plan`: Fast Downward reference plans, validated (see planarena.datasets.reference_plans)."""
from planarena.cli import stage_main
from planarena.datasets.reference_plans import run_plan_stage

if __name__ == "__main__":
    stage_main(run_plan_stage)
