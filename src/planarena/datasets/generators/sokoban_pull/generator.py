"""Sokoban-pull problems (DIAS paper, Table 14: the grids of Table 13): Sokoban's problems
(:func:`planarena.datasets.generators.sokoban.generator.make_problem`) declaring this domain."""

from __future__ import annotations

from planarena.datasets.generators.sokoban.generator import make_problem as _sokoban


def make_problem(width: int = 4, height: int | None = None, boxes: int = 2, seed: int = 0,
                 moves: int | None = None) -> str:
    """PDDL text of a Sokoban-pull problem: the Sokoban problem of the same arguments with
    ``(:domain sokoban_pull)``.

    Raises:
        ValueError: as Sokoban's generator.
    """
    return _sokoban(width, height, boxes, seed, moves, domain="sokoban_pull")
