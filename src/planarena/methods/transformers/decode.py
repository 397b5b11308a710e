"""Plan generation by token decoding: Algorithms 1-3 of the symmetry-aware-transformers paper, in
lockstep over the problems of a split.

Source: Fritzsche, Gestrin, Seipp (docs/papers/symmetry-aware-transformers.md), Section 5 and
Appendix D:

* ``greedy`` (Algorithm 1): the argmax token until ``<EOS>``; no simulator guides it. The harness
  simulates alongside only to stop early where the outcome is already fixed: the first malformed
  action (a token of the wrong kind, ``<EOS>`` inside an action) or inapplicable action ends the
  attempt as unsolved; at ``<EOS>`` the plan is solved iff the goal holds.
* ``applicable`` (Algorithm 2): before each argmax every token that cannot extend the current
  partial action to an action applicable in the current state is masked out (``<EOS>`` always: the
  goal test ends decoding), so every emitted action is applicable; decoding stops at the goal.
  A state with no applicable action is a dead end (unsolved).
* ``regrounding`` (Algorithm 3): the same mask; after each complete action the input is rebuilt
  from the new state and the decoder restarts from ``<BOS>`` (PlanGPT: from the new prompt). A
  state met again means the deterministic policy loops, so decoding stops there ("cycle", the
  outcome the paper's token cap would give).

Every strategy stops once ``max_tokens`` (500, Section 5) tokens have been generated. Lockstep:
every unfinished problem advances one token per forward pass (one batched call for the split);
a regrounding *round* re-encodes every active problem at once and decodes one action each. The
model side is a :class:`GeneratorAdapter` (:class:`EncDecAdapter`, :class:`PlanGPTAdapter`).
Ties in the argmax go to the lower token id.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

import numpy as np

from planarena.core.pddl import normalise_action, split_atom

STRATEGIES = ("greedy", "applicable", "regrounding")


@dataclass(frozen=True)
class TokenMap:
    """One problem's plan tokens: ``actions`` name -> id, ``arity`` name -> arguments, ``objects``
    object -> id (under the problem's renaming), ``eos`` the end token."""

    actions: dict[str, int]
    arity: dict[str, int]
    objects: dict[str, int]
    eos: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "_action_of", {i: a for a, i in self.actions.items()})
        object.__setattr__(self, "_object_of", {i: o for o, i in self.objects.items()})

    def action_of(self, token: int) -> str | None:
        return self._action_of.get(token)  # type: ignore[attr-defined]

    def object_of(self, token: int) -> str | None:
        return self._object_of.get(token)  # type: ignore[attr-defined]


class GeneratorAdapter(Protocol):
    """A plan generator seen by :func:`decode_plans`: problems are indices into the batch."""

    def token_map(self, i: int) -> TokenMap: ...

    def budget(self, i: int, state: Any) -> int:
        """Tokens the model can still generate after the prompt of ``state`` (PlanGPT: learned
        positions left; encoder-decoder: unbounded)."""
        ...

    def prefill(self, problems: Sequence[int], states: Sequence[Any]) -> tuple[np.ndarray, Any]:
        """Encode each problem's state and start decoding: ``(next-token logits (B, V), cache)``."""
        ...

    def step(self, cache: Any, tokens: np.ndarray) -> np.ndarray:
        """Feed one token per cache row; next-token logits (B, V)."""
        ...

    def select(self, cache: Any, rows: np.ndarray) -> Any:
        """The cache of rows ``rows``, in that order."""
        ...


@dataclass
class GenResult:
    """Outcome of one problem: ``outcome`` solved / unsolved / timeout, ``plan`` (action texts) when
    solved, ``reason`` and ``failure`` (``eos_before_goal``, ``malformed``, ``inapplicable``,
    ``token_cap``, ``positions``, ``dead_end``, ``cycle``, ``timeout``) otherwise; ``tokens``
    generated; ``time_s`` the problem's share of the decoding CPU time (CPU seconds of this process,
    the clock of the time limit, so that machine load decides no outcome), ``wall_s`` its share of
    wall time (a cost); ``emitted`` every complete
    action applied, solved or not (for diagnostics; records keep only its length)."""

    outcome: str
    plan: list[str] | None
    tokens: int
    reason: str | None = None
    failure: str | None = None
    time_s: float = 0.0
    extra: dict = field(default_factory=dict)
    emitted: list[str] = field(default_factory=list)
    wall_s: float = 0.0


