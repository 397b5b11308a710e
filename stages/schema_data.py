"""DVC stage ``schema_data``: transition data of the schema-learning task (DIAS).

Reads ``params.yaml`` (``schema``, ``seed``); writes ``data/schema/``. See :mod:`planarena.datasets.schema`.
"""
from planarena.runner.entry import run_stage_script

if __name__ == "__main__":
    run_stage_script("schema_data")
