"""Shared fixtures: tiny hand-written PDDL, a smoke-sized generated suite, and the path of the
third-party benchmark folders beside the checkout (:data:`SHARED_BENCHMARKS`: the SATr splits, the
IPC 2023 Learning Track benchmarks, ACPBench; docs/params.md#third-party-folders). Tests that need
them skip with a reason when they are absent."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest

# one compute thread per process, as in the stages (planarena.runner.entry.pin_threads): the
# executor's local cluster forks workers, and results must not depend on the thread count
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from planarena.config import Layout, load_params

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
TINY = FIXTURES / "tiny"
SHARED_BENCHMARKS = ROOT.parent / "shared" / "benchmarks"


class ConstantScorer:
    """A lockstep-decoding scorer (:func:`planarena.search.decoding.decode_lockstep`) that ranks every
    successor equal, so the first by name wins."""

    def start(self, problems, states):
        return None

    def score(self, ctx, beam_problem, successors, owner):
        import numpy as np

        return np.zeros(len(successors)), None

    def select(self, cand_ctx, chosen):
        return None


@pytest.fixture(autouse=True)
def _fresh_executor():
    """Every test gets the default executor and a cluster forked after its own setup (a test's
    monkeypatches must reach the workers); the cluster is closed after the test."""
    from planarena.core import executor

    executor.configure(None)
    yield
    executor.shutdown()
    executor.configure(None)


@pytest.fixture
def monkeypatch(monkeypatch):
    """pytest's ``monkeypatch``, but a patch also reaches the executor's workers: the local
    cluster of the test (forked from this process) is closed at every ``setattr``, so the next
    stage call forks workers that see the patch."""
    from planarena.core import executor

    setattr_ = monkeypatch.setattr

    def patched_setattr(*args, **kwargs):
        executor.shutdown()
        return setattr_(*args, **kwargs)

    monkeypatch.setattr = patched_setattr
    return monkeypatch


def needs_shared(sub: str) -> Path:
    """Path of ``SHARED_BENCHMARKS / sub``, or skip the test with a clear reason."""
    path = SHARED_BENCHMARKS / sub
    if not path.is_dir():
        pytest.skip(f"{path} not present (the third-party benchmark folders: docs/params.md#third-party-folders)")
    return path


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(root=tmp_path / "data")


def smoke_profile_params() -> dict:
    """The repository's params.yaml resolved with the smoke profile, as a fresh copy (a plain
    function, so module-scoped fixtures can use it too)."""
    import yaml

    from planarena.config import resolve_profile

    doc = yaml.safe_load((ROOT / "params.yaml").read_text())
    doc["profile"] = "smoke"
    params = resolve_profile(doc)
    params["jobs"] = 2
    return copy.deepcopy(params)


@pytest.fixture
def smoke_params() -> dict:
    """The repository's params.yaml resolved with the smoke profile (a fresh copy per test)."""
    raw = load_params(ROOT / "params.yaml")  # default profile, to check the file parses
    assert raw["profile"] == "default"
    return smoke_profile_params()


def only_domains(params: dict, *domains: str) -> dict:
    """Restrict the generated suite to some domains (keeps tests fast)."""
    doms = params["suites"]["generated"]["domains"]
    params["suites"]["generated"]["domains"] = {d: doms[d] for d in domains}
    return params


def generated_smoke_suite(folder: Path, *domains: str, params: dict | None = None):
    """``(params, layout)``: the smoke profile's generated suite of ``domains`` (``params``: smoke
    params to start from, e.g. with twins added), one seed, in-process, generated under ``folder``."""
    from planarena.config import Layout
    from planarena.datasets.suites import run_stage as generate

    params = only_domains(params if params is not None else smoke_profile_params(), *domains)
    params["jobs"] = 1
    params["evaluation"]["seeds"] = [13]
    layout = Layout(root=Path(folder) / "data")
    generate(params, layout)
    return params, layout
