"""DVC stage ``acp_data``: transition datasets of the ACPBench domains for EmbedPlan.

Reads ``params.yaml`` (``acp``, ``seed``); writes ``data/acp/``. See :mod:`planarena.datasets.acp`.
"""

from planarena.cli import stage_main
from planarena.datasets.acp import run_stage

if __name__ == "__main__":
    stage_main(run_stage)
