"""``embed_wl`` stage: Weisfeiler-Leman (WL) histograms of every trajectory state, via wlplan.

What it computes
----------------
Each state ``s`` of a problem with goal ``g`` is turned into its *Instance Learning Graph*
``G_{s,g}`` (ILG; Chen, Trevizan, Thiebaux, "Return to Tradition: Learning Reliable Heuristics with
Classical Machine Learning", ICAPS 2024): one node per object, one node per true atom and per goal
atom, atom nodes coloured by (predicate, achieved/unachieved goal or non-goal), edges labelled by
argument position. ``k`` rounds of WL colour refinement run on that graph and the histogram of the
colours of all rounds is the embedding ``phi(s, g)`` in ``R^D``. ``D`` is the size of the colour
vocabulary, collected once per domain on the **train split only**; at embedding time a colour that is
not in the vocabulary is dropped, exactly as wlplan does (occurrences of dropped colours, per WL
iteration, over the states and goals of a split, are in ``meta.json`` as
``unseen_colour_occurrences``). This is the representation of the state-centric
transition-model paper (Gupta et al., "On Sample-Efficient Generalized Planning via Learned
Transition Models", docs/papers/state-centric.md; Section "State Encoding", Appendix E.2-E.4 and
Appendix G.1 "Stage 3: WL Feature Collection" / "Stage 4: Trajectory Embedding"): ILG, ``k = 2``,
multiset hash, no pruning.

All WL work is done by wlplan (``wlplan.feature_generator``): this module only turns the harness's
atom strings into wlplan ``State``/``Problem`` objects, calls ``collect`` on the train dataset and
``embed`` on batches, and stores the results.

States and static atoms
-----------------------
Trajectory states hold the *fluent* atoms only (``data/trajectories`` format, see
:mod:`planarena.core.trajectories`). wlplan's ILG draws nodes from the atoms of the ``State``; the
``statics`` list of a wlplan ``Problem`` is not used by the ILG generator (wlplan 2.1.0, checked), and
``wlplan.planning.parse_problem`` leaves it empty anyway. So the static atoms of the problem (the
initial-state atoms whose predicate occurs in no action effect, read from the problem PDDL) are added
to every state, as in the ILG paper where a state is the full set of true atoms. The ``static`` field
of a trajectory is deliberately not used: pymimir writes type atoms there (``(object b1)``) whose
predicates wlplan's domain does not have.

Goals
-----
The paper embeds goals "analogously" to states (Appendix G.1, Stage 4) and writes ``phi(g)`` for the
goal component. We take that literally: ``phi(g) = phi(G_{g,g})``, the ILG of the state made of the
positive goal atoms (plus the static atoms) paired with the problem whose goal is ``g``. Every goal
node is then an *achieved* goal, so ``phi(g)`` lives in the same colour space as the embedding of a
goal state ``s_T`` (``s_T`` contains ``g``), which is what the transition models use it for: a fixed
target/conditioning vector next to ``phi(s_t)``. Because the WL colours of such a graph (objects
touched only by achieved-goal atoms) rarely occur in ordinary states, the train split's goal graphs
are added to the vocabulary collection by default (``embed_wl.collect_goals: true``); still train
split only. Set it to false to collect on train states alone.

Histograms are raw colour counts (E.3: ``phi_i = Count(C^(k), c_i)``), stored as exact integers in
``float32``. Stage 4 of the paper mentions "normalized" histograms: normalise in the consumer if a
method wants it, so that one cache serves both.

Outputs (``layout.embeddings / "wl" / <domain>/``)
--------------------------------------------------
``feature_generator.json``  wlplan's own ``save`` of the collected feature generator.
``<split>.npz``             ``states`` (N, D) float32, one row per state of every trajectory in file
                            order; ``traj_index`` (N,) int64, trajectory index within the split
                            file; ``step`` (N,) int64, ``t`` of ``s_t``; ``goals`` (N_traj, D)
                            float32; ``problems`` (N_traj,) str; ``problem_files`` (N_traj,) str
                            (relative to ``data/problems``). Empty arrays with the right ``D`` when a
                            split has no trajectories.
``meta.json``               ``D``, settings, vocabulary size, train counts, per-split counts, dropped
                            (unseen) colour occurrences (times are printed, not stored).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import sys
import time
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np
import wlplan
from tqdm import tqdm
from wlplan.data import DomainDataset, ProblemDataset
from wlplan.feature_generator import (
    Features,
    init_feature_generator,
    load_feature_generator,
)
from wlplan.planning import State

from planarena import config
from planarena.config import SPLITS, Layout
from planarena.core.io import atomic_write, atomic_write_json
from planarena.core.problemset import ProblemSet
from planarena.core.trajectories import Trajectory, load_trajectories, trajectory_file
from planarena.features.wl_pddl import PDDLCache, WLEmbeddingError, _ParsedProblem

#: Settings read from ``params["embed_wl"]`` and their defaults. ``multiset_hash: True`` and
#: ``pruning: "none"`` follow the paper's Appendix E.4 (wlplan's own default is a *set* hash);
#: ``batch_states`` bounds memory (states per wlplan call in the stage), it does not change results.
DEFAULTS: dict = {
    "graph": "ilg",
    "iterations": 2,
    "feature_algorithm": "wl",
    "multiset_hash": True,
    "pruning": "none",
    "collect_goals": True,
    "batch_states": 4096,
    "max_features": None,
}

#: Embedding dtype: colour counts are exact integers in float32 up to 2**24.
DTYPE = np.float32


def wl_settings(params: dict) -> dict:
    """The ``embed_wl`` settings of ``params`` with :data:`DEFAULTS` filled in.

    Raises:
        config.ConfigError: ``iterations`` is not a non-negative integer or ``batch_states`` < 1.
    """
    out = {key: config.get(params, f"embed_wl.{key}", default) for key, default in DEFAULTS.items()}
    try:
        out["iterations"] = int(out["iterations"])
        out["batch_states"] = int(out["batch_states"])
    except (TypeError, ValueError) as exc:
        raise config.ConfigError(
            f"params: `embed_wl.iterations` and `embed_wl.batch_states` must be integers: {exc}"
        ) from exc
    if out["iterations"] < 0:
        raise config.ConfigError("params: `embed_wl.iterations` must be >= 0")
    if out["batch_states"] < 1:
        raise config.ConfigError("params: `embed_wl.batch_states` must be >= 1")
    cap = out["max_features"]
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise config.ConfigError(f"params: `embed_wl.max_features` must be an integer >= 1 or null, got {cap!r}")
    out["multiset_hash"] = bool(out["multiset_hash"])
    out["collect_goals"] = bool(out["collect_goals"])
    return out


@contextlib.contextmanager
def _native_stdout_silenced() -> Iterator[None]:
    """Silence fd 1 while wlplan's C++ ``collect`` prints its per-iteration progress lines."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no real fd 1: let it print
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            ctypes.CDLL(None).fflush(None)
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