class _Applicable:
    """The applicable ground actions of one state as token tuples: ``full`` tuple -> (action, text)
    and ``next`` prefix -> allowed next tokens (the trie of Algorithm 2's mask). An action naming
    an object the problem's token map lacks (a domain constant) cannot be written by the model and
    is left out."""

    def __init__(self, state, tmap: TokenMap):
        self.full: dict[tuple, tuple[Any, str]] = {}
        self.next: dict[tuple, set[int]] = {}
        for ga in state.generate_applicable_actions():
            text = normalise_action(str(ga))
            name, args = split_atom(text)
            if name not in tmap.actions or any(a not in tmap.objects for a in args):
                continue
            key = (tmap.actions[name], *(tmap.objects[a] for a in args))
            self.full[key] = (ga, text)
            for j in range(len(key)):
                self.next.setdefault(key[:j], set()).add(key[j])


def _argmax(logits: np.ndarray, allowed: set[int] | None) -> int:
    if allowed is None:
        return int(np.argmax(logits))
    cand = np.fromiter(sorted(allowed), dtype=np.int64)
    return int(cand[int(np.argmax(logits[cand]))])


def decode_plans(problems: Sequence[Any], adapter: GeneratorAdapter, strategy: str, max_tokens: int = 500,
                 time_limits: Sequence[float] | None = None, stats: dict | None = None) -> list[GenResult]:
    """Decode a plan for every pymimir problem of ``problems`` with ``strategy`` (see the module
    docstring); one :class:`GenResult` per problem, in order. ``stats`` (if given) accumulates
    ``tokens``, ``forward_calls``, ``forward_s`` and ``actions``. Never raises for a failed plan.

    Raises:
        ValueError: an unknown strategy.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"decoding strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
    n = len(problems)
    limits = list(time_limits) if time_limits is not None else [float("inf")] * n
    masked = strategy != "greedy"
    results: list[GenResult | None] = [None] * n
    state = [p.get_initial_state() for p in problems]
    goals = [p.get_goal_condition() for p in problems]
    plans: list[list[str]] = [[] for _ in range(n)]
    visited = [{s} for s in state]
    generated = np.zeros(n, dtype=np.int64)
    used = np.zeros(n)        # CPU seconds: the time limit's clock
    used_wall = np.zeros(n)   # wall seconds: recorded as a cost
    tmaps = [adapter.token_map(i) for i in range(n)]
    st = stats if stats is not None else {}

    def finish(i: int, outcome: str, reason: str | None = None, failure: str | None = None) -> None:
        results[i] = GenResult(outcome, list(plans[i]) if outcome == "solved" else None, int(generated[i]),
                               reason, failure, float(used[i]), {"actions": len(plans[i])}, list(plans[i]),
                               float(used_wall[i]))

    def forward(fn, *args):
        t = time.perf_counter()
        out = fn(*args)
        st["forward_calls"] = st.get("forward_calls", 0) + 1
        st["forward_s"] = st.get("forward_s", 0.0) + time.perf_counter() - t
        return out

    active = []
    for i in range(n):
        if masked and goals[i].holds(state[i]):
            finish(i, "solved")
        else:
            active.append(i)
    while active:  # one round: (re-)encode every active problem; greedy/applicable: a single round
        t_round, c_round = time.perf_counter(), time.process_time()
        budget = {i: adapter.budget(i, state[i]) for i in active}
        for i in [i for i in active if budget[i] <= 0]:
            finish(i, "unsolved", "the prompt fills the model's learned positions", "positions")
        rows = [i for i in active if results[i] is None]
        if not rows:
            break
        logits, cache = forward(adapter.prefill, rows, [state[i] for i in rows])
        used[rows] += (time.process_time() - c_round) / len(rows)
        used_wall[rows] += (time.perf_counter() - t_round) / len(rows)
        partial = {i: [] for i in rows}
        start_tokens = {i: int(generated[i]) for i in rows}
        legal = {i: _Applicable(state[i], tmaps[i]) for i in rows} if masked else {}
        next_round: list[int] = []
        while rows:
            t_step, c_step = time.perf_counter(), time.process_time()
            keep, feed = [], []
            for r, i in enumerate(rows):
                tm = tmaps[i]
                if used[i] > limits[i]:
                    finish(i, "timeout", f"time limit {limits[i]:g} s", "timeout")
                    continue
                if masked:
                    allowed = legal[i].next.get(tuple(partial[i]))
                    if not allowed:
                        finish(i, "unsolved", "dead end: no applicable action", "dead_end")
                        continue
                else:
                    allowed = None
                tok = _argmax(logits[r], allowed)
                generated[i] += 1
                st["tokens"] = st.get("tokens", 0) + 1
                complete = False
                if not partial[i]:
                    name = tm.action_of(tok)
                    if tok == tm.eos:
                        if goals[i].holds(state[i]):
                            finish(i, "solved")
                        else:
                            finish(i, "unsolved", "<EOS> before the goal was reached", "eos_before_goal")
                        continue
                    if name is None:
                        finish(i, "unsolved", "malformed action: expected an action name", "malformed")
                        continue
                    partial[i] = [tok]
                    complete = tm.arity[name] == 0
                else:
                    if tm.object_of(tok) is None:
                        finish(i, "unsolved", "malformed action: expected an object", "malformed")
                        continue
                    partial[i].append(tok)
                    complete = len(partial[i]) == 1 + tm.arity[tm.action_of(partial[i][0])]
                if complete:
                    key = tuple(partial[i])
                    partial[i] = []
                    hit = (legal[i] if masked else _Applicable(state[i], tm)).full.get(key)
                    if hit is None:
                        name = tm.action_of(key[0])
                        args = " ".join(str(tm.object_of(t)) for t in key[1:])
                        finish(i, "unsolved", f"inapplicable action ({name} {args})".replace(" )", ")"), "inapplicable")
                        continue
                    ga, text = hit
                    state[i] = ga.apply(state[i])
                    plans[i].append(text)
                    st["actions"] = st.get("actions", 0) + 1
                    if masked and goals[i].holds(state[i]):
                        finish(i, "solved")
                        continue
                    if strategy == "regrounding":
                        if state[i] in visited[i]:
                            finish(i, "unsolved", "cycle: the policy returned to a state it visited", "cycle")
                        elif generated[i] >= max_tokens:
                            finish(i, "unsolved", f"{max_tokens}-token cap reached", "token_cap")
                        else:
                            visited[i].add(state[i])
                            next_round.append(i)
                        continue
                    if masked:
                        legal[i] = _Applicable(state[i], tm)
                if generated[i] >= max_tokens:
                    finish(i, "unsolved", f"{max_tokens}-token cap reached", "token_cap")
                elif generated[i] - start_tokens[i] >= budget[i]:
                    finish(i, "unsolved", "ran past the model's learned positions", "positions")
                else:
                    keep.append(r)
                    feed.append(tok)
            done_rows = list(rows)
            rows = [rows[r] for r in keep]
            if rows:
                cache = adapter.select(cache, np.asarray(keep, dtype=np.int64))
                logits = forward(adapter.step, cache, np.asarray(feed, dtype=np.int64))
            used[done_rows] += (time.process_time() - c_step) / max(1, len(done_rows))
            used_wall[done_rows] += (time.perf_counter() - t_step) / max(1, len(done_rows))
        active = [i for i in next_round if results[i] is None]
    return results  # type: ignore[return-value]


class _CachedModelAdapter:
    """What both adapters share: ``model.step`` over a
    :class:`~planarena.methods.transformers.decoders.KVCache` on ``self.device``, numpy in and out."""

    model: Any
    device: Any
    maps: list

    def token_map(self, i):
        return self.maps[i]

    def step(self, cache, tokens):
        import torch

        with torch.no_grad():
            return self.model.step(cache, torch.from_numpy(tokens).to(self.device)).cpu().numpy()

    def select(self, cache, rows):
        import torch

        return cache.select(torch.from_numpy(rows).to(self.device))


class EncDecAdapter(_CachedModelAdapter):
    """:class:`GeneratorAdapter` of :class:`planarena.methods.transformers.decoders.SATrEncDec`:
    ``slots[i]`` is problem ``i``'s object -> object-token slot renaming."""

    def __init__(self, model, atoms, actions, problems: Sequence[Any], slots: Sequence[dict[str, int]]):
        from planarena.methods.transformers.tokens import ProblemTokens

        self.model, self.atoms, self.actions = model, atoms, actions
        self.device = next(model.parameters()).device
        self.rows = [ProblemTokens(atoms, p, s) for p, s in zip(problems, slots)]
        arity = {a.get_name().lower(): a.get_arity() for a in problems[0].get_domain().get_actions()} if problems else {}
        self.maps = [TokenMap({a: actions.action_id(a) for a in actions.actions}, arity,
                              {o: actions.object_id(k) for o, k in s.items()}, actions.EOS) for s in slots]

    def budget(self, i, state):
        return 1 << 30

    def prefill(self, problems, states):
        import torch

        from planarena.methods.transformers.tokens import pad_batch

        ids, mask = pad_batch([self.rows[i].rows(s) for i, s in zip(problems, states)], self.atoms.width)
        with torch.no_grad():
            logits, cache = self.model.prefill(torch.from_numpy(ids).to(self.device),
                                               torch.from_numpy(mask).to(self.device), self.actions.BOS)
        return logits.cpu().numpy(), cache



