"""The executor (planarena.core.executor): order, faults, remote workers, GPU placement, checks.

Every test here runs real Dask clusters on this machine: a LocalCluster forked from the test
process, or a `dask scheduler` and two `dask worker` processes started as subprocesses (a multi-node
run simulated on one machine). None needs a GPU.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import ROOT, only_domains

import planarena.methods.random_walk as rw
from planarena.core.io import read_jsonl
from planarena.datasets.reference_plans import run_plan_stage
from planarena.datasets.suites import run_stage as generate
from planarena.core import executor
from planarena.core.executor import (
    ExecutorConfig,
    ExecutorError,
    config_from_params,
    run_units,
    run_units_as_completed,
    slurm_kwargs,
    unit_resources,
)
from planarena.runner.stages import run_evaluate_stage, run_train_stage


def _square(u: int) -> tuple[int, int]:
    return u, u * u


# -- order and errors ------------------------------------------------------------------------------


def test_run_units_in_order_for_any_jobs():
    offset = 10  # a closure: cloudpickle sends it to the workers

    def work(u: int) -> tuple[int, int]:
        return u, u * u + offset

    units = list(range(23))
    serial = list(run_units(work, units, jobs=1))
    parallel = list(run_units(work, units, jobs=2))
    assert serial == parallel == [(u, u * u + 10) for u in units]


def _wait_until(condition, seconds: float = 60.0) -> None:
    """Poll ``condition`` until it holds or ``seconds`` pass: a unit made slow by a condition, not by a
    sleep that races the workers' start-up on a loaded machine (the bound keeps a wrong executor
    from hanging the test; it then fails its order assertion)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_run_units_as_completed_yields_a_fast_unit_before_a_slow_one_before_it(tmp_path):
    taken = tmp_path / "first-taken"

    def work(u: int) -> int:
        if u == 0:   # slow: returns only after the caller has taken a result
            _wait_until(taken.exists)
        return u * u

    results = run_units_as_completed(work, [0, 1, 2], jobs=2)
    first = next(results)
    taken.touch()
    out = [first, *results]
    assert sorted(out) == [(0, 0), (1, 1), (2, 4)]
    assert first[0] != 0
    assert list(run_units_as_completed(work, [1, 2], jobs=1)) == [(1, 1), (2, 4)]


def test_run_units_reraises_an_exception_of_the_function():
    def boom(u):
        raise RuntimeError(f"unit {u}")

    with pytest.raises(RuntimeError, match="unit 0"):
        list(run_units(boom, [0, 1, 2], jobs=2))


def test_parallel_false_runs_in_the_stage_process():
    pids = list(run_units(lambda u: os.getpid(), [0, 1, 2], jobs=2, parallel=False))
    assert pids == [os.getpid()] * 3
    workers = set(run_units(lambda u: os.getpid(), list(range(6)), jobs=2))
    assert os.getpid() not in workers


def test_units_too_few_for_a_cluster_run_in_the_stage_process():
    """Fewer units than the caller's `min_units` (the coverage protocol asks 3 for lockstep
    shards) run in the stage process; 2 units by default go to a cluster; `executor.min_units`
    in the params overrides the caller."""
    executor.configure(ExecutorConfig(jobs=2))
    assert set(run_units(lambda u: os.getpid(), [0, 1], min_units=3)) == {os.getpid()}
    assert os.getpid() not in set(run_units(lambda u: os.getpid(), [0, 1]))
    executor.configure(ExecutorConfig(jobs=2, min_units=1))
    assert os.getpid() not in set(run_units(lambda u: os.getpid(), [0, 1], min_units=3))
    executor.configure(None)
    assert config_from_params({"executor": {"min_units": 5}}).min_units == 5
    with pytest.raises(ExecutorError, match="min_units` must be >= 0"):
        config_from_params({"executor": {"min_units": -1}})


# -- params ----------------------------------------------------------------------------------------


