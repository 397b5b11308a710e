"""Templated English for planning states, actions and goals (input text of the ``embed_text`` stage).

EmbedPlan ("Textual Planning with Explicit Latent Transitions", Appendix C.2 "State
Representation"; docs/papers/embedplan.md) renders each state as one English sentence per true atom,
e.g. "Block A is on the table. Block B is on Block A. Block C is clear. The robotic arm is empty.",
and encodes that text with a frozen sentence encoder. This module produces that text from the ground
atoms of the trajectory contract (:mod:`planarena.core.trajectories`, atoms written ``(predicate
obj1 obj2)``).

Templates live in ``text_templates.yaml`` next to this file, one template set per domain
(blocksworld, gripper, logistics, visitall, and the ACPBench domains depot, ferry, floortile,
goldminer, grid, rovers, satellite, with their PDDL variants), keyed by predicate or action name
(``name/N`` for one arity only). Every predicate or action without a template, in any domain,
renders with the generic fallback::

    (p a b)      ->  "The predicate p holds for a and b."
    (p)          ->  "The predicate p holds."
    (act a b c)  ->  "Apply the action act to a, b and c."

so unseen domains (IPC 2023, ACPBench) still render. :class:`Renderer` renders many states of one
problem with memoised sentences; the ``render_*`` functions are one-off shortcuts.

Rendering decisions (stable: they define the cache keys and the embeddings):

* **States contain fluent atoms only.** The trajectory contract stores static atoms separately
  (``static``); they never change along a trajectory, would dominate the text (visitall's
  ``connected`` grows with the grid) and push state texts past the encoder's token limit (256
  word pieces for MiniLM), diluting the difference between consecutive states that a transition
  model must see. Static atoms are used only to name object kinds (``kinds`` in the YAML), so a
  logistics state reads "Package p0 is in truck t0." rather than "p0 is in t0.".
* Atoms are de-duplicated and sorted by their normalised string ``(p a b)``; sentences are joined
  by single spaces. An empty atom set renders as :data:`EMPTY_STATE`.
* **Goals** render like states, prefixed by ``"Goal: "`` (:func:`render_goal`).
* **Actions** render as one imperative sentence ("Stack block a on block b."), not as
  EmbedPlan's ``stack(BlockA, BlockB)`` strings, so that actions and states share one vocabulary.
* Object names are never re-cased; only template words are capitalised.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

import yaml

#: The YAML file holding the per-domain templates.
TEMPLATES_FILE = Path(__file__).resolve().parent / "text_templates.yaml"

#: Text of a state (or goal body) with no atoms.
EMPTY_STATE = "No atom is true."

#: Prefix of a rendered goal.
GOAL_PREFIX = "Goal: "

_FORMAT_SPECS = ("", "kind", "Kind")
_ATOM_RE = re.compile(r"^\(\s*(.*?)\s*\)$", re.S)
_CALL_RE = re.compile(r"^([^\s(),]+)\s*\((.*)\)$", re.S)


# --------------------------------------------------------------------------------------------
# Template sets
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateSet:
    """The templates of one domain (see the header of ``text_templates.yaml``).

    ``atoms`` and ``actions`` map a lowercase name, or ``name/N`` for arity ``N`` only, to a format
    template; ``kinds`` is the ordered list of ``(unary static predicate, noun)`` pairs used to name
    object kinds.
    """

    name: str
    aliases: tuple[str, ...] = ()
    kinds: tuple[tuple[str, str], ...] = ()
    atoms: Mapping[str, str] = field(default_factory=dict)
    actions: Mapping[str, str] = field(default_factory=dict)

    def atom_template(self, predicate: str, arity: int) -> str | None:
        """Template for ``predicate`` with ``arity`` arguments, or ``None`` (generic fallback)."""
        return _lookup(self.atoms, predicate, arity)

    def action_template(self, action: str, arity: int) -> str | None:
        """Template for ``action`` with ``arity`` arguments, or ``None`` (generic fallback)."""
        return _lookup(self.actions, action, arity)


#: The template set of a domain nobody wrote templates for: every atom uses the generic fallback.
GENERIC = TemplateSet(name="generic")


def _lookup(table: Mapping[str, str], name: str, arity: int) -> str | None:
    key = name.lower()
    return table.get(f"{key}/{arity}", table.get(key))


def normalize_domain_name(name: str) -> str:
    """Canonical form used to match domain names: lowercase, last path part, ``_`` -> ``-``."""
    return str(name).strip().rstrip("/").split("/")[-1].lower().replace("_", "-")


def _validate_template(source: str, key: str, template: object) -> str:
    """Check one template's fields; raise ``ValueError`` naming the file and key if malformed."""
    if not isinstance(template, str) or not template.strip():
        raise ValueError(f"{source}: template {key!r} must be a non-empty string")
    arity = int(key.rsplit("/", 1)[1]) if "/" in key and key.rsplit("/", 1)[1].isdigit() else None
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"{source}: template {key!r} is not a valid format string: {exc}") from exc
    for _literal, fname, spec, conv in fields:
        if fname is None:
            continue
        if not fname.isdigit() or conv is not None or spec not in _FORMAT_SPECS:
            raise ValueError(
                f"{source}: template {key!r}: field {{{fname}{'!' + conv if conv else ''}"
                f"{':' + spec if spec else ''}}} must be {{i}}, {{i:kind}} or {{i:Kind}}"
            )
        if arity is not None and int(fname) >= arity:
            raise ValueError(f"{source}: template {key!r} uses argument {fname} of an arity-{arity} name")
    return template


