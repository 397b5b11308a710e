"""DVC stage ``embed_acp``: frozen sentence embeddings of every state and ground action of
``data/acp``, per encoder of ``acp.encoders``; writes ``data/embeddings/acp/<encoder>/``, reuses
the embedding cache in ``data/cache/text/``. See :mod:`planarena.features.text.acp`.
"""

from planarena.cli import stage_main
from planarena.features.text.acp import run_stage

if __name__ == "__main__":
    stage_main(run_stage)
