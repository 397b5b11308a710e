"""Parameters: read ``params.yaml``, overlay the selected profile, expose typed paths.

``params.yaml`` holds the *default* profile's values at its top level. ``profile`` names the profile
to run; ``profiles.<name>`` holds a partial tree that is deep-merged over the top level when that
profile is selected (``profiles.default`` is empty). A profile therefore only changes param values,
never code paths (docs/params.md#profiles).

Precedence: a key set in the selected profile wins over the same key at the top level. So
``dvc exp run -S planners.astar_lmcut.time_limit=5`` changes the default profile; under
``-S profile=paper`` set ``profiles.paper.planners.astar_lmcut.time_limit`` instead if the paper
profile overrides that key. :func:`load_params` stops with one line naming that key rather than
drop such a value silently: with a profile other than ``default`` selected, a top-level leaf that
differs from the params file committed at git HEAD (the user's ``-S`` or edit) and that the
profile's overlay sets to another value is a :class:`ConfigError` (:func:`check_profile_overrides`).
"""

from __future__ import annotations

import copy
import functools
import importlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

#: libyaml's parser where PyYAML was built with it (params.yaml: 0.18 s with the pure-Python
#: parser, about 0.02 s with libyaml; both read YAML 1.1 the same way)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Canonical split names (Symmetry-Aware Transformer splits;
#: docs/concepts.md#problems-suites-and-splits).
SPLITS = ("train", "validation", "interpolation", "extrapolation")

#: Splits that models are trained on (the generated and SATr suites' ``train``, the IPC 2023
#: Learning Track's ``training/easy``, imported as ``train``). Every other split is held out: sums
#: and headline numbers are over held-out splits only (docs/concepts.md#problems-suites-and-splits).
TRAIN_SPLITS = frozenset({"train"})
#: the test split of the schema-learning data (``data/schema``, DIAS): its problems are planned
#: with learned domains and enter the coverage table beside the suite's splits
SCHEMA_SPLIT = "schema-test"


def is_held_out(split: str) -> bool:
    """Whether ``split`` is held out from training (validation, interpolation, extrapolation, or a
    suite's test splits), i.e. not in :data:`TRAIN_SPLITS`."""
    return split not in TRAIN_SPLITS


class ConfigError(ValueError):
    """A parameter is missing or has a value the harness cannot use. The message names the param."""


def deep_merge(base: dict, override: dict) -> dict:
    """Return a copy of ``base`` with ``override`` merged in recursively (dicts merge, rest replace)."""
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def resolve_profile(raw: dict) -> dict:
    """Apply ``profiles[raw['profile']]`` over the top-level params.

    Raises:
        ConfigError: the profile named by ``profile`` is not defined under ``profiles``.
    """
    name = raw.get("profile", "default")
    profiles = raw.get("profiles") or {}
    if name not in profiles:
        raise ConfigError(
            f"params: profile={name!r} is not defined; set `profile` to one of {sorted(profiles)}"
        )
    merged = deep_merge({k: v for k, v in raw.items() if k != "profiles"}, profiles[name] or {})
    merged["profile"] = name
    return with_twins(suite_shorthand(merged))


def with_twins(params: dict) -> dict:
    """``params`` with every learned row's untrained twin in ``methods``
    (:func:`planarena.methods.with_twins`; docs/concepts.md#untrained-twins): resolving a profile
    is the one place twins are made, so every stage, the report, the claim workspaces and the CLI
    see the same rows. ``planarena.methods`` is imported by name: the data stages read no
    ``methods`` params, so the twin code is no input of theirs (:mod:`planarena.runner.inputs`
    hashes the import statements of a stage's modules; the stages that read ``methods`` import
    ``planarena.methods`` themselves)."""

    return importlib.import_module("planarena.methods").with_twins(params)


def suite_shorthand(params: dict) -> dict:
    """``suite: <a folder path>`` (``-S suite=/abs/path/to/domain``: a value with a ``/`` or
    starting with ``~`` or ``.``) is short for ``suite: dir`` with ``suites.dir.path`` set to it
    (:mod:`planarena.datasets.folders`); ``params`` is changed in place and returned."""
    suite = params.get("suite")
    if isinstance(suite, str) and ("/" in suite or suite.startswith(("~", "."))):
        suites = params.setdefault("suites", {}) or {}
        params["suites"] = suites
        suites["dir"] = {**(suites.get("dir") or {}), "path": suite}
        params["suite"] = "dir"
    return params