def _build_set(source: str, name: str, spec: dict) -> TemplateSet:
    if not isinstance(spec, dict):
        raise ValueError(f"{source}: domains.{name} must be a mapping")
    atoms, actions = {}, {}
    for section, table in (("atoms", atoms), ("actions", actions)):
        for key, template in (spec.get(section) or {}).items():
            if not isinstance(key, str):  # YAML 1.1 reads bare on/off/yes/no as booleans
                raise ValueError(
                    f"{source}: domains.{name}.{section}: key {key!r} is not a string; quote it "
                    f"(YAML reads bare on/off/yes/no as booleans)"
                )
            key = key.lower()
            table[key] = _validate_template(source, f"domains.{name}.{section}.{key}", template)
    kinds = []
    for pair in spec.get("kinds") or []:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise ValueError(f"{source}: domains.{name}.kinds entries must be [predicate, noun] pairs")
        kinds.append((str(pair[0]).lower(), str(pair[1])))
    return TemplateSet(
        name=name,
        aliases=tuple(str(a) for a in spec.get("aliases") or ()),
        kinds=tuple(kinds),
        atoms=atoms,
        actions=actions,
    )


@lru_cache(maxsize=8)
def load_templates(path: str | Path = TEMPLATES_FILE) -> dict[str, TemplateSet]:
    """Read a templates YAML file; return ``{normalised name or alias: TemplateSet}``.

    Raises:
        FileNotFoundError: the file does not exist (names it).
        ValueError: the file is not valid YAML, a template is malformed, or two domains claim the
            same name or alias (the message names the file and the key).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: text templates file not found")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("domains"), dict):
        raise ValueError(f"{path}: expected a mapping with a `domains` mapping")
    index: dict[str, TemplateSet] = {}
    for name, spec in raw["domains"].items():
        tset = _build_set(str(path), str(name), spec)
        for alias in (tset.name, *tset.aliases):
            key = normalize_domain_name(alias)
            if key in index and index[key] is not tset:
                raise ValueError(f"{path}: domain name {alias!r} is claimed by two template sets")
            index[key] = tset
    return index


def templates_fingerprint(path: str | Path = TEMPLATES_FILE) -> str:
    """Short SHA-256 of the templates file (recorded in ``meta.json``; texts change with it)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def template_set(domain: str | TemplateSet, *alternatives: str) -> TemplateSet:
    """The template set for ``domain``, else for the first known name in ``alternatives``
    (e.g. the PDDL ``(define (domain ...))`` name), else :data:`GENERIC`."""
    if isinstance(domain, TemplateSet):
        return domain
    index = load_templates()
    for name in (domain, *alternatives):
        if name and normalize_domain_name(name) in index:
            return index[normalize_domain_name(name)]
    return GENERIC


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def parse_atom(text: str) -> tuple[str, tuple[str, ...], bool]:
    """Split a ground atom or action into ``(name, args, negated)``.

    Accepts ``(on a b)`` (the trajectory contract), ``(not (on a b))``, ``on a b`` and ``on(a, b)``.

    Raises:
        ValueError: the string is empty or has no name (the message quotes it).
    """
    s = str(text).strip()
    negated = False
    m = _ATOM_RE.match(s)
    if m:
        inner = m.group(1)
        n = re.match(r"^not\s*(\(.*\))$", inner, re.S | re.I)
        if n:
            name, args, _ = parse_atom(n.group(1))
            return name, args, True
        s = inner
    c = _CALL_RE.match(s)
    if c:
        name = c.group(1)
        args = tuple(a.strip() for a in c.group(2).split(",") if a.strip())
        return name, args, negated
    parts = s.replace("(", " ").replace(")", " ").split()
    if not parts:
        raise ValueError(f"cannot parse atom {text!r}: no predicate name")
    return parts[0], tuple(parts[1:]), negated


