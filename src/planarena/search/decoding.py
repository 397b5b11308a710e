"""Neuro-symbolic plan decoding and successor ranking for embedding-space transition models.

State-centric paper (Gupta, Pallagani, Aydin, Srivastava, "On Sample-Efficient Generalized Planning
via Learned Transition Models"; docs/papers/state-centric.md), Algorithm 1 and Appendix G.3: keep
the *true* symbolic state; at each step the transition model predicts a target embedding ``v_t``;
every applicable ground action's successor (pymimir) is embedded in ONE batched call; successors are
ranked by distance to ``v_t`` (cosine in state mode, Euclidean in delta mode); a beam of width
``beam_width`` is kept; states already on a beam's path are not revisited; decoding stops at the
goal or at the horizon. Every emitted action is applicable by construction; plans are still
validated independently by the harness.

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
    successors already on the beam's path (paper: no). ``stop_on_cycle`` (beam width 1 with
    revisits, a deterministic greedy policy such as Algorithm 4 of the symmetry-aware-transformers
    paper): a problem whose chosen successor is already on its path ends ``unsolved`` at once,
    since from there the policy repeats the same cycle until the horizon (same outcome, less time).
    """

    beam_width: int = 3
    horizon: int = 100
    horizon_per_object: int = 0
    beam_score: str = "step"
    metric: str = "auto"
    revisit: bool = False
    stop_on_cycle: bool = False

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
        if s.stop_on_cycle and (s.beam_width != 1 or not s.revisit):
            raise ValueError("params: decode.stop_on_cycle needs beam_width 1 and revisit true (a greedy policy)")
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
    ``steps`` decoding steps taken; ``time_s`` the problem's share of the decoding CPU time (CPU
    seconds of this process, the clock of the time limit, so that machine load decides no outcome:
    each lockstep step's time is split over the problems in it by their number of candidate
    successors); ``wall_s`` the same share of wall time (a cost, never a decider);
    ``time_per_step_s`` = ``time_s / steps``."""

    outcome: str
    plan: list[str] | None
    steps: int
    time_per_step_s: float
    reason: str | None = None
    extra: dict = field(default_factory=dict)
    time_s: float = 0.0
    wall_s: float = 0.0


@dataclass(frozen=True)
class DecodeProblem:
    """One problem of a lockstep batch: a pymimir ``problem``, its object count (for
    ``horizon_per_object``) and its time limit in CPU seconds (its share of decoding CPU time)."""

    problem: Any
    n_objects: int = 0
    time_limit: float = float("inf")


class SuccessorScorer(Protocol):
    """A family's side of :func:`decode_lockstep`: scores the candidate successors of many beams of
    many problems in one call per step.

    Beams are rows. The scorer keeps what it needs per beam (a recurrent state, ``phi(s)``, ...)
    in an opaque *context* whose rows follow the decoder's beam order; the decoder never looks
    inside it. Problems are named by their index in the batch.
    """

    def start(self, problems: np.ndarray, states: Sequence[Any]) -> Any:
        """Context of one root beam per problem: ``problems`` (B,) int, ``states`` their initial
        pymimir states."""
        ...

    def score(self, ctx: Any, beam_problem: np.ndarray, successors: Sequence[Any],
              owner: np.ndarray) -> tuple[np.ndarray, Any]:
        """Scores of candidate successors, lower is better: ``beam_problem`` (B,) the problem of
        each beam of ``ctx``; ``successors`` (M,) pymimir states, grouped by beam and beams by
        problem; ``owner`` (M,) the beam of each. Returns ``(scores (M,) float, candidate
        context)`` with one candidate-context row per successor."""
        ...

    def select(self, cand_ctx: Any, chosen: np.ndarray) -> Any:
        """Context of the next step's beams: candidate rows ``chosen`` (K,), in that order."""
        ...


