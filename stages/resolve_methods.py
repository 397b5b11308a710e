"""DVC stage ``resolve_methods``: see :mod:`planarena.runner.inputs`.
"""
from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("resolve_methods")
