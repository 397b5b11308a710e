"""State-centric transition models on EmbedPlan's candidate-pool Hit@k protocols.

The cross-method Hit@k leaderboard scores every ``rank_successors`` method on the same pool-128
protocol as EmbedPlan ("Textual Planning with Explicit Latent Transitions", Appendix A and B.3;
docs/papers/embedplan.md), including the WL/FSF models of the state-centric paper (Gupta et al.,
Section 4 and Appendix G; docs/papers/state-centric.md). This module adapts them to that protocol;
it adds no new model:

* **Data.** The same ACPBench-domain transitions, partitions and seeds as EmbedPlan
  (:func:`planarena.protocols.pool.protocol_tasks`), so both families are trained and tested on the same
  rows. The model input is ``[phi(s), phi(g)]`` (the state-centric paper's input; the action is
  ignored), ``g`` the goal of the transition's problem; the target is ``phi(s')`` (state mode) or
  ``phi(s') - phi(s)`` (delta mode).
* **Encodings.** WL: a wlplan ILG feature generator (the ``embed_wl`` settings) whose vocabulary is
  collected on the *training* transitions' states (and their problems' goals) of each task, so no
  test state contributes colours. FSF (Appendix F): ``N`` = the most slots over the domain's
  problems; FSF exists for Blocksworld and Logistics among the ACPBench domains (Appendix F.2
  designs four domains), other domains are skipped with that reason.
* **Training.** Each transition is a one-step trajectory ``(phi(s), phi(s'))``: pool transitions
  are single steps (sampled state-space edges as well as plan steps), so the LSTM is trained and
  queried from its zero recurrent state, history-free, and XGBoost (Markov by construction) is
  unchanged. A seeded ``validation_fraction`` of the training transitions drives early stopping.
* **Scoring.** The candidate pool, the seeded tie-breaking and the ranks come from
  :func:`planarena.protocols.pool.pool_ranks`, the same code and random stream as EmbedPlan's, so equal
  seeds give equal pools. A candidate ``c`` scores ``-distance(phi(c), v)`` with ``v`` the model's
  target (Euclidean in delta mode, cosine in state mode: the decoder's metric, Algorithm 1).
  Every candidate is encoded with the *query's* goal: a WL state embeds ``G_{s,g}`` (goal atoms
  colour the graph), so a distractor drawn from another problem (Interpolation's domain-wide pool)
  would otherwise carry its own goal and could be rejected by the goal alone
  (docs/concepts.md#held-out-means-unseen). Such candidates are re-embedded with the query problem's
  goal (:meth:`DomainPhi.candidates`); FSF state vectors hold no goal and need nothing.
* **Protocols.** The in-domain protocols (interpolation, plan-variant, extrapolation). WL and FSF
  features are per domain (WL colours and FSF slots mean different things in different domains),
  so multi-domain, cross-domain and leave-one-out have no common feature space; they are reported
  as not applicable (:data:`NOT_APPLICABLE`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from planarena.protocols.pool import Corpus, Task

#: Protocols the state-centric models can be evaluated on (one model per domain, in-domain test).
POOL_PROTOCOLS = ("interpolation", "plan_variant", "extrapolation")

#: Why the transfer protocols are not run for per-domain encodings.
NOT_APPLICABLE = {
    p: "WL/FSF features are per domain (no shared feature space across domains)"
    for p in ("multi_domain", "cross_domain", "leave_one_out")
}


@dataclass
class DomainPhi:
    """State and goal encodings of one domain's corpus states.

    Attributes:
        domain: the domain.
        lo: first global state row of the domain in the corpus (its rows are contiguous).
        states: ``(N_d, D)`` float32 phi of every state row ``lo .. lo + N_d - 1``.
        goals: ``{problem id: (D,) phi(g)}``.
        facts: encoder facts for the record (``dim``, ``fsf_slots`` or ``wl_colours``).
        state_problem: ``(N_d,)`` problem id of each state row (for :meth:`candidates`).
        embed_with_goal: ``(state rows (M,), goal problem id) -> (M, D)`` phi of states under
            another problem's goal; ``None`` when phi(s) does not depend on the goal (FSF).
    """

    domain: str
    lo: int
    states: np.ndarray
    goals: dict[int, np.ndarray]
    facts: dict
    state_problem: np.ndarray | None = None
    embed_with_goal: Callable[[np.ndarray, int], np.ndarray] | None = None
    _with_goal: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, repr=False)

    def phi(self, rows: np.ndarray) -> np.ndarray:
        """``(..., D)`` phi of global state rows ``rows`` (any shape) of this domain."""
        return self.states[np.asarray(rows) - self.lo]

    def candidates(self, cand: np.ndarray, query_problems: np.ndarray) -> np.ndarray:
        """``(B, P, D)`` phi of candidate state rows ``cand`` ``(B, P)``, each encoded with the goal
        of its query's problem ``query_problems`` ``(B,)``: candidates of the query's own problem
        are :meth:`phi`; others are embedded under the query's goal (cached per (state, goal))."""
        out = self.phi(cand)
        if self.embed_with_goal is None or self.state_problem is None:
            return out
        cand = np.asarray(cand)
        own = self.state_problem[cand - self.lo]
        foreign = own != np.asarray(query_problems)[:, None]
        if not foreign.any():
            return out
        out = out.copy()
        for g in np.unique(np.asarray(query_problems)[foreign.any(1)]):
            mask = foreign & (np.asarray(query_problems)[:, None] == g)
            rows = cand[mask]
            todo = np.unique([r for r in rows.tolist() if (r, int(g)) not in self._with_goal])
            if len(todo):
                for r, v in zip(todo.tolist(), self.embed_with_goal(todo, int(g))):
                    self._with_goal[(r, int(g))] = v
            out[mask] = np.stack([self._with_goal[(r, int(g))] for r in rows.tolist()])
        return out


