"""The six transition-learning protocols of EmbedPlan (Appendix A) over the ACPBench-domain corpus.

Source: "Textual Planning with Explicit Latent Transitions" (docs/papers/embedplan.md), Appendix A
(definitions) and B.3 (candidate pools). A :class:`Corpus` holds every transition of every domain of
one encoder as a :class:`planarena.protocols.pool.TransitionTable`; :func:`protocol_tasks` turns a
protocol name and a seed into training tasks (which transitions train one model) and their test sets
(which transitions are queried, with which distractor pool, and which plans give plan-level
metrics).

=================  =========================================================  ==========  =========
protocol           train / test                                               models      pool
=================  =========================================================  ==========  =========
interpolation      random 80/20 over the domain's unique transitions (A.1)   1 / domain  domain
plan_variant       per problem with >= 2 optimal plans, 80/20 over its plans  1 / domain  problem
                   (problems with a unique optimal plan excluded, A.2)
extrapolation      80/20 over the domain's object sets: problems that share   1 / domain  problem
                   one object set go to the same side (A.3, see below)
multi_domain       one model on every domain's extrapolation-train part,      1           problem
                   tested on each domain's extrapolation-test part (A.4)
cross_domain       train on all of domain A, test on all of every B != A      1 / domain  problem
                   (A.5, the full matrix)
leave_one_out      train on all other domains, test on the held-out (A.6)     1 / domain  problem
=================  =========================================================  ==========  =========

Every partition is drawn from ``numpy.random.default_rng`` seeded with the evaluation seed, so the
three seeds see three partitions (the paper's standard deviations include partition variance) and
two runs with the same seeds see the same ones.

Held-out means unseen (docs/concepts.md#held-out-means-unseen). Two generated problems with the same
object set share their state space, so a problem-grouped split alone lets test states and whole
``(s, a, s')`` triples occur in training (3-21 % of Extrapolation's test triples on the default
data); Plan-Variant's alternative plans share most steps with the training plans (30-98 %).
Therefore:

* Extrapolation (and Multi-Domain, which reuses its partition) splits *object sets*, not problems:
  no test problem has an object set a training problem has (a domain whose problems all share one
  object set has no Extrapolation task, with that reason).
* In every protocol, a test transition whose exact triple (state atoms, action, successor atoms;
  :attr:`Corpus.trans_key`) occurs among the task's training transitions is *seen*
  (:attr:`TestSet.seen`): it is excluded from the single-step metrics (Hit@k, Acc@k) and counted
  in the record (``seen_in_training`` of ``test_transitions``). Plan-level metrics run over whole
  test plans, as the paper's, seen steps included (the overlap beside them says how many).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from planarena.core.io import derive_seed
from planarena.core.records import POOL_PROTOCOLS

if TYPE_CHECKING:
    from planarena.protocols.context import EvalContext

#: The six protocols, in the order of the table above (declared with the record:
#: :data:`planarena.core.records.POOL_PROTOCOLS`).
PROTOCOLS = POOL_PROTOCOLS


@dataclass
class Corpus:
    """All transitions of the ACPBench-domain datasets under one encoder.

    Attributes:
        table: embeddings and transitions (rows are global over domains and problems).
        domains: domain names; ``table.state_domain`` indexes this list.
        problems: ``(domain, problem)`` per problem id (``table.state_problem`` indexes it).
        trans_problem: ``(T,)`` problem id of each transition.
        plans: ``(problem id, (L,) transition rows in plan order)`` for every stored optimal plan.
        counts: per domain, Table 7 counts (problems, states, transitions, actions, plans).
        trans_key: ``(T,)`` int64 content hash of each transition's triple (sorted state atoms,
            action, sorted successor atoms): equal keys are the same transition in two problems.
            ``None``: every row is its own transition.
        problem_objects: per problem id, a hash of its object set (the objects of its initial
            state, static and goal atoms). ``None``: every problem has its own object set.
    """

    table: TransitionTable
    domains: list[str]
    problems: list[tuple[str, str]]
    trans_problem: np.ndarray
    plans: list[tuple[int, np.ndarray]]
    counts: dict[str, dict] = field(default_factory=dict)
    trans_key: np.ndarray | None = None
    problem_objects: list[int] | None = None

    def keys(self, rows: np.ndarray) -> np.ndarray:
        """Triple keys of transition ``rows`` (the rows themselves without :attr:`trans_key`)."""
        rows = np.asarray(rows, np.int64)
        return rows if self.trans_key is None else self.trans_key[rows]

    def object_set(self, pid: int) -> int:
        """The object-set key of problem ``pid`` (see :attr:`problem_objects`)."""
        return int(pid) if self.problem_objects is None else int(self.problem_objects[pid])

    @property
    def trans_domain(self) -> np.ndarray:
        """``(T,)`` domain id of each transition."""
        dom_of_problem = np.array([self.domains.index(d) for d, _ in self.problems], dtype=np.int64)
        return dom_of_problem[self.trans_problem]

    def domain_rows(self, domain: str) -> np.ndarray:
        """Transition rows of ``domain``."""
        return np.nonzero(self.trans_domain == self.domains.index(domain))[0]

    def problem_ids(self, domain: str) -> list[int]:
        """Problem ids of ``domain`` (sorted by name)."""
        return [i for i, (d, _) in enumerate(self.problems) if d == domain]

    def plans_of(self, problem_ids) -> list[np.ndarray]:
        """The stored plans (transition rows) of the given problems."""
        ids = set(int(p) for p in problem_ids)
        return [rows for pid, rows in self.plans if pid in ids]


def build_corpus(acp_dir: Path, emb_dir: Path | None, domains: list[str]) -> Corpus:
    """Assemble a :class:`Corpus` from ``data/acp/<domain>/*.json.gz`` (stage ``acp_data``) and
    ``<emb_dir>/<domain>.npz`` (stage ``embed_acp``: ``states``/``state_offsets``/``actions``/
    ``action_offsets``/``problems``, rows in the datasets' problem order). With ``emb_dir=None``
    the table holds no text embeddings (width 0): the transitions, pools and partitions only, for
    methods with their own state encodings (:mod:`planarena.methods.state_centric.pool`).

    Transitions are the unique ``(s, a, s')`` triples over a problem's stored plans; their
    applicable-action lists come from the dataset's ``applicable`` map.

    Raises:
        FileNotFoundError: a domain's dataset or embedding file is missing (names it).
        ValueError: the embedding file does not match the dataset (problem names or row counts).
    """
    from planarena.datasets.acp import load_domain_dataset

    state_blocks, action_blocks = [], []
    s_list, a_list, s2_list, tp_list = [], [], [], []
    app_off, app_act, app_succ = [0], [], []
    state_problem, state_domain = [], []
    problems: list[tuple[str, str]] = []
    plans: list[tuple[int, np.ndarray]] = []
    counts: dict[str, dict] = {}
    state_keys: list[int] = []
    action_keys: list[int] = []
    problem_objects: list[int] = []
    n_states = n_actions = n_trans = 0
    for di, domain in enumerate(domains):
        datasets = load_domain_dataset(acp_dir, domain)
        if emb_dir is None:
            emb = _no_embeddings(datasets)
            npz_path = acp_dir / domain
        else:
            npz_path = emb_dir / f"{domain}.npz"
            if not npz_path.exists():
                raise FileNotFoundError(f"{npz_path}: no embeddings for domain {domain!r}; run the embed_acp stage")
            with np.load(npz_path, allow_pickle=False) as z:
                emb = {k: z[k] for k in z.files}
        names = [str(x) for x in emb["problems"]]
        if names != [p.problem for p in datasets]:
            raise ValueError(f"{npz_path}: problems {names} do not match data/acp/{domain} "
                             f"({[p.problem for p in datasets]}); rerun embed_acp")
        so, ao = emb["state_offsets"], emb["action_offsets"]
        dom_counts = {"problems": 0, "states": 0, "transitions": 0, "plans": 0}
        for j, prob in enumerate(datasets):
            if so[j + 1] - so[j] != len(prob.states) or ao[j + 1] - ao[j] != len(prob.actions):
                raise ValueError(f"{npz_path}: row counts of problem {prob.problem} differ from its dataset")
            pid = len(problems)
            problems.append((domain, prob.problem))
            state_keys += [hash_str("\n".join(sorted(st))) for st in prob.states]
            action_keys += [hash_str(a) for a in prob.actions]
            problem_objects.append(hash_str(" ".join(sorted(objects_of(prob)))))
            state_problem += [pid] * len(prob.states)
            state_domain += [di] * len(prob.states)
            index: dict[tuple[int, int, int], int] = {}

            def row_of(s, a, s2) -> int:
                key = (int(s), int(a), int(s2))
                row = index.get(key)
                if row is None:
                    row = index[key] = n_trans + len(index)
                    s_list.append(n_states + key[0])
                    a_list.append(n_actions + key[1])
                    s2_list.append(n_states + key[2])
                    tp_list.append(pid)
                    app = prob.applicable.get(key[0]) or prob.applicable.get(str(key[0]))
                    if not app:
                        raise ValueError(f"data/acp/{domain}/{prob.problem}: no applicable actions "
                                         f"recorded for state {key[0]}")
                    app_act.extend(n_actions + int(x[0]) for x in app)
                    app_succ.extend(n_states + int(x[1]) for x in app)
                    app_off.append(len(app_act))
                return row

            for plan in prob.plans:
                plans.append((pid, np.asarray([row_of(*t) for t in plan], dtype=np.int64)))
            for t in getattr(prob, "space_transitions", ()):  # state-space edges off the plans
                row_of(*t)
            n_trans += len(index)
            n_states += len(prob.states)
            n_actions += len(prob.actions)
            dom_counts["problems"] += 1
            dom_counts["states"] += len(prob.states)
            dom_counts["transitions"] += len(index)
            dom_counts["plans"] += len(prob.plans)
        state_blocks.append(emb["states"].astype(np.float32))
        action_blocks.append(emb["actions"].astype(np.float32))
        counts[domain] = dom_counts
    dims = {b.shape[1] for b in state_blocks + action_blocks if b.size}
    if len(dims) > 1:
        raise ValueError(f"{emb_dir}: embedding widths differ across domains: {sorted(dims)}")
    table = TransitionTable(
        state_emb=np.concatenate(state_blocks) if state_blocks else np.zeros((0, 1), np.float32),
        action_emb=np.concatenate(action_blocks) if action_blocks else np.zeros((0, 1), np.float32),
        s=np.asarray(s_list, np.int64), a=np.asarray(a_list, np.int64), s2=np.asarray(s2_list, np.int64),
        app_offsets=np.asarray(app_off, np.int64), app_actions=np.asarray(app_act, np.int64),
        app_successors=np.asarray(app_succ, np.int64),
        state_problem=np.asarray(state_problem, np.int64), state_domain=np.asarray(state_domain, np.int64),
    )
    sk, ak = np.asarray(state_keys, np.int64), np.asarray(action_keys, np.int64)
    trans_key = np.asarray([hash_str(f"{x} {y} {z}") for x, y, z in zip(sk[table.s], ak[table.a], sk[table.s2])],
                           np.int64)
    return Corpus(table=table, domains=list(domains), problems=problems,
                  trans_problem=np.asarray(tp_list, np.int64), plans=plans, counts=counts,
                  trans_key=trans_key, problem_objects=problem_objects)


def objects_of(prob) -> set[str]:
    """Objects named in a problem dataset's initial state, static and goal atoms (its object set:
    two generated problems with equal object sets share one state space)."""
    out: set[str] = set()
    for atom in (*prob.states[prob.initial], *prob.static, *prob.goal):
        tokens = _TOKEN.findall(atom)
        if tokens[:1] == ["not"]:
            tokens = tokens[1:]
        out.update(tokens[1:])
    return out


_TOKEN = re.compile(r"[^\s()]+")


def _no_embeddings(datasets) -> dict[str, np.ndarray]:
    """Zero-width stand-ins for an ``embed_acp`` file (offsets and problem names only)."""
    so = np.cumsum([0] + [len(p.states) for p in datasets])
    ao = np.cumsum([0] + [len(p.actions) for p in datasets])
    return {"states": np.zeros((so[-1], 0), np.float32), "actions": np.zeros((ao[-1], 0), np.float32),
            "state_offsets": so, "action_offsets": ao, "problems": np.array([p.problem for p in datasets])}


@dataclass
class TestSet:
    """Queries of one (task, test domain).

    Attributes:
        domain: the test domain.
        rows: ``(Q,)`` unique transition rows queried (single-step Hit@k, Acc@k).
        distractors: ``"domain"`` or ``"problem"`` (B.3).
        plans: test plans as transition rows, for the teacher-forced plan-level metrics; empty for
            interpolation (its test set is transitions, not plans).
        seen: ``(Q,)`` bool, query ``i``'s triple occurs among the task's training transitions
            (set by :func:`protocol_tasks`; ``None``: none seen). Seen queries are ranked (plans
            need them) but excluded from the single-step metrics.
        problem_names, row_problem: the problems of the queries (sorted names) and ``(Q,)`` the
            index into ``problem_names`` of each query's problem (set by :func:`protocol_tasks`;
            ``None``: unknown). Records carry them, so two protocols can be compared problem by
            problem.
    """

    domain: str
    rows: np.ndarray
    distractors: str
    plans: list[np.ndarray] = field(default_factory=list)
    seen: np.ndarray | None = None
    problem_names: list[str] | None = None
    row_problem: np.ndarray | None = None

    @property
    def scored(self) -> np.ndarray:
        """``(Q',)`` indices into :attr:`rows` of the unseen queries: the ones single-step Hit@k
        and Acc@k are computed over."""
        if self.seen is None:
            return np.arange(len(self.rows))
        return np.nonzero(~self.seen)[0]


@dataclass
class Task:
    """One model to train and what to test it on.

    Attributes:
        protocol: one of :data:`PROTOCOLS`.
        train_key: which data trains it, e.g. ``ferry`` (in-domain and cross-domain: the domain),
            ``all`` (multi-domain), ``without-ferry`` (leave-one-out).
        train_rows: ``(T_train,)`` transition rows.
        tests: test sets, one per test domain.
        skipped: reason when the protocol cannot be built for this key (e.g. one problem only).
    """

    protocol: str
    train_key: str
    train_rows: np.ndarray
    tests: list[TestSet]
    skipped: str | None = None


def _split(n: int, test_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random (train, test) index arrays over ``range(n)``; at least one of each when ``n >= 2``."""
    perm = rng.permutation(n)
    n_test = min(max(1, int(round(n * test_fraction))), n - 1) if n >= 2 else 0
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def _extrapolation_parts(corpus: Corpus, domain: str, test_fraction: float, rng: np.random.Generator):
    """``(train rows, test rows, test plans)`` of a domain's object-set-grouped split, or ``None``
    with fewer than two object sets."""
    pids = np.asarray(corpus.problem_ids(domain))
    groups: dict[int, list[int]] = {}
    for p in pids.tolist():
        groups.setdefault(corpus.object_set(p), []).append(p)
    members = [groups[k] for k in sorted(groups, key=lambda k: min(groups[k]))]
    if len(members) < 2:
        return None
    tr, te = _split(len(members), test_fraction, rng)
    train_p = {p for i in tr for p in members[i]}
    test_p = {p for i in te for p in members[i]}
    rows = corpus.domain_rows(domain)
    tp = corpus.trans_problem[rows]
    return (rows[np.isin(tp, list(train_p))], rows[np.isin(tp, list(test_p))], corpus.plans_of(test_p))


def protocol_tasks(corpus: Corpus, protocol: str, seed: int, test_fraction: float = 0.2,
                   max_train: int | None = None) -> list[Task]:
    """The training tasks of ``protocol`` for one seed (see the module table).

    ``max_train`` (``embedplan.max_train_transitions``; None: no cap) keeps a seeded uniform
    sample of at most that many training transitions per task, a cost knob for the protocols that
    pool several domains (multi-domain, leave-one-out); test sets are never cut.

    Raises:
        ValueError: unknown protocol (names the valid ones).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; protocols: {', '.join(PROTOCOLS)}")
    tasks: list[Task] = []
    doms = corpus.domains

    def rng_for(*key) -> np.random.Generator:
        # one stream per (seed, key): adding a domain never changes another's partition
        return np.random.default_rng([seed, *[hash_str(k) for k in key]])

    if protocol == "interpolation":
        for d in doms:
            rows = corpus.domain_rows(d)
            tr, te = _split(len(rows), test_fraction, rng_for("interpolation", d))
            tasks.append(Task(protocol, d, rows[tr], [TestSet(d, rows[te], "domain")],
                              None if len(rows) >= 2 else f"{d}: fewer than 2 transitions"))
    elif protocol == "plan_variant":
        for d in doms:
            rng = rng_for("plan_variant", d)
            train_rows, test_plans = [], []
            for pid in corpus.problem_ids(d):
                plans = [rows for p, rows in corpus.plans if p == pid]
                if len(plans) < 2:
                    continue  # unique optimal plan: excluded (A.2)
                tr, te = _split(len(plans), test_fraction, rng)
                train_rows += [plans[i] for i in tr]
                test_plans += [plans[i] for i in te]
            if not test_plans:
                tasks.append(Task(protocol, d, np.zeros(0, np.int64), [],
                                  f"{d}: no problem with two or more optimal plans"))
                continue
            test_rows = np.unique(np.concatenate(test_plans))
            tasks.append(Task(protocol, d, np.unique(np.concatenate(train_rows)),
                              [TestSet(d, test_rows, "problem", test_plans)]))
    elif protocol in ("extrapolation", "multi_domain"):
        # multi-domain uses each domain's extrapolation partition of the same seed (A.4), so the two
        # protocols are paired
        parts = {d: _extrapolation_parts(corpus, d, test_fraction, rng_for("extrapolation", d)) for d in doms}
        if protocol == "extrapolation":
            for d in doms:
                if parts[d] is None:
                    tasks.append(Task(protocol, d, np.zeros(0, np.int64), [],
                                      f"{d}: fewer than 2 object sets (problems that share one are one group)"))
                else:
                    tr, te, pl = parts[d]
                    tasks.append(Task(protocol, d, tr, [TestSet(d, te, "problem", pl)]))
        else:
            ok = [d for d in doms if parts[d] is not None]
            if len(ok) < 1:
                return [Task(protocol, "all", np.zeros(0, np.int64), [], "no domain with 2 or more object sets")]
            train = np.concatenate([parts[d][0] for d in ok])
            tasks.append(Task(protocol, "all", train, [TestSet(d, parts[d][1], "problem", parts[d][2]) for d in ok]))
    elif protocol == "cross_domain":
        if len(doms) < 2:
            return [Task(protocol, doms[0] if doms else "-", np.zeros(0, np.int64), [], "needs two or more domains")]
        for a in doms:
            tests = [TestSet(b, corpus.domain_rows(b), "problem", corpus.plans_of(corpus.problem_ids(b)))
                     for b in doms if b != a]
            tasks.append(Task(protocol, a, corpus.domain_rows(a), tests))
    elif protocol == "leave_one_out":
        if len(doms) < 2:
            return [Task(protocol, "-", np.zeros(0, np.int64), [], "needs two or more domains")]
        for b in doms:
            train = np.concatenate([corpus.domain_rows(a) for a in doms if a != b])
            tasks.append(Task(protocol, f"without-{b}", train,
                              [TestSet(b, corpus.domain_rows(b), "problem", corpus.plans_of(corpus.problem_ids(b)))]))
    if max_train is not None:
        for task in tasks:
            if len(task.train_rows) > int(max_train):
                keep = rng_for("max_train", protocol, task.train_key).choice(len(task.train_rows), int(max_train),
                                                                            replace=False)
                task.train_rows = task.train_rows[np.sort(keep)]
    for task in tasks:
        if task.tests:
            trained = np.unique(corpus.keys(task.train_rows))
            for test in task.tests:
                test.seen = np.isin(corpus.keys(test.rows), trained)
                pids = corpus.trans_problem[np.asarray(test.rows, np.int64)]
                uniq = np.unique(pids)
                test.problem_names = [corpus.problems[int(p)][1] for p in uniq]
                test.row_problem = np.searchsorted(uniq, pids)
    return tasks


def hash_str(text: str) -> int:
    """Stable 63-bit hash of a string (Python's ``hash`` is salted per process)."""
    return derive_seed(text, bits=63)


# ------------------------------------------------------------------------------------------------
# The candidate pool shared by every rank_successors method (EmbedPlan Appendix B.3): same pools,
# same tie-breaking draws, so methods are compared on identical queries
# ------------------------------------------------------------------------------------------------


@dataclass
class TransitionTable:
    """Transitions as indices into embedding tables (the unit EmbedPlan trains and evaluates on).

    Attributes:
        state_emb: ``(N_states, d)`` float32 frozen encoder embeddings of every state.
        action_emb: ``(N_actions, d_a)`` float32 embeddings of every ground action.
        s, a, s2: ``(T,)`` int64 rows of the transitions ``(s, a, s')``.
        app_offsets: ``(T + 1,)`` int64; ``app_actions[app_offsets[i]:app_offsets[i+1]]`` are the
            action rows of every ground action applicable in ``s[i]`` (``a[i]`` among them), and
            ``app_successors`` the state rows they lead to.
        state_problem: ``(N_states,)`` int64 problem id of each state (distractor pools).
        state_domain: ``(N_states,)`` int64 domain id of each state.
    """

    state_emb: np.ndarray
    action_emb: np.ndarray
    s: np.ndarray
    a: np.ndarray
    s2: np.ndarray
    app_offsets: np.ndarray
    app_actions: np.ndarray
    app_successors: np.ndarray
    state_problem: np.ndarray
    state_domain: np.ndarray

    def __len__(self) -> int:
        return int(self.s.shape[0])

    def applicable(self, i: int) -> np.ndarray:
        """Action rows applicable in the source state of transition ``i``."""
        return self.app_actions[self.app_offsets[i]:self.app_offsets[i + 1]]


def rank_of_true(scores: np.ndarray, true_col: np.ndarray | int, rng: np.random.Generator | None,
                 pessimistic: bool = False) -> np.ndarray:
    """0-based rank of the true candidate in each row of ``scores`` (higher = better).

    ``rank = #(scores > true) + ties``, where ``ties`` is drawn uniformly from
    ``0..#(scores == true, other candidates)`` with ``rng`` (random tie-breaking, EmbedPlan B.3) or
    is the full tie count when ``pessimistic`` (every tie ranks above the true candidate).

    Args:
        scores: ``(Q, C)`` similarities; ``-inf`` marks padding.
        true_col: column of the true candidate per row (``(Q,)``) or one column for all rows.
    """
    q = scores.shape[0]
    cols = np.broadcast_to(np.asarray(true_col), (q,))
    true = scores[np.arange(q), cols][:, None]
    greater = (scores > true).sum(1)
    ties = (scores == true).sum(1) - 1
    if pessimistic or rng is None:
        return greater + (ties if pessimistic else 0)
    return greater + np.floor(rng.random(q) * (ties + 1)).astype(np.int64)


def sample_pools(table: TransitionTable, rows: np.ndarray, pool_size: int, distractors: str,
                 rng: np.random.Generator) -> np.ndarray:
    """Candidate pools: ``(Q, pool_size)`` state rows, the true ``s'`` in column 0 and distractors
    drawn uniformly without replacement from the other states of the same domain
    (``distractors="domain"``, EmbedPlan's Interpolation) or of the same problem (``"problem"``,
    its Extrapolation and every transfer protocol). A pool smaller than the available states is
    padded with ``-1`` (scored ``-inf``)."""
    if distractors not in ("domain", "problem"):
        raise ValueError(f"distractors must be 'domain' or 'problem', got {distractors!r}")
    group = table.state_problem if distractors == "problem" else table.state_domain
    order = np.argsort(group, kind="stable")
    sorted_groups = group[order]
    pools = np.full((len(rows), pool_size), -1, dtype=np.int64)
    for j, i in enumerate(rows):
        true = table.s2[i]
        g = group[true]
        lo, hi = np.searchsorted(sorted_groups, g, "left"), np.searchsorted(sorted_groups, g, "right")
        n = hi - lo
        need = min(pool_size - 1, n - 1)
        # draw positions in the group, skipping the true state's own position
        picks = rng.choice(n - 1, size=need, replace=False) if need > 0 else np.zeros(0, np.int64)
        members = order[lo:hi]
        true_pos = int(np.nonzero(members == true)[0][0])
        picks = picks + (picks >= true_pos)
        pools[j, 0] = true
        pools[j, 1:1 + need] = members[picks]
    return pools


def pool_ranks(table: TransitionTable, rows: np.ndarray, score, *, pool_size: int = 128,
               distractors: str = "problem", seed: int = 0, pessimistic_ties: bool = False,
               batch: int = 2048) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    """Rank of the true ``s'`` of each transition row in its candidate pool (EmbedPlan B.3), for any
    scorer: the shared core of every method's pool Hit@k, so that all methods evaluated with the
    same ``(rows, pool_size, distractors, seed)`` see the *same* pools and tie-breaking draws.

    Args:
        rows: ``(Q,)`` transition rows.
        score: ``score(batch_slice, candidates)`` -> ``(B, pool)`` scores (higher = more likely the
            successor) for queries ``rows[batch_slice]`` and candidate state rows ``candidates``
            ``(B, pool)`` (padding replaced by the query's true ``s'``, so every row a scorer sees
            is a state of the query's own problem/domain; padded columns are masked afterwards).
        seed: seeds the pool sampling and the random tie-breaking (one generator, in that order).

    Returns:
        ``(ranks (Q,), pool sizes (Q,), generator)``; the generator continues the same stream (the
        caller's Acc@k tie-breaking draws from it).
    """
    rng = np.random.default_rng(seed)
    pools = sample_pools(table, rows, pool_size, distractors, rng)
    ranks, sizes = np.zeros(len(rows), np.int64), (pools >= 0).sum(1)
    for b0 in range(0, len(rows), batch):
        b = slice(b0, b0 + batch)
        p = pools[b]
        scores = np.where(p >= 0, score(b, np.where(p >= 0, p, p[:, :1])), -np.inf)
        ranks[b] = rank_of_true(scores, 0, rng, pessimistic_ties)
    return ranks, sizes, rng


@dataclass
class HitResult:
    """Per-query outcomes of :func:`evaluate_rows` (aligned with the input rows)."""

    rank: np.ndarray         # (Q,) 0-based rank of the true s' in its pool
    pool: np.ndarray         # (Q,) candidates in the pool
    action_rank: np.ndarray  # (Q,) 0-based rank of the true action among applicable ones
    n_actions: np.ndarray    # (Q,) applicable actions of s


def uniform_hit_rate(k: int, candidates: np.ndarray) -> float:
    """Hit@k of a ranker that orders the candidates uniformly at random, averaged over queries:
    the mean of min(k, n) / n for ``candidates`` (Q,) counts n >= 1 (pool sizes, applicable
    actions, successor states). The floor of every Hit@k / Acc@k column
    (docs/concepts.md#floors-and-ceilings)."""
    n = np.maximum(np.asarray(candidates, dtype=float), 1.0)
    return round(float(np.mean(np.minimum(k, n) / n)), 6)


def hit_metrics(res: HitResult, idx: np.ndarray | None = None, ks: tuple[int, ...] = (1, 5, 10)) -> dict:
    """``hit@k`` and ``acc@k`` (fractions) over the queries ``idx`` (default all), with Acc@k's
    floor: ``acc_chance@k``, the Acc@k of a uniform random ranker of the applicable actions (mean of
    min(k, n) / n for n applicable actions), and ``actions``, the mean n. Acc@k ranks the applicable
    actions of s only (the EmbedPlan paper ranks every ground action of the domain)."""
    r = res.rank if idx is None else res.rank[idx]
    ar = res.action_rank if idx is None else res.action_rank[idx]
    n = res.n_actions if idx is None else res.n_actions[idx]
    out: dict = {}
    for k in ks:
        out[f"hit@{k}"] = float(np.mean(r < k)) if len(r) else float("nan")
    for k in ks:
        out[f"acc@{k}"] = float(np.mean(ar < k)) if len(ar) else float("nan")
    if len(n) and np.all(n > 0):
        out.update({f"acc_chance@{k}": uniform_hit_rate(k, n) for k in ks})
        out["actions"] = round(float(np.mean(n)), 4)
    return out


def plan_metrics(hit: np.ndarray, plans: list[np.ndarray], k: int = 5) -> dict:
    """Teacher-forced plan-level metrics (EmbedPlan §4 "Full Plan Execution", D.7): per plan, the
    mean over its steps of ``hit@k`` and whether every step hits; averaged over plans.

    Args:
        hit: ``(Q,)`` bool, query i's true successor ranked in the top k.
        plans: each plan as the query indices of its steps, in order.
    """
    plans = [p for p in plans if len(p)]
    if not plans:
        return {}
    per_plan = [hit[p] for p in plans]
    return {f"plan_mean_hit@{k}": float(np.mean([h.mean() for h in per_plan])),
            f"plan_exact_hit@{k}": float(np.mean([h.all() for h in per_plan])),
            "plans": len(plans)}


def plan_metrics_of(hit5: np.ndarray, test) -> dict:
    """Teacher-forced plan Mean/Exact Hit@5 (:func:`planarena.protocols.pool.plan_metrics`) of a
    :class:`planarena.protocols.pool.TestSet` whose query ``i`` is ``test.rows[i]``; ``{}`` without plans."""

    if not test.plans:
        return {}
    pos = {int(r): i for i, r in enumerate(test.rows)}
    return plan_metrics(hit5, [np.array([pos[int(r)] for r in p]) for p in test.plans])


def pool_split_label(protocol: str, train_key: str) -> str:
    """The record's ``split`` field for a pool record: what the model was trained on."""
    if protocol == "cross_domain":
        return f"from {train_key}"
    if protocol == "leave_one_out":
        return "held out"
    if protocol == "multi_domain":
        return "all domains"
    return "same domain"


# ------------------------------------------------------------------------------------------------
# Records of one trained model: the loop every rank_successors family shares
# ------------------------------------------------------------------------------------------------


@dataclass
class PoolModel:
    """What a family hands :func:`task_records` for one (protocol, train key, seed) model.

    ``rank(test)`` returns ``(ranks, pool_sizes, metrics)``: the 0-based rank of the true next
    state among its pool for each query of ``test.rows`` (from :func:`pool_ranks`, so every method
    sees the same pools and tie-breaking draws), the pool sizes, and extra metrics (e.g. Acc@k)
    over the unseen queries ``test.scored``.
    ``outcome`` is ``solved`` (the model is usable), ``diverged`` or ``error`` (with ``reason``);
    ``extra`` holds the family's fields of every record.
    """

    outcome: str
    reason: str | None = None
    rank: Callable[["TestSet"], tuple[np.ndarray, np.ndarray, dict]] | None = None
    extra: dict = field(default_factory=dict)


def task_records(method, task: "Task", protocol: str, seed: int, problem: str, done: set, fingerprint: str,
                 train_facts: dict, load: Callable[[], PoolModel]) -> Iterator[dict]:
    """Yield the pool Hit@k record (as dict) of every test set of ``task`` not yet in ``done``
    (keys ``(protocol, domain, split, problem, seed)``); ``load()`` is called only when one is to do.

    Every record has Hit@1/5/10 over the pool (EmbedPlan Appendix B.3) of the test transitions
    not seen in training (:attr:`TestSet.scored`; ``queries`` of ``test_transitions``, the rest
    ``seen_in_training``), their random-ranker floor and mean pool size, and the teacher-forced
    plan Mean/Exact Hit@5 over whole test plans (:func:`plan_metrics_of`), plus the family's
    fields. ``model.rank(test)`` ranks every query of ``test.rows`` and computes its extra metrics
    over ``test.scored``.
    """
    from planarena.core.records import ResultRecord

    split = pool_split_label(protocol, task.train_key)
    todo = [t for t in task.tests if (protocol, t.domain, split, problem, seed) not in done]
    if not todo:
        return
    model = load()
    for test in todo:
        start = time.perf_counter()
        scored = test.scored
        extra = {"task": "rank_successors", "protocol": protocol, "train_on": task.train_key,
                 "distractors": test.distractors, "queries": int(len(scored)),
                 "test_transitions": int(len(test.rows)), "seen_in_training": int(len(test.rows) - len(scored)),
                 "train_transitions": int(len(task.train_rows)), **model.extra, **train_facts}
        if model.outcome == "solved" and len(test.rows):
            ranks, sizes, metrics = model.rank(test)
            if len(scored):
                r, n = ranks[scored], sizes[scored]
                extra.update({f"hit@{k}": float(np.mean(r < k)) for k in (1, 5, 10)})
                # each scored query's 0-based rank of s': the report's bootstrap over queries
                extra["ranks"] = [int(x) for x in r]
                if test.row_problem is not None:  # and its problem (an index into `problems`)
                    extra["problems"] = list(test.problem_names)
                    extra["query_problem"] = [int(x) for x in test.row_problem[scored]]
                # the floor: a uniform random ranker puts s' in its top k with probability min(k, pool) / pool
                extra.update({f"hit_chance@{k}": uniform_hit_rate(k, n) for k in (1, 5, 10)})
                extra.update(metrics)
                extra["mean_pool"] = float(np.mean(n))
            extra.update(plan_metrics_of(ranks < 5, test))
        yield ResultRecord(
            method=method.name, family=method.family, domain=test.domain, split=split, problem=problem,
            seed=seed, outcome=model.outcome, failure_reason=model.reason,
            wall_time=round(time.perf_counter() - start, 4), config_hash=fingerprint, extra=extra,
        ).to_dict()


# ------------------------------------------------------------------------------------------------
# The protocol's entry point for the evaluate stage
# ------------------------------------------------------------------------------------------------


def run(ctx: "EvalContext") -> int:
    """Write the method's pool Hit@k records (:meth:`planarena.methods.base.Method.pool_records`)
    not yet recorded; returns the number written."""
    from tqdm import tqdm

    done = {((r.get("extra") or {}).get("protocol"), r["domain"], r["split"], r["problem"], r["seed"])
            for r in ctx.kept if (r.get("extra") or {}).get("task", "plan") == "rank_successors"}
    n = 0
    for rec in tqdm(ctx.method.pool_records(done, ctx.fingerprint, ctx.train_facts),
                    desc=f"pool Hit@k {ctx.method.name}"):
        ctx.writer.write(rec)
        n += 1
    print(f"evaluate {ctx.method.name}: {n} pool Hit@k records written")
    return n
