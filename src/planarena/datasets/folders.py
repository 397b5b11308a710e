"""The ``dir`` suite: a user's own domains, as the field publishes them.

``suites.dir.path`` names one folder or a list of folders (``-S suite=/abs/path`` is short for
``suite: dir`` with that path, :func:`planarena.config.resolve_profile`). Each folder is either

- a **domain folder**: one domain file (``domain.pddl``, or the one ``*.pddl`` file whose name
  contains ``domain``) beside its problems; or
- a **folder of domain folders** (every subfolder that is a domain folder is a domain).

The domain is named after its folder. Its problems are read in one of three layouts:

- split folders ``train/``, ``validation/``, ``interpolation/``, ``extrapolation/`` (the SATr
  layout; ``train`` is required, the others are optional);
- the IPC 2023 Learning Track layout ``training/easy`` and ``testing/{easy,medium,hard}``;
- **flat**: every other ``*.pddl`` (or ``*.pddl.gz``) file of the folder, split by size
  (:func:`split_by_size`): ordered by object count (ties by name, natural order), the smallest
  ``train_range`` share is the training range, of which every ``interpolation_every``-th problem
  is held out as ``interpolation``; the next ``validation`` share is ``validation``; the rest, the
  largest problems, is ``extrapolation``. This mirrors the SATr splits (Fritzsche, Gestrin, Seipp,
  AAAI-26, Table C.1): interpolation sizes lie inside the training range, validation just above it,
  extrapolation beyond.

Every problem's size is its object count (``size_param: objects``); the manifest records each
problem's split and its origin (``<folder name>/<path in the folder>``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from planarena.config import SPLITS, TRAIN_SPLITS, ConfigError, get
from planarena.core.pddl import PDDLError, count_objects, read_pddl_file

#: params of the flat-folder split (``suites.dir.split``) and their defaults
SPLIT_DEFAULTS = {"train_range": 0.6, "interpolation_every": 5, "validation": 0.1}

#: the IPC 2023 Learning Track's split folders -> split names (as :data:`planarena.datasets.suites.LAYOUTS`)
IPC_FOLDERS = (("training/easy", "train"), ("testing/easy", "test-easy"),
               ("testing/medium", "test-medium"), ("testing/hard", "test-hard"))

_PDDL_SUFFIXES = (".pddl", ".pddl.gz")
_NAME_RE = re.compile(r"[^a-z0-9_-]+")


@dataclass(frozen=True)
class FolderProblem:
    """One problem file of a user's domain folder: its split, the user's file and its origin
    (``<folder name>/<relative path>``, what the manifest records)."""

    split: str
    file: Path
    origin: str


@dataclass(frozen=True)
class FolderDomain:
    """A domain read from a user's folder: harness name, the user's domain file, its layout
    (``flat``, ``splits`` or ``ipc2023``) and its problems."""

    name: str
    folder: Path
    domain_file: Path
    layout: str
    problems: tuple[FolderProblem, ...]


def _is_pddl(p: Path) -> bool:
    return p.is_file() and p.name.lower().endswith(_PDDL_SUFFIXES)


def _stem(p: Path) -> str:
    name = p.name
    for suffix in (".gz", ".pddl"):
        name = name.removesuffix(suffix)
    return name


def natural_key(name: str) -> tuple:
    """Sort key that orders ``p2`` before ``p10`` (digit runs compared as numbers)."""
    return tuple(int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", name))


def domain_file_of(folder: Path, errors: list[str]) -> Path | None:
    """The domain file of ``folder``: ``domain.pddl`` (or ``.pddl.gz``), else the one PDDL file
    whose name contains ``domain``; None when there is none. Several candidates (per-problem
    domain files, as some IPC folders ship) append one error line naming them."""
    for name in ("domain.pddl", "domain.pddl.gz"):
        if (folder / name).is_file():
            return folder / name
    found = sorted(p for p in folder.iterdir() if _is_pddl(p) and "domain" in p.name.lower())
    if len(found) > 1:
        errors.append(f"{folder}: {len(found)} domain files ({', '.join(p.name for p in found[:4])}"
                      f"{', ...' if len(found) > 4 else ''}); planarena reads one domain file per folder "
                      f"(per-problem domain files are not supported): keep one and name it domain.pddl")
        return None
    return found[0] if found else None


def split_by_size(problems: list[tuple[int, str]], train_range: float = 0.6, interpolation_every: int = 5,
                  validation: float = 0.1) -> list[str]:
    """The split of each problem of a flat folder, in the order given.

    Args:
        problems: ``(objects, name)`` per problem.
        train_range: share (0-1] of the problems, smallest first, that form the training range.
        interpolation_every: every k-th problem of the training range (k-th, 2k-th, ...) is held out
            as ``interpolation``; 0 holds none out. The smallest problem is always ``train``.
        validation: share [0-1) of the problems, right above the training range, for ``validation``.

    Returns:
        One of ``train``, ``interpolation``, ``validation``, ``extrapolation`` per problem. With
        n problems: ``round(train_range * n)`` (at least 1) in the training range, then
        ``round(validation * n)`` validation, the rest extrapolation.

    Raises:
        ConfigError: a share outside its range or a negative ``interpolation_every``.
    """
    if not 0 < float(train_range) <= 1:
        raise ConfigError(f"params: suites.dir.split.train_range={train_range!r} must be in (0, 1]")
    if not 0 <= float(validation) < 1 or float(train_range) + float(validation) > 1:
        raise ConfigError(f"params: suites.dir.split.validation={validation!r} must be in [0, 1) and "
                          f"train_range + validation <= 1")
    if isinstance(interpolation_every, bool) or int(interpolation_every) < 0:
        raise ConfigError(f"params: suites.dir.split.interpolation_every={interpolation_every!r} must be "
                          f"a non-negative integer")
    n = len(problems)
    order = sorted(range(n), key=lambda i: (problems[i][0], natural_key(problems[i][1])))
    n_range = max(1, round(float(train_range) * n)) if n else 0
    n_val = min(n - n_range, round(float(validation) * n))
    every = int(interpolation_every)
    out = [""] * n
    for rank, i in enumerate(order):
        if rank < n_range:
            out[i] = "interpolation" if every and rank > 0 and (rank + 1) % every == 0 else "train"
        elif rank < n_range + n_val:
            out[i] = "validation"
        else:
            out[i] = "extrapolation"
    return out


def _folder_problems(folder: Path, domain_file: Path, origin: str, rule: dict,
                     errors: list[str]) -> tuple[str, list[FolderProblem]]:
    """``(layout, problems)`` of one domain folder (see the module docstring)."""
    def files(d: Path) -> list[Path]:
        return sorted((p for p in d.iterdir() if _is_pddl(p)), key=lambda p: natural_key(p.name))

    split_dirs = [(s, s) for s in SPLITS if (folder / s).is_dir()]
    ipc_dirs = [(f, s) for f, s in IPC_FOLDERS if (folder / f).is_dir()]
    layout, pairs = ("splits", split_dirs) if split_dirs else ("ipc2023", ipc_dirs) if ipc_dirs else ("flat", [])
    if layout != "flat":
        if not any(s in TRAIN_SPLITS for _, s in pairs):
            first = "train/" if layout == "splits" else "training/easy/"
            errors.append(f"{folder}: has split folders but no {first} (the problems the methods learn from)")
        return layout, [FolderProblem(split, p, f"{origin}/{sub}/{p.name}")
                        for sub, split in pairs for p in files(folder / sub)]
    flat = [p for p in files(folder) if p != domain_file]
    if not flat:
        errors.append(f"{folder}: no problem files (*.pddl) beside {domain_file.name}")
        return layout, []
    sized = []
    for p in flat:
        try:
            sized.append((count_objects(read_pddl_file(p, "problem")), _stem(p)))
        except PDDLError as exc:
            errors.append(str(exc))
            sized.append((0, _stem(p)))
    splits = split_by_size(sized, **rule)
    return layout, [FolderProblem(s, p, f"{origin}/{p.name}") for s, p in zip(splits, flat)]


def folder_name(name: str) -> str:
    """``name`` as a domain's folder name in the harness: lower case, each run of characters other
    than ``a-z0-9_-`` one ``-`` (``Blocks World`` -> ``blocks-world``); ``domain`` if none is left."""
    return _NAME_RE.sub("-", name.lower()).strip("-") or "domain"


def _domain_name(folder: Path) -> str:
    return folder_name(folder.resolve().name)


def read_folders(params: dict, errors: list[str]) -> list[FolderDomain]:
    """The domains of ``suites.dir.path`` (one folder or a list), each with its problems and their
    splits; every missing folder, folder without a domain file, ambiguous domain file, duplicate
    domain name or unreadable problem appends one line to ``errors``. ``suites.dir.domains``
    (null: all) keeps the named domains only.

    Raises:
        ConfigError: ``suites.dir.path`` unset, or a bad ``suites.dir.split`` value.
    """
    raw = get(params, "suites.dir.path", None)
    if not raw:
        raise ConfigError("params: set `suites.dir.path` to your domain folder(s), or run with "
                          "`-S suite=/abs/path/to/folder`")
    paths = [raw] if isinstance(raw, (str, Path)) else list(raw)
    rule = {**SPLIT_DEFAULTS, **(get(params, "suites.dir.split", None) or {})}
    unknown = sorted(set(rule) - set(SPLIT_DEFAULTS))
    if unknown:
        raise ConfigError(f"params: suites.dir.split has unknown key(s) {unknown}; valid: {sorted(SPLIT_DEFAULTS)}")
    keep = get(params, "suites.dir.domains", None)
    found: list[tuple[Path, Path]] = []
    for raw_path in paths:
        top = Path(str(raw_path)).expanduser()
        if not top.is_dir():
            errors.append(f"{top}: not a folder (suites.dir.path)")
            continue
        before = len(errors)
        dfile = domain_file_of(top, errors)
        if dfile is not None:
            found.append((top, dfile))
            continue
        subs = [d for d in sorted(top.iterdir(), key=lambda d: natural_key(d.name)) if d.is_dir()]
        below = [(d, f) for d in subs if (f := domain_file_of(d, errors)) is not None]
        if not below and len(errors) == before:
            errors.append(f"{top}: no domain file (domain.pddl) here or in its subfolders")
        found.extend(below)
    domains: list[FolderDomain] = []
    seen: dict[str, Path] = {}
    for folder, dfile in found:
        name = _domain_name(folder)
        if keep is not None and name not in keep:
            continue
        if name in seen:
            errors.append(f"{folder}: domain name {name!r} is also the name of {seen[name]}; rename one folder")
            continue
        seen[name] = folder
        layout, problems = _folder_problems(folder, dfile, name, rule, errors)
        domains.append(FolderDomain(name, folder, dfile, layout, tuple(problems)))
    if keep is not None:
        for name in keep:
            if name not in seen:
                errors.append(f"suites.dir.domains lists {name!r}, which no folder of suites.dir.path holds")
    return domains


__all__ = ["FolderDomain", "FolderProblem", "SPLIT_DEFAULTS", "domain_file_of", "natural_key", "read_folders",
           "split_by_size"]
