"""What each pipeline stage reads: the stage table, and the per-stage input files DVC tracks.

DVC reruns a stage when one of its deps changes. Listing ``params.yaml`` sections, a hand-typed
list of modules and whole data folders as deps (what ``dvc.yaml`` did before) reruns far more than
needed: an edit to one method family retrains every family, and a key under ``profiles.paper``
reruns every stage of a default-profile run. Instead, the cheap ``resolve`` and ``resolve_methods``
stages write one small JSON file per stage, ``data/inputs/stages/<stage>.json`` and
``data/inputs/methods/<train|evaluate>.<method>.json``, holding exactly what that stage's results
depend on:

- ``params``: the params the stage reads, *resolved in the active profile*
  (:func:`planarena.config.resolve_profile`): a key under an inactive profile is not there;
- ``code``: a hash per module of the stage's import closure inside ``planarena`` (found by walking
  the AST, function-level imports included; comments and formatting do not count), plus the data
  files (``*.yaml``, ``*.csv``) beside those modules, plus the stage script;
- ``data`` (train and evaluate stages only): a hash per data folder the method family declares in
  :attr:`planarena.methods.base.Method.data_deps`.

Each stage's only DVC deps are its own file (and, for ordering, its upstream outputs), so a stage
reruns exactly when something it reads changes; the files are rewritten byte-identically otherwise,
and DVC compares content, not times. ``jobs`` enters no file: results do not depend on it.
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planarena.config import Layout, get
from planarena.core.io import atomic_write_json

PACKAGE = "planarena"
SRC = Path(__file__).resolve().parents[1]          # .../src/planarena
REPO = SRC.parents[1]                                # repository root (stage scripts live in stages/)
DATA_SUFFIXES = (".yaml", ".yml", ".csv")


@dataclass(frozen=True)
class StageSpec:
    """One pipeline stage: its entry point and the params it reads.

    ``params`` are dotted keys of the resolved params; ``{key}`` in a path is formatted with the
    resolved params (``suites.{suite}`` reads the block of the active suite only).
    """

    entry: str                     # "module:function"
    script: str                    # stages/<name>.py
    params: tuple[str, ...] = ()


#: The pipeline's stages (docs/pipeline.md); ``train`` and ``evaluate`` run once per
#: ``methods`` block, and read that block plus what the method declares (see :func:`method_inputs`).
STAGES: dict[str, StageSpec] = {
    "generate": StageSpec("planarena.datasets.suites:run_stage", "stages/generate.py",
                          ("seed", "suite", "suites.{suite}")),
    "plan": StageSpec("planarena.datasets.reference_plans:run_plan_stage", "stages/plan.py", ("planners",)),
    "trajectories": StageSpec("planarena.datasets.reference_plans:run_trajectories_stage",
                              "stages/trajectories.py"),
    "embed_wl": StageSpec("planarena.features.wl:run_stage", "stages/embed_wl.py", ("embed_wl",)),
    "embed_text": StageSpec("planarena.features.text.encoder:run_stage", "stages/embed_text.py",
                            ("embed_text",)),
    "acp_data": StageSpec("planarena.datasets.acp:run_stage", "stages/acp_data.py", ("seed", "acp")),
    "embed_acp": StageSpec("planarena.features.text.acp:run_stage", "stages/embed_acp.py",
                           ("acp.domains", "acp.encoders", "embed_text")),
    "schema_data": StageSpec("planarena.datasets.schema:run_stage", "stages/schema_data.py",
                             ("seed", "schema")),
    "train": StageSpec("planarena.runner.stages:run_train_stage", "stages/train.py"),
    # `evaluation.lockstep_batch` only for lockstep methods (method_inputs); `jobs` for none
    "evaluate": StageSpec("planarena.runner.stages:run_evaluate_stage", "stages/evaluate.py",
                          ("evaluation.splits", "evaluation.seeds", "evaluation.time_limit")),
    # the leaderboard's Info section shows a hash of the whole resolved params
    "report": StageSpec("planarena.report.leaderboard:run_stage", "stages/report.py", ("*",)),
}

#: Entry point of every stage script (``stages/<name>.py``) and of ``planarena stage <name>``.
ENTRIES: dict[str, str] = {
    "resolve": "planarena.runner.inputs:run_resolve_stage",
    "resolve_methods": "planarena.runner.inputs:run_resolve_methods_stage",
    **{name: spec.entry for name, spec in STAGES.items()},
}

#: Stages written by ``resolve`` (they do not need the data) vs ``resolve_methods``.
DATA_STAGES = ("generate", "plan", "trajectories", "embed_wl", "embed_text", "acp_data", "embed_acp", "schema_data",
               "report")


# ------------------------------------------------------------------------------------------------
# Code: import closure and its hash
# ------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def module_file(name: str) -> Path | None:
    """Source file of the ``planarena`` module ``name`` (``__init__.py`` for a package), or None."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    parts = name.split(".")[1:]
    base = SRC.joinpath(*parts)
    if (base / "__init__.py").exists():
        return base / "__init__.py"
    if base.with_suffix(".py").exists():
        return base.with_suffix(".py")
    return None


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> tuple[str, ast.Module]:
    """Source text and AST of a module (cached: the resolve stages ask for the same modules many
    times; a stage process sees one version of each file)."""
    text = path.read_text()
    return text, ast.parse(text)


