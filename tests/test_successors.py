"""Successor generation over pymimir's advanced API (``core.successors``) and the lookahead trees
built on it: the grounded generator gives the lifted generator's actions, the add-effect shortcut
gives the atoms a successor makes new, and every lookahead kind builds the tree a plain search over
pymimir's public wrappers builds (the reference below: applicable actions from
``State.generate_applicable_actions``, successors from ``GroundAction.apply``, new atoms by
comparing the two states' atom lists, as the lookahead did before it read the advanced API).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import FIXTURES, needs_shared
from test_rgnn_policies import DOMAIN as SPANNER  # typed Spanner: men walk one-way links, pick up spanners
from planarena.core.pddl import atom_indices, load_problem
from planarena.core.successors import Successors, successors_of
from planarena.methods.rgnn_policies.lookahead import AtomFeatures, lookahead, object_types

# negative preconditions and a conditional effect: switching a lamp on works when the fuse is in
LAMPS = """(define (domain lamps)
  (:requirements :strips :typing :negative-preconditions :conditional-effects)
  (:types lamp room)
  (:predicates (on ?l - lamp) (in ?l - lamp ?r - room) (here ?r - room) (fuse) (door ?a ?b - room))
  (:action switch-on :parameters (?l - lamp ?r - room)
    :precondition (and (here ?r) (in ?l ?r) (not (on ?l)))
    :effect (when (fuse) (on ?l)))
  (:action switch-off :parameters (?l - lamp) :precondition (on ?l) :effect (not (on ?l)))
  (:action move :parameters (?a ?b - room)
    :precondition (and (here ?a) (door ?a ?b) (not (here ?b)))
    :effect (and (here ?b) (not (here ?a))))
  (:action fix :parameters () :precondition (not (fuse)) :effect (fuse)))
"""
LAMPS_PROBLEM = """(define (problem lit) (:domain lamps)
  (:objects k1 k2 h1 - lamp kitchen hall - room)
  (:init (here kitchen) (in k1 kitchen) (in k2 kitchen) (in h1 hall) (door kitchen hall) (door hall kitchen))
  (:goal (and (on k1) (on h1))))
"""
SPANNER_PROBLEM = """(define (problem two-men) (:domain spanners)
  (:objects bob alice - man s1 s2 s3 - spanner l0 l1 l2 l3 - location)
  (:init (at bob l0) (at alice l1) (at s1 l2) (at s2 l2) (at s3 l3) (link l0 l1) (link l1 l2) (link l2 l3))
  (:goal (and (carrying alice s1) (carrying bob s3))))
"""


def _written(folder: Path, domain: str, problem: str) -> tuple[Path, Path]:
    folder.mkdir()
    (folder / "domain.pddl").write_text(domain)
    (folder / "problem.pddl").write_text(problem)
    return folder / "domain.pddl", folder / "problem.pddl"


def _cases(tmp_path: Path) -> list[tuple[Path, Path]]:
    """(domain, problem) files: lamps, spanner (written here) and the tiny fixture."""
    return [_written(tmp_path / "lamps", LAMPS, LAMPS_PROBLEM), _written(tmp_path / "spanner", SPANNER, SPANNER_PROBLEM),
            (FIXTURES / "tiny" / "domain.pddl", FIXTURES / "tiny" / "three.pddl")]


def _walk(problem, steps: int, seed: int = 0) -> list:
    """States of a seeded random walk from the initial state (restarting at dead ends)."""
    rng, state, out = random.Random(seed), problem.get_initial_state(), []
    for _ in range(steps):
        out.append(state)
        actions = state.generate_applicable_actions()
        state = rng.choice(actions).apply(state) if actions else problem.get_initial_state()
    return out


def test_grounded_generator_gives_the_lifted_actions_and_successors(tmp_path):
    """Along walks on three domains (one with negative preconditions and conditional effects), the
    grounded generator's actions are the lifted generator's, in text order, and the successor and
    the atoms it makes new agree with pymimir's wrappers."""
    for domain, prob in _cases(tmp_path):
        problem = load_problem(str(domain), str(prob))
        succs = Successors(problem)
        assert succs.grounded, domain
        conditional = 0
        for state in _walk(problem, 60):
            lifted = sorted(str(a) for a in state.generate_applicable_actions())
            ours = succs.actions(state._advanced_state)
            assert [succs.key(a) for a in ours] == lifted
            for action in ours:
                succ = succs.successor(state._advanced_state, action)
                assert succs.state(succ) == succs.action(action).apply(state)
                before, after = set(atom_indices(state)[0]), set(atom_indices(succs.state(succ))[0])
                added = succs.added(action)
                if added is None:
                    conditional += 1
                else:
                    assert {a for a in added if a not in before} == after - before
        assert (conditional > 0) == (domain.parent.name == "lamps")
    assert successors_of(problem) is successors_of(problem)
    assert not Successors(problem, grounded=False).grounded


