"""Held-out means unseen (docs/concepts.md#held-out-means-unseen): Extrapolation splits object sets,
test triples seen in training are excluded from single-step Hit@k and counted, and WL pool
candidates carry the query's goal."""

from __future__ import annotations

import numpy as np
import pytest

from planarena.core.records import ResultRecord
from planarena.protocols.pool import (
    Corpus,
    PoolModel,
    TransitionTable,
    hash_str,
    objects_of,
    protocol_tasks,
    task_records,
)


def corpus(problems_per_domain=4, states=12, object_sets=None, keys=None) -> Corpus:
    """One domain ``d``; problem p has states 0..states-1 and the transitions i -> i+1 (one action),
    one plan of all its transitions and a second plan of its first half (Plan-Variant needs two)."""
    n_p = problems_per_domain
    s, s2, tp = [], [], []
    for p in range(n_p):
        for i in range(states - 1):
            s.append(p * states + i)
            s2.append(p * states + i + 1)
            tp.append(p)
    s, s2, tp = (np.asarray(x, np.int64) for x in (s, s2, tp))
    t = len(s)
    table = TransitionTable(
        state_emb=np.zeros((n_p * states, 0), np.float32), action_emb=np.zeros((1, 0), np.float32),
        s=s, a=np.zeros(t, np.int64), s2=s2, app_offsets=np.arange(t + 1, dtype=np.int64),
        app_actions=np.zeros(t, np.int64), app_successors=s2.copy(),
        state_problem=np.repeat(np.arange(n_p), states), state_domain=np.zeros(n_p * states, np.int64))
    plans = []
    for p in range(n_p):
        rows = np.nonzero(tp == p)[0]
        plans += [(p, rows), (p, rows[: len(rows) // 2])]
    return Corpus(table=table, domains=["d"], problems=[("d", f"p{p}") for p in range(n_p)],
                  trans_problem=tp, plans=plans, trans_key=keys, problem_objects=object_sets)


def twin_keys(c: Corpus) -> np.ndarray:
    """Triple keys under which problems 0 and 1 have the same transitions (2 and 3 their own)."""
    pid = c.trans_problem
    return np.asarray([hash_str(f"{0 if pid[r] < 2 else int(pid[r])} {int(c.table.s[r]) % 12}")
                       for r in range(len(pid))])


def test_extrapolation_never_tests_on_an_object_set_seen_in_training():
    c = corpus(problems_per_domain=6, object_sets=[1, 2, 1, 3, 2, 3])
    for seed in range(10):
        (task,) = protocol_tasks(c, "extrapolation", seed)
        train_sets = {c.object_set(p) for p in c.trans_problem[task.train_rows]}
        test_sets = {c.object_set(p) for p in c.trans_problem[task.tests[0].rows]}
        assert train_sets and test_sets and not train_sets & test_sets
        assert train_sets | test_sets == {1, 2, 3}


def test_one_object_set_means_no_extrapolation_task_with_the_reason():
    c = corpus(object_sets=[7, 7, 7, 7])
    (task,) = protocol_tasks(c, "extrapolation", 13)
    assert task.skipped and "fewer than 2 object sets" in task.skipped
    (md,) = protocol_tasks(c, "multi_domain", 13)
    assert md.skipped and "object sets" in md.skipped


def test_test_triples_seen_in_training_are_marked():
    """Problems 0 and 1 are copies (same triples): whatever Interpolation puts in test that its twin
    has in training is seen; Plan-Variant's test plans repeat training steps."""
    base = corpus()
    keys = twin_keys(base)
    c = corpus(keys=keys)
    (interp,) = protocol_tasks(c, "interpolation", 13)
    test = interp.tests[0]
    trained = set(keys[interp.train_rows].tolist())
    assert test.seen.tolist() == [int(keys[r]) in trained for r in test.rows]
    assert 0 < test.seen.sum() < len(test.rows)
    assert set(test.scored.tolist()) == set(np.nonzero(~test.seen)[0].tolist())
    (pv,) = protocol_tasks(c, "plan_variant", 13)
    assert pv.tests[0].seen.any()  # the shorter plan's steps are steps of the longer one
    # without content keys, rows are their own triples: only rows in training are seen
    (pv_rows,) = protocol_tasks(corpus(), "plan_variant", 13)
    assert pv_rows.tests[0].seen.tolist() == np.isin(pv_rows.tests[0].rows, pv_rows.train_rows).tolist()


class _Method:
    name, family = "m", "f"


def test_records_score_unseen_queries_and_count_the_seen():
    base = corpus()
    keys = twin_keys(base)
    c = corpus(keys=keys)
    (task,) = protocol_tasks(c, "interpolation", 13)
    test = task.tests[0]
    # a ranker that is right exactly on the seen queries: Hit@1 over the unseen ones must be 0
    ranks = np.where(test.seen, 0, 50)

    def load():
        return PoolModel("solved", None, lambda t: (ranks, np.full(len(t.rows), 128), {}), {})

    (rec,) = [ResultRecord.from_dict(r) for r in task_records(_Method(), task, "interpolation", 13, "x",
                                                                  set(), "fp", {}, load)]
    e = rec.extra
    assert e["test_transitions"] == len(test.rows)
    assert e["seen_in_training"] == int(test.seen.sum()) > 0
    assert e["queries"] == len(test.rows) - e["seen_in_training"]
    assert e["hit@1"] == 0.0 and e["hit_chance@1"] == pytest.approx(1 / 128, abs=1e-6)


def test_all_seen_cell_has_no_hit_rate():
    c = corpus()
    (task,) = protocol_tasks(c, "interpolation", 13)
    task.tests[0].seen = np.ones(len(task.tests[0].rows), bool)

    def load():
        return PoolModel("solved", None, lambda t: (np.zeros(len(t.rows), np.int64), np.full(len(t.rows), 128), {}), {})

    (rec,) = list(task_records(_Method(), task, "interpolation", 13, "x", set(), "fp", {}, load))
    assert rec["extra"]["queries"] == 0 and "hit@1" not in rec["extra"]


def test_object_set_of_a_problem_dataset():
    class P:
        states = [["(at c0 l1)", "(at-ferry l0)"]]
        initial = 0
        static = ["(not-eq l0 l1)"]
        goal = ["(at c0 l0)", "(not (at c0 l2))"]

    assert objects_of(P) == {"c0", "l0", "l1", "l2"}