def decode_lockstep(
    problems: Sequence[DecodeProblem],
    scorer: SuccessorScorer,
    settings: DecodeSettings,
    stats: dict | None = None,
) -> list[DecodeResult]:
    """Beam decoding (Algorithm 1 of the state-centric paper) of many problems in lockstep.

    All unfinished problems advance one step together: the successors of every beam of every
    problem are generated (pymimir), scored in ONE ``scorer.score`` call (one embedding call and
    one model call for the whole batch), and each problem keeps its own beam, visited set and goal
    test. A problem that reaches its goal, its horizon, its time limit or a dead end leaves the
    batch. Per problem, the result is the one it gets decoded alone: candidates are ordered by
    beam, then by action name; ties in score keep that order; a state reached from two beams is
    kept once, from the better. ``settings.beam_score="cumulative"`` adds each beam's score to
    its candidates'. ``stats``, if given, accumulates wall seconds: ``successors_s`` (pymimir successor
    generation), ``scoring_s`` (``scorer.score``: embedding and model call), ``select_s`` (beam
    selection, goal tests, ``scorer.select``), and ``lockstep_steps`` / ``problem_steps``.

    Returns one :class:`DecodeResult` per problem, in order; never raises for a failed search.
    """
    n = len(problems)
    results: list[DecodeResult | None] = [None] * n
    horizons = [settings.horizon_for(p.n_objects) for p in problems]
    goals = [p.problem.get_goal_condition() for p in problems]
    used = np.zeros(n)        # CPU seconds: the time limit's clock
    used_wall = np.zeros(n)   # wall seconds: recorded as a cost
    steps = np.zeros(n, dtype=np.int64)
    names: list[dict[int, str]] = [{} for _ in range(n)]  # ground action index -> printed name

    def finish(i: int, outcome: str, plan=None, reason=None) -> None:
        k = int(steps[i])
        results[i] = DecodeResult(outcome, plan, k, float(used[i]) / max(1, k), reason, time_s=float(used[i]),
                                  wall_s=float(used_wall[i]))

    def ended(i: int, beams_i: list[_Beam]) -> bool:
        """The checks at the top of Algorithm 1's loop: goal, horizon, time limit."""
        for b in beams_i:
            if goals[i].holds(b.state):
                finish(i, "solved", list(b.actions))
                return True
        if steps[i] >= horizons[i]:
            finish(i, "unsolved", reason=f"goal not reached within horizon {horizons[i]}")
            return True
        if used[i] > problems[i].time_limit:
            finish(i, "timeout", reason=f"time limit {problems[i].time_limit:g} s")
            return True
        return False

    t0, c0 = time.perf_counter(), time.process_time()
    beams: list[_Beam] = []
    roots = []
    for i, p in enumerate(problems):
        init = p.problem.get_initial_state()
        root = _Beam(init, [], frozenset([init]))
        if not ended(i, [root]):
            roots.append(i)
            beams.append(root)
    beam_problem = np.asarray(roots, dtype=np.int64)
    ctx = scorer.start(beam_problem, [b.state for b in beams]) if beams else None
    if roots:
        used[roots] += (time.process_time() - c0) / len(roots)
        used_wall[roots] += (time.perf_counter() - t0) / len(roots)
    while beams:
        t_step, c_step = time.perf_counter(), time.process_time()
        owners, actions, succs, counts = [], [], [], np.zeros(n, dtype=np.int64)
        for bi, b in enumerate(beams):
            seen: set = set()
            for a in _by_name(b.state.generate_applicable_actions(), names[beam_problem[bi]]):
                s2 = a.apply(b.state)
                if (not settings.revisit and s2 in b.visited) or s2 in seen:
                    continue
                seen.add(s2)
                owners.append(bi)
                actions.append(a)
                succs.append(s2)
        owner = np.asarray(owners, dtype=np.int64)
        t_score = time.perf_counter()
        if len(owner):
            np.add.at(counts, beam_problem[owner], 1)
            scores, cand = scorer.score(ctx, beam_problem, succs, owner)
            if settings.beam_score == "cumulative":
                scores = scores + np.asarray([b.score for b in beams])[owner]
        t_select = time.perf_counter()
        # per problem: its candidates are one contiguous run (beams are grouped by problem)
        active = list(dict.fromkeys(beam_problem.tolist()))
        lo = 0
        next_beams: list[_Beam] = []
        next_problem: list[int] = []
        chosen_all: list[int] = []
        widths: list[int] = []
        for i in active:
            steps[i] += 1
            hi = lo + int(counts[i])
            order = np.argsort(scores[lo:hi], kind="stable") + lo if hi > lo else ()
            chosen, taken = [], set()
            for j in order:
                if succs[j] in taken:  # two beams reaching one state: keep the better
                    continue
                taken.add(succs[j])
                chosen.append(int(j))
                if len(chosen) == settings.beam_width:
                    break
            next_beams.extend(_Beam(succs[j], beams[owners[j]].actions + [names[i][actions[j].get_index()]],
                                    beams[owners[j]].visited | {succs[j]}, float(scores[j])) for j in chosen)
            next_problem.extend([i] * len(chosen))
            chosen_all.extend(chosen)
            widths.append(len(chosen))
            lo = hi
        # the step's CPU and wall time, split over its problems by candidate count (at least one each)
        weights = np.maximum(counts[active], 1).astype(float)
        used[active] += (time.process_time() - c_step) * weights / weights.sum()
        used_wall[active] += (time.perf_counter() - t_step) * weights / weights.sum()
        # a dead end, then the loop-top checks of the next step; problems that end leave the batch
        keep: list[int] = []
        pos = 0
        for i, width in zip(active, widths):
            if width == 0:
                finish(i, "unsolved", reason="dead end: every successor is on the beam path or none is applicable")
            elif (settings.stop_on_cycle and next_beams[pos].state in beams[owners[chosen_all[pos]]].visited
                  and not goals[i].holds(next_beams[pos].state)):
                finish(i, "unsolved", reason="cycle: the greedy policy returned to a state on its path "
                                             "(it would repeat the cycle until the horizon)")
            elif not ended(i, next_beams[pos:pos + width]):
                keep.extend(range(pos, pos + width))
            pos += width
        beams = [next_beams[j] for j in keep]
        beam_problem = np.asarray([next_problem[j] for j in keep], dtype=np.int64)
        if beams:
            ctx = scorer.select(cand, np.asarray([chosen_all[j] for j in keep], dtype=np.int64))
        if stats is not None:
            t_end = time.perf_counter()
            for key, value in (("successors_s", t_score - t_step), ("scoring_s", t_select - t_score),
                               ("select_s", t_end - t_select), ("lockstep_steps", 1),
                               ("problem_steps", len(active))):
                stats[key] = stats.get(key, 0) + value
    return results  # type: ignore[return-value]