class PlanGPTAdapter(_CachedModelAdapter):
    """:class:`GeneratorAdapter` of :class:`planarena.methods.transformers.decoders.PlanGPT`:
    ``names[i]`` is problem ``i``'s object -> typed token renaming."""

    def __init__(self, model, vocab, problems: Sequence[Any], names: Sequence[dict[str, str]]):
        from planarena.core.pddl import goal_atoms, static_atoms

        self.model, self.vocab, self.problems, self.names = model, vocab, list(problems), list(names)
        self.device = next(model.parameters()).device
        self.static = [static_atoms(p) for p in problems]
        self.goal = [goal_atoms(p) for p in problems]
        self._text: list[dict] = [{} for _ in problems]
        arity = {a.get_name().lower(): a.get_arity() for a in problems[0].get_domain().get_actions()} if problems else {}
        self.maps = [TokenMap({a: vocab.id(a) for a in vocab.actions}, arity,
                              {o: vocab.id(t) for o, t in nm.items()}, vocab.id("<EOS>")) for nm in names]
        self._prompt: dict = {}

    def prompt(self, i: int, state) -> np.ndarray:
        """Token ids of problem ``i``'s prompt for ``state``."""
        from planarena.core.pddl import atom_indices, atom_text
        from planarena.methods.transformers.plangpt import encode_sequence

        key = (i, state)
        got = self._prompt.get(key)
        if got is None:
            fluent, derived = atom_indices(state)
            texts = []
            for kind, indices in ((0, fluent), (1, derived)):
                for a in indices:
                    t = self._text[i].get((kind, a))
                    if t is None:
                        t = self._text[i][(kind, a)] = atom_text(self.problems[i], a, derived=bool(kind))
                    texts.append(t)
            got = self._prompt[key] = encode_sequence(self.vocab, texts + self.static[i], self.goal[i], self.names[i])
        return got

    def budget(self, i, state):
        return self.model.cfg.max_positions - len(self.prompt(i, state))

    def prefill(self, problems, states):
        import torch

        from planarena.methods.transformers.tokens import pad_sequences

        seqs = [self.prompt(i, s) for i, s in zip(problems, states)]
        ids, _ = pad_sequences(seqs)
        with torch.no_grad():
            logits, cache = self.model.prefill(torch.from_numpy(ids).to(self.device),
                                               torch.tensor([len(s) for s in seqs], device=self.device))
        return logits.cpu().numpy(), cache



__all__ = ["STRATEGIES", "EncDecAdapter", "GenResult", "GeneratorAdapter", "PlanGPTAdapter", "TokenMap", "decode_plans"]
