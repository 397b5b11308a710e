"""DVC stage ``embed_wl``: WL (ILG) histograms of all trajectories; see :mod:`planarena.features.wl`."""

from planarena.config import Layout, load_params
from planarena.features.wl import run_stage

if __name__ == "__main__":
    run_stage(load_params("params.yaml"), Layout())