def _by_name(actions: Sequence[Any], names: dict[int, str]) -> list[Any]:
    """``actions`` sorted by their printed names (the decoder's candidate order), each name
    printed once per problem (``names``: pymimir ground-action index -> name)."""
    keyed = []
    for a in actions:
        i = a.get_index()
        name = names.get(i)
        if name is None:
            name = names[i] = str(a)
        keyed.append((name, a))
    keyed.sort(key=lambda pair: pair[0])
    return [a for _, a in keyed]


class SplitEncoder(Protocol):
    """phi over the problems of one lockstep batch: ``goals() -> (P, D)``;
    ``states(problem_of (M,), pymimir states) -> (M, D)`` in ONE call, where rows of one problem
    are contiguous."""

    def goals(self) -> np.ndarray: ...

    def states(self, problem_of: np.ndarray, states: Sequence[Any]) -> np.ndarray: ...


class PerProblemEncoders:
    """:class:`SplitEncoder` over one :class:`ProblemEncoder` per problem (atoms as text): one
    ``encoder.states`` call per problem with rows in the step (an FSF batch, a test encoder)."""

    def __init__(self, encoders: Sequence[ProblemEncoder]):
        self.encoders = list(encoders)

    def goals(self) -> np.ndarray:
        return np.stack([e.goal() for e in self.encoders])

    def states(self, problem_of, states):
        out, lo = [], 0
        for i, hi in problem_runs(problem_of):
            out.append(self.encoders[i].states([atoms_of(s) for s in states[lo:hi]]))
            lo = hi
        return np.concatenate(out, axis=0)