def atom_key(text: str) -> str:
    """Normalised string ``(name a b)`` of an atom (used for sorting and de-duplication)."""
    name, args, negated = parse_atom(text)
    core = "(" + " ".join((name, *args)) + ")"
    return f"(not {core})" if negated else core


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------


class _Arg:
    """One object argument; ``format`` spec ``kind``/``Kind`` prefixes its kind noun."""

    __slots__ = ("name", "kind")

    def __init__(self, name: str, kind: str | None):
        self.name = name
        self.kind = kind

    def __format__(self, spec: str) -> str:
        if spec == "" or not self.kind:
            return self.name
        if spec == "Kind":
            return f"{self.kind[:1].upper()}{self.kind[1:]} {self.name}"
        return f"{self.kind} {self.name}"


def _join(items: Iterable[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def generic_atom_sentence(predicate: str, args: Iterable[str]) -> str:
    """Fallback sentence for any atom: ``"The predicate p holds for a and b."``."""
    args = list(args)
    if not args:
        return f"The predicate {predicate} holds."
    return f"The predicate {predicate} holds for {_join(args)}."


def generic_action_sentence(action: str, args: Iterable[str]) -> str:
    """Fallback sentence for any action: ``"Apply the action act to a, b and c."``."""
    args = list(args)
    if not args:
        return f"Apply the action {action}."
    return f"Apply the action {action} to {_join(args)}."


def _fill(template: str | None, args: tuple[str, ...], kinds: Mapping[str, str] | None) -> str | None:
    if template is None:
        return None
    objs = [_Arg(a, (kinds or {}).get(a)) for a in args]
    try:
        return template.format(*objs)
    except IndexError:  # the template needs more arguments than this atom has
        return None


def _negate(sentence: str) -> str:
    first = sentence[:1]
    if first.isupper() and sentence[1:2].islower():
        sentence = first.lower() + sentence[1:]
    return f"It is not the case that {sentence}"


def object_kinds(domain: str | TemplateSet, static: Iterable[str]) -> dict[str, str]:
    """Map object -> kind noun from the unary static atoms named in the domain's ``kinds`` list.

    The first matching ``[predicate, noun]`` pair wins (so a logistics airport is an "airport",
    not a "location"). Domains without ``kinds`` return ``{}``.
    """
    tset = template_set(domain)
    if not tset.kinds:
        return {}
    rank = {pred: (i, noun) for i, (pred, noun) in enumerate(tset.kinds)}
    best: dict[str, tuple[int, str]] = {}
    for atom in static:
        name, args, negated = parse_atom(atom)
        key = name.lower()
        if negated or len(args) != 1 or key not in rank:
            continue
        if args[0] not in best or rank[key][0] < best[args[0]][0]:
            best[args[0]] = rank[key]
    return {obj: noun for obj, (_i, noun) in best.items()}


class Renderer:
    """Renders the atoms, states, goals and actions of one problem (fixed template set and object
    kinds), memoising the sentence of every atom and action string it has seen.

    Use one per trajectory when rendering many states: a repeated atom costs one dict lookup.
    ``kinds`` wins over ``static`` when both are given.
    """

    def __init__(
        self,
        domain: str | TemplateSet,
        *,
        static: Iterable[str] | None = None,
        kinds: Mapping[str, str] | None = None,
    ):
        self.templates = template_set(domain)
        if kinds is None and static is not None:
            kinds = object_kinds(self.templates, static)
        self.kinds = kinds
        self._atoms: dict[str, tuple[str, str]] = {}
        self._actions: dict[str, str] = {}

    def _atom_entry(self, atom_str: str) -> tuple[str, str]:
        entry = self._atoms.get(atom_str)
        if entry is None:
            name, args, negated = parse_atom(atom_str)
            key = "(" + " ".join((name, *args)) + ")"
            sentence = _fill(self.templates.atom_template(name, len(args)), args, self.kinds)
            if sentence is None:
                sentence = generic_atom_sentence(name, args)
            if negated:
                key, sentence = f"(not {key})", _negate(sentence)
            entry = self._atoms[atom_str] = (key, sentence)
        return entry

    def atom(self, atom_str: str) -> str:
        """Sentence of one ground atom (see :func:`render_atom`)."""
        return self._atom_entry(atom_str)[1]

    def atoms(self, atoms: Iterable[str]) -> str:
        """Sentences of the de-duplicated atoms sorted by :func:`atom_key`, joined by single
        spaces; :data:`EMPTY_STATE` if there are none."""
        entries = dict(self._atom_entry(a) for a in atoms)
        if not entries:
            return EMPTY_STATE
        return " ".join(entries[k] for k in sorted(entries))

    def state(self, atoms: Iterable[str]) -> str:
        """Text of a state from its fluent atoms (see :func:`render_state`)."""
        return self.atoms(atoms)

    def goal(self, atoms: Iterable[str]) -> str:
        """``"Goal: "`` + the rendered goal atoms (see :func:`render_goal`)."""
        return GOAL_PREFIX + self.atoms(atoms)

    def action(self, action_str: str) -> str:
        """Imperative sentence of one ground action (see :func:`render_action`)."""
        sentence = self._actions.get(action_str)
        if sentence is None:
            name, args, _negated = parse_atom(action_str)
            sentence = _fill(self.templates.action_template(name, len(args)), args, self.kinds)
            if sentence is None:
                sentence = generic_action_sentence(name, args)
            self._actions[action_str] = sentence
        return sentence


def render_atom(
    domain: str | TemplateSet, atom_str: str, *, kinds: Mapping[str, str] | None = None
) -> str:
    """One sentence for one ground atom, e.g. ``render_atom("blocksworld", "(on a b)")`` ->
    ``"Block a is on block b."``.

    ``kinds`` (object -> noun, from :func:`object_kinds`) fills ``{i:kind}`` fields; without it
    those fields show the bare object name. Unknown predicates, and templates needing more
    arguments than the atom has, use :func:`generic_atom_sentence`. ``(not (p ...))`` renders as
    ``"It is not the case that ..."``.

    Raises:
        ValueError: the atom string cannot be parsed (see :func:`parse_atom`).
    """
    return Renderer(domain, kinds=kinds).atom(atom_str)


def render_action(
    domain: str | TemplateSet, action_str: str, *, kinds: Mapping[str, str] | None = None
) -> str:
    """One imperative sentence for one ground action, e.g. ``render_action("blocksworld",
    "(stack a b)")`` -> ``"Stack block a on block b."``; unknown actions use
    :func:`generic_action_sentence`.

    Raises:
        ValueError: the action string cannot be parsed (see :func:`parse_atom`).
    """
    return Renderer(domain, kinds=kinds).action(action_str)


def render_atoms(
    domain: str | TemplateSet,
    atoms: Iterable[str],
    *,
    static: Iterable[str] | None = None,
    kinds: Mapping[str, str] | None = None,
) -> str:
    """Sentences of the de-duplicated atoms, sorted by :func:`atom_key`, joined by single spaces;
    :data:`EMPTY_STATE` if there are none. ``kinds`` wins over ``static`` when both are given."""
    return Renderer(domain, static=static, kinds=kinds).atoms(atoms)


def render_state(
    domain: str | TemplateSet,
    atoms: Iterable[str],
    *,
    static: Iterable[str] | None = None,
    kinds: Mapping[str, str] | None = None,
) -> str:
    """Text of one state: pass its **fluent** atoms (the trajectory ``states[t]``), not the static
    ones; ``static`` (or precomputed ``kinds``) only names object kinds. See :func:`render_atoms`.

    Example: ``render_state("blocksworld", ["(on a b)", "(clear a)"])`` ->
    ``"Block a is clear. Block a is on block b."``
    """
    return Renderer(domain, static=static, kinds=kinds).state(atoms)


def render_goal(
    domain: str | TemplateSet,
    atoms: Iterable[str],
    *,
    static: Iterable[str] | None = None,
    kinds: Mapping[str, str] | None = None,
) -> str:
    """Text of a goal: ``"Goal: "`` followed by the rendered goal atoms (as :func:`render_state`)."""
    return Renderer(domain, static=static, kinds=kinds).goal(atoms)
