"""Suites: produce ``data/problems`` from the built-in generators or from an external directory.

* ``generated`` (default): Blocksworld, Gripper, Logistics and VisitAll problems from the offline
  generators and domain files of ``pypddl-datasets`` (IPC generators ported to Python), with the
  train / validation / interpolation / extrapolation size ranges of the Symmetry-Aware Transformer
  splits (Fritzsche, Gestrin, Seipp, AAAI-26, Table C.1), scaled in count by the profile.
* ``satr``: a directory laid out as ``<domain>/domain.pddl`` + ``<domain>/<split>/*.pddl``.
* ``ipc2023``: the IPC 2023 Learning Track layout (``training/easy``, ``testing/{easy,medium,hard}``,
  gzipped problems allowed).
* ``dir``: a user's own domain folders as published, flat or in split folders
  (:mod:`planarena.datasets.folders`; ``-S suite=/abs/path`` selects it with that path).

Every suite writes the same contract (:mod:`planarena.core.problemset`). External files are copied (and
decompressed) into ``data/problems`` — a DVC output, never committed to git.
"""

from __future__ import annotations

import importlib
import json
import random
import re
import shutil
import sys
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from planarena.config import SPLITS, TRAIN_SPLITS, ConfigError, Layout, get
from planarena.core.io import derive_seed, write_jsonl
from planarena.core.pddl import (PDDLError, count_objects, needs_typing, parse_domain, parse_problem_of,
                                  read_pddl_file)
from planarena.datasets.folders import natural_key, read_folders
from planarena.core.problemset import ProblemEntry

#: Package of the pypddl-datasets IPC generators (also used by :mod:`planarena.datasets.acp`).
GEN_ROOT = "pypddl_datasets.generators.classical.ipc"


def generator_module(pkg: str):
    """The pypddl-datasets generator module ``<GEN_ROOT>.<pkg>.generator`` (e.g. ``pkg="blocks_4"``),
    or, for a dotted ``pkg`` (``planarena.datasets.generators.hanoi``: a domain pypddl-datasets
    lacks), ``<pkg>.generator``.

    Raises:
        ModuleNotFoundError: no such generator package.
    """
    return importlib.import_module(f"{pkg}.generator" if "." in pkg else f"{GEN_ROOT}.{pkg}.generator")


def _domain_text(resource: str) -> str:
    """Text of a domain file shipped next to a pypddl-datasets generator (``<pkg>/<file>``, e.g.
    ``"blocks_4/domain.pddl"``; also read by :mod:`planarena.datasets.acp` and the CLI).

    Raises:
        ModuleNotFoundError: no such generator package. FileNotFoundError: no such file there.
    """
    pkg, _, name = resource.rpartition("/")
    return (Path(generator_module(pkg).__file__).parent / name).read_text()


# --------------------------------------------------------------------------------------------
# Built-in generators: size parameter -> PDDL problem text. One function per domain.
# --------------------------------------------------------------------------------------------


def _gen_blocksworld(size: int, seed: int) -> str:
    """``size`` blocks, uniform random initial state, random single-tower goal (IPC style)."""
    mod = generator_module("blocks_4")
    return mod.make_problem(num_blocks=size, seed=seed, goal="tower")


def _gen_gripper(size: int, seed: int) -> str:
    """``size`` balls, all in room A, to room B (the family is deterministic; seed unused)."""
    mod = generator_module("gripper")
    return mod.make_problem(num_balls=size)


