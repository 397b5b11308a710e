"""The runner: per-stage inputs (what each stage reads), the executor, the workspace lock, the
declared-data layout, and dispatch of protocols by declared tasks."""

from __future__ import annotations

import ast
import json
import copy
import os
import subprocess
import sys
import textwrap

import pytest
import yaml

from conftest import ROOT
from planarena.config import DeclaredLayout, Layout, UndeclaredDataError, resolve_profile
from planarena.methods import REGISTRY, Method
from planarena.core import fingerprint
from planarena.runner import inputs
from planarena.runner.entry import WorkspaceLock, WorkspaceLockedError
from planarena.runner.stages import PROTOCOLS, protocols_of


def _raw_params() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text())


# -- code closure -------------------------------------------------------------------------------


def test_family_closures_are_disjoint():
    """An edit to one family's subpackage changes no other family's inputs."""
    emb = fingerprint.import_closure([REGISTRY["embedplan"].partition(":")[0]])
    sc = fingerprint.import_closure([REGISTRY["state_centric"].partition(":")[0]])
    assert not any(m.startswith("planarena.methods.state_centric") for m in emb), emb
    assert not any(m.startswith("planarena.methods.embedplan") for m in sc), sc
    # the shared layers they do use are in the closure (function-level imports included)
    assert "planarena.protocols.pool" in emb and "planarena.protocols.pool" in sc
    assert "planarena.features.wl" in sc and "planarena.search.decoding" in sc
    assert "planarena.features.wl" not in emb
    # parent packages execute on import, so they count
    assert "planarena.methods" in sc and "planarena" in sc


def test_closure_matches_the_modules_python_actually_imports():
    """The AST walk finds at least every planarena module that importing the entry loads (so the
    fingerprint cannot miss code the stage runs)."""
    for entry in ("planarena.runner.stages", REGISTRY["state_centric"].partition(":")[0],
                  REGISTRY["embedplan"].partition(":")[0], "planarena.features.wl"):
        code = (f"import importlib, sys; importlib.import_module({entry!r}); "
                "print('\\n'.join(m for m in sys.modules if m == 'planarena' or m.startswith('planarena.')))")
        loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout.split())
        assert loaded <= set(fingerprint.import_closure([entry])), loaded - set(fingerprint.import_closure([entry]))


def _fresh_code_facts(monkeypatch, facts_file):
    """This process's code facts forgotten, as in a new stage process reading ``facts_file``."""
    monkeypatch.setattr(fingerprint, "FACTS_FILE", facts_file)
    monkeypatch.setattr(fingerprint, "_FACTS", None)
    for fn in (fingerprint._file_facts, fingerprint._module_imports, fingerprint._module_hash, fingerprint._parse):
        getattr(fn, "cache_clear", lambda: None)()


def test_code_facts_are_kept_across_processes_and_follow_file_contents(tmp_path, monkeypatch):
    """A stage process reads the AST facts of unchanged files from the facts file (no parsing);
    a file whose bytes differ from the recorded digest is parsed again, whatever the table says."""
    facts = tmp_path / "facts.json"
    _fresh_code_facts(monkeypatch, facts)
    want = fingerprint.code_fingerprint(["planarena.runner.stages"], registry_name="state_centric")
    assert facts.exists()

    _fresh_code_facts(monkeypatch, facts)
    real_parse = fingerprint._parse

    def no_parse(path):
        raise AssertionError(f"parsed {path} although its bytes are unchanged")
    monkeypatch.setattr(fingerprint, "_parse", no_parse)
    assert fingerprint.code_fingerprint(["planarena.runner.stages"], registry_name="state_centric") == want

    table = json.loads(facts.read_text())
    key = "core/executor.py"
    table["files"][key]["hash"] = {"": "not-the-hash"}
    facts.write_text(json.dumps(table))
    _fresh_code_facts(monkeypatch, facts)  # a matching digest: the table is trusted
    got = fingerprint.code_fingerprint(["planarena.runner.stages"], registry_name="state_centric")
    assert got["planarena.core.executor"] == "not-the-hash"
    table["files"][key]["digest"] = "another-file"
    facts.write_text(json.dumps(table))
    monkeypatch.setattr(fingerprint, "_parse", real_parse)
    _fresh_code_facts(monkeypatch, facts)  # another digest: the file is hashed again
    got = fingerprint.code_fingerprint(["planarena.runner.stages"], registry_name="state_centric")
    assert got == want and json.loads(facts.read_text())["files"][key]["digest"] != "another-file"


