"""The package layout (docs/layout.md#the-package): every import inside planarena resolves
(function-level imports included, which only fail when the code path runs). That the layers import
only downward, without cycles, is tests/test_layers.py."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from conftest import ROOT

SRC = ROOT / "src" / "planarena"
FILES = sorted(p for p in SRC.rglob("*.py"))
SCRIPTS = sorted((ROOT / "stages").glob("*.py")) + sorted((ROOT / "benchmarks").glob("*.py")) + \
    sorted((ROOT / "tests").glob("*.py"))


def _planarena_imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "planarena":
            yield node.lineno, node.module, [a.name for a in node.names]


@pytest.mark.parametrize("path", FILES + SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_planarena_import_resolves(path):
    for line, module, names in _planarena_imports(path):
        mod = importlib.import_module(module)
        for name in names:
            ok = hasattr(mod, name) or importlib.util.find_spec(f"{module}.{name}") is not None
            assert ok, f"{path.relative_to(ROOT)}:{line}: {module} has no {name!r}"
