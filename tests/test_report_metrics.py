"""planarena.report.metrics: each metric declared once; best, aggregation, Sum and format derive
from the declaration."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from test_report import rec

from planarena.report.metrics import (
    AGGREGATIONS,
    COVERAGE,
    METRICS,
    N_S,
    PARAMETERS,
    TIME,
    TIME_PER_STEP,
    TRAIN_TIME,
    Metric,
    instance_weighted,
    metric,
    register_metric,
    seed_means,
)


def test_every_declared_metric_says_direction_and_aggregation():
    assert COVERAGE.higher_is_better is True and COVERAGE.summary == "instance_weighted"
    assert TIME.higher_is_better is False and TIME.aggregation == "geometric_mean"
    assert N_S.higher_is_better is None
    for m in METRICS.values():
        assert m.aggregation in AGGREGATIONS and m.title


def test_best_follows_the_declared_direction():
    assert COVERAGE.best({"a": 0.5, "b": 0.75, "c": 0.75 + 1e-12}) == {"b", "c"}
    assert COVERAGE.best({"a": 0.0, "b": 0.0}) == set()  # nothing achieved: nothing bold
    assert COVERAGE.best({"a": math.nan, "b": None}) == set()
    assert TIME.best({"a": 2.0, "b": 0.5, "c": 0.5}) == {"b", "c"}  # min wins
    assert TIME.best({"a": 0.0, "b": 1.0}) == {"a"}
    assert N_S.best({"a": 3, "b": 4}) == set()  # not ranked


def test_unknown_aggregation_or_summary_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown aggregation 'median'; valid: seed_mean"):
        Metric("x", "x", True, aggregation="median")
    with pytest.raises(ValueError, match="unknown summary 'total'"):
        Metric("x", "x", True, summary="total")


def test_pattern_metrics_and_unknown_names():
    assert metric("hit@3").title == "Hit@3" and metric("hit@3").higher_is_better
    assert metric("acc@10").title == "Acc@10"
    assert metric("plan_mean_hit@5").title == "Plan mean Hit@5"
    assert metric("plan_exact_hit@5").title == "Plan exact Hit@5"
    assert metric("precision") is METRICS["precision"]
    with pytest.raises(KeyError, match="unknown metric 'f1'; declared: "):
        metric("f1")
    with pytest.raises(ValueError, match="registered twice"):
        register_metric(Metric("coverage", "coverage", True))


def test_format_and_aggregate():
    mean, std = COVERAGE.aggregate([2 / 3, 1 / 3, 1.0])
    assert mean == pytest.approx(2 / 3) and std == pytest.approx(math.sqrt(2 / 27))  # ddof=0
    assert COVERAGE.format(mean, std, 3) == "0.67 ± 0.27 (n=3)"
    assert COVERAGE.format(1.0, math.nan, 2, bold=True) == "**1.00 ± n/a (n=2)**"
    assert all(math.isnan(x) for x in COVERAGE.aggregate([]))
    pct = metric("hit@5").percent()
    assert pct.format(*pct.aggregate([0.5, 0.25])) == "37.5 ± 12.5"
    assert PARAMETERS.format_value(1000.0) == "1,000" and PARAMETERS.format_value(1234.5) == "1,234.5"
    assert TRAIN_TIME.format_value(1234.5) == "1234.5"
    assert TIME_PER_STEP.format_value(0.2) == "0.2000"
    assert COVERAGE.json_value(2 / 3) == 0.6667


def test_combine_by_declared_aggregation():
    pairs = [(0, 1.0), (0, 5.0), (1, 3.0)]
    assert PARAMETERS.combine(pairs) == 2.0  # first value per seed: 1 and 3
    assert TIME_PER_STEP.combine(pairs) == 3.0  # every attempt
    assert metric("hit@1").combine(pairs) == 3.0  # per-seed means 3 and 3
    assert PARAMETERS.combine([]) is None
    with pytest.raises(ValueError, match="combine"):
        TIME.combine(pairs)


def test_instance_weighted_sum_over_cells():
    cells = pd.DataFrame(
        [
            {"n": 3, "mean": 2 / 3, "seeds": (0, 1, 2), "solved": (2, 1, 3)},
            {"n": 1, "mean": 1.0, "seeds": (0, 1, 2), "solved": (1, 1, 1)},
        ]
    )
    n, mean, std = instance_weighted(cells)
    assert n == 4 and mean == pytest.approx(0.75)
    assert std == pytest.approx(float(pd.Series([3 / 4, 2 / 4, 4 / 4]).std(ddof=0)))
    no_common = cells.assign(seeds=[(0,), (1,)], solved=[(2,), (1,)])
    assert math.isnan(instance_weighted(no_common)[2])
    assert instance_weighted(cells.iloc[0:0])[0] == 0


def test_seed_means_skip_non_numbers():
    recs = [
        rec("m", "d", "s", "p1", 0, extra={"hit@5": 0.5}),
        rec("m", "d", "s", "p2", 0, extra={"hit@5": 1.0}),
        rec("m", "d", "s", "p3", 1, extra={"hit@5": True}),
        rec("m", "d", "s", "p4", 1, extra={"hit@5": math.inf}),
        rec("m", "e", "s", "p5", 1, extra={"hit@5": 0.25}),
    ]
    assert seed_means(recs, lambda r: r.domain, "hit@5") == {"d": {0: 0.75}, "e": {1: 0.25}}