def _problem_blocks(corpus: Corpus, acp_dir: Path, domain: str):
    """``(pid, first global state row, ProblemTransitions, problem file)`` per problem of ``domain``."""
    from planarena.datasets.acp import load_domain_dataset

    datasets = {p.problem: p for p in load_domain_dataset(acp_dir, domain)}
    sp = corpus.table.state_problem
    for pid in corpus.problem_ids(domain):
        prob = datasets[corpus.problems[pid][1]]
        first = int(np.searchsorted(sp, pid, "left"))
        if int(np.searchsorted(sp, pid, "right")) - first != len(prob.states):
            raise ValueError(f"{acp_dir / domain}: problem {prob.problem} state count differs from the corpus")
        yield pid, first, prob, acp_dir / domain / prob.problem_file


def fsf_supported(domain: str) -> str | None:
    """``None`` if FSF has a design for ``domain``, else the reason it does not (Appendix F.2)."""
    from planarena.features.fsf import canonical_domain

    try:
        canonical_domain(domain)
        return None
    except ValueError:
        return f"FSF has no design for {domain} (Appendix F.2: blocksworld, gripper, logistics, visitall)"


def encode_domain(encoding: str, corpus: Corpus, acp_dir: Path, domain: str,
                  train_rows: np.ndarray | None = None, wl_settings: dict | None = None,
                  wl_file: Path | None = None) -> DomainPhi:
    """phi of every corpus state of ``domain`` and of each of its problems' goals.

    Args:
        encoding: ``wl`` or ``fsf``.
        train_rows: transition rows whose ``s``/``s'`` (and whose problems' goals) make the WL
            vocabulary (required for ``wl`` unless ``wl_file`` exists).
        wl_settings: :func:`planarena.features.wl.wl_settings` output.
        wl_file: where the WL feature generator is saved (written when fitted, loaded when it
            exists, so evaluation reuses the training vocabulary).

    Raises:
        ValueError: unknown encoding, FSF without a design for the domain, or WL without training
            rows or saved vocabulary.
    """
    blocks = list(_problem_blocks(corpus, acp_dir, domain))
    if not blocks:
        raise ValueError(f"{acp_dir / domain}: no problems of {domain} in the corpus")
    domain_file = acp_dir / domain / "domain.pddl"
    lo = blocks[0][1]
    if encoding == "fsf":
        from planarena.features.fsf import FSFEncoder, fsf_size

        reason = fsf_supported(domain)
        if reason:
            raise ValueError(reason)
        n = fsf_size(domain, [f for *_, f in blocks])
        enc = FSFEncoder(domain, n)
        states, goals = [], {}
        for pid, _, prob, pfile in blocks:
            bound = enc.bind(str(pfile))
            states.append(bound.encode_states(prob.states))
            goals[pid] = bound.encode_goal(prob.goal)
        facts = {"dim": n + 1, "fsf_slots": n}
    elif encoding == "wl":
        from planarena.features.wl import WLEmbedder

        if wl_file is not None and wl_file.exists():
            emb = WLEmbedder.load(wl_file, domain_file)
        else:
            if train_rows is None or not len(train_rows):
                raise ValueError(f"WL on {domain}: no training transitions to collect the vocabulary on")
            t = corpus.table
            used = np.unique(np.concatenate([t.s[train_rows], t.s2[train_rows]]))
            samples, goal_files = [], []
            for pid, first, prob, pfile in blocks:
                mine = used[(used >= first) & (used < first + len(prob.states))] - first
                if len(mine):
                    samples.append((pfile, [prob.states[i] for i in mine]))
                    goal_files.append(pfile)
            settings = wl_settings or {}
            emb = WLEmbedder.fit(domain_file, samples, settings,
                                 goal_problems=goal_files if settings.get("collect_goals", True) else ())
            if wl_file is not None:
                emb.save(wl_file)
        states = [emb.embed_states(pfile, prob.states) for _, _, prob, pfile in blocks]
        goals = {pid: emb.embed_goal(pfile) for pid, _, _, pfile in blocks}
        facts = {"dim": emb.dim, "wl_colours": int(emb.fg.get_n_colours())}
        by_pid = {pid: (first, prob, pfile) for pid, first, prob, pfile in blocks}
        sp = corpus.table.state_problem

        def embed_with_goal(rows: np.ndarray, goal_pid: int) -> np.ndarray:
            out = np.zeros((len(rows), emb.dim), np.float32)
            pids = sp[rows]
            for pid in np.unique(pids):
                first, prob, pfile = by_pid[int(pid)]
                at = np.nonzero(pids == pid)[0]
                out[at] = emb.embed_states_with_goal(pfile, [prob.states[int(r) - first] for r in rows[at]],
                                                     by_pid[goal_pid][2])
            return out

        return DomainPhi(domain, lo, np.concatenate(states).astype(np.float32), goals, facts,
                         state_problem=sp[lo:lo + sum(len(b[2].states) for b in blocks)],
                         embed_with_goal=embed_with_goal)
    else:
        raise ValueError(f"encoding {encoding!r}: use 'wl' or 'fsf'")
    return DomainPhi(domain, lo, np.concatenate(states).astype(np.float32), goals, facts)