def test_code_hash_ignores_comments_but_not_code(tmp_path, monkeypatch):
    a = ast.parse("x = 1  # a comment\n\n\ndef f():\n    return x\n")
    b = ast.parse("x = 1\ndef f():\n    return x  # other\n")
    c = ast.parse("x = 2\ndef f():\n    return x\n")
    assert fingerprint._code_hash(a) == fingerprint._code_hash(b) != fingerprint._code_hash(c)


def test_a_new_registry_line_does_not_change_other_methods():
    src = (ROOT / "src/planarena/methods/__init__.py").read_text()
    added = src.replace('REGISTRY: dict[str, str] = {', 'REGISTRY: dict[str, str] = {\n    "new": "x.y:Z",', 1)
    assert added != src
    keep = lambda text, name: fingerprint._code_hash(fingerprint._registry_entry_only(ast.parse(text), name))  # noqa: E731
    assert keep(src, "embedplan") == keep(added, "embedplan")
    assert keep(src, "*") != keep(added, "*")


# -- params -------------------------------------------------------------------------------------


def test_inactive_profile_keys_do_not_enter_stage_inputs():
    raw = _raw_params()
    before = resolve_profile(copy.deepcopy(raw))
    raw["profiles"]["paper"]["planners"]["astar_lmcut"]["time_limit"] = 123
    raw["profiles"]["paper"]["embedplan"]["model"]["max_epochs"] = 7
    after = resolve_profile(raw)
    for stage in inputs.DATA_STAGES:
        assert inputs.select_params(before, inputs.STAGES[stage].params) == \
            inputs.select_params(after, inputs.STAGES[stage].params), stage


def test_active_suite_block_only():
    params = resolve_profile(_raw_params())
    sel = inputs.select_params(params, inputs.STAGES["generate"].params)
    assert set(sel) == {"seed", "suite", "suites.generated"}
    assert "jobs" not in inputs.select_params(params, ("*",))


def test_method_inputs_name_what_the_method_reads(tmp_path):
    params = resolve_profile(_raw_params())
    layout = Layout(root=tmp_path / "data")
    emb = inputs.method_inputs("train", "embedplan_mlp", params, layout)
    assert "methods.embedplan_mlp" in emb["params"] and "embedplan" in emb["params"]
    assert set(emb["data"]) == {"acp", "embeddings/acp"}
    assert "transition_models" not in str(sorted(emb["params"]))
    sc = inputs.method_inputs("evaluate", "wl_xgb_delta", params, layout)
    assert {"problems", "trajectories", "embeddings/wl"} <= set(sc["data"])
    assert {"evaluation.splits", "evaluation.seeds", "evaluation.time_limit", "evaluation.lockstep_batch"} <= set(sc["params"])
    # lockstep batching is read by lockstep methods only
    fd = inputs.method_inputs("evaluate", "fd_lama", params, layout)
    assert "evaluation.time_limit" in fd["params"] and "evaluation.lockstep_batch" not in fd["params"]
    assert not any("embedplan.method" in m for m in sc["code"])
    # jobs never matters
    assert "jobs" not in str(emb) and "jobs" not in str(sc["params"])


def test_resolve_writes_stable_bytes(tmp_path):
    params = resolve_profile(_raw_params())
    layout = Layout(root=tmp_path / "data")
    files = inputs.run_resolve_stage(params, layout)
    first = {f: f.read_bytes() for f in files}
    inputs.run_resolve_stage(params, layout)
    assert all(f.read_bytes() == b for f, b in first.items())
    assert inputs.inputs_file(layout, "plan") in first


# -- declared data ------------------------------------------------------------------------------


def test_declared_layout_refuses_undeclared_folders(tmp_path):
    lay = DeclaredLayout(root=tmp_path, allowed=frozenset({"acp", "embeddings/acp"}), owner="method x")
    assert lay.acp == tmp_path / "acp" and lay.embeddings == tmp_path / "embeddings"
    assert lay.models == tmp_path / "models" and lay.cache == tmp_path / "cache"
    with pytest.raises(UndeclaredDataError, match="method x reads data/trajectories"):
        lay.trajectories


