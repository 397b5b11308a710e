"""End to end through DVC on the smoke profile, in a scratch copy of the repository:
`dvc repro` builds the leaderboard; a second `dvc repro` runs nothing; rerunning stages with the
same inputs rewrites the same bytes, also in the stage process (`jobs: 1`) instead of a 2-worker
Dask cluster (`metrics.json` and every output hash compared); a key of an inactive profile reruns
nothing; an edit to one family reruns that family and the report only; and
`dvc exp run -S profiles.smoke.planners.astar_lmcut.time_limit=...` reruns only the stages that
read it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, env: dict) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{out[-4000:]}"
    return out


def _lock_diff(work: Path, env: dict) -> str:
    return subprocess.run(["git", "diff", "dvc.lock"], cwd=work, env=env, capture_output=True, text=True).stdout[-4000:]


def _timeless_lock(lock_text: str) -> dict:
    """dvc.lock without what legitimately differs between two runs of the same inputs: the resolve
    stages (they hash the whole params file), the outputs of the evaluate stages (records carry
    wall times) and the report (its inputs are those records, its cost tables show the times)."""
    stages = yaml.safe_load(lock_text)["stages"]
    out = {}
    for name, entry in stages.items():
        if name in ("resolve", "resolve_methods", "report"):
            continue
        if name == "evaluate":
            entry = {k: v for k, v in entry.items() if k != "outs"}
        out[name] = entry
    return out


def _records_without_times(work: Path) -> dict:
    """Every record of ``data/results`` without its measurements (wall times, memory) and without
    ``extra.cached`` (whether Fast Downward's result came from the planner cache of an earlier run)."""
    def strip(rec: dict) -> dict:
        extra = {k: v for k, v in (rec.get("extra") or {}).items()
                 if not (k.endswith("_s") or "time" in k or k == "cached")}
        return {**{k: v for k, v in rec.items() if k not in ("wall_time", "peak_memory_mb")}, "extra": extra}

    return {f.name: [strip(json.loads(line)) for line in f.read_text().splitlines()]
            for f in sorted((work / "data" / "results").glob("*.jsonl"))}


def _ran(output: str) -> set[str]:
    """The DVC stages that ran, with the train and evaluate stages given as the rows they worked
    on (``train@<row>``, from the plan line each prints: ``train: 2 rows to run (a, b), ...``)."""
    stages = set(re.findall(r"Running stage '([^']+)'", output)) - {"train", "evaluate"}
    for stage, rows in re.findall(r"^(train|evaluate): \d+ rows to run \(([^)]*)\)", output, re.M):
        stages |= {f"{stage}@{row}" for row in rows.split(", ") if row != "none"}
    return stages


def _off(output: str) -> dict[str, int]:
    """Rows each of the train and evaluate stages reported off in this profile."""
    return {stage: int(n) for stage, n in re.findall(r"^(train|evaluate): .* (\d+) off in this profile", output, re.M)}


#: The methods the pipeline checks need: every family, every kind of floor a stage computes apart
#: (the walk, the untrained twin, the schema references) and of row (search, lookahead policy,
#: decoder, pool ranker, schema learner), and the methods whose retraining is compared byte for byte.
#: The other configurations are variants of these that the stages run the same way (unit tests
#: cover them: EmbedPlan's identity floor, DIAS's names-only observations); every row left out keeps
#: this test shorter (CI time): 11 rows and the off row.
E2E_METHODS = ("fd_astar_lmcut", "random_walk", "wl_xgb_delta", "wl_xgb_delta_untrained", "embedplan_mlp",
               "satr_encdec_cl_applicable", "aiw_ad", "aiw_ad_uniform", "wl_goose", "schema_true_domain",
               "dias_strips")

#: A row off in the default profile (``run: false``), kept off here
OFF_ROW = "baiw_ad"

#: The rows rerun in the stage process (``jobs: 1``) and compared with the 2-worker cluster's
#: outputs: one per kind of unit whose result once depended on the process it ran in (R-GNN
#: training, pymimir problems in WL decoding, torch training, schema learning).
SERIAL_METHODS = ("aiw_ad", "wl_xgb_delta", "satr_encdec_cl_applicable", "dias_strips")


def _trim_methods(params_text: str) -> str:
    """``params.yaml`` text with only :data:`E2E_METHODS` under ``methods:`` (the rest of the text,
    which later steps edit by string replacement, unchanged)."""
    head, rest = params_text.split("\nmethods:\n", 1)
    _, tail = rest.split("\nprofiles:\n", 1)
    methods = yaml.safe_load("methods:\n" + rest.split("\nprofiles:\n", 1)[0])["methods"]
    missing = set(E2E_METHODS) - set(methods)
    assert not missing, f"params.yaml lost methods the e2e test needs: {missing}"
    # every row the test needs runs (the default profile leaves some variants off); one row stays
    # off to check that an off row's stages do nothing and the report leaves it out
    kept = {m: {k: v for k, v in (methods[m] or {}).items() if k != "run"} for m in E2E_METHODS}
    assert methods[OFF_ROW].get("run") is False, f"{OFF_ROW} is expected off in the default profile"
    kept[OFF_ROW] = methods[OFF_ROW]
    body = "".join(f"  {m}: {yaml.safe_dump(b or {}, default_flow_style=True, width=10**6).strip()}\n"
                   for m, b in kept.items())
    return f"{head}\nmethods:\n{body}\nprofiles:\n{tail}"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, dict]:
    work = tmp_path_factory.mktemp("e2e") / "planarena"
    work.mkdir()
    for item in ("dvc.yaml", "params.yaml", "stages", "src", ".dvcignore"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / item)
    (work / "reports" / "claims").mkdir(parents=True)  # the report stage reads the claim verdicts there
    params = (work / "params.yaml").read_text().replace("profile: default", "profile: smoke", 1)
    # a 2-worker local Dask cluster for every stage of 2 or more units (`min_units: 1`; whatever this
    # machine's core count): the baseline that the `jobs: 1` rerun below must reproduce byte for byte
    assert "\njobs: 0 " in params and "\n  min_units: 0 " in params
    params = params.replace("\njobs: 0 ", "\njobs: 2 ", 1).replace("\n  min_units: 0 ", "\n  min_units: 1 ", 1)
    # the smoke profile leaves the twins off; two of them run here (the floors' path through DVC)
    assert "\n    run_twins: false\n" in params
    params = params.replace("\n    run_twins: false\n", "\n    run_twins: true\n", 1)
    (work / "params.yaml").write_text(_trim_methods(params))
    (work / ".gitignore").write_text("/data/\n__pycache__/\n")
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(work / "src")  # the copy's code, which the stages fingerprint
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    _run(["git", "init", "-q"], work, env)
    _run(["dvc", "init", "-q"], work, env)
    _run(["dvc", "config", "core.analytics", "false"], work, env)
    return work, env


