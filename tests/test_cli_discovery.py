"""Discovery commands: `planarena rows` lists every configured row (twins included) with its class,
kind, on/off state in a profile and budget; `planarena suites` lists each suite's domains and problems."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from planarena.cli import app
from planarena.config import load_params
from planarena.methods import runs

REPO = Path(__file__).resolve().parents[1]


def test_rows_lists_every_row_with_its_state_in_the_profile(monkeypatch):
    monkeypatch.chdir(REPO)
    params = load_params(REPO / "params.yaml")
    out = CliRunner().invoke(app, ["rows"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    body = {ln.split()[0]: ln for ln in lines[1:-1]}
    assert set(body) == set(params["methods"])
    on = [r for r in params["methods"] if runs(r, params)]
    assert lines[-1] == f"{len(params['methods'])} rows, {len(on)} on in profile default"
    assert " off " in body["wl_xgb_state"] and " on " in body["wl_xgb_delta"]
    assert "(twin of wl_xgb_delta)" in body["wl_xgb_delta_untrained"]
    assert "boosting rounds" in body["wl_xgb_delta"]
    full = CliRunner().invoke(app, ["rows", "--profile", "full", "--on"])
    assert full.output.splitlines()[-1] == f"{len(params['methods'])} rows, {len(params['methods'])} on in profile full"


def test_suites_lists_domains_and_problem_counts(monkeypatch):
    monkeypatch.chdir(REPO)
    out = CliRunner().invoke(app, ["suites"])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("generated (selected)\n")
    assert "    blocksworld    train 6 (size 4-7), validation 2 (size 8-8)" in out.output
    assert "dir, path: not set" in out.output


def test_a_misspelled_claim_id_names_the_nearest(monkeypatch):
    monkeypatch.chdir(REPO)
    out = CliRunner().invoke(app, ["claims", "report", "state-centric-delta-fresh-extrapolatoin"])
    # the console script turns the ConfigError into one `error:` line (planarena.cli.main)
    assert "no such claim (did you mean `state-centric-delta-fresh-extrapolation`?)" in str(out.exception)
