"""The results layer (planarena.results): solved matrices over the instance index (a missing record
is unsolved), their restriction to cells, and Hit@k with the problem as the unit."""

from __future__ import annotations

import numpy as np

from test_report import rec

from planarena.results import UNIT, HitMatrices, SolvedMatrices, unit_scores
from planarena.report.sections import ranking


def _pool(method, protocol, domain, ranks, problems=None, seed=13, split="same domain"):
    extra = {"task": "rank_successors", "protocol": protocol, "ranks": list(ranks)}
    if problems is not None:
        names = sorted(set(problems))
        extra |= {"problems": names, "query_problem": [names.index(p) for p in problems]}
    return rec(method, domain, split, "pool", seed, extra=extra)


def test_solved_matrix_rows_are_the_index_and_a_missing_record_is_unsolved():
    index = {("bw", "test"): {"p1", "p2", "p3"}, ("bw", "train"): {"t1"}}
    records = [rec("a", "bw", "test", "p1", 1), rec("a", "bw", "test", "p2", 2, "timeout"),
               rec("a", "bw", "test", "p2", 1, "solved", validated=False), rec("a", "bw", "train", "t1", 3)]
    data = SolvedMatrices(records, index)
    assert data.unit == UNIT == "problem" and data.seeds["a"] == [1, 2, 3]
    assert data.problems("test", None) == [("bw", "test", "p1"), ("bw", "test", "p2"), ("bw", "test", "p3")]
    solved, attempted = data.matrix("a", "test", "bw")
    assert solved.tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 0]] and attempted.tolist() == [True, True, False]
    assert data.matrix("a", "test", None, seed=2)[0].shape == (3, 1)
    assert data.matrix("nobody", "test", None)[0].shape == (3, 0)
    # restricted to the test cell, seed 3 (only on train) is no column any more
    assert data.within([("bw", "test")]).matrix("a", "test", None)[0].shape == (3, 2)
    assert data.record("a", ("bw", "test", "p2"), 2).outcome == "timeout"


def test_problem_matrix_means_each_problems_queries_per_seed_and_falls_back_to_domains():
    records = [_pool("m", "cross_domain", "bw", [0, 9, 0, 0], ["p0", "p0", "p1", "p1"], split="from gr"),
               _pool("m", "cross_domain", "bw", [9, 9, 0, 9], ["p0", "p0", "p1", "p1"], split="from fe"),
               _pool("m", "cross_domain", "bw", [0, 0, 0, 0], ["p0", "p0", "p1", "p1"], seed=14, split="from gr")]
    pm = HitMatrices(records).problem_matrix("m", "cross_domain", 5, None)
    keys, mat = pm
    assert pm.unit == "problems" and keys == [("bw", "p0"), ("bw", "p1")] and pm.seeds == [13, 14]
    assert np.allclose(mat, [[0.25, 1.0], [0.75, 1.0]])  # seed 13: both sources' queries pooled
    old = HitMatrices([_pool("m", "interpolation", "bw", [0, 9]), _pool("m", "interpolation", "gr", [0, 0])])
    pm = old.problem_matrix("m", "interpolation", 5, None)
    assert pm.unit == "domains" and pm.keys == [("bw",), ("gr",)] and pm.matrix.tolist() == [[0.5], [1.0]]


def test_problem_matrix_pools_seeds_when_the_held_out_problems_depend_on_the_seed():
    """Extrapolation draws its held-out problems per seed: no problem is tested under every seed, so
    each enters with its mean over the seeds that tested it (one column), not dropped (which left
    no row at all and made every Extrapolation atom read "no records")."""
    records = [_pool("m", "extrapolation", "bw", [0, 9], ["p0", "p1"], seed=13),
               _pool("m", "extrapolation", "bw", [0, 0], ["p2", "p3"], seed=14),
               _pool("m", "extrapolation", "bw", [9, 0], ["p0", "p2"], seed=15)]
    pm = HitMatrices(records).problem_matrix("m", "extrapolation", 5, None)
    assert pm.seed_pooled and pm.seeds == [13, 14, 15] and pm.matrix.shape == (4, 1)
    assert dict(zip(pm.keys, pm.matrix[:, 0])) == {("bw", "p0"): 0.5, ("bw", "p1"): 0.0, ("bw", "p2"): 1.0,
                                                   ("bw", "p3"): 1.0}
    # a protocol that tests every problem under every seed keeps its (problems, seeds) matrix
    full = HitMatrices([_pool("m", "interpolation", "bw", [0, 9], ["p0", "p1"], seed=s) for s in (13, 14)])
    assert not full.problem_matrix("m", "interpolation", 5, None).seed_pooled


def test_ranking_reads_the_unit_scores_of_the_results_layer():
    records = [_pool("m", "interpolation", "bw", [0, 9], ["p0", "p1"])]
    assert ranking.unit_scores is unit_scores
    assert HitMatrices(records).units("m", "interpolation", 5, None) == {("bw", "same domain", 0): {13: 1.0},
                                                                          ("bw", "same domain", 1): {13: 0.0}}
