"""DVC stage ``embed_text``: sentence embeddings of templated trajectory states, actions and goals.

Reads ``params.yaml`` (``embed_text``), ``data/problems`` and ``data/trajectories``; writes
``data/embeddings/text/<encoder>/``; reuses the embedding cache in ``data/cache/text/``.
See :mod:`planarena.features.text.encoder`.
"""

from planarena.config import Layout, load_params
from planarena.features.text.encoder import run_stage

if __name__ == "__main__":
    run_stage(load_params("params.yaml"), Layout())
