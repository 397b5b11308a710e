"""DVC stage ``embed_acp``: frozen sentence embeddings of every state and ground action of
``data/acp``, per encoder of ``acp.encoders``; writes ``data/embeddings/acp/<encoder>/``, reuses
the embedding cache in ``data/cache/text/``. See :mod:`planarena.embed_acp`.
"""

from planarena.cli import stage_main
from planarena.embed_acp import run_stage

if __name__ == "__main__":
    stage_main(run_stage)
