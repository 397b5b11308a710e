"""Miconic problems in the DIAS paper's encoding (Table 11: 10 objects for training, 10, 20 and 40 for
testing: floors and persons in equal numbers)."""

from __future__ import annotations

import random


def make_problem(num_floors: int, num_persons: int, seed: int | None = None) -> str:
    """PDDL text: each person on a uniformly drawn floor, to be brought to another uniformly drawn
    floor; the lift at the lowest floor ``f0``.

    Raises:
        ValueError: fewer than 2 floors or 1 person.
    """
    for name, value, low in (("num_floors", num_floors, 2), ("num_persons", num_persons, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name} must be an integer at least {low}")
    rng = random.Random(seed)
    floors = [f"f{i}" for i in range(num_floors)]
    persons = [f"p{i}" for i in range(num_persons)]
    init = [f"(above {floors[i]} {floors[j]})" for i in range(num_floors) for j in range(i + 1, num_floors)]
    init.append("(lift_pos f0)")
    goal = []
    for p in persons:
        origin = rng.randrange(num_floors)
        destination = rng.choice([i for i in range(num_floors) if i != origin])
        init.append(f"(in_floor {p} {floors[origin]})")
        goal.append(f"(in_floor {p} {floors[destination]})")
    nl = "\n    "
    return (f"(define (problem miconic-lift-f{num_floors}-p{num_persons})\n  (:domain miconic-lift)\n"
            f"  (:objects {' '.join(floors)} - floor {' '.join(persons)} - person)\n"
            f"  (:init\n    {nl.join(init)})\n  (:goal (and\n    {nl.join(goal)})))\n")
