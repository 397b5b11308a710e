"""The method interface every planarena method implements (docs/extending.md#adding-a-method).

A method declares the tasks it supports (``plan``, ``rank_successors``, ``learn_schema``), learns in
:meth:`Method.train` (called once per method by the ``train`` stage; may be a no-op) and is evaluated
by the ``evaluate`` stage, which calls :meth:`Method.solve` once per (problem, seed), validates every
plan independently and writes one :class:`planarena.core.records.ResultRecord` per attempt.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar

from planarena.config import Layout
from planarena.core.problemset import ProblemEntry

TASKS = frozenset({"plan", "rank_successors", "learn_schema"})


@dataclass(frozen=True)
class PlanningTask:
    """One problem to solve: its manifest entry, the PDDL files, and its time limit in CPU seconds of
    the process that solves it (:mod:`planarena.core.clock`: no outcome depends on machine load)."""

    entry: ProblemEntry
    domain_file: Path
    problem_file: Path
    time_limit: float


@dataclass
class Attempt:
    """What a method returns for one (problem, seed).

    ``outcome`` is one of :data:`planarena.core.records.OUTCOMES`; ``plan`` is the list of ground actions
    (``"(name obj ...)"``) when the method claims a plan (the harness validates it independently);
    ``wall_time`` in seconds if the method measured it itself (else the harness's clock is used);
    ``extra`` carries method-specific numbers (expansions, steps, ...) into the record.
    """

    outcome: str
    plan: list[str] | None = None
    failure_reason: str | None = None
    wall_time: float | None = None
    peak_memory_mb: float | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class LearnedDomain:
    """What a ``learn_schema`` method returns for one (schema domain, seed): the PDDL domain file it
    learned (its training output, a DVC output under ``data/models/<method>/``), or why there is none.

    ``outcome``: ``solved`` (a domain was learned; whether it is any good is the protocol's to
    measure), ``error`` or ``diverged``; ``extra``: numbers for the record (learned arities,
    training facts).
    """

    outcome: str
    path: Path | None = None
    failure_reason: str | None = None
    extra: dict = field(default_factory=dict)
    #: a method that predicts successors without writing a PDDL domain (the DIAS paper's MLP-effects
    #: ablation, Table 3): its :class:`SuccessorModel`; ``path`` is then None and nothing is planned
    successors: "SuccessorModel | None" = None


class SuccessorModel(ABC):
    """Successor prediction of a ``learn_schema`` method that has no planning domain (the protocol
    compares its successor sets with the true domain's, :mod:`planarena.protocols.schema`).

    Attributes:
        grounding_domain: a PDDL domain whose actions' preconditions decide which groundings are
            applicable (effects ignored); the protocol's guard against too permissive domains reads it.
    """

    grounding_domain: Path

    @abstractmethod
    def changes(self, problem_file: Path, atoms: frozenset[str]) -> set[frozenset[str]]:
        """What each applicable injective grounding changes in the state ``atoms`` (texts
        ``"(pred o1 o2)"``, static atoms included) of ``problem_file``: ``{"+(p a)", "-(q a b)"}``
        sets, one per distinct non-empty change (a no-op is no successor)."""


#: What kind of planner a ``plan`` row is; the leaderboard compares rows only within a kind
#: (:attr:`ReportTraits.kind`).
KINDS: tuple[str, ...] = ("search", "lookahead policy", "policy", "decoder")


@dataclass(frozen=True)
class Budget:
    """A learned row's training budget, beside the budget its paper states (the leaderboard's
    budget column; the fraction says how far a profile is from the paper's size).

    Attributes:
        steps: optimisation steps of one training run (gradient updates; boosting rounds for
            gradient-boosted trees: say so in ``unit``), or None when not counted in steps.
        batch: examples per step, or None.
        samples: training examples seen in one run (``steps * batch`` where that applies;
            transitions, trajectories or pairs: say which in ``unit``), or None.
        unit: what a step and a sample are (``"updates x batch"``, ``"boosting rounds"``,
            ``"epochs over N transitions"``).
        paper_steps, paper_batch, paper_samples: the same quantities as the paper states them, None
            where it does not.
        source: where the paper states them (section, table or appendix).
        note: one short clause a reader needs (e.g. "early stopping on validation").
    """

    steps: int | None = None
    batch: int | None = None
    samples: int | None = None
    unit: str = "updates x batch"
    paper_steps: int | None = None
    paper_batch: int | None = None
    paper_samples: int | None = None
    source: str = ""
    note: str = ""

    def fraction(self) -> float | None:
        """This run's share of the paper's budget: samples seen over the paper's samples where
        both are known, else steps over the paper's steps; None when neither pair is known."""
        if self.samples and self.paper_samples:
            return self.samples / self.paper_samples
        if self.steps and self.paper_steps:
            return self.steps / self.paper_steps
        return None


@dataclass(frozen=True)
class ReportTraits:
    """What the leaderboard needs to know about one configured method beyond its records; returned
    by :meth:`Method.report_traits` (the report never tests method names or imports a family).

    Attributes:
        role: ``"model"``, ``"floor"``: a lower bound shown so that a reader can judge the others
            (docs/concepts.md#floors-and-ceilings: random walk, an untrained network); a floor row
            is set beside its paper's floor value, never beside the paper's trained results; or
            ``"ceiling"``: an upper reference measured by the same code (the true domain of the
            schema-learning protocol).
        variant: which of its paper's variants this configuration runs (e.g. ``"hyper"``); picks the
            published value set beside it (``report/published/*.yaml``); ``""``: none in particular.
        info: ``(item, value)`` rows for the Info section (settings a reader needs to read the
            family's numbers); a row several methods give is shown once.
        notes: ``(section, sentence)`` pairs: the report prints the sentence in that section when
            the method has records there (``"pool"``: the candidate-pool Hit@k subsection).
        horizon: the most steps a plan of this method can have (a walk's or decoder's horizon), or
            None (no fixed limit, e.g. a search planner): the Coverage section says how many
            held-out problems need more steps than that (their optimal plans are longer).
        max_objects: the most objects a problem may have for this method to read it (a fixed object
            vocabulary), or None: the Coverage section counts, per held-out split, the problems
            with more (unsolvable by construction).
        max_tokens: the most tokens a generated plan may have (action name and arguments per
            action, plus the end token), or None: the Coverage section counts, per held-out split,
            the problems whose optimal plan needs more.
        selected_on: the split on which the method picks its checkpoint (e.g. ``"validation"``: the
            symmetry-aware transformers score checkpoints there, as their paper does), or ``""``:
            the front page marks that split's cells of the row, which are then not held-out numbers.
        floor_group: methods with the same non-empty group are read against the ``"floor"`` of that
            group (e.g. ``"WL encoding"``: the identity predictor of WL features): the pool
            summary gives each model's Hit@5 lift over it.
        kind: what a ``plan`` row is, one of :data:`KINDS`: ``"search"`` (a planner or heuristic
            search: Fast Downward, LAMA on a learned domain, greedy best-first search with a
            learned heuristic), ``"lookahead policy"`` (a policy choosing among IW(1) / AIW(1)
            jumps), ``"policy"`` (one greedy step per decision), ``"decoder"`` (greedy, beam or
            token generation of a plan). The coverage table groups rows by kind and marks the best
            within a kind; a floor or ceiling has the kind of the rows it bounds.
        floor_kinds: for a ``"floor"``: the kinds of row it is the floor of (the coverage table
            tests each learned row of those kinds against it on the same problems); empty for
            other roles.
        budget: the training budget of a learned row (:class:`Budget`), None for rows that do not
            learn (planners, floors).
        ablations: ``(other method, what differs)`` pairs: configured methods that differ from
            this one in one of its paper's ablation axes (contrastive loss, AD vs External, delta
            vs state, WL vs FSF); the report compares each pair problem by problem.
        twin_of: for an untrained twin (a ``"floor"``), the configured learned row it mirrors: the
            same search, lookahead, decoder, limits and caps with no training (``untrained: true``
            in its config; ``untrained: uniform``: a uniformly random choice among the same
            candidates). The report reads that row against it; ``""`` for every other row.
    """

    role: str = "model"
    variant: str = ""
    info: tuple[tuple[str, str], ...] = ()
    notes: tuple[tuple[str, str], ...] = ()
    horizon: int | None = None
    max_objects: int | None = None
    max_tokens: int | None = None
    selected_on: str = ""
    floor_group: str = ""
    kind: str = "search"
    floor_kinds: tuple[str, ...] = ()
    budget: Budget | None = None
    ablations: tuple[tuple[str, str], ...] = ()
    twin_of: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"ReportTraits.kind {self.kind!r}: not one of {', '.join(KINDS)}")
        bad = [k for k in self.floor_kinds if k not in KINDS]
        if bad:
            raise ValueError(f"ReportTraits.floor_kinds {bad}: not in {', '.join(KINDS)}")


#: the keys in which an untrained twin's block differs from its learned row's (with ``run``):
#: ``untrained`` (``true``, or a family's other floor such as ``uniform``) and ``twin_of`` (the row)
TWIN_KEYS: tuple[str, ...] = ("untrained", "twin_of")


def row_config(config: dict) -> dict:
    """The learned row's configuration a twin's ``config`` mirrors: ``config`` without
    :data:`TWIN_KEYS` (a family computes the twin's search, decoder, limits and traits from it)."""
    return {k: v for k, v in config.items() if k not in TWIN_KEYS}


def twin_traits(row: ReportTraits, twin_of: str, variant: str = "untrained twin") -> ReportTraits:
    """The traits of an untrained twin (docs/concepts.md#untrained-twins) from those of the learned
    row it mirrors (``row``, computed from the row's configuration): a ``"floor"`` of the row's kind
    (``floor_kinds`` = that kind) with :attr:`ReportTraits.twin_of` set, the row's info, notes,
    horizon and caps, and no budget, checkpoint selection, floor group or ablations (a twin is
    read against its row only). ``variant``: what the twin is (``"untrained twin"``; ``""`` for the
    paper's own untrained floor, which the published columns set beside it)."""
    from dataclasses import replace

    return replace(row, role="floor", variant=variant, twin_of=twin_of, floor_kinds=(row.kind,), budget=None,
                   ablations=(), selected_on="", floor_group="")


def untrained_value(config: dict, name: str = "<row>", allowed: tuple = (True,)) -> bool | str:
    """The block's ``untrained`` value: False (a learned row; absent, null or false) or one of
    ``allowed`` (``True``: the untrained twin; a string such as ``"uniform"``: another floor the
    family declares in :meth:`Method.twin_variants`).

    Raises:
        ValueError: another value (names the block and the allowed ones).
    """
    value = config.get("untrained", False)
    if value is None or value is False:
        return False
    for a in allowed:
        if value is a or (isinstance(a, str) and isinstance(value, str) and value.strip().lower() == a):
            return a
    raise ValueError(f"params: methods.{name}.untrained={value!r}; one of false, "
                     + ", ".join("true" if a is True else str(a) for a in allowed))


class Method:
    """Base class. Subclasses set the class attributes and implement :meth:`solve` (and :meth:`train`
    if they learn).

    Attributes:
        family: the paper's family name (``state-centric-transition-models``,
            ``dias-action-schemas``, ...; each docs/papers page names its paper's) or ``classical``.
        tasks: subset of :data:`TASKS`.
        stochastic: if False the method runs once (first evaluation seed) instead of once per seed.
        parallel: if True (the default) the coverage protocol sends :meth:`solve` for different
            (problem, seed) units to the executor's workers (:mod:`planarena.core.executor`);
            set False for a method whose units must run in the stage process.
        device_param: the dotted params key of the method's torch device (``cpu``, ``cuda[:N]``,
            ``auto``), or None for a method without torch; a ``cuda`` unit goes only to workers
            with a GPU (:meth:`unit_device`).
        lockstep: if True the coverage protocol hands :meth:`solve_batch` every problem of one
            (domain, split) for one seed at once (one unit of the executor) instead of calling
            :meth:`solve` per problem.
        uses_params: dotted params keys outside ``methods.<name>`` that change the method's results;
            they enter the config fingerprint that decides which records a resumed run may keep.
    """

    family: ClassVar[str] = "unknown"
    tasks: ClassVar[frozenset[str]] = frozenset({"plan"})
    stochastic: ClassVar[bool] = True
    parallel: ClassVar[bool] = True
    lockstep: ClassVar[bool] = False
    device_param: ClassVar[str | None] = None
    uses_params: ClassVar[tuple[str, ...]] = ()
    #: folders under ``data/`` the method reads (``problems``, ``trajectories``, ``embeddings/wl``,
    #: ``acp``, ``embeddings/acp``, ...). The ``resolve_methods`` stage hashes them into the
    #: method's stage inputs (a change elsewhere does not rerun it), and the runner hands the
    #: method a :class:`planarena.config.DeclaredLayout` that refuses any other folder, so the
    #: declaration cannot drift from what the code reads. May be a property of the instance.
    data_deps: ClassVar[tuple[str, ...]] = ("problems",)
    #: files outside ``data/`` whose bytes change the method's results (an outside planner's
    #: programs): hashed into its stage inputs and its records' fingerprint, so an edit reruns it.
    #: May be a property of the instance.
    input_files: ClassVar[tuple[Path, ...]] = ()
    #: Hit@k protocols of a ``rank_successors`` method: ``successor_set`` (rank every successor of
    #: the suite's reference trajectories through :meth:`rank`) and/or ``pool`` (the EmbedPlan
    #: candidate-pool protocols over the ACPBench-domain datasets, through :meth:`pool_records`).
    successor_protocols: ClassVar[tuple[str, ...]] = ("successor_set",)
    #: a ``learn_schema`` method whose learned domains are planned with (``plan`` records of the
    #: schema-test problems); False for one that predicts successors only (:class:`SuccessorModel`).
    #: May be a property of the instance.
    plans_with_learned_domain: ClassVar[bool] = True

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        """How the leaderboard presents the instance configured by ``config`` (its
        ``methods.<name>`` block) under the resolved ``params`` (:class:`ReportTraits`). The
        default: a plain model with no notes. Must be cheap and must not read ``data/``."""
        return ReportTraits()

    @classmethod
    def twin_variants(cls, config: dict) -> tuple:
        """The untrained floors generated for the learned row configured by ``config``
        (docs/concepts.md#untrained-twins): one twin per value, the block's ``untrained`` value in
        the twin (``True``: the untrained twin ``<row>_untrained``; a string such as
        ``"uniform"``: ``<row>_<value>``). :func:`planarena.methods.with_twins` asks every
        configured row when params are resolved.

        The default: ``(True,)`` for a class that overrides :meth:`train` (the generator then also
        requires the row to be a ``"model"`` with a :attr:`ReportTraits.budget`, i.e. one that
        states what it learned with), ``()`` for a block that is a twin itself (``untrained`` or
        ``twin_of`` set) and for a class that learns nothing. A family whose learned rows need
        other floors (a lookahead policy's uniform choice among its candidates) or whose floors are
        configurations of the same class (an identity predictor) overrides it; an override is
        taken as it is (no budget check). A family must then implement ``untrained`` for each value."""
        if config.get("untrained") or config.get("twin_of") or cls.train is Method.train:
            return ()
        return (True,)

    def __init__(self, name: str, config: dict, params: dict, layout: Layout):
        self.name = name
        self.config = config
        self.params = params
        self.layout = layout
        #: worker processes for independent units (``jobs`` param; 0 = all cores); results must
        #: not depend on it (:mod:`planarena.core.executor`)
        self.jobs = int(params.get("jobs", 0) or 0)

    #: attributes of an instance that are per-process cache *dicts* (e.g. of pymimir or wlplan
    #: objects, which do not pickle): the executor's workers receive them empty and refill them
    transient: ClassVar[tuple[str, ...]] = ()

    def __getstate__(self) -> dict:
        """The method as a worker receives it: without :meth:`memo`'s cache, :attr:`transient` empty."""
        state = dict(self.__dict__)
        state.pop("_memo", None)
        for name in self.transient:
            if name in state:
                state[name] = {}
        return state

    def memo(self, key, build: Callable[[], Any]) -> Any:
        """``build()``, once per ``key`` and process: data a unit needs that costs time to build and
        is shared by units on the same worker (a worker gets the method once and runs many units).
        Not sent to workers (:meth:`__getstate__`)."""
        store = self.__dict__.setdefault("_memo", {})
        if key not in store:
            store[key] = build()
        return store[key]

    def unit_device(self) -> str:
        """The raw value of :attr:`device_param` (``cpu`` when unset): what the executor needs to
        place this method's units (:func:`planarena.core.executor.unit_resources`). Resolved to
        a torch device on the worker, where the GPU is."""
        from planarena.config import get

        return str(get(self.params, self.device_param, "cpu") or "cpu") if self.device_param else "cpu"

    def torch_device(self) -> str:
        """:meth:`unit_device` resolved to a torch device (``cpu`` / ``cuda[:N]``) where it is
        called: inside a unit, on the worker that runs it (``auto`` picks that worker's GPU).

        Raises:
            ConfigError: the value is not cpu / cuda[:N] / auto, or names CUDA where there is none
                (the message names :attr:`device_param`).
        """
        from planarena.config import torch_device

        return torch_device(self.unit_device(), self.device_param or "device")

    #: PDDL requirements the method handles (atomic names, e.g. ``":conditional-effects"``; see
    #: :func:`planarena.core.pddl.domain_requirements`), or None for any the suite's parser reads. A
    #: suite domain that declares another is dropped for this method (:meth:`not_applicable`).
    requirements: ClassVar[frozenset[str] | None] = None

    def not_applicable(self, domain: str, domain_file: Path) -> str | None:
        """Why this method cannot run on the suite's ``domain`` (one sentence), or None when it can.
        The default checks the domain's declared PDDL requirements against :attr:`requirements`;
        a family with per-domain inputs (a hand-designed encoding) overrides it. A dropped domain
        is absent from :attr:`ps` (so from training and evaluation) and the evaluate stage records
        the reason (task ``not_applicable``), which the report shows. Must be cheap."""
        if self.requirements is None:
            return None
        from planarena.core.pddl import domain_requirements

        missing = sorted(domain_requirements(Path(domain_file).read_text()) - self.requirements)
        if missing:
            return f"{domain} declares {' '.join(missing)}, which {type(self).__name__} does not handle"
        return None

    @property
    def ps(self):
        """The suite's :class:`~planarena.core.problemset.ProblemSet` (``layout.problems``), read
        once, without the domains the method cannot run on (:attr:`dropped_domains`)."""
        if getattr(self, "_ps", None) is None:
            from planarena.core.problemset import ProblemSet

            full = ProblemSet(self.layout.problems)
            dropped = {d: why for d in full.domains if (why := self.not_applicable(d, full.domain_file(d)))}
            self._dropped = dropped
            self._ps = full.without_domains(dropped)
        return self._ps

    @property
    def dropped_domains(self) -> dict[str, str]:
        """``{domain: reason}`` of the suite's domains this method does not run on (:meth:`not_applicable`)."""
        self.ps  # noqa: B018 - computes them
        return dict(getattr(self, "_dropped", {}))  # {} when ``ps`` was set directly

    def training_problems(self, domain: str) -> list:
        """The train-split entries of ``domain`` this method learns from: every one, or with the
        block's ``train_problems: k`` the ``k`` smallest (object count, then name; without it, all in
        the problem set's order), so that the
        subsets of k = 1, 2, 4 are nested (a sample-efficiency curve, e.g. the state-centric
        paper's "fewer training instances" claim). Families that learn from the train split read
        it through this method.

        Raises:
            ConfigError: ``train_problems`` is not a positive integer (names the block).
        """
        from planarena.config import ConfigError

        entries = list(self.ps.select(domain=domain, split="train"))
        k = self.config.get("train_problems")
        if k is None:
            return entries  # in the problem set's order
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"params: methods.{self.name}.train_problems must be a positive integer or null, got {k!r}")
        return sorted(entries, key=lambda e: (e.objects, e.problem))[:k]

    def seeds(self) -> list[int]:
        """The seeds this method runs: its block's ``seeds`` or ``evaluation.seeds``; a method that
        is not :attr:`stochastic` runs the first only."""
        from planarena.config import get

        seeds = [int(s) for s in (self.config.get("seeds") or get(self.params, "evaluation.seeds"))]
        return seeds if self.stochastic else seeds[:1]

    def train(self, model_dir: Path) -> dict:
        """Learn from ``self.layout`` (trajectories, embeddings) and save to ``model_dir``.

        Returns a dict of training facts for the report (e.g. ``train_time_s``, ``parameters``).
        The default learns nothing.
        """
        return {"trained": False, "reason": "nothing to learn"}

    def load(self, model_dir: Path) -> None:
        """Load what :meth:`train` saved (default: nothing)."""

    def pool_records(self, done: set, fingerprint: str, train_facts: dict):
        """Yield result-record dicts of the pool Hit@k protocols (methods whose
        :attr:`successor_protocols` include ``pool``); ``done`` holds the
        ``(protocol, domain, split, problem, seed)`` keys already recorded.

        Raises:
            TypeError: the method declares no ``pool`` protocol implementation.
        """
        raise TypeError(f"{type(self).__name__} declares the pool protocol but does not implement pool_records()")

    def rank(self, trajectory, seed: int) -> dict:
        """Successor-set Hit@k along one reference trajectory (:mod:`planarena.protocols.successor_set`):
        at each step rank every successor of the current state; return the metrics
        (``hit@1``, ``hit@5``, ..., ``steps``) as a flat dict.

        Raises:
            TypeError: the method declares the ``successor_set`` protocol but does not implement this.
        """
        raise TypeError(f"{type(self).__name__} declares the successor_set protocol but does not implement rank()")

    def learned_domain(self, domain: str, seed: int) -> LearnedDomain:
        """The PDDL domain learned for schema-learning domain ``domain`` (``data/schema/<domain>``)
        with ``seed`` (:mod:`planarena.protocols.schema` measures it against the true domain and
        plans with it).

        Raises:
            TypeError: the method declares ``learn_schema`` but does not implement this.
        """
        raise TypeError(f"{type(self).__name__} declares the learn_schema task but does not implement learned_domain()")

    def solve_batch(self, tasks: list[PlanningTask], seed: int) -> list[Attempt]:
        """One :class:`Attempt` per task, in order, for problems that share a domain and a split.

        The coverage protocol calls this instead of :meth:`solve` when the class sets
        ``lockstep = True`` (a method that decodes many problems together, e.g. with
        :func:`planarena.search.decoding.decode_lockstep`); each attempt's ``wall_time`` should be
        the problem's share of the batch's time. The default calls :meth:`solve` on each task.
        """
        return [self.solve(task, seed) for task in tasks]

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """Try to solve ``task``; must not raise for ordinary failures (return an outcome instead).

        Raises:
            TypeError: the method does not override this, i.e. it cannot do the ``plan`` task (the
                evaluator only calls it for methods whose ``tasks`` include ``plan``).
        """
        raise TypeError(f"{type(self).__name__} declares tasks {sorted(self.tasks)} but does not implement solve()")
