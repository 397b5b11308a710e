"""The contrastive-loss measurement (planarena.methods.transformers.measure): both arms of a seed
start from the same weights, the untrained side is what those weights score, and the rows carry the
validation L_pred curve."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from planarena.datasets.suites import _domain_text, _gen_gripper  # noqa: E402
from planarena.methods.transformers.measure import contrastive_pairs  # noqa: E402


@pytest.fixture()
def gripper_suite(tmp_path, smoke_params):
    """A SATr-layout suite of Gripper: 1- and 2-ball training problems, a 3-ball validation one."""
    root = tmp_path / "satr"
    (root / "gripper" / "train").mkdir(parents=True)
    (root / "gripper" / "validation").mkdir()
    (root / "gripper" / "domain.pddl").write_text(_domain_text("gripper/domain.pddl"))
    for split, sizes in (("train", (1, 2)), ("validation", (3,))):
        for n in sizes:
            (root / "gripper" / split / f"balls{n:02d}.pddl").write_text(_gen_gripper(n, 0))
    params = {**smoke_params, "suite": "satr", "jobs": 1}
    params["suites"] = {**params["suites"], "satr": {**params["suites"]["satr"], "path": str(root), "domains": ["gripper"]}}
    params["transformers"] = {**params["transformers"], "max_objects": 12,
                              "model": {"d": 16, "layers": 1, "heads": 2, "ff": 16, "k": 4, "token_dim": 8},
                              "train": {"steps": 12, "batch": 4, "lr": 0.003, "warmup": 0.1, "eval_every": 6},
                              "by_arch": {}}
    return params


def test_paired_arms_share_initial_weights_and_log_the_curve(gripper_suite):
    args = {"domain": "gripper", "seeds": [3], "eval_every": 6, "validation_samples": 16,
            "arms": {"cl": "contrastive", "nocl": "prediction_only", "init": "untrained"}}
    rows = {r["side"]: r for r in contrastive_pairs(gripper_suite, ["cl", "nocl", "init"], args, set())}
    assert set(rows) == {"cl", "nocl", "init"}
    init = rows["init"]["values"]["val_loss"]
    # the same initial weights and validation batch: every curve starts at the untrained side's loss
    assert rows["cl"]["curve"][0] == rows["nocl"]["curve"][0] == [0, init]
    assert [s for s, _ in rows["cl"]["curve"]] == [0, 6, 12]
    assert rows["cl"]["values"]["val_loss"] == rows["cl"]["curve"][-1][1]
    # the arms differ only in the objective: different final losses, same steps
    assert rows["cl"]["values"]["val_loss"] != rows["nocl"]["values"]["val_loss"]
    assert rows["cl"]["values"]["steps"] == rows["nocl"]["values"]["steps"] == 12
    assert all(r["problem"] == "seed3" and r["split"] == "validation" and r["completed"] for r in rows.values())
    # a resumed measurement skips what is done
    again = list(contrastive_pairs(gripper_suite, ["cl", "nocl", "init"], args,
                                   {("gripper", "validation", "seed3", s) for s in ("cl", "init")}))
    timeless = lambda r: {k: v for k, v in r["values"].items() if k != "cpu_s"}  # noqa: E731
    assert [r["side"] for r in again] == ["nocl"] and timeless(again[0]) == timeless(rows["nocl"])


def test_a_side_without_an_arm_is_one_clear_error(gripper_suite):
    with pytest.raises(ValueError, match="args.arms"):
        list(contrastive_pairs(gripper_suite, ["cl"], {"seeds": [1], "arms": {}}, set()))
