"""Every `planarena ...` command shown in a code block of README.md or docs/ parses against the CLI
as it is (the command, its subcommand, its options and arguments exist), and the rows a `compare`
example names run in the default profile: a newcomer who copies an example gets no usage error."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

from planarena.cli import app
from planarena.config import load_params
from planarena.methods import runs

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: placeholders in examples -> a value of the right kind
PLACEHOLDERS = {"ID": "state-centric-delta-fresh-extrapolation", "<id>": "state-centric-delta-fresh-extrapolation",
                "ROW": "wl_xgb_delta", "A": "wl_xgb_delta", "B": "wl_lstm_delta", "FILE": "params.yaml",
                "DIR": "out", "NAME": "plan", "METHOD": "wl_xgb_delta", "P": "default"}


def _examples() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        in_block = False
        for line in doc.read_text().splitlines():
            if line.lstrip().startswith("```"):
                in_block = not in_block
                continue
            if not in_block:
                continue
            for part in line.split("&&"):
                text = re.sub(r"\s{2,}#.*$", "", part.strip().removeprefix("$ ")).strip()
                if text.startswith("planarena "):
                    out.append((f"{doc.relative_to(ROOT)}: {text}", text))
    return out


EXAMPLES = _examples()


def _parse(words: list[str]):
    """Resolve the command chain and parse its options and arguments, without running it."""
    cmd = typer.main.get_command(app)
    ctx = cmd.make_context("planarena", list(words), resilient_parsing=False)
    while hasattr(cmd, "resolve_command"):   # a group (typer ships its own click)
        pending = [*getattr(ctx, "_protected_args", ()), *ctx.args]   # click 8.2+: the subcommand's words
        if not pending:
            break
        name, cmd, rest = cmd.resolve_command(ctx, pending)
        ctx = cmd.make_context(name, rest, parent=ctx)
    return ctx


def test_the_docs_show_commands():
    assert len(EXAMPLES) >= 20


@pytest.mark.parametrize("where, text", EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_every_documented_command_parses(where, text):
    words = [PLACEHOLDERS.get(w, w) for w in shlex.split(text)[1:]]
    expanded = []
    for w in words:   # shell brace expansion, as bash would: a{1,2}b -> a1b a2b
        m = re.search(r"\{([^{}]*,[^{}]*)\}", w)
        expanded += [w[:m.start()] + x + w[m.end():] for x in m.group(1).split(",")] if m else [w]
    words = expanded
    try:
        ctx = _parse(words)
    except Exception as exc:  # noqa: BLE001 - click's UsageError, from typer's own copy of click
        if not hasattr(exc, "format_message"):
            raise
        pytest.fail(f"{where}: {exc.format_message()}")
    if ctx.info_name == "compare":
        params = load_params(ROOT / "params.yaml")
        off = [m for m in (ctx.params["a"], ctx.params["b"]) if m not in params["methods"] or not runs(m, params)]
        assert not off, f"{where}: {off} do not run in the default profile"