def test_config_from_params_defaults_and_errors(tmp_path):
    cfg = config_from_params({"jobs": 3}, tmp_path)
    assert (cfg.mode, cfg.local_workers, cfg.retries, cfg.root) == ("local", 3, 2, str(tmp_path.resolve()))
    assert config_from_params({"executor": {"address": "tcp://h:8786"}}).mode == "address"
    slurm = {"cores": 4, "memory": "8GB", "walltime": "01:00:00"}
    assert config_from_params({"executor": {"slurm": slurm}}).mode == "slurm"
    for bad, msg in [({"adress": "tcp://h:1"}, "unknown key"), ({"address": "h:8786"}, "expected e.g. tcp://"),
                     ({"address": "tcp://h:1", "slurm": slurm}, "at most one"),
                     ({"slurm": {"cores": 4}}, "executor.slurm.memory"), ({"retries": -1}, ">= 0"),
                     ({"slurm": {**slurm, "partition": "x"}}, "unknown key")]:
        with pytest.raises(ExecutorError, match=msg):
            config_from_params({"executor": bad})


def test_slurm_job_script_from_params():
    """The `executor.slurm` block becomes the job script dask-jobqueue submits (no Slurm needed to
    render it): partition, resources, one single-threaded worker per core, the GPU resource."""
    pytest.importorskip("dask_jobqueue")
    block = {"queue": "gpu", "account": "plan", "cores": 8, "memory": "16GB", "walltime": "02:00:00", "jobs": 3,
             "gpus": 2, "job_script_prologue": ["source /shared/planarena/.venv/bin/activate"]}
    cfg = config_from_params({"executor": {"slurm": block}})
    assert slurm_kwargs(cfg.slurm)["processes"] == 2  # one worker per GPU
    assert slurm_kwargs({"cores": 4, "memory": "8GB", "walltime": "1:00:00"})["processes"] == 4  # one per core
    with pytest.raises(ExecutorError, match="one worker per GPU"):
        slurm_kwargs({**block, "processes": 4})
    cluster = executor.slurm_cluster(cfg)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    for line in ("#SBATCH -p gpu", "#SBATCH -A plan", "#SBATCH -t 02:00:00", "#SBATCH --gres=gpu:2",
                 "source /shared/planarena/.venv/bin/activate", "--nworkers 2", "--resources GPU=1"):
        assert line in script, (line, script)
    command = script.strip().splitlines()[-1]
    assert command.rindex("--nthreads 1") > command.index("--nthreads")  # the last --nthreads is 1


# -- placement and checks --------------------------------------------------------------------------


def test_unit_resources():
    assert unit_resources("cuda") == unit_resources("cuda:1") == {"GPU": 1}
    assert unit_resources("cpu") is None and unit_resources("auto") is None and unit_resources(None) is None


def test_cuda_unit_without_a_gpu_worker_is_a_clear_error():
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: its local cluster declares it")
    with pytest.raises(ExecutorError, match="no worker of the executor .* has a GPU"):
        list(run_units(_square, [1, 2, 3], jobs=2, device="cuda"))


def test_worker_that_cannot_see_the_data_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(executor, "_sees", lambda root: False)  # the patch reaches the forked workers
    executor.configure(ExecutorConfig(jobs=2, root=str(tmp_path)))
    with pytest.raises(ExecutorError, match=f"cannot read {tmp_path}.*filesystem every worker sees"):
        list(run_units(_square, [1, 2, 3]))


def test_worker_with_other_code_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(executor, "_worker_code", lambda: "an older checkout")
    with pytest.raises(ExecutorError, match="run other planarena code"):
        list(run_units(_square, [1, 2, 3], jobs=2))


# -- faults: a worker killed during a stage ----------------------------------------------------------


@pytest.fixture
def planned(smoke_params, layout):
    only_domains(smoke_params, "blocksworld", "gripper")
    generate(smoke_params, layout)
    run_plan_stage(smoke_params, layout)
    run_train_stage(smoke_params, layout, "random_walk")
    return smoke_params, layout


def _keys(recs: list[dict]) -> list[tuple]:
    return [(r["domain"], r["split"], r["problem"], r["seed"]) for r in recs]


def _expected(params, layout) -> set[tuple]:
    from planarena.core.problemset import ProblemSet

    splits, seeds = params["evaluation"]["splits"], params["evaluation"]["seeds"]
    return {(e.domain, e.split, e.problem, s) for e in ProblemSet(layout.problems).entries if e.split in splits
            for s in seeds}


