"""DVC stage ``embed_text``: sentence embeddings of templated trajectory states, actions and goals.

Reads ``params.yaml`` (``embed_text``), ``data/problems`` and ``data/trajectories``; writes
``data/embeddings/text/<encoder>/``; reuses the embedding cache in ``data/cache/text/``.
See :mod:`planarena.features.text.encoder`.
"""
from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("embed_text")
