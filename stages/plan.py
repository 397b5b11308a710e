"""DVC stage `plan`: Fast Downward reference plans, validated (see planarena.datasets.reference_plans).
"""
from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("plan")