# ---------------------------------------------------------------------------------- the embedder


class WLEmbedder:
    """WL (ILG) embedder of one domain: a wlplan feature generator plus cached PDDL parsing.

    Build it with :meth:`fit` (collect the vocabulary) or :meth:`load` (from the stage's
    ``feature_generator.json``); then :meth:`embed_states` embeds any number of states of one
    problem in one batched wlplan call, e.g. all successors of a state during neuro-symbolic
    decoding (state-centric paper, Algorithm 1 and Appendix G.3). Nothing is parsed twice: the
    domain is parsed on construction, each problem file the first time it is used.
    """

    def __init__(self, feature_generator: Features, pddl_cache: PDDLCache):
        self.fg = feature_generator
        self.pddl = pddl_cache

    # construction --------------------------------------------------------------------------------
    @classmethod
    def load(
        cls, feature_generator_file: str | os.PathLike, domain_file: str | os.PathLike
    ) -> "WLEmbedder":
        """Load a feature generator saved by the stage (or :meth:`save`) for ``domain_file``.

        Raises:
            FileNotFoundError: either file is missing.
            WLEmbeddingError: the domain file cannot be parsed or the saved file cannot be loaded.
        """
        fg_path = Path(feature_generator_file)
        if not fg_path.exists():
            raise FileNotFoundError(f"{fg_path}: no WL feature generator; run `dvc repro embed_wl`")
        cache = PDDLCache(domain_file)
        try:
            fg = load_feature_generator(str(fg_path), quiet=True)
        except Exception as exc:
            raise WLEmbeddingError(
                f"{fg_path}: cannot load wlplan feature generator: {exc}"
            ) from exc
        return cls(fg, cache)

    @classmethod
    def for_domain(cls, layout: Layout, domain: str) -> "WLEmbedder":
        """The embedder the stage wrote for ``domain`` under ``layout`` (see :meth:`load`)."""
        return cls.load(
            layout.embeddings / "wl" / domain / "feature_generator.json",
            layout.problems / domain / "domain.pddl",
        )

    @classmethod
    def fit(
        cls,
        domain_file: str | os.PathLike,
        samples: Iterable[tuple[str | os.PathLike, Sequence[Sequence[str]]]],
        settings: dict | None = None,
        goal_problems: Iterable[str | os.PathLike] = (),
    ) -> "WLEmbedder":
        """Collect the WL colour vocabulary with wlplan on the given (train) states.

        Args:
            domain_file: the domain PDDL.
            samples: ``(problem_file, states)`` pairs; each state is a list of fluent atom strings.
            settings: :func:`wl_settings` output (defaults if ``None``).
            goal_problems: problem files whose goal graph ``G_{g,g}`` is collected too.

        Raises:
            WLEmbeddingError: no states at all, bad PDDL or atoms (names the file), or wlplan
                rejects the settings.
        """
        settings = {**DEFAULTS, **(settings or {})}
        cache = PDDLCache(domain_file)
        data = []
        for problem_file, states in samples:
            parsed = cache.problem(problem_file)
            wl_states = [cache.state(parsed, s, where=str(problem_file)) for s in states]
            if wl_states:
                data.append(_problem_dataset(parsed, wl_states))
        for problem_file in goal_problems:
            parsed = cache.problem(problem_file)
            data.append(_problem_dataset(parsed, [cache.goal_state(parsed)]))
        if not data:
            raise WLEmbeddingError(f"{domain_file}: no states to collect the WL vocabulary on")
        try:
            fg = init_feature_generator(
                feature_algorithm=settings["feature_algorithm"],
                domain=cache.domain,
                graph_representation=settings["graph"],
                iterations=int(settings["iterations"]),
                pruning=settings["pruning"],
                multiset_hash=bool(settings["multiset_hash"]),
            )
        except (ValueError, NotImplementedError) as exc:
            raise WLEmbeddingError(f"params `embed_wl`: {exc}") from exc
        with _native_stdout_silenced():
            fg.collect(DomainDataset(cache.domain, data))
        return cls(fg, cache)

    def save(self, path: str | os.PathLike) -> None:
        """Write the feature generator with wlplan's own ``save`` (JSON)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fg.save(str(path))

    # properties ----------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """``D``: the number of features (vocabulary colours kept by wlplan)."""
        return int(self.fg.get_n_features())

    def unseen_counts(self) -> list[int]:
        """Cumulative occurrences, per WL iteration, of colours dropped as not in the vocabulary."""
        return [int(x) for x in self.fg.get_unseen_counts()]

    # embedding -----------------------------------------------------------------------------------
    def embed_states(
        self, problem_file: str | os.PathLike, states: Sequence[Sequence[str]]
    ) -> np.ndarray:
        """Embed states of one problem in ONE wlplan call.

        Args:
            problem_file: the problem PDDL the states belong to (objects, goal, static atoms).
            states: each a list of fluent atom strings like ``"(on b1 b2)"``.

        Returns:
            ``(len(states), D)`` float32 array of WL colour counts of ``G_{s,g}``.

        Raises:
            WLEmbeddingError: an atom has an unknown predicate or object, or a wrong arity (the
                message names the file).
        """
        parsed = self.pddl.problem(problem_file)
        where = str(problem_file)
        wl_states = [self.pddl.state(parsed, s, where=where) for s in states]
        return self._embed([(parsed, wl_states)], where)

    def embed_states_with_goal(
        self, problem_file: str | os.PathLike, states: Sequence[Sequence[str]], goal_file: str | os.PathLike
    ) -> np.ndarray:
        """:meth:`embed_states` of states of ``problem_file`` with the goal of ``goal_file`` in
        place of their own (:meth:`PDDLCache.with_goal`): ``(len(states), D)`` float32 WL colour
        counts of ``G_{s,g'}``. The same rows as :meth:`embed_states` when both files are one."""
        parsed = self.pddl.with_goal(self.pddl.problem(problem_file), self.pddl.problem(goal_file))
        where = f"{problem_file} (goal of {goal_file})"
        return self._embed([(parsed, [self.pddl.state(parsed, s, where=where) for s in states])], where)

    def embed_mimir_states(self, runs: Sequence[tuple[str | os.PathLike, object, Sequence[object]]]) -> np.ndarray:
        """Embed pymimir states of several problems in ONE wlplan call (lockstep decoding).

        Args:
            runs: ``(problem_file, pymimir problem, states)`` triples; ``problem`` parsed from
                ``problem_file``.

        Returns:
            ``(sum of len(states), D)`` float32, rows in the order of ``runs`` and their states;
            the same rows :meth:`embed_states` gives for :func:`planarena.core.pddl.atoms_of` of
            each state.

        Raises:
            WLEmbeddingError: wlplan cannot embed a state (names the problem file).

        wlplan has no incremental entry point (a successor differs from its parent by a few atoms,
        but each state's ILG is built and refined anew) and its one batched call (a
        ``DomainDataset``) is slower than one call per state after ``set_problem``: it copies the
        states into the dataset and returns a list of lists. Measured on SATr Blocksworld (17
        objects, D = 178): 35 us a state batched plus 3 us to turn the lists into an array,
        against 32 us a state written straight into the output (docs/cost.md). So each run sets
        its problem once and each state's row is written into one preallocated array.
        """
        out = np.empty((sum(len(states) for _, _, states in runs), self.dim), dtype=DTYPE)
        row, fg, mimir_state = 0, self.fg, self.pddl.mimir_state
        for problem_file, problem, states in runs:
            if not len(states):
                continue
            parsed = self.pddl.problem(problem_file)
            try:
                fg.set_problem(parsed.problem)
                for s in states:
                    out[row] = fg.embed(mimir_state(parsed, problem, s))
                    row += 1
            except RuntimeError as exc:
                raise WLEmbeddingError(f"{problem_file}: wlplan cannot embed this state: {exc}") from exc
        return out

    def embed_goal(self, problem_file: str | os.PathLike) -> np.ndarray:
        """``phi(g)``: the ``(D,)`` embedding of ``G_{g,g}`` for the problem's goal (see module)."""
        parsed = self.pddl.problem(problem_file)
        return self._embed([(parsed, [self.pddl.goal_state(parsed)])], str(problem_file))[0]

    def embed_goals(self, problem_files: Sequence[str | os.PathLike]) -> np.ndarray:
        """``(len(problem_files), D)`` goal embeddings in one wlplan call."""
        parsed = [self.pddl.problem(p) for p in problem_files]
        return self._embed([(p, [self.pddl.goal_state(p)]) for p in parsed], "goals")

    def embed_trajectories(
        self, trajectories: Sequence[Trajectory], problems_root: str | os.PathLike, where: str = ""
    ) -> np.ndarray:
        """Embed every state of every trajectory, in order, in one wlplan call.

        ``problem_file`` of each trajectory is resolved against ``problems_root``. Returns
        ``(sum(len(t.states)), D)``.
        """
        batch = []
        for traj in trajectories:
            parsed = self.pddl.problem(Path(problems_root) / traj.problem_file)
            label = f"{where or traj.split}: problem {traj.problem}"
            batch.append((parsed, [self.pddl.state(parsed, s, where=label) for s in traj.states]))
        return self._embed(batch, where)

    def _embed(self, batch: list[tuple[_ParsedProblem, list[State]]], where: str) -> np.ndarray:
        batch = [(p, s) for p, s in batch if s]
        n = sum(len(s) for _, s in batch)
        if n == 0:  # wlplan raises "No graphs to embed" on an empty dataset
            return np.zeros((0, self.dim), dtype=DTYPE)
        try:
            data = [_problem_dataset(p, s) for p, s in batch]
            rows = self.fg.embed(DomainDataset(self.pddl.domain, data))
        except RuntimeError as exc:
            raise WLEmbeddingError(f"{where}: wlplan cannot embed these states: {exc}") from exc
        out = np.asarray(rows, dtype=DTYPE)
        return out.reshape(n, self.dim)


def _problem_dataset(parsed: _ParsedProblem, states: list[State]) -> ProblemDataset:
    try:
        return ProblemDataset(parsed.problem, states)
    except RuntimeError as exc:  # wlplan's consistency check: unknown object, arity, ...
        raise WLEmbeddingError(f"{parsed.path}: state does not fit this problem: {exc}") from exc


# ------------------------------------------------------------------------------------- the stage


def _splits(problem_set: ProblemSet, domain: str, traj_root: Path) -> list[str]:
    """Splits of the manifest for ``domain`` plus any split that has a trajectory file."""
    found = set(problem_set.splits(domain))
    domain_dir = traj_root / domain
    if domain_dir.is_dir():
        found |= {p.stem for p in domain_dir.glob("*.jsonl")}
    ordered = [s for s in SPLITS if s in found]
    return ordered + sorted(found - set(SPLITS))


def _chunks(trajs: list[Trajectory], max_states: int) -> Iterator[list[Trajectory]]:
    """Consecutive groups of whole trajectories holding about ``max_states`` states."""
    group: list[Trajectory] = []
    size = 0
    for t in trajs:
        if group and size + len(t.states) > max_states:
            yield group
            group, size = [], 0
        group.append(t)
        size += len(t.states)
    if group:
        yield group


def _save_npz(path: Path, **arrays: np.ndarray) -> None:
    """Atomic ``np.savez_compressed`` (temp file + rename)."""
    atomic_write(path, lambda fh: np.savez_compressed(fh, **arrays))


def embed_split(
    embedder: WLEmbedder,
    trajectories: list[Trajectory],
    problems_root: str | os.PathLike,
    batch_states: int = DEFAULTS["batch_states"],
    where: str = "",
) -> dict[str, np.ndarray]:
    """The arrays of one ``<split>.npz`` (see module docs) for a list of trajectories.

    States are embedded in batches of about ``batch_states`` (whole trajectories per batch, so
    memory stays bounded); goals in one call. Empty input gives empty arrays with the right ``D``.
    """
    d = embedder.dim
    parts = [
        embedder.embed_trajectories(group, problems_root, where=where)
        for group in _chunks(trajectories, batch_states)
    ]
    states = np.concatenate(parts, axis=0) if parts else np.zeros((0, d), dtype=DTYPE)
    lengths = np.array([len(t.states) for t in trajectories], dtype=np.int64)
    traj_index = np.repeat(np.arange(len(trajectories), dtype=np.int64), lengths)
    step = (
        np.concatenate([np.arange(n, dtype=np.int64) for n in lengths])
        if len(lengths)
        else np.zeros(0, dtype=np.int64)
    )
    problem_files = [str(Path(problems_root) / t.problem_file) for t in trajectories]
    goals = embedder.embed_goals(problem_files) if trajectories else np.zeros((0, d), dtype=DTYPE)
    return {
        "states": states,
        "traj_index": traj_index,
        "step": step,
        "goals": goals.astype(DTYPE, copy=False),
        "problems": np.array([t.problem for t in trajectories], dtype=str),
        "problem_files": np.array([t.problem_file for t in trajectories], dtype=str),
    }


def fewer_iterations(colours_per_iteration: Sequence[int], max_features: int | None) -> tuple[int, str | None]:
    """WL iterations to use under a vocabulary cap: ``(iterations, reason)``.

    ``colours_per_iteration[k]`` is the number of colours first seen at WL iteration ``k``
    (wlplan's ``get_layer_to_n_colours`` after ``collect`` with ``K = len - 1`` iterations), so the
    vocabulary at ``k`` iterations is their sum up to ``k``. Without a cap, or when the whole
    vocabulary fits, it is ``(K, None)``. Otherwise the most iterations whose vocabulary fits (at
    least 0: iteration 0 is the initial node colours, which a domain always needs), and a one-line
    reason for the page and the log. Fewer iterations is the coarser but exact WL feature space of
    that depth (every colour of iteration ``k`` refines one of ``k - 1``); it replaces a vocabulary
    that would make a transition model regress thousands of outputs (a 30-disc Hanoi folder:
    8,210 colours at 2 iterations, 383 at 1).
    """
    counts = [int(c) for c in colours_per_iteration]
    k = len(counts) - 1
    total = sum(counts)
    if max_features is None or total <= max_features:
        return k, None
    used, size = 0, counts[0]
    for i in range(1, k + 1):
        if size + counts[i] > max_features:
            break
        used, size = i, size + counts[i]
    return used, (f"WL iterations {k} -> {used}: the vocabulary at {k} iterations is {total:,} colours, over "
                  f"embed_wl.max_features {max_features:,}; at {used} it is {size:,}")


def reductions(layout: Layout, domains: Iterable[str]) -> dict[str, str]:
    """``{domain: reason}`` for each of ``domains`` whose ``embed_wl`` output used fewer WL
    iterations than asked (:func:`fewer_iterations`; ``meta.json``'s ``iterations_reduced``): what a
    row reading these features puts in its training facts (``features_reduced``), so its page says
    which features it was trained on."""
    out = {}
    for domain in domains:
        path = layout.embeddings / "wl" / domain / "meta.json"
        reason = json.loads(path.read_text()).get("iterations_reduced") if path.exists() else None
        if reason:
            out[domain] = reason
    return out


def embed_domain(
    problem_set: ProblemSet,
    domain: str,
    traj_root: str | os.PathLike,
    out_dir: str | os.PathLike,
    settings: dict,
) -> dict:
    """Collect the vocabulary on ``domain``'s train trajectories and embed every split.

    Writes ``feature_generator.json``, ``<split>.npz`` and ``meta.json`` into ``out_dir`` and
    returns the meta dict.

    Raises:
        WLEmbeddingError: the train trajectory file is missing or holds no trajectory (names the
            domain and the file), or a PDDL file / atom is bad (names the file).
    """
    start = time.perf_counter()
    traj_root = Path(traj_root)
    out_dir = Path(out_dir)
    train_file = trajectory_file(traj_root, domain, "train")
    if not train_file.exists():
        raise WLEmbeddingError(
            f"embed_wl: domain {domain!r}: train trajectories {train_file} not found; the WL "
            "vocabulary is collected on the train split only (run `dvc repro trajectory`)"
        )
    train = load_trajectories(traj_root, domain, "train")
    if not train:
        raise WLEmbeddingError(
            f"embed_wl: domain {domain!r}: {train_file} holds no trajectories; the WL vocabulary "
            "is collected on the train split only"
        )
    root = problem_set.root
    goal_files = (
        sorted({str(root / t.problem_file) for t in train}) if settings["collect_goals"] else []
    )
    samples = [(root / t.problem_file, t.states) for t in train]
    embedder = WLEmbedder.fit(problem_set.domain_file(domain), samples, settings, goal_problems=goal_files)
    requested = int(settings["iterations"])
    used, reduced = fewer_iterations(embedder.fg.get_layer_to_n_colours(), settings["max_features"])
    if used < requested:
        tqdm.write(f"embed_wl {domain}: {reduced}")
        settings = {**settings, "iterations": used}
        embedder = WLEmbedder.fit(problem_set.domain_file(domain), samples, settings, goal_problems=goal_files)
    out_dir.mkdir(parents=True, exist_ok=True)
    embedder.save(out_dir / "feature_generator.json")
    collect_seconds = time.perf_counter() - start

    split_meta: dict[str, dict] = {}
    splits = _splits(problem_set, domain, traj_root)
    for split in tqdm(splits, desc=f"embed_wl {domain}", leave=False):
        trajs = train if split == "train" else load_trajectories(traj_root, domain, split)
        before = embedder.unseen_counts()
        arrays = embed_split(
            embedder, trajs, root, settings["batch_states"], where=f"{domain}/{split}"
        )
        after = embedder.unseen_counts()
        _save_npz(out_dir / f"{split}.npz", **arrays)
        split_meta[split] = {
            "trajectories": len(trajs),
            "states": int(arrays["states"].shape[0]),
            "unseen_colour_occurrences": [a - b for a, b in zip(after, before)],
        }

    meta = {
        "domain": domain,
        "D": embedder.dim,
        "vocabulary_size": int(embedder.fg.get_n_colours()),
        "colours_per_iteration": [int(x) for x in embedder.fg.get_layer_to_n_colours()],
        "graph": settings["graph"],
        "iterations": int(settings["iterations"]),
        "iterations_requested": requested,
        "max_features": settings["max_features"],
        "iterations_reduced": reduced,
        "feature_algorithm": settings["feature_algorithm"],
        "multiset_hash": bool(settings["multiset_hash"]),
        "pruning": settings["pruning"],
        "collect_goals": bool(settings["collect_goals"]),
        "goal_embedding": "ILG of the state made of the positive goal atoms (G_{g,g})",
        "histogram": "raw colour counts, float32",
        "train_states": int(sum(len(t.states) for t in train)),
        "train_trajectories": len(train),
        "train_goals_collected": len(goal_files),
        "splits": split_meta,
        "wlplan_version": wlplan.__version__,
    }
    # a DVC output: no wall times (they are printed), so a rerun writes the same bytes
    atomic_write_json(out_dir / "meta.json", meta)
    tqdm.write(f"embed_wl {domain}: D={embedder.dim}, vocabulary {collect_seconds:.2f} s, "
               f"all splits {time.perf_counter() - start:.2f} s")
    return meta


def run_stage(params: dict, layout: Layout) -> None:
    """DVC stage ``embed_wl``: WL histograms of all trajectories of all domains of the problem set.

    Reads ``layout.problems`` (manifest, PDDL) and ``layout.trajectories/<domain>/<split>.jsonl``;
    writes ``layout.embeddings/wl/<domain>/`` (module docs). Settings: ``params["embed_wl"]``, see
    :data:`DEFAULTS`.

    Raises:
        FileNotFoundError: no problem manifest.
        WLEmbeddingError: a domain has no train trajectories although train was planned, or bad
            PDDL / atoms (names the file). With ``planners.splits`` excluding train, each domain
            is skipped and its ``meta.json`` says so.
        config.ConfigError: invalid ``embed_wl`` params.
    """
    settings = wl_settings(params)
    problem_set = ProblemSet(layout.problems)
    out_root = layout.embeddings / "wl"
    planned = config.get(params, "planners.splits", None)
    for domain in tqdm(problem_set.domains, desc="embed_wl"):
        if planned and "train" not in planned:
            # no reference plans were asked for on train (`planners.splits`), so no method of
            # this run can learn from WL features of train trajectories: nothing to collect a
            # vocabulary on. A method that reads these features reports "no data" (its file is
            # missing); an empty train split that *was* planned is still an error (embed_domain)
            out_dir = out_root / domain
            out_dir.mkdir(parents=True, exist_ok=True)
            atomic_write_json(out_dir / "meta.json", {
                "domain": domain, "skipped": "planners.splits excludes train: no train "
                "trajectories to collect the WL vocabulary on"})
            tqdm.write(f"embed_wl {domain}: skipped (`planners.splits` {list(planned)} excludes train)")
            continue
        embed_domain(problem_set, domain, layout.trajectories, out_root / domain, settings)
