"""State-centric encoders: one object per domain that gives each problem its phi (WL histograms
of the ILG, or the fixed-slot FSF vector), batched across a split's problems where the encoding
allows (the state-centric paper, Stage 1). Used by :mod:`planarena.methods.state_centric.method`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from planarena.core.problemset import ProblemSet
from planarena.core.trajectories import Trajectory
from planarena.search.decoding import CachedStates, PerProblemEncoders, problem_runs

#: The state encodings (the state-centric paper, Table 1: WL histograms, fixed-slot FSF).
ENCODINGS = ("wl", "fsf")

# ------------------------------------------------------------------------------------------------
# Encoders: one object per (domain), giving a per-problem phi
# ------------------------------------------------------------------------------------------------


class _WLProblem:
    def __init__(self, embedder, problem_file: str):
        self.embedder, self.problem_file = embedder, problem_file
        self._goal = None

    def states(self, atom_lists):
        return self.embedder.embed_states(self.problem_file, atom_lists)

    def goal(self):
        if self._goal is None:
            self._goal = self.embedder.embed_goal(self.problem_file)
        return self._goal


class _WLSplit:
    """The WL :class:`~planarena.search.decoding.SplitEncoder` of a lockstep batch: the successors
    of every problem in ONE wlplan call, pymimir atoms mapped to wlplan atoms by index."""

    def __init__(self, encoders: list[_WLProblem], problems: list):
        self.encoders, self.problems = encoders, problems
        self.embedder = encoders[0].embedder

    def goals(self):
        return np.stack([e.goal() for e in self.encoders])

    def states(self, problem_of, states):
        runs, lo = [], 0
        for i, hi in problem_runs(problem_of):
            runs.append((self.encoders[i].problem_file, self.problems[i], states[lo:hi]))
            lo = hi
        return self.embedder.embed_mimir_states(runs)


class _FSFProblem:
    def __init__(self, bound, goal_atoms):
        self.bound, self.goal_atoms = bound, goal_atoms
        self._goal = None

    def states(self, atom_lists):
        return self.bound.encode_states(atom_lists)

    def goal(self):
        if self._goal is None:
            self._goal = self.bound.encode_goal(self.goal_atoms)
        return self._goal


class DomainEncoder:
    """phi for one domain: WL (the ``embed_wl`` stage's saved feature generator, ILG, 2 iterations)
    or FSF (Appendix F, ``N`` = max slots over all problems of the domain in the manifest)."""

    def __init__(self, encoding: str, domain: str, layout, ps: ProblemSet):
        self.encoding, self.domain, self.layout, self.ps = encoding, domain, layout, ps
        self._cache: dict[str, Any] = {}
        if encoding == "wl":
            from planarena.features.wl import WLEmbedder

            self.impl = WLEmbedder.for_domain(layout, domain)
            self.dim = self.impl.dim
        elif encoding == "fsf":
            from planarena.features.fsf import FSFEncoder, fsf_size

            files = [ps.problem_file(e) for e in ps.select(domain=domain)]
            self.n_slots = fsf_size(domain, files)
            self.impl = FSFEncoder(domain, self.n_slots)
            self.dim = self.n_slots + 1
        else:
            raise ValueError(f"params: encoding={encoding!r}; use one of {ENCODINGS}")

    def for_problem(self, problem_file: str | Path, goal_atoms: list[str]):
        key = str(problem_file)
        if key not in self._cache:
            if self.encoding == "wl":
                self._cache[key] = _WLProblem(self.impl, key)
            else:
                self._cache[key] = _FSFProblem(self.impl.bind(key), goal_atoms)
        return self._cache[key]

    def split(self, encoders: list, problems: list):
        """The :class:`~planarena.search.decoding.SplitEncoder` of a lockstep batch over
        :meth:`for_problem` encoders and their pymimir problems (rows of states met before are
        reused: :class:`~planarena.search.decoding.CachedStates`)."""
        return CachedStates(_WLSplit(encoders, problems) if self.encoding == "wl" else PerProblemEncoders(encoders))

    def trajectory(self, traj: Trajectory) -> tuple[np.ndarray, np.ndarray]:
        """``(states (T+1, D), goal (D,))`` of a stored trajectory."""
        enc = self.for_problem(self.ps.root / traj.problem_file, traj.goal)
        return enc.states(traj.states), enc.goal()


# ------------------------------------------------------------------------------------------------
# The untrained twin of an XGBoost row: uniform random scores
# ------------------------------------------------------------------------------------------------


__all__ = ["DomainEncoder"]
