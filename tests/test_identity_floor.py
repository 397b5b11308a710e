"""The identity predictor (docs/concepts.md#floors-and-ceilings): the state-centric floor of each
encoding."""

import numpy as np
import pytest

from planarena.methods.base import ReportTraits
from planarena.methods.state_centric.identity import IdentityTransitionModel
from planarena.methods.state_centric.kinds import make_transition_model
from planarena.methods.state_centric.models import TransitionModel
from planarena.report.traits import floor_of


def test_identity_predicts_the_current_state_and_round_trips(tmp_path):
    states = np.arange(12, dtype=np.float32).reshape(4, 3)
    goal = np.ones(3, dtype=np.float32)
    for mode in ("state", "delta"):
        model = make_transition_model("identity", mode=mode)
        assert isinstance(model, IdentityTransitionModel)
        assert model.fit([(states, goal)]) == {"parameters": 0}
        v, rec = model.step(states[:2], goal)
        assert rec is None and np.array_equal(v, states[:2])
        assert np.array_equal(model.predict_teacher_forced(states, goal), states[:-1])
        loaded = TransitionModel.load(model.save(tmp_path / mode))
        assert np.array_equal(loaded.step(states, goal)[0], states)
    with pytest.raises(RuntimeError, match="not fitted"):
        IdentityTransitionModel().step(states, goal)


def test_each_model_is_read_against_the_floor_of_its_encoding():
    traits = {"wl_xgb_delta": ReportTraits(floor_group="WL encoding"),
              "wl_identity": ReportTraits(role="floor", floor_group="WL encoding"),
              "fsf_xgb_delta": ReportTraits(floor_group="FSF encoding"),
              "random_walk": ReportTraits(role="floor")}
    assert floor_of(traits, "wl_xgb_delta") == "wl_identity"
    assert floor_of(traits, "wl_identity") is None          # a floor has no floor
    assert floor_of(traits, "fsf_xgb_delta") is None        # no FSF floor configured
    assert floor_of(traits, "random_walk") is None
