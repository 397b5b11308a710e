"""`device: cpu | cuda[:N] | auto` of every torch method (docs/scaling.md): each family names its
own param, a unit that trains with torch tells the executor which device it needs, a bad value is
one line naming the param, and the CPU default is what runs everywhere without a GPU."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml
from conftest import ROOT

pytest.importorskip("torch")

from planarena.config import ConfigError, Layout, get, resolve_profile  # noqa: E402
from planarena.runner.stages import build_method  # noqa: E402

#: one method per torch family, with the params key of its device
TORCH_METHODS = {
    "wl_lstm_delta": "transition_models.device",
    "embedplan_mlp": "embedplan.device",
    "satr_encoder_cl": "transformers.device",
    "aiw_ad": "rgnn_policies.device",
}


@pytest.fixture(scope="module")
def params():
    return resolve_profile(yaml.safe_load((ROOT / "params.yaml").read_text()))


def _set(params: dict, dotted: str, value) -> dict:
    out = copy.deepcopy(params)
    *path, last = dotted.split(".")
    node = out
    for key in path:
        node = node[key]
    node[last] = value
    return out


def _method(name, params, tmp_path):
    return build_method(name, params, Layout(root=tmp_path / "data"))


def test_every_torch_family_has_a_cpu_default_device_param(params, tmp_path):
    """The default profile runs on the CPU; each family's units ask the executor for its param."""
    for name, key in TORCH_METHODS.items():
        if name not in params["methods"]:
            continue
        method = _method(name, params, tmp_path)
        assert method.device_param == key, name
        assert get(params, key) == "cpu", f"params.yaml: {key} should default to cpu"
        assert method.unit_device() == "cpu"
        assert _method(name, _set(params, key, "cuda:1"), tmp_path).unit_device() == "cuda:1", name


def test_xgboost_units_never_wait_for_a_gpu(params, tmp_path):
    """Only the LSTM trains with torch: an XGBoost configuration stays on CPU workers whatever
    `transition_models.device` says, and its stage does not depend on that param."""
    p = _set(params, "transition_models.device", "cuda")
    assert _method("wl_lstm_delta", p, tmp_path).unit_device() == "cuda"
    xgb = _method("wl_xgb_delta", p, tmp_path)
    assert xgb.unit_device() == "cpu"
    assert xgb._fit_kwargs() == {}
    assert "transition_models.device" in _method("wl_lstm_delta", p, tmp_path).uses_params
    assert "transition_models.device" not in xgb.uses_params


@pytest.mark.parametrize("name", ["wl_lstm_delta", "embedplan_mlp"])
def test_bad_device_is_one_line_naming_the_param(params, tmp_path, name):
    import torch

    key = TORCH_METHODS[name]
    with pytest.raises(ConfigError, match=rf"`{key}` = 'gpu'; expected cpu, cuda, cuda:N or auto"):
        _method(name, _set(params, key, "gpu"), tmp_path).torch_device()
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match=rf"`{key}` = 'cuda' but no CUDA device is available"):
            _method(name, _set(params, key, "cuda"), tmp_path).torch_device()
    auto = _method(name, _set(params, key, "auto"), tmp_path).torch_device()
    assert auto == ("cuda" if torch.cuda.is_available() else "cpu")


def _trajectories(n=6, t=5, d=4, seed=0):
    """``(states (T, D), goal (D,))`` pairs, the transition models' input."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        states = rng.integers(0, 3, size=(t, d)).astype(np.float32)
        out.append((states, states[-1].copy()))
    return out


def test_lstm_trained_weights_come_back_to_the_cpu():
    """`fit(device=...)` moves the network and batches to the device and the weights back to the
    CPU, where decoding runs in float64; on the CPU the argument changes nothing."""
    from planarena.methods.state_centric.lstm import LSTMTransitionModel

    data = _trajectories()
    kw = dict(hidden=8, embed=4, layers=1, max_epochs=3, patience=2)
    a = LSTMTransitionModel(mode="delta", dim=4, **kw)
    a.fit(data, seed=3)
    b = LSTMTransitionModel(mode="delta", dim=4, **kw)
    b.fit(data, seed=3, device="cpu")
    for (ka, va), (kb, vb) in zip(a.net.state_dict().items(), b.net.state_dict().items()):
        assert ka == kb and va.device.type == "cpu" and bool((va == vb).all()), ka
    step, _ = b.step(data[0][0][:2], np.stack([data[0][1]] * 2))
    assert step.shape == (2, 4)
