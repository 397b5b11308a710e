"""The import layering of planarena (docs/layout.md#the-package): every import of every module
under ``src/planarena`` (module level, function level and ``if TYPE_CHECKING:`` alike, found with
``ast``) goes down one declared order of layers, no shared layer imports a method family, and no
two modules import each other through any chain (a lazy import hides a circle from Python, not
from this test).

The order (:data:`LAYERS`, lowest first; a layer may import its own modules and any layer of a
lower tier, never one of its own tier or above):

core < config, stats, paramkeys < results, datasets, search < features < methods.base < protocols < methods
< runner < claims.spec < report < claims < cli

``methods.base`` (the contract every family implements) sits below the protocols that call it,
the families above them; ``claims.spec`` (a claim file's atoms) sits below the report's claims
section that lists them, the rest of ``claims/`` (verdicts on the results layer, the claim
workspace) above the report.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import ROOT

SRC = ROOT / "src" / "planarena"
PACKAGE = "planarena"

#: The layers, lowest tier first. A module's layer is the longest name here that is its module path
#: below ``planarena`` or a package above it (``planarena.methods.base`` -> ``methods.base``,
#: ``planarena.methods.dias.model`` -> ``methods``); ``planarena`` itself (its ``__init__``) is tier 0.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("config", "stats", "paramkeys"),
    ("results", "datasets", "search"),
    ("features",),
    ("methods.base",),
    ("protocols",),
    ("methods",),
    ("runner",),
    ("claims.spec",),
    ("report",),
    ("claims",),
    ("cli",),
)

#: Imports against the order that live in files this change could not edit (``methods/`` is owned
#: elsewhere), each with what removes it. An entry that no longer occurs fails
#: :func:`test_known_exceptions_still_occur`: delete it then.
KNOWN_UPWARD: dict[tuple[str, str], str] = {
}
#: Import cycles that live in files this change could not edit, each with what removes it.
KNOWN_CYCLES: dict[frozenset[str], str] = {
}

#: Layers shared by every family: they import no family (only the contract ``methods.base`` and the
#: registry ``planarena.methods``), so that an edit in ``methods/<family>/`` reruns only that family.
SHARED = ("core", "config", "stats", "paramkeys", "results", "datasets", "features", "search", "protocols", "runner")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _resolve(module: str, node: ast.ImportFrom) -> str | None:
    """The absolute module an ``ImportFrom`` names (relative imports resolved against ``module``)."""
    if not node.level:
        return node.module
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


@lru_cache(maxsize=None)
def imports_of(module: str) -> tuple[tuple[int, str, str], ...]:
    """``(line, imported module, as written)`` of every planarena import of ``module``, anywhere in
    the file. ``from planarena.x import y`` imports ``planarena.x.y`` when that is a module, else
    ``planarena.x``."""
    out = []
    for node in ast.walk(ast.parse(MODULES[module].read_text(), str(MODULES[module]))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, f"import {a.name}") for a in node.names
                    if a.name.split(".")[0] == PACKAGE]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node)
            if not base or base.split(".")[0] != PACKAGE:
                continue
            for a in node.names:
                target = f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                out.append((node.lineno, target, f"from {base} import {a.name}"))
    return tuple(sorted(set(out)))


def layer_of(module: str) -> str:
    """The entry of :data:`LAYERS` that ``module`` belongs to.

    Raises:
        KeyError: no layer holds it (a new top-level package: add it to :data:`LAYERS`).
    """
    if module == PACKAGE:
        return PACKAGE
    rel = module[len(PACKAGE) + 1:]
    names = [n for tier in LAYERS for n in tier if rel == n or rel.startswith(n + ".")]
    if not names:
        raise KeyError(f"{module} is in no layer of tests/test_layers.py LAYERS")
    return max(names, key=len)


def tier_of(layer: str) -> int:
    if layer == PACKAGE:
        return -1
    return next(i for i, tier in enumerate(LAYERS) if layer in tier)


def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


def upward_imports() -> list[tuple[str, int, str, str]]:
    """``(module, line, target, as written)`` of every import against :data:`LAYERS`."""
    bad = []
    for module in MODULES:
        mine = layer_of(module)
        for line, target, written in imports_of(module):
            theirs = layer_of(target)
            if theirs != mine and tier_of(theirs) >= tier_of(mine):
                bad.append((module, line, target, written))
    return bad


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported planarena module: first line}, every import included."""
    graph: dict[str, dict[str, int]] = defaultdict(dict)
    for module in MODULES:
        for line, target, _ in imports_of(module):
            if target in MODULES and target != module:
                graph[module].setdefault(target, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return out


def _cycle_path(graph: dict[str, dict[str, int]], comp: list[str]) -> str:
    """One closed path through ``comp``, each step with the file and line of its import."""
    members = set(comp)
    start = comp[0]
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in members)
        back = [w for w in nxt if w in seen]
        step = back[0] if back else next(w for w in nxt if w not in seen)
        path.append(step)
        if step in seen:
            break
        seen.add(step)
    path = path[path.index(path[-1]):]
    return " -> ".join(f"{a} ({_where(a, graph[a][b])})" for a, b in zip(path, path[1:])) + f" -> {path[-1]}"


