"""Fingerprints of code and data: what a stage's results depend on, as hashes.

- :func:`code_fingerprint`: a hash per module of the import closure of some ``planarena`` modules
  (found by walking the AST, function-level imports included; comments and formatting do not
  count), the data files (``*.yaml``, ``*.csv``) beside those modules and a stage script;
- :func:`external_code`: byte hashes of the sources of a method from another package;
- :func:`folder_hash`: one hash over the paths and bytes of a data folder.

They sit in ``core`` because the runner (``runner/inputs.py``, the per-stage input files DVC tracks)
and method families that cache their own artefacts (the transformer and R-GNN checkpoints) both key
on them; nothing here knows a stage or a family.
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import json
import sys
from pathlib import Path

from planarena.core.io import atomic_write_json

PACKAGE = "planarena"
SRC = Path(__file__).resolve().parents[1]          # .../src/planarena
REPO = SRC.parents[1]                                # repository root (stage scripts live in stages/)
DATA_SUFFIXES = (".yaml", ".yml", ".csv")

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
    return "python %d.%d, fingerprint.py %s" % (*sys.version_info[:2], own)


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
