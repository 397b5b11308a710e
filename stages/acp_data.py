"""DVC stage ``acp_data``: transition datasets of the ACPBench domains for EmbedPlan.

Reads ``params.yaml`` (``acp``, ``seed``); writes ``data/acp/``. See :mod:`planarena.datasets.acp`.
"""
from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("acp_data")