def test_every_module_has_a_layer():
    missing = []
    for m in MODULES:
        try:
            layer_of(m)
        except KeyError:
            missing.append(m)
    assert not missing, f"modules in no layer of LAYERS (tests/test_layers.py): {missing}"


def test_imports_go_down_the_layers():
    bad = [f"{_where(m, line)}: {m} ({layer_of(m)}) imports {t} ({layer_of(t)}): `{w}`"
           for m, line, t, w in upward_imports() if (m, t) not in KNOWN_UPWARD]
    order = " < ".join(", ".join(t) for t in LAYERS)
    assert not bad, f"imports against the layer order {order}:\n" + "\n".join(bad)


def test_no_import_cycle():
    graph = import_graph()
    bad = [_cycle_path(graph, c) for c in cycles(graph) if frozenset(c) not in KNOWN_CYCLES]
    assert not bad, "import cycles (every import counts, lazy ones too):\n" + "\n".join(bad)


def test_known_exceptions_still_occur():
    """Each listed exception names an import that is still there: a fixed one is taken off the list."""
    upward = {(m, t) for m, _, t, _ in upward_imports()}
    gone = [f"{m} -> {t}" for m, t in KNOWN_UPWARD if (m, t) not in upward]
    comps = {frozenset(c) for c in cycles(import_graph())}
    gone += [" <-> ".join(sorted(c)) for c in KNOWN_CYCLES if c not in comps]
    assert not gone, "fixed, now delete from KNOWN_UPWARD / KNOWN_CYCLES in tests/test_layers.py: " + "; ".join(gone)


@pytest.mark.parametrize("layer", SHARED)
def test_shared_layers_import_no_family(layer):
    """core/, config, stats, results/, datasets/, features/, search/, protocols/ and runner/ never
    import a method family: family code lives in methods/<family>/ (so an edit there reruns only that
    family); ``planarena.methods`` (the registry) and ``planarena.methods.base`` are not families."""
    bad = [f"{_where(m, line)}: {m} imports {t}: `{w}`"
           for m in MODULES if layer_of(m) == layer
           for line, t, w in imports_of(m)
           if t.startswith(f"{PACKAGE}.methods.") and layer_of(t) == "methods"
           and (m, t) not in KNOWN_UPWARD]
    assert not bad, "\n".join(bad)


def test_results_layer_reads_no_report_or_claims():
    """The results layer (one implementation of records -> matrices) imports only core, config
    and stats (named here as well as by the order, since it is the reason the layer exists)."""
    bad = [f"{_where(m, line)}: `{w}`" for m in MODULES if layer_of(m) == "results"
           for line, t, w in imports_of(m) if layer_of(t) not in ("core", "config", "stats", "results")]
    assert not bad, "\n".join(bad)


def test_the_checker_names_an_upward_import(monkeypatch):
    """The messages name the module, its line and the import: a made-up core module importing the
    report and importing itself back through the report."""
    fake = SRC / "core" / "_layers_probe.py"
    monkeypatch.setitem(MODULES, "planarena.core._layers_probe", fake)
    monkeypatch.setitem(MODULES, "planarena.report._layers_probe", SRC / "report" / "_layers_probe.py")
    texts = {"planarena.core._layers_probe": "def f():\n    from planarena.report import _layers_probe\n",
             "planarena.report._layers_probe": "from planarena.core import _layers_probe\n"}

    real = imports_of

    def fake_imports(module):
        if module in texts:
            node = ast.parse(texts[module]).body[0]
            node = node.body[0] if isinstance(node, ast.FunctionDef) else node
            base = node.module
            target = f"{base}.{node.names[0].name}"
            return ((node.lineno, target, f"from {base} import {node.names[0].name}"),)
        return real(module)

    monkeypatch.setitem(globals(), "imports_of", fake_imports)
    with pytest.raises(AssertionError, match=r"core/_layers_probe.py:2: planarena.core._layers_probe \(core\) imports "
                                             r"planarena.report._layers_probe \(report\)"):
        test_imports_go_down_the_layers()
    with pytest.raises(AssertionError, match=r"planarena.core._layers_probe \(src/planarena/core/_layers_probe.py:2\) -> "
                                             r"planarena.report._layers_probe"):
        test_no_import_cycle()