def test_repro_then_noop_then_param_change(repo):
    work, env = repo
    first = _run(["dvc", "repro"], work, env)
    assert {"generate", "plan", "trajectories", "embed_wl", "embed_text", "acp_data", "embed_acp", "schema_data",
            "train@embedplan_mlp", "evaluate@embedplan_mlp", "train@dias_strips", "evaluate@dias_strips",
            "report"} <= _ran(first)
    board = (work / "reports" / "leaderboard.md").read_text()
    for method in ("fd_astar_lmcut", "random_walk", "embedplan_mlp"):
        assert method in board
    # untrained twins run through DVC like any row (their blocks name only `twin_of`), train nothing,
    # and the front page reads their learned rows against them
    assert {"evaluate@aiw_ad_uniform", "evaluate@wl_xgb_delta_untrained"} <= _ran(first)
    for twin in ("aiw_ad_uniform", "wl_xgb_delta_untrained"):
        recs = [json.loads(line) for line in (work / "data" / "results" / f"{twin}.jsonl").read_text().splitlines()]
        assert recs and all(r["method"] == twin for r in recs)
    assert "vs untrained twin" in board
    # the off row: the stages skip it and its two twins (and say so), the report does not list it
    assert not {f"train@{OFF_ROW}", f"evaluate@{OFF_ROW}"} & _ran(first) and _off(first) == {"train": 3, "evaluate": 3}
    assert not (work / "data" / "results" / f"{OFF_ROW}.jsonl").exists()
    assert OFF_ROW not in board and OFF_ROW not in (work / "reports" / "detail" / "coverage.md").read_text()
    assert len(board.splitlines()) < 200  # the front page; the wide tables are on detail pages
    # on the smoke profile nothing needs a reader's attention
    assert board.split("## Problems\n\n", 1)[1].startswith("None.\n"), board[:3000]
    # headline metrics: at most 60 numbers, all fractions
    numbers = [v for group in json.loads((work / "reports" / "metrics.json").read_text()).values()
               for sub in group.values() for v in (sub.values() if isinstance(sub, dict) else [sub])]
    assert 0 < len(numbers) <= 60 and all(0.0 <= v <= 1.0 for v in numbers), numbers
    pool = (work / "reports" / "detail" / "pool.md").read_text()
    assert "Candidate-pool Hit@k" in pool and "Cross-Domain matrix" in pool
    # the state-centric models are on the same pool protocols (inputs: state, goal)
    assert "state, goal" in board and "| Interpolation | blocksworld | wl_xgb_delta" in pool
    assert "seen in training" in pool  # Plan-Variant's overlap with the training transitions
    assert (work / "reports" / "plots" / "hit5_by_protocol.png").exists()
    for domain in ("blocksworld", "gripper", "logistics", "visitall"):
        assert domain in board
    assert (work / "reports" / "metrics.json").exists()
    assert (work / "reports" / "plots" / "coverage_by_size.png").exists()
    # every plan a width-based policy or WL-GOOSE emits went through the harness's validator
    for method in ("aiw_ad", "wl_goose"):
        recs = [json.loads(line) for line in (work / "data" / "results" / f"{method}.jsonl").read_text().splitlines()]
        assert recs and all(r["split"] in ("validation", "interpolation", "extrapolation") for r in recs)
        for r in recs:
            assert (r["plan"] is not None) == (r["validated_by"] is not None), r
            assert r["outcome"] != "solved" or r["validated"], r
        assert method in board
    # schema learning: the section, the reference rows and the dias_* coverage rows on schema-test
    schema_page = (work / "reports" / "detail" / "schema.md").read_text()
    for method in ("dias_strips", "schema_true_domain"):
        assert method in schema_page
    true_rows = [json.loads(line) for line in
                 (work / "data" / "results" / "schema_true_domain.jsonl").read_text().splitlines()]
    assert any(r["extra"]["task"] == "learn_schema" and r["extra"]["precision"] == 1.0 for r in true_rows)
    plans = [r for r in true_rows if r["extra"]["task"] == "plan"]
    assert plans and all(r["split"] == "schema-test" and r["validated"] for r in plans)
    assert (work / "data" / "models" / "dias_strips" / "blocks3" / "seed13" / "domain.pddl").exists()
    assert "dias_strips" in (work / "reports" / "detail" / "coverage.md").read_text()

    # a learned row against its untrained twin, problem by problem, from the CLI
    out = _run(["planarena", "compare", "wl_xgb_delta", "wl_xgb_delta_untrained"], work, env)
    pair = work / "reports" / "compare" / "wl_xgb_delta-vs-wl_xgb_delta_untrained"
    assert "McNemar" in out and (pair / "compare.md").exists() and list(pair.glob("*.png")), out
    shutil.rmtree(work / "reports" / "compare")  # not a pipeline output

    again = _run(["dvc", "repro"], work, env)
    assert _ran(again) == set(), again

    _run(["git", "add", "-A"], work, env)
    _run(["git", "commit", "-qm", "smoke baseline"], work, env)
    lock = (work / "dvc.lock").read_text()

    # identical results in the stage process (`jobs: 1`, beside a CPU hog) and on a 2-worker Dask cluster: the
    # train and evaluate stages of SERIAL_METHODS rerun, every attempt recomputed (their records
    # deleted first: evaluation resumes). metrics.json, every record but its wall times, and every
    # model output's hash are unchanged
    metrics = (work / "reports" / "metrics.json").read_text()
    records = _records_without_times(work)
    params = (work / "params.yaml").read_text()
    (work / "params.yaml").write_text(params.replace("\njobs: 2 ", "\njobs: 1 ", 1))
    for m in SERIAL_METHODS:   # the rows' outputs deleted: the stages retrain and re-evaluate them, no other row
        (work / "data" / "results" / f"{m}.jsonl").unlink()
        shutil.rmtree(work / "data" / "models" / m)
    stages = [f"{s}@{m}" for m in SERIAL_METHODS for s in ("train", "evaluate")]
    # ... with a CPU hog beside it: limits that decide outcomes count CPU time, not wall time (the
    # report rebuilt in the same `dvc repro`)
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        serial = _run(["dvc", "repro", "-f", "-s", "train", "evaluate", "report"], work, env)
    finally:
        hog.kill()
        hog.wait()
    assert _ran(serial) == {*stages, "report"}, serial
    assert (work / "reports" / "metrics.json").read_text() == metrics
    assert _records_without_times(work) == records
    assert _timeless_lock((work / "dvc.lock").read_text()) == _timeless_lock(lock), _lock_diff(work, env)
    # `jobs` is read by no stage, nor is a key under an inactive profile: back to `jobs: 2` with such
    # a key changed, only the (seconds-long) resolve stages rerun (one `dvc repro` for both: each
    # costs DVC ~10 s of bookkeeping over this pipeline's stages)
    (work / "params.yaml").write_text(params.replace("      astar_lmcut: {time_limit: 60, memory_limit_mb: 8192}",
                                                     "      astar_lmcut: {time_limit: 61, memory_limit_mb: 8192}", 1))
    assert (work / "params.yaml").read_text() != params
    assert _ran(_run(["dvc", "repro"], work, env)) == {"resolve", "resolve_methods"}
    (work / "params.yaml").write_text(params)   # the experiment below reruns the resolve stages

    # a key of the ACTIVE profile (smoke sets this limit, so the top-level value is not the one read)
    exp = _run(["dvc", "exp", "run", "-S", "profiles.smoke.planners.astar_lmcut.time_limit=4"], work, env)
    ran = _ran(exp)
    assert "plan" in ran and "evaluate@fd_astar_lmcut" in ran and "report" in ran
    assert "generate" not in ran and not any(s.startswith("train@") for s in ran), ran
    show = _run(["dvc", "exp", "show", "--no-pager", "--md"], work, env)
    assert "coverage" in show and "planners.astar_lmcut.time_limit" in show

    # an edit to one family retrains and re-evaluates that family's rows and rebuilds the report,
    # nothing else (WL-GOOSE: one row, its twin and the cheapest stages of the rows here; the edit is
    # in a module of its subpackage that the method imports)
    family = work / "src" / "planarena" / "methods" / "wl_goose" / "method.py"
    family.write_text(family.read_text() + "\n\nEDITED = True\n")
    ran = _ran(_run(["dvc", "repro"], work, env))
    blocks = yaml.safe_load((work / "params.yaml").read_text())["methods"]
    rows = [m for m, b in blocks.items() if (b or {}).get("method", m) == "wl_goose"]
    assert rows == ["wl_goose"]   # and its untrained twin, generated (no block of its own here)
    assert ran == {"resolve", "resolve_methods", "report", *(f"{s}@{m}" for s in ("train", "evaluate")
                                                               for m in ("wl_goose", "wl_goose_untrained"))}, ran