# -- protocols by declared task -----------------------------------------------------------------


def test_protocols_follow_declared_tasks(tmp_path):
    class Ranker(Method):
        tasks = frozenset({"plan", "rank_successors"})
        successor_protocols = ("pool",)

    m = Ranker("r", {}, {}, Layout(root=tmp_path))
    assert [n for n, _ in protocols_of(m)] == ["coverage", "pool"]

    class Schema(Method):
        tasks = frozenset({"learn_schema"})

    assert [n for n, _ in protocols_of(Schema("s", {}, {}, Layout(root=tmp_path)))] == ["schema"]

    class Unknown(Method):
        tasks = frozenset({"plan", "write_poems"})

    with pytest.raises(ValueError, match="no protocol for task 'write_poems'"):
        protocols_of(Unknown("u", {}, {}, Layout(root=tmp_path)))
    assert set(PROTOCOLS["rank_successors"]) == {"successor_set", "pool"}


# -- workspace lock -----------------------------------------------------------------------------


def test_workspace_lock_stops_a_second_stage(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        from planarena.runner.entry import WorkspaceLock, WorkspaceLockedError
        try:
            with WorkspaceLock({str(tmp_path)!r}, "second"):
                print("got it")
        except WorkspaceLockedError as exc:
            print("locked:", exc)
    """)
    with WorkspaceLock(tmp_path, "evaluate wl_xgb_delta"):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
        assert "locked:" in out and f"pid {os.getpid()}" in out and "evaluate wl_xgb_delta" in out
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert "got it" in out
    with WorkspaceLock(tmp_path, "a"):
        pass  # re-entrant after release in the same process


def test_stage_main_reports_a_held_lock_in_one_line(tmp_path, monkeypatch, capsys):
    from planarena.runner import entry

    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text("profile: default\nprofiles: {default: {}}\n")
    with WorkspaceLock(tmp_path / "data", "plan"):
        # flock is per open file description: a second open in this process is refused too
        with pytest.raises(SystemExit) as exc:
            entry.stage_main(lambda params, layout: None, what="plan")
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "another planarena stage is running" in err and err.count("\n") == 1
    with pytest.raises(WorkspaceLockedError):
        with WorkspaceLock(tmp_path / "data"), WorkspaceLock(tmp_path / "data"):
            pass


def test_rows_off_in_the_default_profile_run_under_full_and_one_by_one(tmp_path):
    """The default profile runs the floors, the planners and each family's headline rows; `full`
    (and `paper`) run every row; `-S methods.<row>.run=true` turns one row on. An off row's inputs
    name nothing of its family (its edits rerun nothing; the stages skip it: test_pipeline)."""
    from planarena.methods import resolve, running, runs

    raw = _raw_params()
    default = resolve_profile(raw)
    on = set(running(default)["methods"])
    assert {"random_walk", "fd_lama", "wl_identity", "aiw_ad", "satr_encoder_cl", "dias_strips"} <= on
    # off by default for the 20-minute run (params.yaml says why): Table 6's IW(1) rows, names-only DIAS
    assert not {"baiw_ad", "embedplan_hyper", "satr_encdec_nocl_regrounding", "dias_noise4", "iw_ad",
                "iw_ext", "dias_names"} & on
    full = resolve_profile({**raw, "profile": "full"})
    assert set(running(full)["methods"]) == set(full["methods"])
    one = copy.deepcopy(default)
    one["methods"]["baiw_ad"]["run"] = True
    assert runs("baiw_ad", one) and set(running(one)["methods"]) == on | {"baiw_ad"}
    assert "run" not in resolve("baiw_ad", default)[1]   # no family sees the flag

    layout = Layout(tmp_path / "data")
    assert inputs.method_inputs("train", "baiw_ad", default, layout) == {"stage": "train@baiw_ad", "run": False}
    assert inputs.inputs_file(layout, "evaluate", "baiw_ad") == layout.root / "inputs" / "evaluate" / "baiw_ad.json"
