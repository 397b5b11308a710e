"""N-Puzzle problems (DIAS paper, Table 5: 17 objects for training, 31, 49 and 71 for testing, i.e.
boards of 3 x 3, 4 x 4, 5 x 5 and 6 x 6 cells with one tile fewer)."""

from __future__ import annotations

import random


def _check_int(name: str, value, least: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ValueError(f"{name} must be an integer at least {least}")


def make_problem(size: int = 3, seed: int = 0, moves: int | None = None) -> str:
    """PDDL text of an ``size`` x ``size`` N-Puzzle: tiles ``t1`` .. ``t<size^2 - 1>`` on cells
    ``c<row>_<col>`` (1-based); the goal puts tile ``i`` on the ``i``-th cell in row-major order and the
    blank on the last. The initial board is the goal after ``moves`` random slides of the blank
    (default ``20 * size^2``, never undoing the previous slide; drawn from ``random.Random(seed)``),
    so every problem is solvable.

    Raises:
        ValueError: ``size`` below 2 or negative ``moves``.
    """
    _check_int("size", size, 2)
    moves = 20 * size * size if moves is None else moves
    _check_int("moves", moves, 0)
    rng = random.Random(seed)
    cells = [(r, c) for r in range(1, size + 1) for c in range(1, size + 1)]
    name = {rc: f"c{rc[0]}_{rc[1]}" for rc in cells}
    goal = {cells[i]: f"t{i + 1}" for i in range(len(cells) - 1)}
    board, blank, previous = dict(goal), cells[-1], None
    for _ in range(moves):
        r, c = blank
        options = [(r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                   if 1 <= r + dr <= size and 1 <= c + dc <= size and (r + dr, c + dc) != previous]
        nxt = rng.choice(options)
        board[blank], previous, blank = board.pop(nxt), blank, nxt
    if board == goal and moves:  # back where it started: one more slide
        nxt = (blank[0] - 1, blank[1]) if blank[0] > 1 else (blank[0] + 1, blank[1])
        board[blank], blank = board.pop(nxt), nxt
    tiles = [f"t{i}" for i in range(1, len(cells))]
    init = [f"(tile {t})" for t in tiles] + [f"(cell {name[rc]})" for rc in cells]
    init += [f"(above {name[(r, c)]} {name[(r + 1, c)]})" for r, c in cells if r < size]
    init += [f"(right {name[(r, c + 1)]} {name[(r, c)]})" for r, c in cells if c < size]
    init += [f"(at {t} {name[rc]})" for rc, t in sorted(board.items())] + [f"(blank {name[blank]})"]
    goals = [f"(at {t} {name[rc]})" for rc, t in sorted(goal.items())]
    nl = "\n    "
    return (f"(define (problem npuzzle-{size}-{seed})\n  (:domain npuzzle)\n"
            f"  (:objects {' '.join(tiles + [name[rc] for rc in cells])})\n"
            f"  (:init\n    {nl.join(init)})\n  (:goal (and\n    {nl.join(goals)})))\n")