def _reference(problem, state, kind, features, capacity=1000):
    """The lookahead tree by the plain search over pymimir's wrappers: (paths, parents, edges,
    expanded, generated, novelty table size)."""
    goal = {int(lit.get_atom().get_index()) for lit in problem.get_goal_condition()
            if lit.get_polarity() and lit.get_atom().is_fluent()}
    jumps, edges, expanded, generated = [], [], 0, 0
    seen_states, seen = {state}, set()
    for a in atom_indices(state)[0]:
        seen.update(features(a))
    layer = [(state, -1, (), frozenset(atom_indices(state)[0]))]
    while layer:
        nxt = []
        for s, idx, path, atoms in layer:
            expanded += 1
            for action in sorted(s.generate_applicable_actions(), key=str):
                succ = action.apply(s)
                generated += 1
                if succ in seen_states:
                    continue
                succ_atoms = atom_indices(succ)[0]
                new = {f for a in succ_atoms if a not in atoms for f in features(a)} - seen
                seen |= new
                if not new and idx != -1:
                    continue
                seen_states.add(succ)
                jumps.append([path + (str(action),), idx])
                if idx >= 0:
                    edges.append((idx, len(jumps) - 1))
                if new:
                    nxt.append((succ, len(jumps) - 1, path + (str(action),), frozenset(succ_atoms),
                                sum(a in goal for a in succ_atoms)))
        if kind == "caiw" and len(nxt) > capacity:
            keep = sorted(range(len(nxt)), key=lambda i: (-nxt[i][4], i))[:capacity]
            dropped = {nxt[i][1] for i in range(len(nxt)) if jumps[nxt[i][1]][1] != -1} - {nxt[i][1] for i in keep}
            kept = [k for k in range(len(jumps)) if k not in dropped]
            new_index = {old: i for i, old in enumerate(kept)}
            jumps = [[jumps[k][0], new_index.get(jumps[k][1], -1)] for k in kept]
            edges = [(new_index[a], new_index[b]) for a, b in edges if a in new_index and b in new_index]
            nxt = [(s, new_index[j], p, a, g) for s, j, p, a, g in (nxt[i] for i in sorted(keep))]
        layer = [x[:4] for x in nxt]
    return [tuple(j) for j in jumps], edges, expanded, generated, len(seen)


def _tree(tree) -> tuple:
    return ([(tuple(str(a) for a in j.actions), j.parent) for j in tree.jumps], tree.edges, tree.expanded,
            tree.generated, tree.novelty_features)


@pytest.mark.parametrize("kind", ["iw", "aiw", "baiw", "caiw"])
def test_lookahead_trees_match_the_search_over_pymimir_wrappers(tmp_path, kind):
    """Every width lookahead builds, at every state of a walk, the reference search's tree: the same
    jumps in the same order, parents, edges and counters (C-AIW with capacity 2, so that it drops)."""
    for domain, prob in _cases(tmp_path):
        problem = load_problem(str(domain), str(prob))
        novelty = {"iw": "iw", "aiw": "aiw", "caiw": "aiw", "baiw": "baiw"}[kind]
        for goals in ("full", "reduced"):
            features = AtomFeatures(problem, novelty, object_types(prob, domain), goals)
            for state in _walk(problem, 25, seed=1):
                ours = lookahead(problem, state, kind, features, capacity=2)
                assert _tree(ours) == _reference(problem, state, kind, features, capacity=2)
                assert all(j.state == j.actions[-1].apply(ours.jumps[j.parent].state if j.parent >= 0 else state)
                           for j in ours.jumps)


@pytest.mark.parametrize("domain", ["spanner", "blocksworld", "childsnack", "ferry", "sokoban"])
def test_lookahead_trees_on_ipc2023_problems(domain):
    """The same comparison for AIW(1) on a training problem of five IPC 2023 Learning Track domains
    (their own typing, constants and grounding), at the states of a walk."""
    suite = needs_shared("ipc2023-learning") / domain
    prob = sorted((suite / "training" / "easy").glob("*.pddl"))[0]
    problem = load_problem(str(suite / "domain.pddl"), str(prob))
    features = AtomFeatures(problem, "aiw", object_types(prob, suite / "domain.pddl"))
    for state in _walk(problem, 8, seed=2):
        assert _tree(lookahead(problem, state, "aiw", features)) == _reference(problem, state, "aiw", features)
