"""End to end through DVC on the smoke profile, in a scratch copy of the repository:
`dvc repro` builds the leaderboard, a second `dvc repro` runs nothing, and
`dvc exp run -S planners.astar_lmcut.time_limit=...` reruns only the stages that depend on it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, env: dict) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{out[-4000:]}"
    return out


def _ran(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, dict]:
    work = tmp_path_factory.mktemp("e2e") / "planarena"
    work.mkdir()
    for item in ("dvc.yaml", "params.yaml", "stages", "src", ".dvcignore"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / item)
    params = (work / "params.yaml").read_text().replace("profile: default", "profile: smoke", 1)
    (work / "params.yaml").write_text(params)
    (work / ".gitignore").write_text("/data/\n__pycache__/\n")
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    _run(["git", "init", "-q"], work, env)
    _run(["dvc", "init", "-q"], work, env)
    _run(["dvc", "config", "core.analytics", "false"], work, env)
    return work, env


def test_repro_then_noop_then_param_change(repo):
    work, env = repo
    first = _run(["dvc", "repro"], work, env)
    assert {"generate", "plan", "trajectories", "embed_wl", "embed_text", "acp_data", "embed_acp",
            "train@embedplan_mlp", "evaluate@embedplan_mlp", "report"} <= _ran(first)
    board = (work / "reports" / "leaderboard.md").read_text()
    for method in ("fd_astar_lmcut", "fd_lama", "random_walk", "embedplan_mlp", "embedplan_hyper",
                   "embedplan_untrained"):
        assert method in board
    assert "Candidate-pool Hit@k" in board and "Cross-Domain matrix" in board
    # the state-centric models are on the same pool protocols (inputs: state, goal)
    assert "state, goal" in board and "| Interpolation | blocksworld | wl_xgb_delta" in board
    assert (work / "reports" / "plots" / "hit5_by_protocol.png").exists()
    for domain in ("blocksworld", "gripper", "logistics", "visitall"):
        assert domain in board
    assert (work / "reports" / "metrics.json").exists()
    assert (work / "reports" / "plots" / "coverage_by_size.png").exists()

    again = _run(["dvc", "repro"], work, env)
    assert _ran(again) == set(), again

    _run(["git", "add", "-A"], work, env)
    _run(["git", "commit", "-qm", "smoke baseline"], work, env)
    exp = _run(["dvc", "exp", "run", "-S", "planners.astar_lmcut.time_limit=4"], work, env)
    ran = _ran(exp)
    assert "plan" in ran and "evaluate@fd_astar_lmcut" in ran and "report" in ran
    assert "generate" not in ran and not any(s.startswith("train@") for s in ran), ran
    show = _run(["dvc", "exp", "show", "--no-pager", "--md"], work, env)
    assert "coverage" in show and "planners.astar_lmcut.time_limit" in show