def _gen_logistics(size: int, seed: int) -> str:
    """``size`` goals, IPC 2000 structure as in the SATr splits (``probLOGISTICS-<g>-<i>``):
    ceil(g/3) cities (at least 2) with 2 locations each, 3 packages per city, one truck per city,
    1 airplane up to 3 cities and 2 above."""
    mod = generator_module("logistics")
    cities = max(2, -(-size // 3))
    return mod.make_problem(
        num_cities=cities,
        city_size=2,
        num_packages=3 * cities,
        num_airplanes=1 if cities <= 3 else 2,
        seed=seed,
        num_trucks=cities,
        num_goals=size,
        style="00",
    )


def _grid_shapes(cells: int) -> list[tuple[int, int]]:
    """All (width, height) with width * height == cells, most square first."""
    shapes = [(w, cells // w) for w in range(1, cells + 1) if cells % w == 0]
    return sorted(shapes, key=lambda wh: (abs(wh[0] - wh[1]), wh))


def _gen_visitall(size: int, seed: int) -> str:
    """``size`` cells: a w x h grid (w * h = size; shape drawn from the seed among the
    factorisations, squarest first as in SATr's ``wXXhYY``), all cells goals, random start cell."""
    mod = generator_module("visitall")
    shapes = _grid_shapes(size)
    rng = random.Random(seed)
    width, height = shapes[rng.randrange(min(len(shapes), 2))]
    return mod.make_problem(width=width, height=height, goal_ratio=1.0, seed=seed)


GENERATORS: dict[str, tuple[Callable[[int, int], str], str, str]] = {
    # domain: (generator, domain file (package resource), size parameter name)
    "blocksworld": (_gen_blocksworld, "blocks_4/domain.pddl", "blocks"),
    "gripper": (_gen_gripper, "gripper/domain.pddl", "balls"),
    "logistics": (_gen_logistics, "logistics/domain_logistics00.pddl", "goals"),
    "visitall": (_gen_visitall, "visitall/domain.pddl", "cells"),
}


def _seed_for(base_seed: int, domain: str, split: str, size: int, index: int) -> int:
    """Deterministic per-problem seed, independent of the order in which problems are made."""
    return derive_seed(base_seed, domain, split, size, index)


def _write_problem(out: Path, domain: str, split: str, name: str, text: str, size_param: str,
                   size: int | None, seed: int | None, origin: str,
                   reference_cost: float | None = None) -> ProblemEntry:
    """Write ``<domain>/<split>/<name>.pddl`` under ``out`` and return its manifest entry."""
    rel = f"{domain}/{split}/{name}.pddl"
    (out / rel).write_text(text)
    return ProblemEntry(domain=domain, split=split, problem=name, path=rel, size_param=size_param,
                        size=size, objects=count_objects(text), seed=seed, origin=origin,
                        reference_cost=reference_cost)


def generate_suite(params: dict, out: Path) -> list[ProblemEntry]:
    """Write the ``generated`` suite to ``out`` and return its manifest entries.

    Reads ``suites.generated.domains.<domain>.sizes.<split>`` (list of size values) and
    ``suites.generated.domains.<domain>.count.<split>`` (problems per size), and ``seed``.
    Duplicate problems (same text, e.g. Gripper, which has one problem per size) are written once.

    Raises:
        ConfigError: an unknown domain name (lists the known ones).
    """
    base_seed = int(get(params, "seed"))
    domains_cfg = get(params, "suites.generated.domains")
    entries: list[ProblemEntry] = []
    for domain, cfg in domains_cfg.items():
        if domain not in GENERATORS:
            raise ConfigError(
                f"params: suites.generated.domains.{domain}: no generator; known: {sorted(GENERATORS)}"
            )
        gen, domain_res, size_param = GENERATORS[domain]
        (out / domain).mkdir(parents=True, exist_ok=True)
        (out / domain / "domain.pddl").write_text(_domain_text(domain_res))
        seen_texts: set[str] = set()
        for split in SPLITS:
            sizes = (cfg.get("sizes") or {}).get(split) or []
            count = int((cfg.get("count") or {}).get(split, 1))
            (out / domain / split).mkdir(parents=True, exist_ok=True)
            for size in sizes:
                for i in range(count):
                    seed = _seed_for(base_seed, domain, split, size, i)
                    text = gen(int(size), seed)
                    if text in seen_texts:
                        continue
                    seen_texts.add(text)
                    name = f"{domain}-{size_param}{int(size):03d}-{i}"
                    origin = f"{GEN_ROOT}.{domain_res.split('/')[0]}.generator"
                    entries.append(_write_problem(out, domain, split, name, text, size_param, int(size), seed, origin))
    return entries


# --------------------------------------------------------------------------------------------
# External suites
# --------------------------------------------------------------------------------------------

#: Split folders of each external layout: (folder relative to the domain dir, split name).
LAYOUTS: dict[str, list[tuple[str, str]]] = {
    "satr": [(s, s) for s in SPLITS],
    "ipc2023": [
        ("training/easy", "train"),
        ("testing/easy", "test-easy"),
        ("testing/medium", "test-medium"),
        ("testing/hard", "test-hard"),
    ],
}

_SIZE_RE = re.compile(r"(\d+)")

#: Files of reference plan costs an external suite may ship at its root (IPC 2023 Learning Track),
#: each a JSON object ``{"<domain>/testing/<level>/<problem>.pddl": cost or null}``.
REFERENCE_COST_FILES = ("upper_bounds.json", "upper_bounds_from_ipc_planners.json")


def reference_costs(src: Path, errors: list[str]) -> dict[str, float]:
    """Reference cost per problem of the suite at ``src``: the minimum over the files of
    :data:`REFERENCE_COST_FILES` that exist of their non-null costs, keyed by the problem's path
    relative to ``src`` (``blocksworld/testing/easy/p01.pddl``). This is C* of the IPC 2023
    Learning Track's quality score (the track's scoring: C*/C per solved problem against the best
    known cost; its repository ships these two upper-bound files). A file that is not a JSON object
    of non-negative numbers or nulls is appended to ``errors`` (one line naming it)."""
    best: dict[str, float] = {}
    for name in REFERENCE_COST_FILES:
        f = src / name
        if not f.is_file():
            continue
        try:
            data = json.loads(f.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            errors.append(f"{f}: not readable as JSON ({exc})")
            continue
        if not isinstance(data, dict):
            errors.append(f"{f}: expected a JSON object of problem path -> cost, got {type(data).__name__}")
            continue
        for key, cost in data.items():
            if cost is None:
                continue
            if isinstance(cost, bool) or not isinstance(cost, (int, float)) or cost < 0:
                errors.append(f"{f}: {key!r}: cost {cost!r} is not a non-negative number or null")
                break
            best[key] = min(best.get(key, float(cost)), float(cost))
    return best


def _size_from_name(name: str) -> int | None:
    """First integer in a problem name (e.g. ``probBLOCKS-12-0`` -> 12, ``balls09`` -> 9)."""
    m = _SIZE_RE.search(name)
    return int(m.group(1)) if m else None


def _external_files(suite: str, src: Path, domains: list[str], limit: int | None,
                    errors: list[str], fresh: frozenset[tuple[str, str]] = frozenset()
                    ) -> list[tuple[str, str, list[Path]]]:
    """(domain, split, problem files) of an external suite in its layout, sorted by size then name;
    a missing domain file or split folder is appended to ``errors`` (one line each). ``limit``
    (``suites.<suite>.max_per_split``) keeps the ``limit`` smallest problems of each *evaluation*
    split only: a training split (:data:`planarena.config.TRAIN_SPLITS`) is never cut, since the
    methods train on all of it (and the R-GNN policies move its largest problems to validation).
    ``limit`` is a number for every evaluation split, or a mapping ``{split: number or None}``
    (a split it does not name, or names with None, is kept whole; 0 keeps none of it); a split's
    value may also be ``{spread: n}``: ``n`` problems evenly spaced over the split in size order,
    its smallest and largest included (:func:`spread_cut`), instead of the ``n`` smallest. The
    ``(domain, split)`` pairs in ``fresh`` are generated instead (:func:`fresh_splits`): their
    folders are neither read nor required."""
    found = []
    for domain in domains:
        ddir = src / domain
        if not ddir.is_dir():
            errors.append(f"{ddir}: no such domain folder (suites.{suite}.domains lists {domain!r})")
            continue
        if not (ddir / "domain.pddl").is_file():
            what = "is a directory, expected" if (ddir / "domain.pddl").is_dir() else "missing:"
            errors.append(f"{ddir / 'domain.pddl'}: {what} the domain file of {domain!r}")
        for folder, split in LAYOUTS[suite]:
            if (domain, split) in fresh:
                continue
            sdir = ddir / folder
            if not sdir.is_dir():
                errors.append(f"{sdir}: missing split folder {folder!r} (the {suite} layout has "
                              f"{', '.join(f for f, _ in LAYOUTS[suite])} under each domain)")
                continue
            files = [p for p in sdir.iterdir() if p.name.endswith((".pddl", ".pddl.gz"))]
            files.sort(key=lambda p: (_size_from_name(p.name) or 0, p.name))
            cap = limit.get(split) if isinstance(limit, dict) else limit
            if cap is None or split in TRAIN_SPLITS:
                found.append((domain, split, files))
            elif isinstance(cap, dict):
                found.append((domain, split, spread_cut(files, cap, f"suites.{suite}.max_per_split.{split}")))
            else:
                found.append((domain, split, files[: int(cap)]))
    return found


def spread_cut(items: list, cap: dict, param: str) -> list:
    """``cap = {"spread": n}``: ``n`` of ``items`` (sorted by size) evenly spaced, the first and the
    last included: indices ``round(i * (len - 1) / (n - 1))`` for ``i < n``; all of them when
    ``n >= len``; the middle one when ``n == 1``.

    Raises:
        ConfigError: another key, or ``n`` not a positive integer (names ``param``).
    """
    n = cap.get("spread") if set(cap) == {"spread"} else None
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"params: {param}={cap!r}; expected a number of smallest problems, null, or "
                          f"{{spread: n}} with n a positive integer")
    if n >= len(items):
        return list(items)
    if n == 1:
        return [items[(len(items) - 1) // 2]]
    picks = sorted({round(i * (len(items) - 1) / (n - 1)) for i in range(n)})
    return [items[i] for i in picks]


def import_external(suite: str, params: dict, out: Path) -> tuple[list[ProblemEntry], list[str]]:
    """Copy an external suite (``suites.<suite>.path``) into ``out``; return its entries (those of
    readable files of readable domains) and one error line per bad file or missing folder.

    ``suites.<suite>.max_per_split`` (None: all) caps each evaluation split at its smallest
    problems; the training split is always imported whole (:func:`_external_files`).

    Every file is read and checked first (:func:`planarena.core.pddl.read_pddl_file`: not a
    directory, not empty, not binary, UTF-8, balanced parentheses); the copies are decompressed.
    (:func:`_check_parses` then gives a domain that declares no ``:typing`` while its problems type
    their objects, as in the IPC 2023 Learning Track's Blocksworld, the requirement.) For
    ``ipc2023`` each entry carries its ``reference_cost`` (:func:`reference_costs`; ``None`` for
    the training problems, which have none).

    Raises:
        ConfigError: ``suites.<suite>.path`` is unset or not a directory (names the param).
    """
    raw_path = get(params, f"suites.{suite}.path", None)
    if not raw_path:
        raise ConfigError(f"params: set `suites.{suite}.path` to the directory of the {suite} suite")
    src = Path(raw_path).expanduser()
    if not src.is_dir():
        raise ConfigError(
            f"params: suites.{suite}.path={raw_path!r} is not a directory; "
            f"set `suites.{suite}.path` (e.g. dvc exp run -S suites.{suite}.path=/abs/dir)"
        )
    domains = get(params, f"suites.{suite}.domains", None) or sorted(
        d.name for d in src.iterdir() if (d / "domain.pddl").exists()
    )
    if not domains:
        raise ConfigError(f"{src}: no <domain>/domain.pddl below suites.{suite}.path")
    errors: list[str] = []
    fresh = fresh_splits(params, suite)
    unknown = sorted({d for d, _ in fresh} - set(domains))
    if unknown:
        raise ConfigError(f"params: suites.{suite}.generate.domains names {unknown}, which "
                          f"suites.{suite}.domains does not list")
    found = _external_files(suite, src, list(domains), get(params, f"suites.{suite}.max_per_split", None),
                            errors, frozenset(fresh))
    costs = reference_costs(src, errors) if suite == "ipc2023" else {}
    entries: list[ProblemEntry] = []
    for domain, split, files in found:
        (out / domain / split).mkdir(parents=True, exist_ok=True)
        for f in files:
            try:
                text = read_pddl_file(f, "problem")
            except PDDLError as exc:
                errors.append(str(exc))
                continue
            name = f.name.removesuffix(".gz").removesuffix(".pddl")
            origin = str(f.relative_to(src))
            entries.append(_write_problem(out, domain, split, name, text, "name",
                                          _size_from_name(name), None, origin,
                                          costs.get(origin.removesuffix(".gz"))))
    for domain in dict.fromkeys(d for d, _, _ in found):
        user_file = src / domain / "domain.pddl"
        try:
            text = read_pddl_file(user_file, "domain")
        except PDDLError as exc:
            errors.append(str(exc))
            continue
        (out / domain / "domain.pddl").write_text(text)
    for domain in dict.fromkeys(d for d, _ in fresh):
        if (out / domain / "domain.pddl").exists():
            entries += _generate_fresh(suite, domain, fresh, out, src / domain / "domain.pddl", errors)
    bad_domains = {d for d, _, _ in found if not (out / d / "domain.pddl").exists()}
    return [e for e in entries if e.domain not in bad_domains], errors


# --------------------------------------------------------------------------------------------
# Fresh splits of an external suite: instances no report has seen
# --------------------------------------------------------------------------------------------


def fresh_splits(params: dict, suite: str) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """``{(domain, split): [(size, problem seed), ...]}`` of the splits of external suite
    ``suite`` that are generated fresh instead of read from its folder:
    ``suites.<suite>.generate: {seed: S, domains: {<domain>: {sizes: {<split>: [...]},
    count: {<split>: n}}}}`` (the shape of ``suites.generated.domains``; ``count`` defaults to 1).
    Each problem's seed derives from ``S`` (not the run's ``seed``: a new ``S`` gives instances
    that no earlier run or report has seen), the domain, split, size and index. For a claim that
    trains as a paper does (its published training split) and tests on new instances of the
    same domain (``satr``: fresh extrapolation problems).

    Raises:
        ConfigError: ``generate`` is set without an integer ``seed``, names a domain without a
            generator (:data:`GENERATORS`) or a split the suite does not have.
    """
    cfg = get(params, f"suites.{suite}.generate", None)
    if not cfg:
        return {}
    where = f"params: suites.{suite}.generate"
    if not isinstance(cfg, dict) or not isinstance(cfg.get("seed"), int) or not isinstance(cfg.get("domains"), dict):
        raise ConfigError(f"{where}: expected {{seed: <int>, domains: {{<domain>: {{sizes: {{<split>: [...]}}, "
                          f"count: {{<split>: n}}}}}}}}, got {cfg!r}")
    splits = [s for _, s in LAYOUTS[suite]]
    out: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for domain, dcfg in cfg["domains"].items():
        if domain not in GENERATORS:
            raise ConfigError(f"{where}.domains.{domain}: no generator; known: {sorted(GENERATORS)}")
        for split, sizes in ((dcfg or {}).get("sizes") or {}).items():
            if split not in splits:
                raise ConfigError(f"{where}.domains.{domain}.sizes.{split}: the {suite} suite's splits are {splits}")
            count = int(((dcfg or {}).get("count") or {}).get(split, 1))
            out[(domain, split)] = [(int(size), derive_seed(cfg["seed"], domain, split, int(size), i))
                                    for size in sizes for i in range(count)]
    return out


def _generate_fresh(suite: str, domain: str, fresh: dict, out: Path, suite_domain: Path,
                    errors: list[str]) -> list[ProblemEntry]:
    """Write the fresh splits of ``domain`` (:func:`fresh_splits`) under ``out`` in the dialect of
    the suite's domain file (``out/<domain>/domain.pddl``, a copy of ``suite_domain``): the
    generator's domain must have the same vocabulary (:func:`planarena.core.strips.vocabulary`);
    where it types objects and the suite's domain does not, the types become initial atoms
    (:func:`planarena.core.strips.untyped_problem_text`: SATr's VisitAll reads ``(place c)`` facts);
    a problem names the suite's domain.
    A vocabulary mismatch is one line in ``errors``, naming both domains."""
    from planarena.core.strips import untyped_problem_text, vocabulary

    gen, resource, size_param = GENERATORS[domain]
    gen_domain_file = out / domain / ".generator-domain.pddl"
    gen_domain_file.write_text(_domain_text(resource))
    try:
        gen_domain, ours = parse_domain(gen_domain_file), parse_domain(out / domain / "domain.pddl")
    except PDDLError as exc:
        errors.append(str(exc))
        return []
    if vocabulary(gen_domain) != vocabulary(ours):
        (gp, ga), (sp, sa) = vocabulary(gen_domain), vocabulary(ours)
        errors.append(f"{suite_domain}: suites.{suite}.generate.domains.{domain}: the generator's domain "
                      f"({resource}) reads other predicates or actions: {sorted((gp ^ sp) | (ga ^ sa))}")
        return []
    predicates = {n for n, _ in vocabulary(ours)[0]}
    typed = "(:types" in gen_domain_file.read_text().lower() and \
        "(:types" not in (out / domain / "domain.pddl").read_text().lower()
    entries = []
    origin = f"generated:{GEN_ROOT}.{resource.split('/')[0]}.generator"
    for (d, split), problems in fresh.items():
        if d != domain:
            continue
        (out / domain / split).mkdir(parents=True, exist_ok=True)
        seen: set[str] = set()
        for i, (size, seed) in enumerate(problems):
            text = gen(size, seed)
            if text in seen:
                continue
            seen.add(text)
            name = f"{domain}-{size_param}{size:03d}-fresh{i}"
            if typed:
                tmp = out / domain / split / f"{name}.typed.pddl"
                tmp.write_text(text)
                text = untyped_problem_text(parse_problem_of(gen_domain, tmp), ours.get_name(), predicates)
                tmp.unlink()
            else:   # the suite's name for the same domain
                text = re.sub(r"\(\s*:domain\s+[^\s()]+\s*\)", f"(:domain {ours.get_name()})", text, count=1)
            entries.append(_write_problem(out, domain, split, name, text, size_param, size, seed, origin))
    gen_domain_file.unlink()
    return entries


def import_folders(params: dict, out: Path) -> tuple[list[ProblemEntry], list[str], dict[str, Path], dict[str, Path]]:
    """Copy the ``dir`` suite (a user's domain folders, :mod:`planarena.datasets.folders`) into
    ``out``; return its entries, one error line per bad file or folder, and the user's domain file
    per domain and user's file per copied problem path (for the parse check's messages).
    ``suites.dir.max_per_split`` caps each evaluation split at its smallest problems, as for the
    other external suites; ``suites.dir.max_train`` (None: all) keeps the smallest training
    problems only: the smoke profile's cap, so that a smoke run on a user's domain checks the
    pipeline in minutes whatever the folder holds.

    Raises:
        ConfigError: ``suites.dir.path`` unset, or bad ``suites.dir.split`` values.
    """
    errors: list[str] = []
    domains = read_folders(params, errors)
    limit = get(params, "suites.dir.max_per_split", None)
    max_train = get(params, "suites.dir.max_train", None)
    if max_train is not None and (isinstance(max_train, bool) or not isinstance(max_train, int) or max_train < 1):
        raise ConfigError(f"params: suites.dir.max_train must be an integer >= 1 or null, got {max_train!r}")
    entries: list[ProblemEntry] = []
    user_domains: dict[str, Path] = {}
    user_files: dict[str, Path] = {}
    for d in domains:
        try:
            text = read_pddl_file(d.domain_file, "domain")
        except PDDLError as exc:
            errors.append(str(exc))
            continue
        (out / d.name).mkdir(parents=True, exist_ok=True)
        (out / d.name / "domain.pddl").write_text(text)
        user_domains[d.name] = d.domain_file
        by_split: dict[str, list[tuple[int, str, str, Path]]] = {}
        for prob in d.problems:
            try:
                ptext = read_pddl_file(prob.file, "problem")
            except PDDLError as exc:
                errors.append(str(exc))
                continue
            name = prob.file.name.removesuffix(".gz").removesuffix(".pddl")
            by_split.setdefault(prob.split, []).append((count_objects(ptext), name, ptext, prob))
        for split, items in by_split.items():
            items.sort(key=lambda it: (it[0], natural_key(it[1])))
            cap = limit.get(split) if isinstance(limit, dict) else limit
            if cap is not None and split not in TRAIN_SPLITS:
                items = items[: int(cap)]
            if max_train is not None and split in TRAIN_SPLITS:
                items = items[:max_train]
            (out / d.name / split).mkdir(parents=True, exist_ok=True)
            for objects, name, ptext, prob in items:
                entry = _write_problem(out, d.name, split, name, ptext, "objects", objects, None, prob.origin)
                user_files[entry.path] = prob.file
                entries.append(entry)
        rule = "split by size (object count)" if d.layout == "flat" else f"{d.layout} split folders"
        print(f"generate: {d.domain_file}: domain {d.name!r}, {len(d.problems)} problems, {rule}")
    return entries, errors, user_domains, user_files


def _check_parses(entries: list[ProblemEntry], out: Path, origin_root: Path | None,
                  user_domains: dict[str, Path] | None = None, user_files: dict[str, Path] | None = None) -> list[str]:
    """Parse every domain and problem of ``out`` once (pymimir, uncached: the files were just
    written); one error line per bad file, naming the user's file (``origin_root / entry.origin``
    for external suites; ``user_domains[domain]`` and ``user_files[entry.path]`` where given). A
    bad domain is reported once and its problems are not parsed. A domain copy that lacks
    ``:typing`` while a problem types its objects gets it added, with a warning naming the user's
    domain file (:func:`planarena.core.pddl.needs_typing`)."""
    errors: list[str] = []
    domains: dict[str, object] = {}
    user_domains, user_files = user_domains or {}, user_files or {}
    for e in tqdm(entries, desc="check PDDL", leave=False):
        domain_copy = out / e.domain / "domain.pddl"
        shown_domain = user_domains.get(e.domain) or (origin_root / e.domain / "domain.pddl" if origin_root
                                                      else domain_copy)
        if e.domain not in domains:
            try:
                domains[e.domain] = parse_domain(domain_copy)
            except PDDLError as exc:
                domains[e.domain] = None
                errors.append(str(exc.renamed(shown_domain, domain_copy)))
        if domains[e.domain] is None:
            continue
        try:
            parse_problem_of(domains[e.domain], out / e.path)
        except PDDLError as exc:
            typed = needs_typing(exc, domain_copy.read_text())
            if typed is not None:  # e.g. IPC 2023 Blocksworld: read it as FD and VAL do
                print(f"warning: {shown_domain}: declares no :typing but its problems type their objects; "
                      f"copied with :typing added (Fast Downward and VAL read it so)", file=sys.stderr)
                domain_copy.write_text(typed)
                domains[e.domain] = parse_domain(domain_copy)
                try:
                    parse_problem_of(domains[e.domain], out / e.path)
                    continue
                except PDDLError as again:
                    exc = again
            shown = user_files.get(e.path) or (origin_root / e.origin if origin_root else out / e.path)
            errors.append(str(exc.renamed(shown, out / e.path)))
    return errors


def run_stage(params: dict, layout: Layout) -> list[ProblemEntry]:
    """The ``generate`` stage: build ``data/problems`` for ``params['suite']`` and check every file.

    Every domain and problem is parsed once (pymimir) so that a malformed file stops the stage here,
    before any planner runs, with one line per bad file naming the user's file. The new suite is
    built next to ``data/problems`` and replaces it only when every file is good, so a bad input
    never destroys the problems of the last good run.

    Raises:
        ConfigError: unknown suite or bad suite params.
        PDDLError: a domain or problem file does not parse (every bad file, one line each).
    """
    suite = get(params, "suite")
    final = layout.problems
    out = final.with_name(final.name + ".partial")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if suite == "generated":
        entries, errors = generate_suite(params, out), []
        origin_root = None
    elif suite in LAYOUTS:
        entries, errors = import_external(suite, params, out)
        origin_root = Path(get(params, f"suites.{suite}.path")).expanduser()
    elif suite == "dir":
        entries, errors, user_domains, user_files = import_folders(params, out)
        origin_root = None
    else:
        raise ConfigError(f"params: suite={suite!r} unknown; use one of {['generated', *sorted(LAYOUTS), 'dir']} "
                          f"or a folder path (-S suite=/abs/path/to/your/domain)")
    if suite != "dir":
        user_domains, user_files = {}, {}
    errors += _check_parses(entries, out, origin_root, user_domains, user_files)
    if errors:
        shutil.rmtree(out)
        raise PDDLError("\n".join(errors + [f"generate: {len(errors)} bad input(s); "
                                             f"{final} is left as it was"]))
    write_jsonl(out / "manifest.jsonl", [e.to_dict() for e in entries])
    if final.exists():
        shutil.rmtree(final)
    out.rename(final)
    counts: dict[tuple[str, str], int] = {}
    for e in entries:
        counts[(e.domain, e.split)] = counts.get((e.domain, e.split), 0) + 1
    for (d, s), n in sorted(counts.items()):
        print(f"generate: {d}/{s}: {n} problems")
    return entries


__all__ = ["fresh_splits", "generate_suite", "import_external", "import_folders", "reference_costs", "run_stage", "GENERATORS", "LAYOUTS", "PDDLError"]


def planned_problems(params: dict) -> dict[tuple[str, str], list[str]] | None:
    """The problems the dataset stage would list, per (domain, split), without writing or reading
    any problem: names from the ``generated`` suite's sizes and counts (before its de-duplication of
    identical texts, so an upper bound there), or from the file names of an external suite
    (``satr``, ``ipc2023``) with its ``max_per_split`` cut. The design of a claim's power check
    (:mod:`planarena.claims.power`). None for a suite whose problems it cannot know without reading
    them (``dir``) or an external suite whose folder is absent."""
    suite = str(get(params, "suite", "generated"))
    if suite == "generated":
        out: dict[tuple[str, str], list[str]] = {}
        for domain, cfg in (get(params, "suites.generated.domains", None) or {}).items():
            for split in SPLITS:
                sizes = (cfg.get("sizes") or {}).get(split) or []
                count = int((cfg.get("count") or {}).get(split, 1))
                out[(domain, split)] = [f"{domain}-{int(s):03d}-{i}" for s in sizes for i in range(count)]
        return out
    if suite not in LAYOUTS:
        return None
    raw = get(params, f"suites.{suite}.path", None)
    src = Path(str(raw)).expanduser() if raw else None
    if src is None or not src.is_dir():
        return None
    domains = get(params, f"suites.{suite}.domains", None) or sorted(
        d.name for d in src.iterdir() if (d / "domain.pddl").exists())
    fresh = fresh_splits(params, suite)
    found = _external_files(suite, src, list(domains), get(params, f"suites.{suite}.max_per_split", None), [],
                            frozenset(fresh))
    out = {(d, s): [f.name.removesuffix(".gz").removesuffix(".pddl") for f in files] for d, s, files in found}
    for (d, s), problems in fresh.items():
        out[(d, s)] = [f"{d}-{size:03d}-fresh{i}" for i, (size, _) in enumerate(problems)]
    return out