def _leaves(tree: dict, prefix: tuple = ()) -> dict[tuple, Any]:
    """Key path -> value of every leaf of ``tree`` (a non-dict value or an empty dict)."""
    out: dict[tuple, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out.update(_leaves(value, prefix + (key,)))
        else:
            out[prefix + (key,)] = value
    return out


def _overlay_key(overlay: dict, parts: tuple) -> tuple | None:
    """The key path of ``overlay`` that replaces the top-level leaf at ``parts`` under
    :func:`deep_merge`: ``parts`` itself when the overlay has it, or a prefix that the overlay sets
    to a non-dict value (replacing the whole subtree); None when the leaf survives the merge."""
    node: Any = overlay
    for i, part in enumerate(parts):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
        if i < len(parts) - 1 and not isinstance(node, dict):
            return parts[: i + 1]
    return parts


def _at(tree: dict, parts: tuple) -> Any:
    for part in parts:
        tree = tree[part]
    return tree


def check_profile_overrides(raw: dict, committed: dict | None, path: str = "params.yaml") -> None:
    """Stop when the selected profile would silently override a user's top-level value.

    ``committed``: the raw params committed at git HEAD (None: unknown, nothing is checked). Every
    top-level leaf of ``raw`` (``profile`` and ``profiles`` aside) that is new or differs from
    ``committed`` was set by the user (``dvc exp run -S`` or an edit); if the overlay of the selected
    profile (not ``default``) sets that key to another value, the user's value would be lost.

    Raises:
        ConfigError: one line naming every such key and the ``profiles.<name>.<key>`` to set.
    """
    name = raw.get("profile", "default")
    overlay = (raw.get("profiles") or {}).get(name) or {}
    if name == "default" or not isinstance(overlay, dict) or not overlay or not isinstance(committed, dict):
        return
    top = {k: v for k, v in raw.items() if k not in ("profile", "profiles")}
    before = _leaves({k: v for k, v in committed.items() if k not in ("profile", "profiles")})
    lost: dict[str, str] = {}
    for parts, value in _leaves(top).items():
        if parts in before and before[parts] == value:
            continue
        where = _overlay_key(overlay, parts)
        if where is None or (value == {} and isinstance(_at(overlay, where), dict)):  # merged, not lost
            continue
        if _at(overlay, where) != _at(top, where):
            lost[".".join(map(str, parts))] = ".".join(map(str, where))
    if lost:
        keys = ", ".join(lost)
        targets = ", ".join(f"profiles.{name}.{w}" for w in dict.fromkeys(lost.values()))
        raise ConfigError(f"{path}: {keys} {'is' if len(lost) == 1 else 'are'} set by profile '{name}' "
                          f"({targets}); with profile={name} set {targets} instead")


@functools.lru_cache(maxsize=8)
def _committed_params(folder: str, name: str, text: str) -> dict | None:
    """The params file ``name`` of ``folder`` as committed at git HEAD (``git show HEAD:./name``
    run in ``folder``), parsed; None outside git, without a HEAD, when HEAD has no such file or it
    is not a YAML mapping. Cached per process by the working file's content (``text``)."""
    try:
        proc = subprocess.run(["git", "show", f"HEAD:./{name}"], cwd=folder, capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    try:
        data = yaml.safe_load(proc.stdout)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def load_params(path: str | os.PathLike = "params.yaml") -> dict:
    """Read a params file and return the resolved (profile-applied) parameter tree.

    With a profile other than ``default`` selected, the top level is compared with the file
    committed at git HEAD of its folder (:func:`check_profile_overrides`; skipped outside git).

    Raises:
        ConfigError: the file does not exist or is not a YAML mapping; a key no code declares
            (:func:`planarena.methods.keys.check_params`: names the key and the nearest declared
            one); a user's top-level value that the selected profile overrides (names
            ``profiles.<name>.<key>``).
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: params file not found (run from the repository root)")
    try:
        text = path.read_text()
        raw = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{where}: not valid YAML: {what}") from None
    except (UnicodeDecodeError, IsADirectoryError) as exc:
        raise ConfigError(f"{path}: not a YAML text file ({type(exc).__name__})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    # every key declared by the code that reads it (planarena.methods.keys, imported by name as
    # with_twins does: the declarations decide no result, so they are no stage's input)
    importlib.import_module("planarena.methods.keys").check_params(raw, str(path))
    if raw.get("profile", "default") != "default":
        folder = path.resolve().parent
        check_profile_overrides(raw, _committed_params(str(folder), path.name, text), path.name)
    return resolve_profile(raw)


def get(params: dict, dotted: str, default: Any = ...) -> Any:
    """Look up ``a.b.c`` in a nested dict.

    Raises:
        ConfigError: the key is missing and no default was given; the message names the param.
    """
    node: Any = params
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            if default is ...:
                raise ConfigError(f"params: missing `{dotted}`")
            return default
        node = node[part]
    return node


def dataclass_from_params(cls, block: dict | None, where: str):
    """An instance of the dataclass ``cls`` from the params dict ``block`` (missing keys: the
    dataclass defaults).

    Raises:
        ConfigError: a key that is not a field of ``cls``; the message names ``where`` (the params
            section, e.g. ``dias.train``), the unknown keys and the known ones.
    """
    from dataclasses import fields

    block = dict(block or {})
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(block) - names)
    if unknown:
        raise ConfigError(f"params: {where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    return cls(**block)


def torch_device(value: str, param: str) -> str:
    """The torch device named by a ``device`` param: ``cpu``, ``cuda`` / ``cuda:N``, or ``auto`` (the
    GPU when torch sees one, else the CPU). Imports torch only for ``cuda`` and ``auto``. In the
    stage process of a cluster run (``executor.address`` / ``executor.slurm``) ``cuda`` is accepted
    without a local GPU: the units that use it run on workers that have one.

    Raises:
        ConfigError: an unknown value, or ``cuda`` without a CUDA device (names ``param``).
    """
    dev = str(value).strip().lower()
    if dev not in ("cpu", "auto") and not (dev == "cuda" or dev.startswith("cuda:")):
        raise ConfigError(f"params: `{param}` = {value!r}; expected cpu, cuda, cuda:N or auto")
    if dev == "cpu":
        return dev
    import torch

    if dev == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not torch.cuda.is_available():
        from planarena.core.executor import remote

        if remote():  # the stage process of a cluster run: the GPUs are on the workers
            return dev
        raise ConfigError(f"params: `{param}` = {value!r} but no CUDA device is available")
    return dev


@dataclass(frozen=True)
class Layout:
    """Where each pipeline stage writes (docs/pipeline.md#stages). All paths relative to
    ``root``."""

    root: Path = Path("data")

    @property
    def problems(self) -> Path:
        return self.root / "problems"

    @property
    def plans(self) -> Path:
        return self.root / "plans"

    @property
    def trajectories(self) -> Path:
        return self.root / "trajectories"

    @property
    def embeddings(self) -> Path:
        return self.root / "embeddings"

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def acp(self) -> Path:
        """Transition datasets of the ACPBench domains (EmbedPlan): ``acp/<domain>/...``."""
        return self.root / "acp"

    @property
    def schema(self) -> Path:
        """Schema-learning data (DIAS): a problem set plus transitions, ``schema/<domain>/...``."""
        return self.root / "schema"

    @property
    def logs(self) -> Path:
        """Untracked run logs (wall times, cache statistics): never DVC outputs, so reruns with the
        same inputs write the same outputs. ``logs/train/<method>.json`` holds training times."""
        return self.root / "logs"

    def train_log(self, method: str) -> Path:
        """The training-time log of ``method`` (written by the train stage)."""
        return self.logs / "train" / f"{method}.json"

    @property
    def cache(self) -> Path:
        """Content-addressed caches that survive stage reruns (planner runs, text embeddings)."""
        return self.root / "cache"


class UndeclaredDataError(RuntimeError):
    """A method read a data folder it does not list in ``data_deps`` (the message names both)."""


@dataclass(frozen=True)
class DeclaredLayout(Layout):
    """A :class:`Layout` that hands out only the data folders a method declares in ``data_deps``.

    The runner gives each method one of these, so a family that reads a folder it did not declare
    fails at once (in the tests as in a real run) instead of silently missing reruns when that
    folder changes. ``models``, ``results`` and ``cache`` (the method's own outputs and
    content-addressed caches) are always allowed. ``embeddings`` is allowed when any
    ``embeddings/<kind>`` is declared.
    """

    allowed: frozenset = frozenset()
    owner: str = "method"

    def _check(self, folder: str) -> None:
        if not any(d == folder or d.startswith(folder + "/") for d in self.allowed):
            raise UndeclaredDataError(
                f"{self.owner} reads data/{folder} but its data_deps are {sorted(self.allowed)}; "
                f"add {folder!r} to data_deps of its class")

    @property
    def problems(self) -> Path:
        self._check("problems")
        return self.root / "problems"

    @property
    def plans(self) -> Path:
        self._check("plans")
        return self.root / "plans"

    @property
    def trajectories(self) -> Path:
        self._check("trajectories")
        return self.root / "trajectories"

    @property
    def embeddings(self) -> Path:
        self._check("embeddings")
        return self.root / "embeddings"

    @property
    def acp(self) -> Path:
        self._check("acp")
        return self.root / "acp"

    @property
    def schema(self) -> Path:
        self._check("schema")
        return self.root / "schema"
