"""DVC stage ``embed_acp``: frozen sentence embeddings of every state and ground action of
``data/acp``, per encoder of ``acp.encoders``; writes ``data/embeddings/acp/<encoder>/``, reuses
the embedding cache in ``data/cache/text/``. See :mod:`planarena.features.text.acp`.
"""
from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("embed_acp")