#: AST facts of each module file, kept across processes beside the bytecode cache:
#: ``{"version": ..., "files": {relative path: {"digest": sha256 of the file's bytes, "registry":
#: bool, "imports": [names], "hash": {registry key: hash}}}}``. Parsing and dumping the ASTs of an
#: evaluate stage's ~50 modules took 0.46-0.75 s of every stage process; reading and hashing their
#: bytes takes a few milliseconds, so a file is parsed again only when its bytes changed. The
#: version is the Python (``ast.dump`` differs between versions) and a hash of this module (the
#: rules that compute the facts).
FACTS_FILE = SRC / "__pycache__" / "planarena-code-facts.json"
_FACTS: dict | None = None
_FACTS_DIRTY = False


@functools.lru_cache(maxsize=1)
def _facts_version() -> str:
    own = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    return "python %d.%d, inputs.py %s" % (*sys.version_info[:2], own)


def _facts_table() -> dict:
    """The ``files`` table of :data:`FACTS_FILE` (empty when absent, unreadable or of another
    version: :func:`_facts_version`)."""
    global _FACTS
    if _FACTS is None:
        try:
            data = json.loads(FACTS_FILE.read_text())
            _FACTS = data["files"] if data.get("version") == _facts_version() else {}
        except (OSError, ValueError, KeyError, TypeError):
            _FACTS = {}
    return _FACTS


def _save_facts() -> None:
    """Write :data:`FACTS_FILE` if this process added to it (a read-only install keeps none)."""
    global _FACTS_DIRTY
    if not _FACTS_DIRTY:
        return
    _FACTS_DIRTY = False
    try:
        FACTS_FILE.parent.mkdir(exist_ok=True)
        atomic_write_json(FACTS_FILE, {"version": _facts_version(), "files": _facts_table()})
    except OSError:
        pass


@functools.lru_cache(maxsize=None)
def _file_facts(name: str) -> dict:
    """The facts of module ``name``'s file (:data:`FACTS_FILE`): read from the table when the
    digest of its bytes matches, else computed from the AST and added."""
    global _FACTS_DIRTY
    path = module_file(name)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    table, key = _facts_table(), str(path.relative_to(SRC))
    entry = table.get(key)
    if entry is None or entry.get("digest") != digest:
        text, tree = _parse(path)
        entry = table[key] = {"digest": digest, "registry": "REGISTRY" in text,
                              "imports": sorted(_named_imports(name, tree)), "hash": {}}
        _FACTS_DIRTY = True
    return entry


@functools.lru_cache(maxsize=None)
def _module_imports(name: str) -> frozenset[str]:
    """The ``planarena`` modules that module ``name`` imports anywhere (function-level imports
    included), cached per process and in :data:`FACTS_FILE`."""
    return frozenset(_planarena_modules(_file_facts(name)["imports"]))


