"""Stage ``schema_data``: the transition data of the schema-learning task (``learn_schema``).

DIAS paper (Reiter, Gebler, Geffner, "Differentiable Learning of Lifted Action Schemas for Classical
Planning"; docs/papers/dias.md), Appendix A.3: per domain, training and validation transitions come
from a random walk on one small instance until every action name has at least ``N_min`` samples (at
most ``N_max`` kept), and 1,500 test states from breadth-first search over three larger instances.
Problems come from the pypddl-datasets generators and domain files, written in the normal form of
:mod:`planarena.core.strips` (types and equality as unary / ``eq`` atoms), so that the true domain,
learned domains and the planning path read the same problem files.

Layout (a problem set, :mod:`planarena.core.problemset`, plus the transition files)::

    data/schema/manifest.jsonl                 ProblemEntry rows: split ``train`` (the walk instance)
                                               and ``schema-test`` (the three test instances)
    data/schema/<domain>/domain.pddl           normal form of the true domain
    data/schema/<domain>/{train,schema-test}/<problem>.pddl
    data/schema/<domain>/atoms.json            per instance: every atom seen (index -> text) and the
                                               static atoms (types, eq, links), objects
    data/schema/<domain>/transitions.{train,validation}.jsonl
                                               {"s": [fluent atom ids], "t": [...], "a": "(name o ...)"}
    data/schema/<domain>/transitions.train-noise.jsonl
                                               the noise rows' training walk (same rows), written when
                                               ``schema.noise_n_min`` exceeds the domain's N_min
    data/schema/<domain>/test_states.jsonl     {"problem": name, "s": [fluent atom ids]}
    data/schema/<domain>/info.json             predicates, actions (true arity and the STRIPS+
                                               arguments), counts, sizes

Noise rows (Table 2) train on a walk with at least ``schema.noise_n_min`` transitions per action name:
Appendix A.4.2 (dias-action-schemas.txt line 512), "we increase the smallest per-action minimum sample
count to N_min = 200", read as the training walk's N_min^tr raised to max(N_min^tr, 200) (Tables 4-16
give N_min^tr from 20 to 2000; a domain already at 200 or more keeps its walk). It is a property of the
data (the walk's stopping rule), so it lives here, not in the ``dias`` training params; the validation
walk is unchanged (A.4.2 names training adjustments only). The noise walk has the training walk's seed,
so it is that walk continued: the noise-free training rows are a subsequence of its rows. ``info.json``'s
``noise_train`` names the file and its bounds (:func:`noise_bounds`).

Departures from the paper (docs/papers/dias.md#what-is-reproduced): the walk picks an action *name*
uniformly among the applicable ones, then a grounding uniformly (the paper's "balanced random walk",
A.3.4), restarts at dead ends, and skips non-injective groundings (the paper's injective-binding
assumption, Section 3).
"""

from __future__ import annotations

import inspect
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from planarena.config import SCHEMA_SPLIT, ConfigError, Layout, get
from planarena.core.io import atomic_write_json, derive_seed, read_jsonl, write_jsonl
from planarena.core.pddl import count_objects, parse_domain, parse_problem_of
from planarena.core.problemset import ProblemEntry
from planarena.core.strips import ground_atom_text, normal_form, normal_problem_text
from planarena.datasets.suites import GEN_ROOT, generator_module