def test_killed_worker_loses_only_its_unit_which_is_retried(planned, monkeypatch, tmp_path):
    """SIGKILL a worker process while it runs an attempt: the stage completes, the attempt is rerun
    on another worker, every record is present exactly once and none is an error."""
    params, layout = planned
    expected = _expected(params, layout)
    victim = sorted(expected)[0]
    marker = tmp_path / "victim.pid"
    real = rw.RandomWalk.solve

    def solve(self, task, seed):
        e = task.entry
        if (e.domain, e.split, e.problem, seed) == victim and not marker.exists():
            marker.write_text(str(os.getpid()))
            time.sleep(120)  # killed by the test meanwhile
        return real(self, task, seed)

    monkeypatch.setattr(rw.RandomWalk, "solve", solve)
    killed: list[int] = []

    def killer():
        for _ in range(1200):
            if marker.exists() and marker.read_text():
                pid = int(marker.read_text())
                assert pid != os.getpid()
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    run_evaluate_stage(params, layout, "random_walk")
    thread.join(timeout=5)
    assert killed, "no worker was killed: the victim attempt never ran on a worker"
    recs = read_jsonl(layout.results / "random_walk.jsonl")
    assert sorted(_keys(recs)) == sorted(expected) and len(set(_keys(recs))) == len(recs)
    assert not [r for r in recs if r["outcome"] == "error"]


def test_unit_that_keeps_killing_its_worker_is_an_error_record(planned, monkeypatch):
    params, layout = planned
    params["executor"] = {"retries": 1}
    expected = _expected(params, layout)
    victim = sorted(expected)[-1]
    real = rw.RandomWalk.solve

    def solve(self, task, seed):
        e = task.entry
        if (e.domain, e.split, e.problem, seed) == victim:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, task, seed)

    monkeypatch.setattr(rw.RandomWalk, "solve", solve)
    executor.configure(config_from_params(params, layout.root))
    run_evaluate_stage(params, layout, "random_walk")
    recs = read_jsonl(layout.results / "random_walk.jsonl")
    assert sorted(_keys(recs)) == sorted(expected) and len(set(_keys(recs))) == len(recs)
    bad = [r for r in recs if r["outcome"] == "error"]
    assert _keys(bad) == [victim]
    assert "worker died 2 time(s)" in bad[0]["failure_reason"] and "executor.retries = 1" in bad[0]["failure_reason"]


# -- an existing scheduler: `dask scheduler` + two `dask worker` processes ----------------------------


@pytest.fixture
def dask_cluster(tmp_path):
    """A scheduler and two single-threaded workers started as shell commands would start them
    (docs/scaling.md); yields the scheduler's address."""
    pytest.importorskip("distributed")
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "src"),
           "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0"}
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--no-dashboard",
                               "--host", "127.0.0.1", "--port", "0", "--scheduler-file", str(sched_file)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for _ in range(600):
            if sched_file.exists() and sched_file.read_text().strip():
                break
            time.sleep(0.05)
        address = json.loads(sched_file.read_text())["address"]
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                           "--nthreads", "1", "--no-dashboard"], env=env, cwd=ROOT,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        # both workers registered before the test dispatches (on a loaded machine the second one
        # can take seconds to connect, and the scheduler would give every unit to the first)
        from distributed import Client
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        executor.shutdown()
        # killed, not terminated: a terminated worker's graceful close waits seconds for the scheduler
        for p in reversed(procs):
            p.kill()
        for p in procs:
            p.wait(timeout=10)


def _comparable(recs: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in ("wall_time", "peak_memory_mb")} for r in recs]


def test_existing_scheduler_gives_the_records_of_the_stage_process(planned, dask_cluster):
    params, layout = planned
    serial = {**params, "jobs": 1}
    run_evaluate_stage(serial, layout, "random_walk")
    here = _comparable(read_jsonl(layout.results / "random_walk.jsonl"))
    (layout.results / "random_walk.jsonl").unlink()

    remote = {**params, "executor": {"address": dask_cluster, "connect_timeout": 60}}
    executor.configure(config_from_params(remote, layout.root))
    assert executor.remote()
    pids = set(run_units(lambda u: os.getpid(), list(range(8))))
    assert len(pids) == 2 and os.getpid() not in pids  # both shell-started workers took units
    run_evaluate_stage(remote, layout, "random_walk")
    assert _comparable(read_jsonl(layout.results / "random_walk.jsonl")) == here
    assert len(here) == len(_expected(params, layout))


