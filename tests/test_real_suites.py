"""Real third-party suites load: one problem of every IPC 2023 Learning Track domain and every SATr
domain goes through the ``generate`` stage, and the smallest training problem of each is planned by
Fast Downward and validated by the independent validator (``planarena.core.validation``). Skipped
when the third-party benchmark folders beside the checkout (``SHARED_BENCHMARKS``; docs/params.md#third-party-folders) are absent."""

import pytest
from conftest import SHARED_BENCHMARKS

from planarena.core.problemset import ProblemSet
from planarena.core.validation import validate_plan
from planarena.datasets.planning import run_fast_downward
from planarena.datasets.suites import LAYOUTS, run_stage


def _domains(sub: str) -> list[str]:
    root = SHARED_BENCHMARKS / sub
    return sorted(d.name for d in root.iterdir() if (d / "domain.pddl").exists()) if root.is_dir() else []


CASES = [("ipc2023", "ipc2023-learning", d) for d in _domains("ipc2023-learning")] + \
        [("satr", "satr", d) for d in _domains("satr")]


@pytest.mark.shared
@pytest.mark.skipif(not CASES, reason=f"{SHARED_BENCHMARKS} not present (real third-party benchmarks "
                                      f"folders: docs/params.md#third-party-folders)")
@pytest.mark.parametrize("suite,sub,domain", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_domain_loads_and_its_smallest_training_problem_plans_and_validates(suite, sub, domain,
                                                                            smoke_params, layout):
    smoke_params.update(suite=suite)
    smoke_params["suites"][suite].update(path=str(SHARED_BENCHMARKS / sub), domains=[domain], max_per_split=1)
    entries = run_stage(smoke_params, layout)
    splits = {split for _, split in LAYOUTS[suite]}
    assert {e.split for e in entries} == splits  # one problem of every test split, all of train, each parsed
    ps = ProblemSet(layout.problems)
    train = min((e for e in ps.entries if e.split == "train"), key=lambda e: (e.objects, e.problem))
    domain_file, problem_file = layout.problems / domain / "domain.pddl", layout.problems / train.path
    res = run_fast_downward("lama_first", domain_file, problem_file, time_limit=60, memory_mb=2048)
    assert res.outcome == "solved", res.failure_reason
    verdict = validate_plan(domain_file, problem_file, res.plan)
    assert verdict.valid, verdict.reason
    assert verdict.cost == pytest.approx(res.cost)
