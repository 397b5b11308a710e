"""Neuro-symbolic plan decoding and successor ranking for embedding-space transition models.

State-centric paper (Gupta, Pallagani, Aydin, Srivastava; ``../shared/papers/
state-centric-transition-models.txt``), Algorithm 1 and Appendix G.3: keep the *true* symbolic
state; at each step the transition model predicts a target embedding ``v_t``; every applicable
ground action's successor (pymimir) is embedded in ONE batched call; successors are ranked by
distance to ``v_t`` (cosine in state mode, Euclidean in delta mode); a beam of width ``beam_width``
is kept; states already on a beam's path are not revisited; decoding stops at the goal or at the
horizon. Every emitted action is applicable by construction; plans are still validated
independently by the harness.

The paper's settings are the default (beam 3, horizon 100, beams ranked by the current step's
distance). The authors' released code differs (horizon max(100, 10 x objects), beams ranked by
cumulative distance): :class:`DecodeSettings` reaches it with ``horizon_per_object=10`` and
``beam_score="cumulative"``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from planarena.core.pddl import atoms_of


class StepModel(Protocol):
    """What the decoder needs from a transition model (see :mod:`planarena.methods.state_centric.models`)."""

    def initial_state(self, batch_size: int) -> Any: ...

    def step(self, phi_s: np.ndarray, phi_g: np.ndarray, rec: Any) -> tuple[np.ndarray, Any]: ...

    def select(self, rec: Any, indices: Sequence[int]) -> Any: ...


class ProblemEncoder(Protocol):
    """phi for one problem: ``states(list of atom lists) -> (M, D)``, ``goal() -> (D,)``."""

    def states(self, atom_lists: Sequence[Sequence[str]]) -> np.ndarray: ...

    def goal(self) -> np.ndarray: ...


@dataclass(frozen=True)
class DecodeSettings:
    """Decoder parameters (params ``methods.<name>.decode``).

    ``beam_width``: beams kept per step (paper 3). ``horizon``: max plan length (paper 100);
    ``horizon_per_object``: if > 0 the horizon is ``max(horizon, horizon_per_object * objects)``
    (released code: 10). ``beam_score``: ``step`` (paper: rank by this step's distance) or
    ``cumulative`` (code: sum of distances along the path). ``metric``: ``cosine`` | ``euclidean``
    | ``auto`` (cosine for state mode, Euclidean for delta mode, Table 6). ``revisit``: allow
    successors already on the beam's path (paper: no).
    """

    beam_width: int = 3
    horizon: int = 100
    horizon_per_object: int = 0
    beam_score: str = "step"
    metric: str = "auto"
    revisit: bool = False

    @classmethod
    def from_params(cls, d: dict | None) -> "DecodeSettings":
        d = dict(d or {})
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"params: unknown decode settings {sorted(unknown)}")
        s = cls(**d)
        if s.beam_score not in ("step", "cumulative"):
            raise ValueError(f"params: decode.beam_score={s.beam_score!r}; use step or cumulative")
        if s.metric not in ("auto", "cosine", "euclidean"):
            raise ValueError(f"params: decode.metric={s.metric!r}; use auto, cosine or euclidean")
        return s

    def resolved_metric(self, mode: str) -> str:
        if self.metric != "auto":
            return self.metric
        return "cosine" if mode == "state" else "euclidean"

    def horizon_for(self, n_objects: int) -> int:
        return max(self.horizon, self.horizon_per_object * n_objects) if self.horizon_per_object else self.horizon


def distances(candidates: np.ndarray, targets: np.ndarray, metric: str) -> np.ndarray:
    """Row-wise distance between ``candidates`` (M, D) and ``targets`` (M, D) -> (M,).

    cosine distance = 1 - cos(angle) (a zero vector has distance 1 to anything); Euclidean = L2.
    """
    if metric == "euclidean":
        return np.linalg.norm(candidates - targets, axis=1)
    num = np.einsum("ij,ij->i", candidates, targets)
    den = np.linalg.norm(candidates, axis=1) * np.linalg.norm(targets, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return 1.0 - cos


@dataclass
class _Beam:
    state: Any
    actions: list[str]
    visited: frozenset
    score: float = 0.0


@dataclass
class DecodeResult:
    """Outcome of one decode: ``outcome`` in solved / unsolved / timeout; ``plan`` if solved;
    ``steps`` decoding steps taken; ``time_per_step_s`` mean wall seconds per step (model call,
    successor generation, embedding, ranking)."""

    outcome: str
    plan: list[str] | None
    steps: int
    time_per_step_s: float
    reason: str | None = None
    extra: dict = field(default_factory=dict)


def decode(
    problem,
    encoder: ProblemEncoder,
    model: StepModel,
    mode: str,
    settings: DecodeSettings,
    time_limit: float = float("inf"),
    n_objects: int = 0,
) -> DecodeResult:
    """Algorithm 1 with a beam: plan for a pymimir ``problem`` with a trained step model.

    Per step: one model call for all beams (batch = beams), one ``encoder.states`` call for all
    successors of all beams. Returns a :class:`DecodeResult`; never raises for a failed search.
    """
    start = time.perf_counter()
    goal = problem.get_goal_condition()
    metric = settings.resolved_metric(mode)
    horizon = settings.horizon_for(n_objects)
    init = problem.get_initial_state()
    beams = [_Beam(init, [], frozenset([init]))]
    phi_g = encoder.goal()[None, :]
    phi_cur = encoder.states([atoms_of(init)])
    rec = model.initial_state(1)
    steps = 0
    while True:
        for b in beams:
            if goal.holds(b.state):
                return DecodeResult("solved", list(b.actions), steps, _per_step(start, steps))
        if steps >= horizon:
            return DecodeResult("unsolved", None, steps, _per_step(start, steps),
                                f"goal not reached within horizon {horizon}")
        if time.perf_counter() - start > time_limit:
            return DecodeResult("timeout", None, steps, _per_step(start, steps),
                                f"time limit {time_limit:g} s")
        targets, rec_next = model.step(phi_cur, np.repeat(phi_g, len(beams), axis=0), rec)
        owners, actions, succs = [], [], []
        seen: set = set()
        for i, b in enumerate(beams):
            for a in sorted(b.state.generate_applicable_actions(), key=str):
                s2 = a.apply(b.state)
                if (not settings.revisit and s2 in b.visited) or (i, s2) in seen:
                    continue
                seen.add((i, s2))
                owners.append(i)
                actions.append(a)
                succs.append(s2)
        steps += 1
        if not succs:
            return DecodeResult("unsolved", None, steps, _per_step(start, steps),
                                "dead end: every successor is on the beam path or none is applicable")
        phi = encoder.states([atoms_of(s) for s in succs])
        owner_idx = np.asarray(owners)
        dist = distances(phi, targets[owner_idx], metric)
        if settings.beam_score == "cumulative":
            dist = dist + np.asarray([beams[i].score for i in owners])
        order = np.argsort(dist, kind="stable")  # ties: candidate order (sorted action names)
        chosen, taken = [], set()
        for j in order:
            if succs[j] in taken:  # two beams reaching one state: keep the better
                continue
            taken.add(succs[j])
            chosen.append(int(j))
            if len(chosen) == settings.beam_width:
                break
        beams = [
            _Beam(succs[j], beams[owners[j]].actions + [str(actions[j])],
                  beams[owners[j]].visited | {succs[j]}, float(dist[j]))
            for j in chosen
        ]
        rec = model.select(rec_next, [owners[j] for j in chosen])
        phi_cur = phi[chosen]


def _per_step(start: float, steps: int) -> float:
    return (time.perf_counter() - start) / max(1, steps)


def hit_at_k(d_true: float, d_others: np.ndarray, ks: Sequence[int]) -> dict[str, float]:
    """Probability that the true successor is in the top k when ties are broken uniformly at random.

    With ``a`` candidates strictly closer than the true one and ``m`` others at exactly its
    distance, its rank is uniform on ``a+1 .. a+m+1``: P(rank <= k) = clip((k - a) / (m + 1), 0, 1).
    Deterministic (no random generator), so symmetric states that an embedding cannot tell apart
    neither help nor hurt beyond chance.
    """
    a = int(np.sum(d_others < d_true))
    m = int(np.sum(d_others == d_true))
    return {f"hit@{k}": float(min(1.0, max(0.0, (k - a) / (m + 1)))) for k in ks}


def rank_successors_along(
    problem,
    actions: Sequence[str],
    encoder: ProblemEncoder,
    model: StepModel,
    mode: str,
    metric_setting: str = "auto",
    ks: Sequence[int] = (1, 3, 5),
    replay_fn: Callable | None = None,
) -> dict[str, float]:
    """Successor-ranking protocol (Hit@k, teacher forcing) along one reference trajectory.

    For each step t of the replayed plan: the model gets the *true* s_t (and carries its recurrent
    state along the true trajectory), all successors of s_t are ranked by distance to v_t, and the
    recorded s_{t+1} scores :func:`hit_at_k`. The states and all successors of the trajectory are
    embedded in one ``encoder.states`` call. Returns the mean of each ``hit@k`` over steps, plus
    ``steps`` and ``mean_candidates``. A trajectory without steps returns ``steps = 0`` only.
    """
    from planarena.core.pddl import replay

    states, _ = (replay_fn or replay)(problem, list(actions))
    if len(states) < 2:
        return {"steps": 0}
    metric = DecodeSettings(metric=metric_setting).resolved_metric(mode)
    n = len(states) - 1
    # successors of every step, embedded together with the trajectory's states in ONE call
    succs = [list({a.apply(s) for a in s.generate_applicable_actions()}) for s in states[:-1]]
    bounds = np.cumsum([len(states)] + [len(c) for c in succs])
    phi_all = encoder.states([atoms_of(s) for s in states] + [atoms_of(s) for c in succs for s in c])
    phi_g = encoder.goal()[None, :]
    rec = model.initial_state(1)
    sums = {f"hit@{k}": 0.0 for k in ks}
    for t in range(n):
        v, rec = model.step(phi_all[t : t + 1], phi_g, rec)
        phi = phi_all[bounds[t] : bounds[t + 1]]
        dist = distances(phi, np.repeat(v, len(phi), axis=0), metric)
        true_idx = succs[t].index(states[t + 1])
        others = np.delete(dist, true_idx)
        for key, val in hit_at_k(float(dist[true_idx]), others, ks).items():
            sums[key] += val
    n_cand = sum(len(c) for c in succs)
    out = {key: val / n for key, val in sums.items()}
    out.update(steps=n, mean_candidates=n_cand / n)
    return out
