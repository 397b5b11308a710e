"""Sokoban problems in the DIAS paper's binary encoding (Tables 13 and 14: 16 cells for training,
36, 49 and 81 for testing, i.e. open grids of 4 x 4, 6 x 6, 7 x 7 and 9 x 9 cells)."""

from __future__ import annotations

import random

_STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def _check_int(name: str, value, least: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ValueError(f"{name} must be an integer at least {least}")


def make_problem(width: int = 4, height: int | None = None, boxes: int = 2, seed: int = 0,
                 moves: int | None = None, domain: str = "sokoban") -> str:
    """PDDL text of a Sokoban problem on an open ``width`` x ``height`` grid (default square), cells
    ``c<row>_<col>`` (1-based) as the only objects, ``boxes`` boxes whose goal cells are drawn at
    random. The initial state is the goal configuration (boxes on their goal cells, the player on a
    random free cell) after ``moves`` random reverse moves (default ``10 * cells``): the player steps
    to a free neighbour, or pulls a neighbouring box one cell (the reverse of a push), so every
    problem is solvable with pushes alone; at least one box ends off its goal. Randomness from
    ``random.Random(seed)``. ``domain``: the domain name the problem declares (``sokoban`` or
    ``sokoban_pull``).

    Raises:
        ValueError: a side below 3, fewer than 1 box, more boxes than cells allow, or negative moves.
    """
    height = width if height is None else height
    _check_int("width", width, 3)
    _check_int("height", height, 3)
    _check_int("boxes", boxes, 1)
    cells = [(r, c) for r in range(1, height + 1) for c in range(1, width + 1)]
    if boxes > len(cells) - 2:
        raise ValueError(f"boxes must leave at least 2 free cells of {len(cells)}")
    moves = 10 * len(cells) if moves is None else moves
    _check_int("moves", moves, 0)
    rng = random.Random(seed)
    inside = set(cells)
    goals = sorted(rng.sample(cells, boxes))
    box = set(goals)
    player = rng.choice([rc for rc in cells if rc not in box])

    def step() -> None:
        nonlocal player
        options = []
        r, c = player
        for dr, dc in _STEPS:
            to = (r + dr, c + dc)
            if to in inside and to not in box:
                options.append((to, None))
                front = (r - dr, c - dc)          # a box behind the player is pulled along
                if front in box:
                    options.append((to, front))
        to, pulled = rng.choice(options)
        if pulled is not None:
            box.remove(pulled)
            box.add(player)
        player = to

    for _ in range(moves):
        step()
    extra = 0
    while box == set(goals) and moves:
        step()
        extra += 1
        if extra > 100 * len(cells):
            raise ValueError("could not move a box off its goal (too many boxes for the grid?)")
    name = {rc: f"c{rc[0]}_{rc[1]}" for rc in cells}
    init = []
    for r, c in cells:
        for dr, dc in _STEPS:
            if (r + dr, c + dc) in inside:
                init.append(f"(adjacent {name[(r, c)]} {name[(r + dr, c + dc)]})")
            if (r + 2 * dr, c + 2 * dc) in inside:
                init.append(f"(adjacent_2 {name[(r, c)]} {name[(r + 2 * dr, c + 2 * dc)]})")
    init += [f"(has_box {name[rc]})" for rc in sorted(box)] + [f"(has_player {name[player]})"]
    goal = [f"(has_box {name[rc]})" for rc in goals]
    nl = "\n    "
    return (f"(define (problem {domain}-{width}x{height}-{boxes}-{seed})\n  (:domain {domain})\n"
            f"  (:objects {' '.join(name[rc] for rc in cells)})\n"
            f"  (:init\n    {nl.join(init)})\n  (:goal (and\n    {nl.join(goal)})))\n")