def training_trajectories(phi: DomainPhi, corpus: Corpus, rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """One-step trajectories ``(states (2, D), goal (D,))`` of transition ``rows`` (see module)."""
    t = corpus.table
    pids = corpus.trans_problem[rows]
    s, s2 = phi.phi(t.s[rows]), phi.phi(t.s2[rows])
    return [(np.stack([s[i], s2[i]]), phi.goals[int(pids[i])]) for i in range(len(rows))]


def split_validation(rows: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded ``(train, validation)`` split of ``rows``; validation is empty for ``fraction <= 0``
    or fewer than 10 rows (the model then early-stops on its training loss)."""
    rows = np.asarray(rows, np.int64)
    n_val = int(round(len(rows) * fraction))
    if fraction <= 0 or len(rows) < 10 or n_val < 1:
        return rows, rows[:0]
    perm = np.random.default_rng([seed, 7]).permutation(len(rows))
    return np.sort(rows[perm[n_val:]]), np.sort(rows[perm[:n_val]])


def predict_targets(model, phi: DomainPhi, corpus: Corpus, rows: np.ndarray) -> np.ndarray:
    """``(Q, D)`` model targets ``v`` for transition ``rows`` in ONE batched ``step`` call from the
    zero recurrent state (``phi(s) + Delta_hat`` in delta mode; see
    :meth:`planarena.methods.state_centric.models.TransitionModel.step`)."""
    t = corpus.table
    phi_s = phi.phi(t.s[rows])
    phi_g = np.stack([phi.goals[int(p)] for p in corpus.trans_problem[rows]]) if len(rows) else phi_s
    v, _ = model.step(phi_s, phi_g, model.initial_state(len(rows)))
    return np.asarray(v, dtype=np.float32)


def pool_scores(targets: np.ndarray, phi: DomainPhi, metric: str, query_problems: np.ndarray | None = None):
    """A scorer for :func:`planarena.protocols.pool.pool_ranks`: ``-distance(phi(c), v)`` per candidate
    (Euclidean or cosine, :func:`planarena.search.decoding.distances`), vectorised over the batch.
    With ``query_problems`` (``(Q,)`` problem id of each query), every candidate is encoded with
    its query's goal (:meth:`DomainPhi.candidates`)."""
    from planarena.search.decoding import distances

    def score(b: slice, cand: np.ndarray) -> np.ndarray:
        v = targets[b]                                    # (B, D)
        c = phi.phi(cand) if query_problems is None else phi.candidates(cand, query_problems[b])  # (B, P, D)
        flat_v = np.repeat(v, cand.shape[1], axis=0)
        return -distances(c.reshape(-1, c.shape[-1]), flat_v, metric).reshape(cand.shape)

    return score


def task_key(task: Task, seed: int) -> str:
    """``<protocol>/<train key>/seed<k>``: where a pool model lives and its facts key."""
    return f"{task.protocol}/{task.train_key}/seed{seed}"
