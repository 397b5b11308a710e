"""DVC stage ``report``: render reports/leaderboard.md, reports/metrics.json and reports/plots/.

Thin entry script (docs/layout.md): all logic lives in :mod:`planarena.report.leaderboard`.
Run from the repository root: ``python stages/report.py``.
"""
from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("report")