#: schema-learning domains (the DIAS paper's names) -> generator package and domain file: a pypddl-datasets
#: package, or a dotted planarena package for a domain it lacks (:mod:`planarena.datasets.generators`)
DOMAINS: dict[str, tuple[str, str]] = {
    "blocks3": ("blocks_3", "domain.pddl"),
    "delivery": ("delivery", "domain.pddl"),
    "driverlog": ("driverlog", "domain.pddl"),
    "gripper": ("gripper", "domain.pddl"),
    "logistics": ("logistics", "domain.pddl"),
    "miconic": ("miconic", "domain.pddl"),
    # Table 11's own encoding (board / unboard / move_up / move_down; in_floor, in_lift, lift_pos)
    "miconic_lift": ("planarena.datasets.generators.miconic_lift", "domain.pddl"),
    "hanoi": ("planarena.datasets.generators.hanoi", "domain.pddl"),   # Table 9
    "npuzzle": ("planarena.datasets.generators.npuzzle", "domain.pddl"),   # Table 5
    # Tables 13 and 14: the paper's binary encoding (pypddl-datasets' IPC Sokoban has the ternary
    # move-dir), without and with pull_box
    "sokoban": ("planarena.datasets.generators.sokoban", "domain.pddl"),
    "sokoban_pull": ("planarena.datasets.generators.sokoban_pull", "domain.pddl"),
    "satellite": ("satellite", "domain.pddl"),
    "spanner": ("spanner", "domain.pddl"),
    "visitall": ("visitall", "domain.pddl"),
}
#: the paper's domains this harness cannot build, and why (none since N-Puzzle and the two Sokoban
#: variants have planarena generators; a name here is refused with its reason)
UNAVAILABLE: dict[str, str] = {}
TEST_SPLIT = SCHEMA_SPLIT


@dataclass(frozen=True)
class DomainSettings:
    """One domain's data settings (params ``schema.domains_settings.<domain>``; paper Tables 4-16).

    ``train`` / ``test``: generator keyword arguments of the walk instance and the three test
    instances; ``n_train`` / ``n_validation``: ``(N_min, N_max)`` transitions per action name;
    ``restart_every``: the walk restarts from the initial state after this many steps (None: only
    at dead ends). Ours, for Sokoban: a box pushed into a corner is no dead end for the walk (the
    player still moves) but ends its pushes, which the paper names as why random walks sample
    Sokoban poorly (Section 5.2).
    """

    name: str
    train: dict
    test: tuple[dict, ...]
    n_train: tuple[int, int]
    n_validation: tuple[int, int]
    restart_every: int | None = None


