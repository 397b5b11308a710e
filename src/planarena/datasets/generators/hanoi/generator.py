"""Towers of Hanoi problems (DIAS paper, Table 9: 9 objects for training, 15, 27 and 51 for testing,
i.e. 6, 12, 24 and 48 discs on 3 pegs)."""

from __future__ import annotations


def make_problem(num_discs: int, num_pegs: int = 3) -> str:
    """PDDL text of the problem with ``num_discs`` discs stacked on the first of ``num_pegs`` pegs
    (the smallest, ``d1``, on top) and the goal of the same tower on the last peg.

    Raises:
        ValueError: fewer than 1 disc or 3 pegs.
    """
    if not isinstance(num_discs, int) or isinstance(num_discs, bool) or num_discs < 1:
        raise ValueError("num_discs must be an integer at least 1")
    if not isinstance(num_pegs, int) or isinstance(num_pegs, bool) or num_pegs < 3:
        raise ValueError("num_pegs must be an integer at least 3")
    discs = [f"d{i}" for i in range(1, num_discs + 1)]
    pegs = [f"peg{i}" for i in range(1, num_pegs + 1)]
    init = [f"(smaller {p} {d})" for p in pegs for d in discs]
    init += [f"(smaller {big} {small})" for i, small in enumerate(discs) for big in discs[i + 1:]]
    below = [pegs[0], *reversed(discs)]   # peg1, then the largest disc up to d1
    init += [f"(on {top} {under})" for under, top in zip(below, below[1:])]
    init += [f"(clear {discs[0]})"] + [f"(clear {p})" for p in pegs[1:]]
    goal_below = [pegs[-1], *reversed(discs)]
    goal = [f"(on {top} {under})" for under, top in zip(goal_below, goal_below[1:])]
    nl = "\n    "
    return (f"(define (problem hanoi-{num_discs})\n  (:domain hanoi)\n  (:objects {' '.join(pegs + discs)})\n"
            f"  (:init\n    {nl.join(init)})\n  (:goal (and\n    {nl.join(goal)})))\n")
