"""Trajectories: validated plans replayed into state sequences s0..sT with pymimir.

File format (JSON lines, one trajectory per line), ``data/trajectories/<domain>/<split>.jsonl``::

    {"domain": "blocksworld", "split": "train", "problem": "p-4-0",
     "problem_file": "blocksworld/train/p-4-0.pddl",      # relative to data/problems
     "plan_source": "astar_lmcut" | "lama_first",  "optimal": true,
     "actions": ["(pick-up b1)", ...],                      # T ground actions
     "states": [["(clear b1)", "(handempty)", ...], ...],   # T+1 states, sorted fluent ground atoms
     "static": ["(object b1)", ...],                         # sorted static ground atoms (once)
     "goal": ["(on b1 b2)", ...]}                            # sorted goal ground atoms (positive)

Atoms are written as ``(predicate obj1 obj2)``, exactly as pymimir prints them. Only plans accepted by
the independent validator are replayed (see :mod:`planarena.core.validation`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from planarena.core.io import read_jsonl


@dataclass
class Trajectory:
    """One replayed plan: ``len(states) == len(actions) + 1``; each state is a sorted atom list."""

    domain: str
    split: str
    problem: str
    problem_file: str
    plan_source: str
    optimal: bool
    actions: list[str]
    states: list[list[str]]
    static: list[str]
    goal: list[str]

    def __post_init__(self) -> None:
        if len(self.states) != len(self.actions) + 1:
            raise ValueError(
                f"trajectory {self.domain}/{self.split}/{self.problem}: "
                f"{len(self.states)} states for {len(self.actions)} actions"
            )

    def to_dict(self) -> dict:
        return asdict(self)


def trajectory_file(root: str | Path, domain: str, split: str) -> Path:
    """Path of the trajectories of one (domain, split) under ``root`` (``data/trajectories``)."""
    return Path(root) / domain / f"{split}.jsonl"


def load_trajectories(root: str | Path, domain: str, split: str) -> list[Trajectory]:
    """All trajectories of one (domain, split); empty list if there are none."""
    return [Trajectory(**row) for row in read_jsonl(trajectory_file(root, domain, split))]
