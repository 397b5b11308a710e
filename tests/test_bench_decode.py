"""benchmarks/bench_decode.py: lockstep decoding with ``--jobs 2`` (round-robin shards on executor
workers, as the coverage protocol deals a split to ``jobs`` processes) gives the plans of ``--jobs 1``."""

import json
import subprocess
import sys

import yaml
from conftest import ROOT, only_domains

from planarena.config import Layout
from planarena.datasets.reference_plans import run_plan_stage, run_trajectories_stage
from planarena.datasets.suites import run_stage as generate
from planarena.features.wl import run_stage as embed_wl
from planarena.runner.stages import run_train_stage


def test_bench_decode_with_two_jobs_decodes_the_plans_of_one(smoke_params, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    params = only_domains(smoke_params, "blocksworld")
    bw = params["suites"]["generated"]["domains"]["blocksworld"]
    bw["count"]["extrapolation"] = 3            # three problems: two shards of 2 and 1
    params["transition_models"]["pool"]["protocols"] = []   # no candidate-pool models (no ACP data)
    params["methods"] = {"wl_xgb_delta": params["methods"]["wl_xgb_delta"]}
    params["jobs"] = 1
    (ws / "params.yaml").write_text(yaml.safe_dump({**params, "profile": "default", "profiles": {"default": {}}}))
    layout = Layout(root=ws / "data")
    generate(params, layout)
    run_plan_stage(params, layout)
    run_trajectories_stage(params, layout)
    embed_wl(params, layout)
    assert run_train_stage(params, layout, "wl_xgb_delta")["status"] == "ok"

    out = tmp_path / "rows.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_decode.py"), "--workspace", str(ws),
                           "--methods", "wl_xgb_delta", "--domains", "blocksworld", "--split", "extrapolation",
                           "--threads", "1", "--modes", "lockstep", "--jobs", "1", "2", "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(out.read_text())
    assert [r["jobs"] for r in rows] == [1, 2]
    assert all(r["problems"] == 3 and r["plans_identical"] for r in rows)
    assert len(rows[1]["shard_s"]) == 2 and rows[0]["solved"] == rows[1]["solved"]
