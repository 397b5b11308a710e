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


def _git_params_repo(tmp_path, doc):
    """A git repo in ``tmp_path / 'repo'`` with ``params.yaml`` = ``doc`` committed."""
    import subprocess

    import yaml

    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": __import__("os").environ["PATH"], "HOME": str(tmp_path)}
    (repo / "params.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    for cmd in (["git", "init", "-q"], ["git", "add", "params.yaml"], ["git", "commit", "-q", "-m", "params"]):
        subprocess.run(cmd, cwd=repo, env=env, check=True)
    return repo


def _edit(path, change):
    import yaml

    doc = yaml.safe_load(path.read_text())
    change(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


PROFILED = {"profile": "default", "planners": {"astar": {"time_limit": 10, "memory_limit_mb": 4096}}, "seed": 0,
            "profiles": {"default": {}, "paper": {"planners": {"astar": {"time_limit": 60}}}}}


def test_user_value_the_profile_overrides_stops_naming_the_profile_key(tmp_path):
    # `dvc exp run -S profile=paper -S planners.astar.time_limit=5` silently ran with 60
    from planarena.config import load_params

    repo = _git_params_repo(tmp_path, PROFILED)

    def change(doc):
        doc["profile"] = "paper"
        doc["planners"]["astar"]["time_limit"] = 5      # the paper profile sets it: would be lost
    _edit(repo / "params.yaml", change)
    with pytest.raises(ConfigError) as err:
        load_params(repo / "params.yaml")
    msg = str(err.value)
    assert msg == ("params.yaml: planners.astar.time_limit is set by profile 'paper' "
                   "(profiles.paper.planners.astar.time_limit); with profile=paper set "
                   "profiles.paper.planners.astar.time_limit instead")
    assert "\n" not in msg


def test_user_value_the_profile_does_not_set_is_kept(tmp_path):
    from planarena.config import load_params

    repo = _git_params_repo(tmp_path, PROFILED)

    def change(doc):
        doc["profile"] = "paper"
        doc["planners"]["astar"]["memory_limit_mb"] = 1024    # not set by the profile: kept
        doc["seed"] = 3
        doc["profiles"]["paper"]["planners"]["astar"]["time_limit"] = 30   # the documented way
    _edit(repo / "params.yaml", change)
    out = load_params(repo / "params.yaml")
    assert out["planners"]["astar"] == {"time_limit": 30, "memory_limit_mb": 1024}
    assert out["seed"] == 3 and out["profile"] == "paper"


def test_default_profile_and_no_git_are_not_checked(tmp_path):
    from planarena.config import check_profile_overrides, load_params

    repo = _git_params_repo(tmp_path, PROFILED)
    _edit(repo / "params.yaml", lambda doc: doc["planners"]["astar"].update(time_limit=5))
    assert load_params(repo / "params.yaml")["planners"]["astar"]["time_limit"] == 5   # profile default
    # outside git (no HEAD to compare with): nothing is checked, the overlay wins as before
    import shutil

    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(repo / "params.yaml", plain / "params.yaml")
    _edit(plain / "params.yaml", lambda doc: doc.update(profile="paper"))
    assert load_params(plain / "params.yaml")["planners"]["astar"]["time_limit"] == 60
    # the same value as the profile's loses nothing; several lost keys are all named
    raw = {**PROFILED, "profile": "paper", "planners": {"astar": {"time_limit": 60, "memory_limit_mb": 4096}}}
    check_profile_overrides(raw, PROFILED)
    raw["profiles"] = {"paper": {"planners": {"astar": {"time_limit": 60, "memory_limit_mb": 8192}}}}
    raw["planners"] = {"astar": {"time_limit": 5, "memory_limit_mb": 1}}
    with pytest.raises(ConfigError, match=r"planners.astar.time_limit, planners.astar.memory_limit_mb are set by profile "
                                          r"'paper' \(profiles.paper.planners.astar.time_limit, "
                                          r"profiles.paper.planners.astar.memory_limit_mb\)"):
        check_profile_overrides(raw, PROFILED)
