"""Why an attempt stopped: a budget stop (a cap or a time limit) is counted apart from a dead end,
an exhausted search, a cycle, an early stop, an invalid action or an error (issue 51, item 5)."""

import pytest

from planarena.core.records import STOPS, ResultRecord, stop_of
from planarena.report.sections.detail import render, stop_table


@pytest.mark.parametrize("outcome, reason, stop", [
    ("unsolved", "choice limit 1000 reached", "budget"),                 # R-GNN policies
    ("unsolved", "goal not reached within horizon 600", "budget"),       # walks, greedy decoders
    ("unsolved", "max_expansions=100000 reached", "budget"),             # WL-GOOSE
    ("unsolved", "600-token cap reached", "budget"),                     # transformers
    ("unsolved", "ran past the model's learned positions", "budget"),
    ("timeout", "timeout (limit 60 s, 8192 MiB)", "budget"),
    ("memout", None, "budget"),
    ("unsolved", "dead end: every successor already visited", "dead end"),
    ("unsolved", "search space exhausted / unsolvable", "exhausted"),
    ("unsolved", "GBFS exhausted the reachable states: no plan", "exhausted"),
    ("unsolved", "cycle: the greedy policy returned to a state on its path", "cycle"),
    ("unsolved", "<EOS> before the goal was reached", "early stop"),
    ("unsolved", "malformed action: expected an object", "invalid action"),
    ("unsolved", "inapplicable action (pick b1 r1)", "invalid action"),
    ("error", "plan exited 1: boom", "error"),
    ("diverged", "loss is NaN", "error"),
    ("unsolved", "plan exited 0 without a plan file", "other"),
    ("solved", None, None),
    ("not_applicable", "conditional effects", None),
])
def test_stop_of_reads_the_outcome_and_the_reason(outcome, reason, stop):
    assert stop_of(outcome, reason) == stop
    assert stop is None or stop in STOPS


def test_a_decoders_failure_code_wins_over_the_reason_text():
    assert stop_of("unsolved", "600-token cap reached", {"failure": "token_cap"}) == "budget"
    assert stop_of("unsolved", "whatever the text says", {"failure": "eos_before_goal"}) == "early stop"
    assert stop_of("unsolved", "dead end: x", {"failure": "unknown_code"}) == "dead end"


def test_an_explicit_stop_wins_over_the_reason():
    assert stop_of("unsolved", "dead end: x", {"stop": "budget"}) == "budget"
    assert stop_of("unsolved", "dead end: x", {"stop": "no such stop"}) == "dead end"


def rec(method, outcome, reason=None, validated=False, **extra):
    return ResultRecord(method=method, family="f", domain="d", split="test", problem=f"p{id(reason)}{outcome}",
                        seed=13, outcome=outcome, failure_reason=reason, validated=validated, plan=["(a)"] if
                        outcome == "solved" else None, extra={"task": "plan", **extra})


def test_the_detail_page_counts_budget_stops_apart_from_dead_ends():
    records = [rec("walk", "solved", validated=True), rec("walk", "unsolved", "goal not reached within horizon 9"),
               rec("walk", "unsolved", "dead end: every successor already visited"),
               rec("walk", "solved", "x", validated=False),
               rec("gbfs", "timeout", "timeout (limit 5 s)"), rec("gbfs", "unsolved", "search space exhausted"),
               rec("gbfs", "not_applicable", "conditional effects")]
    table = stop_table(records)
    walk = table.set_index("method").loc["walk"]
    gbfs = table.set_index("method").loc["gbfs"]
    assert (walk["attempts"], walk["solved"], walk["budget"], walk["dead end"], walk["rejected plan"]) == (4, 1, 1, 1, 1)
    assert (gbfs["attempts"], gbfs["budget"], gbfs["exhausted"], gbfs["dead end"]) == (2, 1, 1, 0)
    assert "cycle" not in table.columns     # only the stops that occur
    text = "\n".join(render({}, table))
    assert "### Why attempts stopped" in text and "| walk " in text and "*budget*" in text
