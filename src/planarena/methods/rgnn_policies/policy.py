"""The Q-function over lookahead candidates as a pymimir-rl model, and the greedy policy that plans
with it.

Source: Aichmüller et al. (docs/papers/rgnn-policies.md), Section 6 (Q(s, s') over jumps, reward -1
per jump) and Section 7 "Testing": at each step the policy moves to argmax_{s'} Q(s, s') among the
lookahead's candidates, excluding states visited earlier in the episode, until the goal holds, no
candidate is left (a dead end), or a resource limit (``max_choices`` choices, the time limit) is
reached. The plan is the concatenation of the chosen jumps' primitive actions.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field

import torch
from pymimir_rl import ActionScalarModel

from planarena.methods.rgnn_policies.encodings import DeltaLiterals, PolicyNetwork
from planarena.methods.rgnn_policies.lookahead import AtomFeatures, LookaheadTimeout, LookaheadTree, lookahead


class ProblemContext:
    """What the lookahead and the AD / Internal-Delta encodings need of one problem, built once (no
    re-grounding in a loop): the novelty features of its atoms (``goals``: ``full`` or ``reduced``,
    Appendix C's "Reduced Goals"; :class:`~planarena.methods.rgnn_policies.lookahead.AtomFeatures`)
    and the delta literals."""

    def __init__(self, problem, kind: str, types: dict[str, str | None], goals: str = "full"):
        self.problem = problem
        self.kind = kind
        novelty = {"iw": "iw", "aiw": "aiw", "caiw": "aiw", "baiw": "baiw"}.get(kind)
        self.features = AtomFeatures(problem, novelty, types, goals) if novelty else None
        self.deltas = DeltaLiterals(problem)


class LookaheadCache:
    """Lookahead trees (and AD / Internal-Delta deltas) per state, computed once: the DQN target and
    the rollouts ask for the same states many times. Bounded (least recently used out).

    Args:
        kind: lookahead kind (:data:`~planarena.methods.rgnn_policies.lookahead.KINDS`).
        capacity: C-AIW's capacity. max_entries: trees kept.
        with_deltas: compute each tree's delta literals (:meth:`DeltaLiterals.deltas`).
        goals: how AIW / BAIW / C-AIW novelty treats goal atoms
            (:data:`~planarena.methods.rgnn_policies.lookahead.GOALS`; ``reduced``: Appendix C's
            "Reduced Goals" ablation).
        contexts: pymimir problem -> :class:`ProblemContext` (built by :meth:`add`).
    """

    def __init__(self, kind: str, capacity: int = 1000, max_entries: int = 20000, with_deltas: bool = True,
                 goals: str = "full"):
        self.kind = kind
        self.capacity = capacity
        self.max_entries = max_entries
        self.with_deltas = with_deltas
        self.goals = goals
        self.contexts: dict = {}
        self._trees: OrderedDict = OrderedDict()
        self.stats = {"lookaheads": 0, "expanded": 0, "generated": 0, "seconds": 0.0}

    def add(self, problem, types: dict[str, str | None]) -> None:
        """Register ``problem`` (its object types: AIW's r(o))."""
        if problem not in self.contexts:
            self.contexts[problem] = ProblemContext(problem, self.kind, types, self.goals)

    def get(self, state, deadline: float | None = None) -> tuple[LookaheadTree, list | None]:
        """``(tree, deltas)`` of ``state`` (deltas None unless ``with_deltas``).

        Raises:
            KeyError: the state's problem was not registered. LookaheadTimeout: past ``deadline``.
        """
        got = self._trees.get(state)
        if got is not None:
            self._trees.move_to_end(state)
            return got
        ctx = self.contexts[state.get_problem()]
        tree = lookahead(ctx.problem, state, self.kind, ctx.features, self.capacity, deadline)
        deltas = ctx.deltas.deltas(state, tree) if self.with_deltas else None
        self.stats["lookaheads"] += 1
        self.stats["expanded"] += tree.expanded
        self.stats["generated"] += tree.generated
        self.stats["seconds"] += tree.seconds
        self._trees[state] = (tree, deltas)
        if len(self._trees) > self.max_entries:
            self._trees.popitem(last=False)
        return tree, deltas


class LookaheadQModel(ActionScalarModel):
    """pymimir-rl's model interface over jumps: ``forward([(state, goal), ...])`` returns, per
    pair, the Q-values (float tensor of shape (n,)) and the n candidate
    :class:`~planarena.methods.rgnn_policies.lookahead.Jump` s (pymimir-rl applies them through
    ``jump.apply(state)``); a state without candidates gives an empty tensor and no jumps (a dead
    end for the DQN target). All non-empty pairs go through one :meth:`PolicyNetwork.q_values`."""

    def __init__(self, network: PolicyNetwork, cache: LookaheadCache):
        super().__init__()
        self.network = network
        self.cache = cache

    def forward(self, state_goals):
        trees = [self.cache.get(state) for state, _ in state_goals]
        items = [(s, g, t, d) for (s, g), (t, d) in zip(state_goals, trees) if t.jumps]
        qs = iter(self.network.q_values(items)) if items else iter(())
        device = next(self.network.parameters()).device
        return [(next(qs), t.jumps) if t.jumps else (torch.zeros(0, device=device), []) for t, _ in trees]


class UniformChoice:
    """The uniform floor of a lookahead policy (a twin with ``untrained: uniform``): stands where
    the network stands in :func:`greedy_episodes` (``q_values``, ``eval``) and gives every candidate
    an independent uniform draw, so the greedy argmax over the unvisited candidates is a uniform
    choice among them (the same candidates, no-revisit rule, dead ends and limits as the learned
    row). No network, no torch computation.

    Args:
        seeds: pymimir problem -> seed of its own ``random.Random``: a problem's choices depend on
            its seed only, not on the problems it is batched with or the order of the rounds.
    """

    def __init__(self, seeds: dict):
        import random

        self._rng = {p: random.Random(int(s)) for p, s in seeds.items()}

    def eval(self) -> "UniformChoice":
        return self

    def q_values(self, items: list[tuple]) -> list[torch.Tensor]:
        """One uniform draw in [0, 1) per jump of each item's tree, from its problem's generator."""
        out = []
        for state, _, tree, _ in items:
            rng = self._rng[state.get_problem()]
            out.append(torch.tensor([rng.random() for _ in tree.jumps], dtype=torch.float64))
        return out


@dataclass
class Episode:
    """One greedy episode: ``outcome`` solved | unsolved | timeout, ``plan`` the primitive actions
    (pymimir ground actions; None unless solved), ``reason`` why not solved, ``choices`` jumps
    taken, ``seconds`` the problem's share of the lockstep wall time, ``cpu_seconds`` its share of
    the process's CPU time (what the time limit is checked against), ``decision_seconds`` its mean
    wall time per choice, ``lookahead`` counters summed over its lookaheads."""

    outcome: str = "unsolved"
    plan: list | None = None
    reason: str | None = None
    choices: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    decision_seconds: float | None = None
    lookahead: dict = field(default_factory=lambda: {"expanded": 0, "generated": 0, "candidates": 0})


def greedy_episodes(network: "PolicyNetwork | UniformChoice", cache: LookaheadCache, problems: list, max_choices: int,
                    time_limits: list[float]) -> list[Episode]:
    """Run the greedy policy (argmax Q over unvisited candidates) on every problem in lockstep: one
    batched Q-function call per round for all unfinished problems.

    Args:
        network: the Q-function, or a :class:`UniformChoice` (the uniform floor: the same loop).
        problems: pymimir problems, registered in ``cache``; their goals condition the policy.
        max_choices: choices per problem at most (the paper: 1,000). time_limits: CPU seconds per
            problem (its lookahead's CPU time plus its share of each batched forward pass; CPU
            time of this process, not wall time, so that machine load never decides an outcome;
            the evaluation runs one torch thread per process).

    Returns:
        One :class:`Episode` per problem, in order. Deterministic for a given network (for a
        :class:`UniformChoice`, for its seeds).
    """
    eps = [Episode() for _ in problems]
    states = [p.get_initial_state() for p in problems]
    visited = [{s} for s in states]
    paths: list[list] = [[] for _ in problems]
    active = []
    for i, p in enumerate(problems):
        if p.get_goal_condition().holds(states[i]):
            eps[i].outcome, eps[i].plan = "solved", []
        else:
            active.append(i)
    network.eval()
    while active:
        items, cands, owners = [], [], []
        for i in list(active):
            if eps[i].choices >= max_choices:
                eps[i].reason = f"choice limit {max_choices} reached"
                active.remove(i)
                continue
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                tree, deltas = cache.get(states[i], deadline=c0 + max(time_limits[i] - eps[i].cpu_seconds, 0.0))
            except LookaheadTimeout as exc:
                eps[i].seconds += time.perf_counter() - t0
                eps[i].cpu_seconds += time.process_time() - c0
                eps[i].outcome, eps[i].reason = "timeout", str(exc)
                active.remove(i)
                continue
            eps[i].seconds += time.perf_counter() - t0
            eps[i].cpu_seconds += time.process_time() - c0
            eps[i].lookahead["expanded"] += tree.expanded
            eps[i].lookahead["generated"] += tree.generated
            eps[i].lookahead["candidates"] += len(tree.jumps)
            free = [k for k, j in enumerate(tree.jumps) if j.state not in visited[i]]
            if not free:
                eps[i].reason = ("dead end: no candidate" if not tree.jumps
                                 else "dead end: every candidate already visited")
                active.remove(i)
                continue
            items.append((states[i], problems[i].get_goal_condition(), tree, deltas))
            cands.append(free)
            owners.append(i)
        if not items:
            break
        t0, c0 = time.perf_counter(), time.process_time()
        with torch.no_grad():
            qs = network.q_values(items)
        share, cpu_share = (time.perf_counter() - t0) / len(items), (time.process_time() - c0) / len(items)
        for i, (state, _, tree, _), free, q in zip(owners, items, cands, qs):
            eps[i].seconds += share
            eps[i].cpu_seconds += cpu_share
            q = q.double().cpu()
            best = max(free, key=lambda k: (float(q[k]), -k))  # ties: the earlier (shallower) candidate
            jump = tree.jumps[best]
            states[i] = jump.state
            visited[i].add(jump.state)
            paths[i].extend(jump.actions)
            eps[i].choices += 1
            if problems[i].get_goal_condition().holds(jump.state):
                eps[i].outcome, eps[i].plan, eps[i].reason = "solved", list(paths[i]), None
                active.remove(i)
            elif eps[i].cpu_seconds > time_limits[i]:
                eps[i].outcome, eps[i].reason = "timeout", f"time limit {time_limits[i]:g} s (CPU)"
                active.remove(i)
    for e in eps:
        e.decision_seconds = e.seconds / e.choices if e.choices else None
    return eps


__all__ = ["Episode", "LookaheadCache", "LookaheadQModel", "ProblemContext", "UniformChoice", "greedy_episodes"]
