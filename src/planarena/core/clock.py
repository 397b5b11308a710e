"""Clocks of limits that decide outcomes.

A limit that decides an outcome (solved / timeout) counts CPU time of the process doing the work
(``time.process_time``) or steps, never wall time, so that machine load decides no outcome; wall
time is recorded as a cost. Where a library only offers a wall-clock limit, or a subprocess may hang,
a wall-clock kill is a safety net far above the CPU limit (:func:`wall_safety`).
"""

from __future__ import annotations

#: a wall-clock safety net is this many times the CPU-time limit, plus :data:`WALL_SAFETY_EXTRA_S`
WALL_SAFETY = 10
WALL_SAFETY_EXTRA_S = 60.0


def wall_safety(cpu_limit_s: float) -> float:
    """The wall-clock seconds after which a run with a CPU limit of ``cpu_limit_s`` seconds is killed
    as hung: ``WALL_SAFETY * cpu_limit_s + WALL_SAFETY_EXTRA_S`` (a loaded machine stretches wall
    time, not CPU time; 10 processes per core still finish before the net)."""
    return WALL_SAFETY * float(cpu_limit_s) + WALL_SAFETY_EXTRA_S


__all__ = ["WALL_SAFETY", "WALL_SAFETY_EXTRA_S", "wall_safety"]
