"""The training-cost announcement (planarena.core.cost): sizes before the run, the projection after
its first unit, a warning naming the budget key when the projection is large and nothing caps it."""

from __future__ import annotations

import io

from planarena.core import cost


def _run(monkeypatch, first_unit_s: float, **kwargs) -> list[str]:
    clock = iter([100.0, 100.0 + first_unit_s, 999.0])
    monkeypatch.setattr(cost.time, "process_time", lambda: next(clock))
    out = io.StringIO()
    proj = cost.CostProjection("xgb delta seed 13", "8,000 rows x 16,420 features -> 8,210 outputs", 1000,
                               "round", stream=out, **kwargs)
    proj.unit_done()
    proj.unit_done()  # only the first unit prints
    return out.getvalue().splitlines()


def test_projection_warns_without_a_budget(monkeypatch):
    lines = _run(monkeypatch, 40.0, budget_key="transition_models.xgb.time_budget_s")
    assert lines[0] == "[cost] xgb delta seed 13: 8,000 rows x 16,420 features -> 8,210 outputs; up to 1,000 rounds"
    assert len(lines) == 2 and "first round 40.00 CPU s -> at most 11.1 CPU h for 1,000 rounds" in lines[1]
    assert "WARNING" in lines[1] and "transition_models.xgb.time_budget_s" in lines[1]


def test_projection_under_a_budget_says_where_it_is_cut(monkeypatch):
    lines = _run(monkeypatch, 0.5, budget_s=60, budget_key="k")
    assert "CPU budget 60 s (k)" in lines[0]
    assert "at most 8 CPU min" in lines[1] and "cut at the budget of 60 CPU s" in lines[1]
    assert "WARNING" not in lines[1]
    assert "WARNING" not in _run(monkeypatch, 0.5)[1]  # 500 CPU s: small enough without a budget