def _named_imports(name: str, tree: ast.AST) -> set[str]:
    """Every dotted name an import statement of ``tree`` names (relative imports resolved; for
    ``from pkg import x`` both ``pkg`` and ``pkg.x``), modules or not."""
    is_pkg = module_file(name).name == "__init__.py"
    here = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import module`
    return found


def _planarena_modules(found) -> set[str]:
    """The ``planarena`` modules among the dotted names ``found``, with their parent packages."""
    out = set()
    for mod in found:
        if module_file(mod) is None:
            continue
        parts = mod.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))  # parent packages run too
    return {m for m in out if module_file(m) is not None}


def import_closure(roots: list[str]) -> list[str]:
    """Sorted names of the ``planarena`` modules that importing ``roots`` can execute."""
    seen: set[str] = set()
    todo = [".".join(r.split(".")[:i]) for r in roots for i in range(1, r.count(".") + 2)]  # + parents
    while todo:
        name = todo.pop()
        if name in seen or module_file(name) is None:
            continue
        seen.add(name)
        todo.extend(_module_imports(name) - seen)
    return sorted(seen)


@functools.lru_cache(maxsize=None)
def _module_hash(name: str, cut_registry: bool, registry_name: str | None) -> str:
    """AST hash of module ``name``; with ``cut_registry`` its ``REGISTRY`` keeps only the entry
    ``registry_name`` (cached per process: the 28 method stages share most modules; and in
    :data:`FACTS_FILE`)."""
    global _FACTS_DIRTY
    hashes = _file_facts(name)["hash"]
    key = f"registry:{registry_name}" if cut_registry else ""
    if key not in hashes:
        tree = _parse(module_file(name))[1]
        if cut_registry:
            tree = _registry_entry_only(copy.deepcopy(tree), registry_name)
        hashes[key] = _code_hash(tree)
        _FACTS_DIRTY = True
    return hashes[key]


def _code_hash(tree: ast.AST) -> str:
    return _dump_hash(ast.dump(tree))


@functools.lru_cache(maxsize=None)
def _dump_hash(dump: str) -> str:
    return hashlib.sha256(dump.encode()).hexdigest()[:16]


def _registry_entry_only(tree: ast.Module, keep: str | None) -> ast.Module:
    """``tree`` with the module-level dict ``REGISTRY`` cut to the entry ``keep``: adding a
    registry line for another method must not rerun this one."""
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == "REGISTRY" and isinstance(node.value, ast.Dict):
            pairs = [(k, v) for k, v in zip(node.value.keys, node.value.values)
                     if keep == "*" or (isinstance(k, ast.Constant) and k.value == keep)]
            node.value.keys = [k for k, _ in pairs]
            node.value.values = [v for _, v in pairs]
    return tree


def code_fingerprint(roots: list[str], script: str | None = None, registry_name: str | None = None) -> dict:
    """``{module or file: hash}`` of the import closure of ``roots``, the data files beside those
    modules and the stage ``script``. Hashes are of the AST (comments, blank lines and formatting
    do not change them); the module-level ``REGISTRY`` dict keeps only ``registry_name``'s entry
    (``"*"``: every entry).

    Raises:
        FileNotFoundError: ``script`` does not exist.
    """
    out: dict[str, str] = {}
    dirs: set[Path] = set()
    for name in import_closure(roots):
        path = module_file(name)
        out[name] = _module_hash(name, _file_facts(name)["registry"], registry_name)
        dirs.add(path.parent)
    _save_facts()
    for d in sorted(dirs):
        for f in sorted(d.iterdir()):
            if f.suffix in DATA_SUFFIXES and f.is_file():
                out[str(f.relative_to(SRC.parent))] = hashlib.sha256(f.read_bytes()).hexdigest()[:16]
    if script:
        path = REPO / script
        if not path.exists():
            raise FileNotFoundError(f"{path}: stage script not found")
        out[script] = _code_hash(ast.parse(path.read_text()))
    return out


@functools.lru_cache(maxsize=None)
def external_code(module: str) -> tuple[tuple[str, str], ...]:
    """``(file, hash)`` of every source file of the installed package (or single module) that holds
    ``module``: the code of a method from another package (:data:`planarena.methods.ENTRY_POINT_GROUP`),
    which :func:`code_fingerprint` does not see. Byte hashes of ``*.py`` files, paths relative to
    the package's parent folder; ``()`` when the module cannot be found."""
    import importlib.util

    spec = importlib.util.find_spec(module.split(".")[0])
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return ()
    origin = Path(spec.origin)
    files = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
    base = origin.parent.parent if origin.name == "__init__.py" else origin.parent
    return tuple((str(f.relative_to(base)), hashlib.sha256(f.read_bytes()).hexdigest()[:16]) for f in files)


def method_code(stage_module: str, registered: str, script: str | None = None) -> dict:
    """:func:`code_fingerprint` of a stage module and the module of the method registered as
    ``registered`` (built in or from another package: that package's sources are added as
    ``plugin:<file>`` entries, :func:`external_code`).

    Raises:
        KeyError: ``registered`` is not a registered method.
    """
    from planarena.methods import method_entry

    module = method_entry(registered).partition(":")[0]
    out = code_fingerprint([stage_module, module], script, registry_name=registered)
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        out.update({f"plugin:{f}": h for f, h in external_code(module)})
    return out


# ------------------------------------------------------------------------------------------------
# Params and data
# ------------------------------------------------------------------------------------------------


def select_params(params: dict, keys: tuple[str, ...]) -> dict:
    """``{key: value}`` for the dotted ``keys`` in the resolved ``params`` (missing: None).
    ``"*"`` selects every param but ``jobs``, ``executor`` and ``profiles`` (where units run never
    changes results)."""
    out: dict[str, Any] = {}
    for key in keys:
        if key == "*":
            out.update({k: v for k, v in params.items() if k not in ("jobs", "executor", "profiles")})
            continue
        key = key.format(**{k: v for k, v in params.items() if isinstance(v, (str, int))})
        out[key] = get(params, key, None)
    return out


@functools.lru_cache(maxsize=None)
def folder_hash(path: Path) -> str | None:
    """SHA-256 over the relative paths and bytes of every file under ``path`` (None if absent)."""
    if not path.exists():
        return None
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        digest.update(str(f.relative_to(path.parent)).encode() + b"\0")
        with f.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()[:16]


def _entry_module(spec: StageSpec) -> str:
    return spec.entry.partition(":")[0]


def stage_inputs(name: str, params: dict) -> dict:
    """The inputs file content of data stage ``name`` (``generate`` ... ``report``)."""
    spec = STAGES[name]
    roots = [_entry_module(spec)]
    plugins: dict[str, str] = {}
    if name == "report":  # the report may read hooks the method classes declare
        from planarena.methods import REGISTRY, plugin_methods

        roots += sorted({entry.partition(":")[0] for entry in REGISTRY.values()})
        plugins = {f"plugin:{f}": h for entry in sorted(set(plugin_methods().values()))
                   for f, h in external_code(entry.partition(":")[0])}
    out = {"stage": name, "params": select_params(params, spec.params),
           "code": {**code_fingerprint(roots, spec.script, registry_name="*"), **plugins}}
    if name == "generate" and params.get("suite") == "dir":
        # a user's own folders: an edited or added problem file reruns the suite (the other external
        # suites are third-party releases, read by path and version)
        raw = get(params, "suites.dir.path", None)
        out["files"] = {str(p): folder_hash(Path(str(p)).expanduser())
                        for p in ([raw] if isinstance(raw, str) else list(raw or []))}
    return out


def method_inputs(stage: str, instance: str, params: dict, layout: Layout) -> dict:
    """The inputs file content of ``train@<instance>`` or ``evaluate@<instance>``: the method's
    params block, the params it declares (:attr:`Method.uses_params`), the seeds (and for
    evaluation the evaluation settings), the code of the runner and of the method's class, and a
    hash of each data folder it declares (:attr:`Method.data_deps`). The train stage of a method
    that does not override :meth:`Method.train` reads only its block and the code.

    Raises:
        KeyError: no such method block, or an unknown registered name (lists the valid ones).
    """
    from planarena.methods import resolve, runs
    from planarena.methods.base import Method

    if not runs(instance, params):  # nothing of the family is read: its edits rerun nothing here
        return {"stage": f"{stage}@{instance}", "run": False}
    cls, config = resolve(instance, params)
    method = cls(instance, config, params, layout)
    registered = config.get("method", instance)
    spec = STAGES[stage]
    learns = stage != "train" or cls.train is not Method.train
    keys = (f"methods.{instance}",) + (("evaluation.seeds", *method.uses_params) + spec.params if learns else ())
    if stage == "evaluate" and cls.lockstep:
        keys += ("evaluation.lockstep_batch",)
    return {
        "stage": f"{stage}@{instance}",
        "params": select_params(params, tuple(dict.fromkeys(keys))),
        "code": method_code(_entry_module(spec), registered, spec.script),
        # a method that learns nothing has nothing to train from
        "data": {d: folder_hash(layout.root / d) for d in method.data_deps} if learns else {},
        **({"files": {str(f): folder_hash(Path(f)) for f in method.input_files}} if method.input_files else {}),
    }


def inputs_file(layout: Layout, stage: str, instance: str | None = None) -> Path:
    """``data/inputs/stages/<stage>.json`` or ``data/inputs/methods/<stage>.<instance>.json``."""
    if instance:
        return layout.root / "inputs" / "methods" / f"{stage}.{instance}.json"
    return layout.root / "inputs" / "stages" / f"{stage}.json"


def run_resolve_stage(params: dict, layout: Layout) -> list[Path]:
    """Stage ``resolve``: write the inputs file of every data stage and the report."""
    written = []
    for name in DATA_STAGES:
        path = inputs_file(layout, name)
        atomic_write_json(path, stage_inputs(name, params))
        written.append(path)
    print(f"resolve: {len(written)} stage input files in {layout.root / 'inputs' / 'stages'}")
    return written


def run_resolve_methods_stage(params: dict, layout: Layout) -> list[Path]:
    """Stage ``resolve_methods``: write the inputs file of ``train@m`` and ``evaluate@m`` for every
    block of ``methods``. Runs after the data stages (it hashes the data each method declares)."""
    written = []
    for instance in sorted(params.get("methods") or {}):
        for stage in ("train", "evaluate"):
            path = inputs_file(layout, stage, instance)
            atomic_write_json(path, method_inputs(stage, instance, params, layout))
            written.append(path)
    print(f"resolve_methods: {len(written)} stage input files in {layout.root / 'inputs' / 'methods'}")
    return written
