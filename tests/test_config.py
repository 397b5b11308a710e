import pytest

from planarena.config import ConfigError, deep_merge, get, resolve_profile
from planarena.core.io import stable_hash


def test_profile_overlay_deep_merges_and_wins():
    raw = {"profile": "p", "a": {"x": 1, "y": 2}, "b": 3, "profiles": {"p": {"a": {"y": 20}}, "default": {}}}
    out = resolve_profile(raw)
    assert out == {"profile": "p", "a": {"x": 1, "y": 20}, "b": 3}
    assert "profiles" not in out


def test_unknown_profile_names_the_param():
    with pytest.raises(ConfigError, match="profile='nope'"):
        resolve_profile({"profile": "nope", "profiles": {"default": {}}})


def test_get_missing_key_names_the_dotted_param():
    with pytest.raises(ConfigError, match="planners.astar_lmcut.time_limit"):
        get({"planners": {}}, "planners.astar_lmcut.time_limit")
    assert get({"a": {"b": 1}}, "a.b") == 1
    assert get({}, "a.b", None) is None


def test_deep_merge_does_not_mutate_inputs():
    base = {"a": {"b": [1]}}
    deep_merge(base, {"a": {"b": [2]}})
    assert base == {"a": {"b": [1]}}


def test_stable_hash_ignores_key_order():
    assert stable_hash({"a": 1, "b": 2}) == stable_hash({"b": 2, "a": 1})
    assert stable_hash({"a": 1}) != stable_hash({"a": 2})


def test_repository_profiles_resolve(smoke_params):
    assert smoke_params["profile"] == "smoke"
    assert smoke_params["planners"]["astar_lmcut"]["time_limit"] == 5
    # untouched keys keep their top-level values
    assert smoke_params["planners"]["astar_lmcut"]["memory_limit_mb"] == 4096
