"""Declared params keys (planarena.paramkeys, planarena.methods.keys): a misspelled key anywhere in
a params file stops with one line naming it and the nearest declared key; everything the committed
files set is declared; the declarations match the lists the reading code keeps itself."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from planarena.config import ConfigError, load_params
from planarena.methods.keys import ROW_KEYS, SECTIONS, check_params, unknown_in
from planarena.paramkeys import describe, suggestion

REPO = Path(__file__).resolve().parents[1]


def _raw() -> dict:
    return yaml.safe_load((REPO / "params.yaml").read_text())


def test_every_committed_key_is_declared():
    """params.yaml (every profile, every row) and each claim file's params overlay."""
    assert unknown_in(_raw()) == []
    for claim in sorted((REPO / "claims").glob("*.yaml")):
        overlay = (yaml.safe_load(claim.read_text()).get("experiment") or {}).get("params") or {}
        assert unknown_in(overlay) == [], claim.name


@pytest.mark.parametrize("edit, message", [
    (lambda p: p["evaluation"].update(time_limt=5),
     "unknown key `evaluation.time_limt` (did you mean `evaluation.time_limit`?)"),
    (lambda p: p.update(sede=3), "unknown key `sede` (did you mean `seed`?)"),
    (lambda p: p["methods"].update(mine={"method": "state_centric", "modle": "xgb"}),
     "unknown key `methods.mine.modle` (did you mean `methods.mine.mode` or `methods.mine.model`?)"),
    (lambda p: p["transformers"]["train"].update(stpes=5),
     "unknown key `transformers.train.stpes` (did you mean `transformers.train.steps`?)"),
    (lambda p: p["planners"]["astar_lmcut"].update(time_limti=5),
     "unknown key `planners.astar_lmcut.time_limti` (did you mean `planners.astar_lmcut.time_limit`?)"),
    (lambda p: p["profiles"]["smoke"].setdefault("dias", {}).update(slts=3),
     "unknown key `profiles.smoke.dias.slts` (did you mean `profiles.smoke.dias.slots`?)"),
    (lambda p: p["profiles"]["paper"]["methods"].update(wl_xgb_delta={"run": True, "encodng": "wl"}),
     "unknown key `profiles.paper.methods.wl_xgb_delta.encodng` (did you mean `profiles.paper.methods.wl_xgb_delta.encoding`?)"),
    (lambda p: p["suites"]["satr"].update(max_per_spilt=3),
     "unknown key `suites.satr.max_per_spilt` (did you mean `suites.satr.max_per_split`?)"),
])
def test_a_misspelled_key_stops_load_params_with_one_line(tmp_path, edit, message):
    raw = _raw()
    edit(raw)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(ConfigError) as info:
        load_params(path)
    text = str(info.value)
    assert "\n" not in text and text.startswith(f"{path}: ") and message in text


def test_user_chosen_names_and_twin_blocks_pass():
    """Planner names, schema / generated-suite domain names and a twin repeating its row's keys are
    not typos; a twin's own typo is."""
    raw = _raw()
    raw["planners"]["my_gbfs"] = {"search": "eager_greedy([ff()])", "time_limit": 30}
    raw["methods"]["wl_xgb_delta_untrained"] = {"twin_of": "wl_xgb_delta", "encoding": "wl"}
    assert unknown_in(raw) == []
    raw["methods"]["wl_xgb_delta_untrained"]["untrianed"] = True
    assert [".".join(p) for p, _ in unknown_in(raw)] == ["methods.wl_xgb_delta_untrained.untrianed"]


def test_suggestions_and_one_line_description():
    assert suggestion("horizn", ["horizon", "heads"]) == "horizon"
    assert suggestion("zzzz", ["horizon"]) is None
    found = [(("a", f"k{i}"), None) for i in range(6)]
    assert describe(found).endswith("unknown key `a.k3`, and 2 more")
    with pytest.raises(ConfigError, match="planarena check-params` lists them all"):
        raw = _raw()
        raw.update(sede=1, jbos=2)
        check_params(raw)


def test_declarations_match_the_lists_the_reading_code_keeps():
    from planarena.core.executor import EXECUTOR_KEYS, SLURM_KEYS
    from planarena.datasets.folders import SPLIT_DEFAULTS
    from planarena.datasets.planning import CONFIG_KEYS
    from planarena.features.text.encoder import DEFAULTS as TEXT
    from planarena.features.wl import DEFAULTS as WL
    from planarena.methods import REGISTRY
    from planarena.methods.dias.train import DiasConfig
    from planarena.methods.embedplan.model import EmbedPlanConfig
    from planarena.methods.ipc_planner import KEYS
    from planarena.methods.rgnn_policies.train import TrainConfig as RGNNTrain
    from planarena.methods.transformers.model import EncoderConfig
    from planarena.methods.transformers.train import TrainConfig

    names = lambda cls: {f.name for f in fields(cls)}  # noqa: E731
    assert set(ROW_KEYS) == set(REGISTRY)
    assert set(SECTIONS["embed_wl"]) == set(WL) and set(SECTIONS["embed_text"]) == set(TEXT)
    assert set(SECTIONS["executor"]) - {"slurm"} == set(EXECUTOR_KEYS) - {"slurm"}
    assert set(SECTIONS["executor"]["slurm"]) == set(SLURM_KEYS)
    assert set(SECTIONS["planners"]["*"]) == set(CONFIG_KEYS)
    assert set(SECTIONS["suites"]["dir"]["split"]) == set(SPLIT_DEFAULTS)
    assert set(SECTIONS["embedplan"]["model"]) == names(EmbedPlanConfig)
    assert set(SECTIONS["transformers"]["train"]) == names(TrainConfig)
    assert set(SECTIONS["transformers"]["model"]) == names(EncoderConfig) | {"max_positions"}
    assert set(SECTIONS["rgnn_policies"]["train"]) == names(RGNNTrain)
    assert set(SECTIONS["dias"]["train"]) == names(DiasConfig)
    assert set(KEYS) <= ROW_KEYS["ipc_planner"]


def test_check_params_command(tmp_path):
    from typer.testing import CliRunner

    from planarena.cli import app

    raw = _raw()
    raw["evaluation"]["time_limt"] = 5
    raw["sede"] = 1
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    out = CliRunner().invoke(app, ["check-params", str(path)])
    assert out.exit_code == 1
    lines = [ln for ln in out.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 2 and "`evaluation.time_limit`?" in lines[0] and "`seed`?" in lines[1]
    ok = CliRunner().invoke(app, ["check-params", str(REPO / "params.yaml")])
    assert ok.exit_code == 0 and "ok (profile default" in ok.output


def test_a_claim_overlay_with_a_misspelled_key_is_refused(tmp_path):
    from planarena.claims import run
    from planarena.claims.spec import load_claim

    text = (REPO / "claims" / "state-centric-delta-fresh-extrapolation.yaml").read_text()
    bad = tmp_path / "state-centric-delta-fresh-extrapolation.yaml"
    bad.write_text(text.replace("planners: {splits: [train, validation]}", "planners: {spilts: [train, validation]}"))
    with pytest.raises(ConfigError, match=r"experiment.params: unknown key `planners.spilts` \(did you mean `planners.splits`\?\)"):
        run.claim_params(load_claim(bad), (REPO / "params.yaml").read_text())
