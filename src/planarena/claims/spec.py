"""Claim files: one paper claim as a pre-registered experiment (``claims/<id>.yaml``).

A claim file holds, written before the run:

* ``paper`` (a family's paper stem), ``where`` (table or section) and ``claim``: the claim in one
  sentence as the paper states it;
* ``experiment``: ``suite`` (and optionally its ``path``), ``domains``, ``splits``, ``methods``
  (configured method names), ``seeds``, and ``params``: an overlay deep-merged over the project's
  ``params.yaml`` (what the experiment changes from the default profile);
* ``cost``: expected CPU minutes on 2 cores (``cpu_minutes``) and whether a GPU helps (``gpu``);
* ``published``: the paper's values, labelled (shown beside the measured ones, never mixed in); with
  ``published_split`` and the shape ``{domain: {method: percent}}``, the page says whether each
  lies inside the measured 95 % interval;
* ``gate``, ``confirm``, ``refute``: conditions (:class:`Condition`), evaluated from records only by
  :mod:`planarena.claims.verdict`.

A condition is an atom or ``{all: [...]}`` / ``{any: [...]}`` of conditions. Atoms:

* ``{better: [A, B], split: S, domain: D}``: A solves significantly more of the problems than B (paired
  test of :func:`planarena.stats.paired_coverage` at ``alpha``, Holm-corrected over the claim's
  ``better`` atoms of the same condition block);
* ``{not_better: [A, B], ...}``: the negation of ``better`` (B matches or beats A, or the test cannot
  tell them apart);
* ``{at_least: [A, x], ...}`` / ``{at_most: [A, x], ...}``: A's coverage (fraction of attempts solved,
  problems x seeds) is at least / at most x.

``split`` is required; ``domain`` optional (all domains of the split together). A changed claim is a
new claim file: the verdict page shows the file's hash.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from planarena.config import ConfigError

ATOMS = ("better", "not_better", "at_least", "at_most")
BLOCKS = ("gate", "confirm", "refute")


@dataclass(frozen=True)
class Atom:
    """One comparison: ``kind`` (one of :data:`ATOMS`), ``methods`` (A, and B for the paired kinds),
    ``threshold`` (for ``at_least`` / ``at_most``, a fraction), ``split`` and ``domain`` (None: all
    domains of the split)."""

    kind: str
    methods: tuple[str, ...]
    split: str
    domain: str | None = None
    threshold: float | None = None

    def label(self) -> str:
        """``"better(wl_xgb_delta, wl_xgb_state) on blocksworld/extrapolation"``."""
        where = f"{self.domain or 'all domains'}/{self.split}"
        args = ", ".join(self.methods) + (f", {self.threshold:g}" if self.threshold is not None else "")
        return f"{self.kind}({args}) on {where}"


@dataclass(frozen=True)
class Condition:
    """``op`` is ``all`` or ``any`` over ``parts`` (atoms or conditions)."""

    op: str
    parts: tuple[Any, ...]

    def atoms(self) -> list[Atom]:
        """Every atom below this condition, in file order."""
        out: list[Atom] = []
        for p in self.parts:
            out += p.atoms() if isinstance(p, Condition) else [p]
        return out


@dataclass(frozen=True)
class Claim:
    """A parsed claim file (see the module docstring). ``source`` is the file, ``digest`` the
    sha256 of its bytes (first 12 hex digits)."""

    id: str
    paper: str
    where: str
    claim: str
    experiment: dict
    cost: dict
    published: dict
    gate: Condition
    confirm: Condition
    refute: Condition
    source: Path
    digest: str
    alpha: float = 0.05
    notes: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def methods(self) -> list[str]:
        return list(self.experiment.get("methods") or [])


def _fail(path: Path, what: str) -> ConfigError:
    return ConfigError(f"{path}: {what}")


def _atom(path: Path, node: Mapping) -> Atom:
    kinds = [k for k in ATOMS if k in node]
    if len(kinds) != 1:
        raise _fail(path, f"a condition needs exactly one of {', '.join(ATOMS)} (or all / any), got {dict(node)}")
    kind = kinds[0]
    args = node[kind]
    if not isinstance(args, list) or len(args) != 2:
        raise _fail(path, f"{kind}: expects a list of two items, got {args!r}")
    if "split" not in node:
        raise _fail(path, f"{kind}{args}: needs a split")
    unknown = set(node) - {kind, "split", "domain"}
    if unknown:
        raise _fail(path, f"{kind}{args}: unknown key(s) {', '.join(sorted(unknown))}")
    if kind in ("at_least", "at_most"):
        if not isinstance(args[1], (int, float)) or not 0 <= args[1] <= 1:
            raise _fail(path, f"{kind}: the threshold must be a fraction in [0, 1], got {args[1]!r}")
        return Atom(kind, (str(args[0]),), str(node["split"]), node.get("domain"), float(args[1]))
    return Atom(kind, (str(args[0]), str(args[1])), str(node["split"]), node.get("domain"))


def _condition(path: Path, node: Any) -> Condition:
    if isinstance(node, list):
        node = {"all": node}
    if not isinstance(node, Mapping):
        raise _fail(path, f"a condition must be a mapping, got {node!r}")
    for op in ("all", "any"):
        if op in node:
            if set(node) != {op} or not isinstance(node[op], list) or not node[op]:
                raise _fail(path, f"{op}: expects a non-empty list and nothing beside it")
            return Condition(op, tuple(_condition(path, p) if isinstance(p, Mapping) and
                                       ({"all", "any"} & set(p)) else _atom(path, p) for p in node[op]))
    return Condition("all", (_atom(path, node),))


def load_claim(path: str | Path) -> Claim:
    """Parse and check one claim file.

    Raises:
        ConfigError: the file is missing, not YAML, lacks a field, or a condition is malformed or
            names a method the experiment does not run (one line naming the file and what is wrong).
    """
    path = Path(path)
    try:
        raw_bytes = path.read_bytes()
        doc = yaml.safe_load(raw_bytes)
    except OSError as exc:
        raise _fail(path, f"cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise _fail(path, f"not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(doc, dict):
        raise _fail(path, "expected a mapping at the top level")
    missing = [k for k in ("id", "paper", "where", "claim", "experiment", "cost", *BLOCKS) if k not in doc]
    if missing:
        raise _fail(path, f"missing field(s) {', '.join(missing)}")
    if doc["id"] != path.stem:
        raise _fail(path, f"id {doc['id']!r} must equal the file name {path.stem!r}")
    exp = doc["experiment"]
    if not isinstance(exp, dict) or not exp.get("methods"):
        raise _fail(path, "experiment.methods: name the configured methods the claim runs")
    blocks = {b: _condition(path, doc[b]) for b in BLOCKS}
    methods = set(exp["methods"])
    for b, cond in blocks.items():
        for a in cond.atoms():
            unknown = [m for m in a.methods if m not in methods]
            if unknown:
                raise _fail(path, f"{b}: {a.label()} names {', '.join(unknown)}, not in experiment.methods")
    known = {"id", "paper", "where", "claim", "experiment", "cost", "published", "alpha", "notes", *BLOCKS}
    return Claim(
        id=doc["id"], paper=str(doc["paper"]), where=str(doc["where"]), claim=" ".join(str(doc["claim"]).split()),
        experiment=exp, cost=dict(doc["cost"] or {}), published=dict(doc.get("published") or {}),
        gate=blocks["gate"], confirm=blocks["confirm"], refute=blocks["refute"], source=path,
        digest=hashlib.sha256(raw_bytes).hexdigest()[:12], alpha=float(doc.get("alpha", 0.05)),
        notes=str(doc.get("notes") or ""), extra={k: v for k, v in doc.items() if k not in known},
    )


def load_claims(folder: str | Path) -> list[Claim]:
    """Every ``*.yaml`` claim of ``folder``, sorted by id.

    Raises:
        ConfigError: a file is malformed (see :func:`load_claim`) or the folder does not exist.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no claims folder")
    return [load_claim(p) for p in sorted(folder.glob("*.yaml"))]


__all__ = ["ATOMS", "Atom", "BLOCKS", "Claim", "Condition", "load_claim", "load_claims"]