def test_no_scheduler_at_the_address_is_a_clear_error():
    executor.configure(ExecutorConfig(address="tcp://127.0.0.1:1", connect_timeout=2))
    with pytest.raises(ExecutorError, match="no Dask scheduler at tcp://127.0.0.1:1"):
        list(run_units(_square, [1, 2]))


def test_stage_reports_executor_errors_in_one_line(tmp_path):
    """A stage script with a broken `executor` block exits 1 with one line naming the param."""
    work = tmp_path / "w"
    work.mkdir()
    params = (ROOT / "params.yaml").read_text().replace("  retries: 2 ", "  retries: -3 ", 1)
    assert "retries: -3" in params
    (work / "params.yaml").write_text(params)
    proc = subprocess.run([sys.executable, str(ROOT / "stages" / "resolve.py")], cwd=work, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == ["error: params: `jobs`, `executor.retries` and `executor.min_units` must be >= 0"]


def test_executor_params_rerun_no_stage():
    """`executor` and `jobs` decide where units run, never results: no stage reads them."""
    from planarena.runner import inputs

    params = {"jobs": 2, "executor": {"address": "tcp://h:1"}, "seed": 0}
    assert inputs.select_params(params, ("*",)) == {"seed": 0}


def test_lockstep_shards_are_dealt_in_suite_order_and_dispatched_largest_first():
    """A shard's problems come from the suite's order (a batched forward pass's floats depend on
    its batch, so a shard must not change with the dispatch order); the shards then run largest
    first, so that no worker ends a row alone on its largest problem."""
    from types import SimpleNamespace

    from planarena.protocols.coverage import lockstep_units

    todo = [(SimpleNamespace(domain="d", split="s", objects=o, problem=f"p{o}"), 13) for o in (3, 5, 9, 4, 8)]
    shards = lockstep_units(todo, batch=2)   # ceil(5 / 2) = 3 shards, dealt round-robin
    assert [[e.objects for e, _ in shard] for shard in shards] == [[9], [5, 8], [3, 4]]
    assert lockstep_units(todo, batch=0) == [todo]   # one shard per (domain, split, seed)


def test_coverage_writes_each_unit_as_it_finishes_then_in_unit_order(tmp_path):
    """A unit that finished is written while a slower unit before it still runs (a run stopped then
    keeps it), and when the row ends the records of the call are in unit order after the lines
    already in the file: the same bytes as a serial run."""
    from types import SimpleNamespace

    from planarena.core.io import JsonlWriter
    from planarena.protocols.coverage import write_as_completed

    path = tmp_path / "results.jsonl"

    wait = {"on": False}

    def work(u: int) -> list[dict]:
        if u == 0 and wait["on"]:   # slow: returns only once another unit's record is in the file
            _wait_until(lambda: '"unit": 1' in path.read_text())
        return [{"unit": u, "k": 0}, {"unit": u, "k": 1}] if u == 1 else [{"unit": u}]

    class Recording(JsonlWriter):
        def write(self, obj: dict) -> None:
            written.append(obj["unit"])
            super().write(obj)

    def row(jobs: int) -> bytes:
        path.write_text('{"earlier": true}\n')
        with Recording(path) as writer:
            assert write_as_completed(SimpleNamespace(writer=writer), work, [0, 1, 2], "test", None, jobs=jobs) == 4
            writer.write({"unit": "after"})  # the writer goes on appending after the rewrite
        return path.read_bytes()

    written: list = []
    wait["on"] = True
    parallel = row(2)
    wait["on"] = False
    assert written[0] != 0  # a fast unit was on disk before the slow one before it finished
    lines = [json.loads(line) for line in parallel.decode().splitlines()]
    assert lines[0] == {"earlier": True} and lines[-1] == {"unit": "after"}
    assert [r["unit"] for r in lines[1:-1]] == [0, 1, 1, 2]
    assert row(1) == parallel
