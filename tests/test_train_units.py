"""Training units survive a killed stage: finished units are kept and not trained again."""

import json

import pytest

from planarena.methods.units import KEPT, train_units


def _fit(model_dir, calls, fail_on=None):
    def fit(unit):
        domain, seed = unit
        calls.append(unit)
        if unit == fail_on:
            raise KeyboardInterrupt("killed")
        out = model_dir / domain / f"seed{seed}"
        out.mkdir(parents=True, exist_ok=True)
        (out / "model.pt").write_text(f"weights {domain} {seed}")
        return {"status": "ok", "best_step": seed * 10, "train_time_s": 1.5}
    return fit


def test_killed_training_resumes_from_kept_units(tmp_path):
    model_dir, keep = tmp_path / "models", tmp_path / "keep"
    calls = []
    with pytest.raises(KeyboardInterrupt):
        train_units(_fit(model_dir, calls, fail_on=("b", 2)), ["a", "b"], [1, 2], jobs=1, desc="",
                    model_dir=model_dir, keep=keep)
    assert calls == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert sorted(p.parent.name + "/" + p.name for p in keep.glob("*/seed*")) == ["a/seed1", "a/seed2", "b/seed1"]
    # the stage's outputs are wiped by DVC before a rerun: only `keep` carries the finished units
    import shutil
    shutil.rmtree(model_dir)
    calls.clear()
    facts, times = train_units(_fit(model_dir, calls), ["a", "b"], [1, 2], jobs=1, desc="",
                               model_dir=model_dir, keep=keep)
    assert calls == [("b", 2)]
    assert (model_dir / "a" / "seed1" / "model.pt").read_text() == "weights a 1"
    assert not (model_dir / "a" / "seed1" / KEPT).exists()
    assert facts["domains"]["a"]["seed2"] == {"status": "ok", "best_step": 20}
    assert times == {"a/seed1": 1.5, "a/seed2": 1.5, "b/seed1": 1.5, "b/seed2": 1.5}
    assert json.loads((keep / "b" / "seed2" / KEPT).read_text())["best_step"] == 20


def test_without_keep_every_unit_trains(tmp_path):
    calls = []
    facts, _ = train_units(_fit(tmp_path, calls), ["a"], [1, 2], jobs=1, desc="")
    assert calls == [("a", 1), ("a", 2)] and set(facts["domains"]["a"]) == {"seed1", "seed2"}