class CachedStates:
    """A :class:`SplitEncoder` that remembers the rows of states it has embedded, per problem
    (pymimir state index), and embeds only the new ones, in one call to the wrapped encoder.

    Beams of one problem often meet the same successors (on the SATr Blocksworld extrapolation
    split about one successor in six is embedded before). At most ``max_bytes`` of rows are kept;
    past that the cache starts afresh.
    """

    def __init__(self, inner: SplitEncoder, max_bytes: int = 64 << 20):
        self.inner, self.max_bytes = inner, int(max_bytes)
        self._rows: dict[tuple[int, int], np.ndarray] = {}
        self._bytes = 0

    def goals(self) -> np.ndarray:
        return self.inner.goals()

    def states(self, problem_of, states):
        keys = [(int(i), s.get_index()) for i, s in zip(problem_of.tolist(), states)]
        miss = [j for j, k in enumerate(keys) if k not in self._rows]
        if len(miss) == len(keys):
            out = self.inner.states(problem_of, states)
        else:
            new = self.inner.states(problem_of[miss], [states[j] for j in miss]) if miss else None
            first = new if new is not None else next(iter(self._rows.values()))[None, :]
            out = np.empty((len(keys), first.shape[1]), dtype=first.dtype)
            fresh = dict(zip(miss, range(len(miss))))
            for j, k in enumerate(keys):
                out[j] = new[fresh[j]] if j in fresh else self._rows[k]
        if miss:
            if self._bytes + out[0].nbytes * len(miss) > self.max_bytes:
                self._rows.clear()
                self._bytes = 0
            for j in miss:
                self._rows[keys[j]] = out[j].copy()
            self._bytes += out[0].nbytes * len(miss)
        return out


def problem_runs(problem_of: np.ndarray) -> list[tuple[int, int]]:
    """``(problem, end)`` of each run of equal values in ``problem_of`` (M,): the rows
    ``[previous end, end)`` belong to ``problem``."""
    if len(problem_of) == 0:
        return []
    ends = np.flatnonzero(np.diff(problem_of)) + 1
    return [(int(problem_of[e - 1]), int(e)) for e in [*ends.tolist(), len(problem_of)]]


class TransitionScorer:
    """:class:`SuccessorScorer` of an embedding-space transition model (state-centric paper,
    Algorithm 1): a candidate's score is the distance of ``phi(s')`` to the model's target ``v_t``
    for its beam's state (cosine in state mode, Euclidean in delta mode, :func:`distances`).

    Per step: one ``model.step`` over every beam of every problem (each beam carries its
    recurrent state and ``phi(s)``), one ``encoder.states`` call over every candidate.
    """

    def __init__(self, model: StepModel, encoder: SplitEncoder, metric: str):
        self.model, self.encoder, self.metric = model, encoder, metric
        self.phi_g = encoder.goals()

    def start(self, problems, states):
        return self.encoder.states(problems, states), self.model.initial_state(len(problems))

    def score(self, ctx, beam_problem, successors, owner):
        phi_cur, rec = ctx
        targets, rec_next = self.model.step(phi_cur, self.phi_g[beam_problem], rec)
        phi = self.encoder.states(beam_problem[owner], successors)
        return distances(phi, targets[owner], self.metric), (phi, rec_next, owner)

    def select(self, cand_ctx, chosen):
        phi, rec_next, owner = cand_ctx
        return phi[chosen], self.model.select(rec_next, owner[chosen])


def decode(
    problem,
    encoder: ProblemEncoder,
    model: StepModel,
    mode: str,
    settings: DecodeSettings,
    time_limit: float = float("inf"),
    n_objects: int = 0,
) -> DecodeResult:
    """Algorithm 1 for ONE pymimir ``problem``: :func:`decode_lockstep` on a batch of one with a
    :class:`TransitionScorer`. Per step: one model call for all beams, one ``encoder.states``
    call for all successors. Never raises for a failed search."""
    scorer = TransitionScorer(model, PerProblemEncoders([encoder]), settings.resolved_metric(mode))
    return decode_lockstep([DecodeProblem(problem, n_objects, time_limit)], scorer, settings)[0]


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
