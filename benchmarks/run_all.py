"""Run every throughput benchmark on the existing pipeline outputs (`make bench`).

Needs a finished `dvc repro` (data/). The `dvc repro` wall times come from benchmarks/bench_repro.sh.
"""

import subprocess
import sys

for script in ("benchmarks/bench_pipeline.py", "benchmarks/bench_embed_wl.py", "benchmarks/bench_embed_text.py",
               "benchmarks/bench_transition_models.py", "benchmarks/bench_embedplan.py", "benchmarks/bench_dias.py"):
    print(f"== {script}", flush=True)
    subprocess.run([sys.executable, script], check=False)