def domain_settings(params: dict, domain: str) -> DomainSettings:
    """Settings of ``domain`` from ``schema.generators.<domain>``.

    Raises:
        ConfigError: unknown or unavailable domain, or a missing / malformed key (names the param).
    """
    if domain in UNAVAILABLE:
        raise ConfigError(f"params: schema.domains: {domain!r} is not available: {UNAVAILABLE[domain]}")
    if domain not in DOMAINS:
        raise ConfigError(f"params: schema.domains: unknown domain {domain!r}; known: {sorted(DOMAINS)}")
    block = get(params, f"schema.generators.{domain}")
    try:
        return DomainSettings(
            name=domain, train=dict(block["train"]), test=tuple(dict(t) for t in block["test"]),
            n_train=tuple(int(x) for x in block["n_train"]),
            n_validation=tuple(int(x) for x in block["n_validation"]),
            restart_every=None if block.get("restart_every") is None else int(block["restart_every"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"params: schema.generators.{domain}: expected train, test (list), n_train and "
                          f"n_validation ([N_min, N_max]); {type(exc).__name__}: {exc}") from None


def noise_bounds(params: dict, n_train: tuple[int, int]) -> tuple[int, int] | None:
    """``(N_min, N_max)`` of the noise rows' training walk (DIAS Appendix A.4.2: N_min raised to
    ``schema.noise_n_min``, 200 in the paper), or None when the domain's own ``n_train`` already
    meets it (or ``schema.noise_n_min`` is null): the noise rows then read the training walk.

    Raises:
        ConfigError: ``schema.noise_n_min`` is not a positive integer or null.
    """
    raw = get(params, "schema.noise_n_min", None)
    if raw is None:
        return None
    try:
        n = int(raw)
    except (TypeError, ValueError):
        n = 0
    if n < 1:
        raise ConfigError(f"params: schema.noise_n_min = {raw!r}; expected a positive integer or null")
    n_min, n_max = n_train
    return (n, max(n, n_max)) if n > n_min else None


def configured_domains(params: dict, config: dict, available) -> list[str]:
    """The schema-learning domains a method runs: its block's ``domains`` (a list; ``[]``: none) or,
    when that is absent or null, ``schema.domains``; kept where ``data/schema`` has them (``available``)."""
    have = set(available)
    own = config.get("domains")
    return [d for d in (own if own is not None else get(params, "schema.domains") or []) if d in have]


def generate_text(domain: str, kwargs: dict, seed: int) -> str:
    """PDDL text of one generated problem of ``domain`` (the seed is passed when the generator takes one).

    Raises:
        ConfigError: keyword arguments the generator does not accept.
    """
    make = generator_module(DOMAINS[domain][0]).make_problem
    args = dict(kwargs)
    if "seed" in inspect.signature(make).parameters:
        args["seed"] = seed
    try:
        return make(**args)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"params: schema.generators.{domain}: bad generator arguments {kwargs}: {exc}") from None


class _Atoms:
    """Atom texts of one instance, numbered in order of first sight (static atoms first)."""

    def __init__(self, problem, predicates: set[str]):
        self.index: dict[str, int] = {}
        self.static: list[int] = []
        self.predicates = predicates
        for a in problem.get_initial_atoms():
            if a.is_static():
                t = self._text(a)
                if t is not None:
                    self.static.append(self.id(t))
        self._static = set(self.static)

    def _text(self, atom) -> str | None:
        """Normal-form text of a pymimir atom; None for atoms outside the domain's predicates (the
        ``=`` atoms pymimir lists for the ``:equality`` requirement of every normal-form domain)."""
        t = ground_atom_text(atom)
        return t if t and t[1:].split(" ", 1)[0].rstrip(")") in self.predicates else None

    def id(self, text: str) -> int:
        return self.index.setdefault(text, len(self.index))

    def fluent(self, state) -> list[int]:
        """Ids of the fluent atoms of a pymimir ``state`` (static atoms are stored once)."""
        ids = (self.id(t) for t in (self._text(a) for a in state.get_atoms()) if t)
        return sorted(i for i in ids if i not in self._static)

    def texts(self) -> list[str]:
        return list(self.index)


def _injective(ga) -> bool:
    objs = [o.get_name() for o in ga.get_objects()]
    return len(set(objs)) == len(objs)


def _action_text(ga) -> str:
    return f"({' '.join([ga.get_action().get_name(), *(o.get_name() for o in ga.get_objects())])})"


def random_walk(problem, atoms: _Atoms, bounds: tuple[int, int], action_names: list[str], seed: int,
                max_steps: int, restart_every: int | None = None) -> tuple[list[dict], dict]:
    """Transitions of a balanced random walk on ``problem`` until every action name has ``N_min``
    samples (``bounds = (N_min, N_max)``; at most ``N_max`` kept per name) or ``max_steps`` steps.
    The walk starts again from the initial state at a dead end and, with ``restart_every``, after
    that many steps since the last start.

    Returns:
        (rows ``{"s", "t", "a"}``, facts: steps, restarts, samples per action name, ``complete``).
    """
    n_min, n_max = bounds
    rng = random.Random(seed)
    counts: Counter = Counter()
    rows: list[dict] = []
    state = problem.get_initial_state()
    steps = restarts = since = 0
    while steps < max_steps and any(counts[a] < n_min for a in action_names):
        if restart_every is not None and since >= restart_every:
            state, since = problem.get_initial_state(), 0
            restarts += 1
        by_name: dict[str, list] = defaultdict(list)
        for ga in state.generate_applicable_actions():
            if _injective(ga):
                by_name[ga.get_action().get_name()].append(ga)
        if not by_name:  # dead end: start again
            state, since = problem.get_initial_state(), 0
            restarts += 1
            continue
        name = rng.choice(sorted(by_name))
        ga = rng.choice(sorted(by_name[name], key=_action_text))
        nxt = ga.apply(state)
        if counts[name] < n_max:
            rows.append({"s": atoms.fluent(state), "t": atoms.fluent(nxt), "a": _action_text(ga)})
            counts[name] += 1
        state = nxt
        steps += 1
        since += 1
    return rows, {"steps": steps, "restarts": restarts, "samples": dict(sorted(counts.items())),
                  "complete": all(counts[a] >= n_min for a in action_names)}


def bfs_states(problem, atoms: _Atoms, limit: int) -> list[list[int]]:
    """The first ``limit`` states of a breadth-first search from the initial state (fluent atom ids)."""
    start = problem.get_initial_state()
    seen = {start.get_index()}
    frontier = [start]
    out: list[list[int]] = []
    while frontier and len(out) < limit:
        nxt_frontier = []
        for s in frontier:
            if len(out) >= limit:
                break
            out.append(atoms.fluent(s))
            for ga in s.generate_applicable_actions():
                t = ga.apply(s)
                if t.get_index() not in seen:
                    seen.add(t.get_index())
                    nxt_frontier.append(t)
        frontier = nxt_frontier
    return out


def strips_plus_arguments(schema, states: list[set[str]]) -> list[int]:
    """Positions of the parameters of ``schema`` kept in STRIPS+ actions (DIAS paper, Section 2.2):
    a parameter is dropped when a positive precondition determines it from a kept parameter in
    every observed state, i.e. ``p(x, z)`` (or ``p(z, x)``) with at most one ``z`` per ``x``, or a
    unary ``p(z)`` true of exactly one object. Parameters are tried last to first.

    Args:
        schema: a :class:`planarena.core.strips.Schema` of the true domain.
        states: the observed states, each a set of atom texts.
    """
    def functional(pred: str, pos: int) -> bool:
        for s in states:
            seen: dict[tuple, str] = {}
            for atom in s:
                parts = atom.strip("()").split()
                if parts[0] != pred or len(parts) != 3:
                    continue
                key, val = parts[1 + (1 - pos)], parts[1 + pos]
                if seen.setdefault(key, val) != val:
                    return False
        return True

    def unique(pred: str) -> bool:
        return all(sum(1 for a in s if a.startswith(f"({pred} ") and a.count(" ") == 1) == 1 for s in states)

    kept = list(range(len(schema.parameters)))
    for z in reversed(range(len(schema.parameters))):
        var = schema.parameters[z]
        others = {schema.parameters[i] for i in kept if i != z}
        for lit in schema.precondition:
            if not lit.positive or var not in lit.args:
                continue
            if len(lit.args) == 1 and unique(lit.predicate):
                kept.remove(z)
                break
            if len(lit.args) == 2 and lit.args[0] != lit.args[1]:
                pos = lit.args.index(var)
                if lit.args[1 - pos] in others and functional(lit.predicate, pos):
                    kept.remove(z)
                    break
    return kept


def build_domain(params: dict, domain: str, out: Path) -> tuple[list[ProblemEntry], dict]:
    """Write one domain's files under ``out`` (see the module docstring); return its manifest
    entries and its ``info.json`` content."""
    cfg = domain_settings(params, domain)
    base_seed = int(get(params, "seed"))
    pkg, fname = DOMAINS[domain]
    source = Path(generator_module(pkg).__file__).parent / fname
    original = parse_domain(source)
    origin = pkg if "." in pkg else f"{GEN_ROOT}.{pkg}"
    strips = normal_form(original, f"{origin}/{fname}")
    out.mkdir(parents=True, exist_ok=True)
    domain_file = strips.write(out / "domain.pddl")
    true_domain = parse_domain(domain_file)
    entries: list[ProblemEntry] = []
    problems = {}
    for split, configs in (("train", (cfg.train,)), (TEST_SPLIT, cfg.test)):
        (out / split).mkdir(exist_ok=True)
        for i, kwargs in enumerate(configs):
            seed = derive_seed(base_seed, "schema", domain, split, i)
            raw = out / split / f".raw-{i}.pddl"
            raw.write_text(generate_text(domain, kwargs, seed))
            original_problem = parse_problem_of(original, raw)
            name = f"{domain}-{split}-{i + 1}"
            path = out / split / f"{name}.pddl"
            path.write_text(normal_problem_text(original_problem, strips))
            raw.unlink()
            problems[(split, name)] = parse_problem_of(true_domain, path)
            size = next(iter(kwargs.values())) if kwargs else None
            entries.append(ProblemEntry(
                domain=domain, split=split, problem=name, path=str(path.relative_to(out.parent)),
                size_param=next(iter(kwargs), "size"), size=size if isinstance(size, int) else None,
                objects=count_objects(path.read_text()), seed=seed, origin=origin))
    names = [s.name for s in strips.schemas]
    (train_name,) = [n for (split, n) in problems if split == "train"]
    train_problem = problems[("train", train_name)]
    known = {name for name, _ in strips.predicates}
    atoms = {n: _Atoms(p, known) for (_, n), p in problems.items()}
    max_steps = int(get(params, "schema.max_walk_steps"))
    facts = {}
    for split, bounds in (("train", cfg.n_train), ("validation", cfg.n_validation)):
        rows, facts[split] = random_walk(train_problem, atoms[train_name], bounds, names,
                                         derive_seed(base_seed, "schema-walk", domain, split), max_steps,
                                         cfg.restart_every)
        write_jsonl(out / f"transitions.{split}.jsonl", rows)
        if not facts[split]["complete"]:
            print(f"warning: schema_data {domain}: {split} walk stopped after {max_steps} steps with "
                  f"{facts[split]['samples']} samples (N_min {bounds[0]})")
    # the noise rows' training walk (Appendix A.4.2), after the other two: the atom ids those use
    # are unchanged; the training walk's seed, so it extends that walk
    noisy = noise_bounds(params, cfg.n_train)
    noise_train = {"file": "transitions.train.jsonl", "n_min": cfg.n_train[0], "n_max": cfg.n_train[1]}
    if noisy is not None:
        rows, facts["train_noise"] = random_walk(train_problem, atoms[train_name], noisy, names,
                                                 derive_seed(base_seed, "schema-walk", domain, "train"), max_steps,
                                                 cfg.restart_every)
        write_jsonl(out / "transitions.train-noise.jsonl", rows)
        noise_train = {"file": "transitions.train-noise.jsonl", "n_min": noisy[0], "n_max": noisy[1]}
        if not facts["train_noise"]["complete"]:
            print(f"warning: schema_data {domain}: noise train walk stopped after {max_steps} steps with "
                  f"{facts['train_noise']['samples']} samples (N_min {noisy[0]})")
    tests = [n for (split, n) in problems if split == TEST_SPLIT]
    per = -(-int(get(params, "schema.test_states")) // max(1, len(tests)))
    test_rows = []
    for n in tests:
        test_rows += [{"problem": n, "s": s} for s in bfs_states(problems[(TEST_SPLIT, n)], atoms[n], per)]
    write_jsonl(out / "test_states.jsonl", test_rows)
    atomic_write_json(out / "atoms.json", {n: {"atoms": a.texts(), "static": a.static,
                                                "objects": [o.get_name() for o in problems[(s, n)].get_objects()]}
                                           for (s, n), a in ((k, atoms[k[1]]) for k in problems)})
    texts = atoms[train_name].texts()
    static = {texts[i] for i in atoms[train_name].static}
    walk_states = [static | {texts[i] for i in r["s"]} for r in read_jsonl(out / "transitions.train.jsonl")[:500]]
    info = {
        "domain": domain, "source": f"{origin}/{fname}",
        "predicates": [list(p) for p in strips.predicates],
        "actions": [{"name": s.name, "arity": len(s.parameters),
                     "strips_plus": strips_plus_arguments(s, walk_states)} for s in strips.schemas],
        "train_problem": train_name, "test_problems": tests,
        "walk": facts, "noise_train": noise_train, "test_states": len(test_rows),
    }
    atomic_write_json(out / "info.json", info)
    return entries, info


def run_stage(params: dict, layout: Layout) -> Path:
    """Stage ``schema_data``: every domain of ``schema.domains`` into ``data/schema``."""
    root = layout.root / "schema"
    root.mkdir(parents=True, exist_ok=True)
    domains = list(get(params, "schema.domains") or [])
    for d in domains:
        domain_settings(params, d)  # fail on a bad domain before any work
    entries: list[ProblemEntry] = []
    for d in tqdm(domains, desc="schema_data", unit="domain"):
        e, info = build_domain(params, d, root / d)
        entries += e
        print(f"schema_data {d}: {sum(info['walk']['train']['samples'].values())} train / "
              f"{sum(info['walk']['validation']['samples'].values())} validation transitions, "
              f"{info['test_states']} test states")
    write_jsonl(root / "manifest.jsonl", [e.to_dict() for e in entries])
    return root
