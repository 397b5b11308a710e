"""The ``pddl`` package's parsers (AI-Planning/pddl), compiled once per process.

``pddl.parse_domain`` and ``pddl.parse_problem`` (0.4) compile their Lark grammar on every call:
0.35 s for a domain and 0.17 s for a problem, measured in an evaluate stage whose WL features and
plan validator read the same 20 problem files. Here each grammar is compiled once per process, and
Lark keeps the compiled LALR tables between processes (``cache=True``: a file in the temporary
directory, read back in about 0.01 s; Lark checks the hashes of the grammar files it imported, so
another ``pddl`` release compiles anew). The tables live in the user's own cache folder
(``$XDG_CACHE_HOME/planarena`` or ``~/.cache/planarena``), never a shared temporary folder: Lark
reads them with pickle. A transformer carries state from one file to the next, so
each call gets a fresh one.

Used by the WL features (:mod:`planarena.features.wl`) and the plan validator
(:mod:`planarena.core.validation`); nothing here imports above ``core``.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Callable


def _cache_file(kind: str) -> str | bool:
    """Where Lark keeps the compiled tables of grammar ``kind`` (False: nowhere writable)."""
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "planarena"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return str(folder / f"lark-pddl-{kind}.pickle")


@functools.lru_cache(maxsize=None)
def _lark(kind: str):
    """The compiled Lark parser of the ``pddl`` package's ``domain`` or ``problem`` grammar."""
    from lark import Lark
    from pddl.parser import DOMAIN_GRAMMAR_FILE, PARSERS_DIRECTORY, PROBLEM_GRAMMAR_FILE

    grammar = (DOMAIN_GRAMMAR_FILE if kind == "domain" else PROBLEM_GRAMMAR_FILE).read_text()
    return Lark(grammar, parser="lalr", import_paths=[PARSERS_DIRECTORY], cache=_cache_file(kind))


def domain_parser() -> Callable[[str], Any]:
    """``text -> pddl.core.Domain``: ``pddl.parse_domain`` on a text, without compiling the grammar.

    Raises (from the returned callable): whatever ``pddl`` and Lark raise for text that is not a
    PDDL domain (callers turn it into one line naming the file).
    """
    from pddl.helpers.base import call_parser
    from pddl.parser.domain import DomainTransformer

    parser = _lark("domain")
    return lambda text: call_parser(text, parser, DomainTransformer())


def problem_parser() -> Callable[[str], Any]:
    """``text -> pddl.core.Problem``: ``pddl.parse_problem`` on a text, without compiling the
    grammar. Raises as :func:`domain_parser`."""
    from pddl.helpers.base import call_parser
    from pddl.parser.problem import ProblemTransformer

    parser = _lark("problem")
    return lambda text: call_parser(text, parser, ProblemTransformer())
