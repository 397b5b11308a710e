"""DVC stage ``embed_wl``: WL (ILG) histograms of all trajectories; see :mod:`planarena.features.wl`.
"""
from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("embed_wl")
