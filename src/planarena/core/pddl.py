"""The one PDDL layer: pymimir parsing with clear errors, cached grounding, plan replay, atoms as text.

pymimir (Drexler et al., "Mimir: A Generalized Planning Framework") parses, grounds lazily and
generates successors. Every parsed problem is cached per (domain file, problem file) so that no
stage re-parses or re-grounds a problem inside a loop.

Two readers work on the text alone, where pymimir cannot serve: :func:`read_problem_text` reads the
objects, initial atoms and goal literals of a problem file without its domain file (the FSF encoding
binds a problem by its file alone) and :func:`count_objects` counts the declared objects of a
problem text for the manifest. Atom and action strings are normalised and split by
:func:`normalise_action` and :func:`split_atom`.
"""

from __future__ import annotations

import functools
import gzip
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymimir


class PDDLError(ValueError):
    """A PDDL file does not parse, or a plan does not apply. The message starts with the file path
    (``path:line:column:`` where the position is known) and is one line per bad file."""

    def renamed(self, shown: str | os.PathLike, actual: str | os.PathLike) -> "PDDLError":
        """The same error naming ``shown`` (e.g. the user's original file) instead of ``actual``
        (e.g. its copy under ``data/problems``)."""
        return type(self)(str(self).replace(str(actual), str(shown)))


# ------------------------------------------------------------------------------------------------
# Reading a user's file: one clear line for every way it can be wrong
# ------------------------------------------------------------------------------------------------


def pddl_text(data: bytes, path: str | os.PathLike, kind: str) -> str:
    """The text of a PDDL ``kind`` file (``"domain"``, ``"problem"``, ``"plan"``) from its bytes.

    Raises:
        PDDLError: the file is empty (or only comments; a plan may be empty), holds binary content (a NUL byte), or is not
            UTF-8 text; the message names ``path``, the line and column, and what is wrong.
    """
    nul = data.find(b"\x00")
    if nul >= 0:
        line, col = _position(data, nul)
        raise PDDLError(f"{path}:{line}:{col}: binary content (a NUL byte), not a PDDL {kind} file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _position(data, exc.start)
        raise PDDLError(f"{path}:{line}:{col}: not UTF-8 text (byte 0x{data[exc.start]:02x}); "
                        f"save the {kind} file as UTF-8 or ASCII") from None
    if kind != "plan" and not re.sub(r";[^\n]*", "", text).strip():
        raise PDDLError(f"{path}: empty {kind} file")
    return text


def _position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a byte offset."""
    line = data.count(b"\n", 0, offset) + 1
    return line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def read_pddl_file(path: str | os.PathLike, kind: str) -> str:
    """Read a user's PDDL ``kind`` file (``.gz`` allowed) and check it is non-empty UTF-8 text with
    balanced parentheses.

    Raises:
        PDDLError: missing, a directory, unreadable, empty, binary, not UTF-8, or unbalanced
            parentheses (one line naming ``path``, with line and column where known).
    """
    p = Path(path)
    if p.is_dir():
        raise PDDLError(f"{p}: is a directory, expected a PDDL {kind} file")
    if not p.exists():
        raise PDDLError(f"{p}: {kind} file not found")
    try:
        data = p.read_bytes()
        if p.suffix == ".gz":
            data = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise PDDLError(f"{p}: cannot read the {kind} file: {exc.strerror or exc}") from None
    text = pddl_text(data, p, kind)
    if kind != "plan":
        check_parentheses(text, p, kind)
    return text


def check_parentheses(text: str, path: str | os.PathLike, kind: str) -> None:
    """Raise a :class:`PDDLError` naming the unmatched parenthesis (line and column), if any;
    ``;`` comments are skipped."""
    opened: list[tuple[int, int]] = []
    for line_no, line in enumerate(text.splitlines(), 1):
        for col, ch in enumerate(line.split(";", 1)[0], 1):
            if ch == "(":
                opened.append((line_no, col))
            elif ch == ")":
                if not opened:
                    raise PDDLError(f"{path}:{line_no}:{col}: unbalanced parentheses: ')' closes nothing "
                                    f"(malformed {kind})")
                opened.pop()
    if opened:
        line_no, col = opened[-1]
        raise PDDLError(f"{path}:{line_no}:{col}: unbalanced parentheses: '(' is never closed "
                        f"(malformed {kind})")


def _parser_message(raw: str, path: str | os.PathLike, kind: str) -> str:
    """One line from pymimir's multi-line parser message: ``path:line:col: malformed <kind>: what
    (at 'text')``."""
    lines = [ln.rstrip() for ln in raw.strip("\n").splitlines()]
    what, line_no, col, snippet = "", None, None, None
    for i, ln in enumerate(lines):
        m = re.match(r"In file .*, line (\d+):", ln)
        if m:
            line_no = int(m.group(1))
        elif "<<-- Here" in ln and "~" in ln and i > 0:
            col = ln.index("~") + 1
            snippet = lines[i - 1][col - 1: col - 1 + ln.count("~")]
        elif ln.startswith("Error! Expecting:") and not what:
            what = "expected " + ln.removeprefix("Error! Expecting:").strip().removesuffix("here:").strip()
        elif ln.strip() and not what and line_no is None:
            what = ln.strip()
    m = re.match(r'Mismatched domain names "(\S+) != (\S+?)\.?$', what)
    if m:
        what = f"the problem names domain {m.group(2)!r} but the domain file defines {m.group(1)!r}"
    where = f"{path}:{line_no}:{col}" if line_no and col else f"{path}:{line_no}" if line_no else f"{path}"
    at = f" (at {snippet.strip()!r})" if snippet and snippet.strip() else ""
    return f"{where}: malformed {kind}: {what or 'syntax error'}{at}"


#: pymimir's message when a problem types its objects but the domain does not declare ``:typing``
_NO_TYPING = "Undefined requirement: :typing"
_REQUIREMENTS = re.compile(r"\(\s*:requirements\b", re.IGNORECASE)


def add_typing_requirement(domain_text: str) -> str | None:
    """The domain text with ``:typing`` added to its ``(:requirements ...)`` (or a new
    ``(:requirements :typing)`` after ``(domain <name>)``), or None when it already declares it.

    Used for STRIPS domains whose problems type every object ``- object`` (IPC 2023 Learning Track
    Blocksworld): Fast Downward and VAL read these, pymimir needs the requirement. Every untyped
    name has type ``object``, so adding ``:typing`` changes nothing else.
    """
    if re.search(r":typing\b", domain_text, re.IGNORECASE):
        return None
    m = _REQUIREMENTS.search(domain_text)
    if m:
        return domain_text[: m.end()] + " :typing" + domain_text[m.end():]
    m = re.search(r"\(\s*domain\s+[^\s()]+\s*\)", domain_text, re.IGNORECASE)
    if not m:
        return None
    return domain_text[: m.end()] + "\n(:requirements :typing)" + domain_text[m.end():]


def needs_typing(exc: PDDLError, domain_text: str) -> str | None:
    """The domain text with ``:typing`` added (:func:`add_typing_requirement`) when ``exc`` is
    pymimir rejecting a problem that types its objects against this domain, which declares no
    ``:typing``; else None. The one test for that case (``generate`` rewrites its copy of the domain,
    :func:`load_problem` reads a temporary one)."""
    return add_typing_requirement(domain_text) if _NO_TYPING in str(exc) else None


def parse_domain(domain_file: str | Path) -> "pymimir.Domain":
    """Parse a domain file, uncached (for files that may be rewritten in place; else :func:`load_domain`).

    Raises:
        PDDLError: the file is missing, not PDDL text, declares a requirement planarena does not
            support (:func:`requirement_refusal`) or is malformed (one line: the file, the line and
            column, and the parser's reason).
    """
    text = read_pddl_file(domain_file, "domain")
    refused = requirement_refusal(text, str(domain_file))
    if refused:   # before the parser, which would stop at the first unsupported construct
        raise PDDLError(refused)
    try:
        return pymimir.Domain(str(domain_file))
    except RuntimeError as exc:
        raise PDDLError(_parser_message(str(exc), domain_file, "domain")) from None


@functools.lru_cache(maxsize=64)
def load_domain(domain_file: str) -> "pymimir.Domain":
    """Parse a domain file (cached by path; :func:`parse_domain` once per path).

    Raises:
        PDDLError: the file is missing or malformed (message names the file and the parser's reason).
    """
    return parse_domain(domain_file)


@functools.lru_cache(maxsize=16)
def _typed_domain(domain_file: str) -> "pymimir.Domain":
    """The domain parsed with ``:typing`` added (:func:`add_typing_requirement`), from a temporary
    copy; a warning names the user's file."""
    import sys
    import tempfile

    text = add_typing_requirement(Path(domain_file).read_text())
    with tempfile.TemporaryDirectory(prefix="planarena-domain-") as tmp:
        copy = Path(tmp) / "domain.pddl"
        copy.write_text(text)
        try:
            domain = pymimir.Domain(str(copy))
        except RuntimeError as exc:
            raise PDDLError(_parser_message(str(exc), domain_file, "domain")) from None
    print(f"warning: {domain_file}: declares no :typing but its problems type their objects; read as if "
          f":typing were declared (as Fast Downward and VAL do)", file=sys.stderr)
    return domain


@functools.lru_cache(maxsize=256)
def load_problem(domain_file: str, problem_file: str) -> "pymimir.Problem":
    """Parse a problem against its domain (cached by both paths; grounding is lazy in pymimir):
    :func:`parse_problem`, once per pair of paths.

    Raises:
        PDDLError: either file is missing or malformed (one line naming the file).
    """
    return parse_problem(domain_file, problem_file)


def parse_problem(domain_file: str | Path, problem_file: str | Path) -> "pymimir.Problem":
    """Parse a problem against its (cached) domain, uncached: a new problem object each call, with
    no states or grounding yet (a measurement of one search is not helped by another's).

    A problem that types its objects against a domain without ``:typing`` is read against the domain
    with the requirement added (:func:`add_typing_requirement`, with a warning naming the domain).

    Raises:
        PDDLError: either file is missing or malformed (one line naming the file).
    """
    domain = load_domain(str(domain_file))
    try:
        return parse_problem_of(domain, problem_file)
    except PDDLError as exc:
        if needs_typing(exc, Path(domain_file).read_text()) is None:
            raise
    return parse_problem_of(_typed_domain(str(domain_file)), problem_file)


def fresh_problem(domain_file: str | Path, problem_file: str | Path) -> "pymimir.Problem":
    """The problem parsed anew against the cached domain (:func:`load_problem` only checks the
    files and handles ``:typing``): its states and atom numbering start empty, so work on it
    (a training unit, a search) does not depend on what ran before in the same process. A cached
    problem made a 2-worker cluster and ``jobs: 1`` train different R-GNN VisitAll models.

    Raises:
        PDDLError: either file is missing or malformed.
    """
    cached = load_problem(str(domain_file), str(problem_file))
    return parse_problem_of(cached.get_domain(), problem_file)


def parse_problem_of(domain: "pymimir.Domain", problem_file: str | Path) -> "pymimir.Problem":
    """Parse a problem file against an already parsed domain (uncached).

    Raises:
        PDDLError: the file is missing, not PDDL text or malformed (one line: the file, the line and
            column, and the parser's reason).
    """
    read_pddl_file(problem_file, "problem")
    try:
        return pymimir.Problem(domain, str(problem_file))
    except RuntimeError as exc:
        raise PDDLError(_parser_message(str(exc), problem_file, "problem")) from None


def parse_check(domain_file: str | Path, problem_file: str | Path) -> None:
    """Parse both files and raise :class:`PDDLError` naming the bad one; returns nothing on success."""
    load_problem(str(domain_file), str(problem_file))


_REQUIREMENTS_RE = re.compile(r"\(:requirements([^)]*)\)", re.IGNORECASE)


def domain_requirements(domain_text: str) -> frozenset[str]:
    """The PDDL requirements a domain declares in ``(:requirements ...)``, lowercased, with the
    composite ones (``:adl``, ``:quantified-preconditions``, ``:fluents``) expanded to the atomic
    requirements they stand for (pypddl-datasets' table of PDDL 3.1); ``:strips`` when none is
    declared (PDDL's default)."""
    from pypddl_datasets.requirements import COMPOSITE_TO_REQUIREMENTS

    composite = {c.value: frozenset(r.value for r in rs) for c, rs in COMPOSITE_TO_REQUIREMENTS.items()}
    text = re.sub(r";[^\n]*", " ", domain_text)
    m = _REQUIREMENTS_RE.search(text)
    declared = m.group(1).lower().split() if m else [":strips"]
    out: set[str] = set()
    for req in declared:
        out.update(composite.get(req, {req}))
    return frozenset(out)


#: Requirements planarena refuses up front, and why: no row, reference planner (Fast Downward) or the
#: validator (pymimir) handles them. Which rows handle the others is each row's
#: :attr:`planarena.methods.base.Method.requirements`.
NOT_SUPPORTED: dict[str, str] = {
    ":durative-actions": "temporal planning",
    ":duration-inequalities": "temporal planning",
    ":continuous-effects": "temporal planning",
    ":timed-initial-literals": "temporal planning",
    ":timed-initial-effects": "temporal planning",
    ":preferences": "PDDL3 soft goals",
    ":constraints": "PDDL3 state-trajectory constraints",
    ":numeric-fluents": "numeric planning: Fast Downward, the reference planner every learned row trains on, "
                        "plans no numeric fluents beyond :action-costs",
    ":object-fluents": "PDDL 3.1 object fluents",
}


def _numeric_beyond_costs(domain_text: str) -> bool:
    """Whether a domain uses numeric fluents beyond action costs: an effect that changes a function
    other than ``total-cost`` (``increase``, ``decrease``, ``assign``, ``scale-up``, ``scale-down``)
    or a numeric comparison in a condition. Static functions inside a cost expression
    (``(increase (total-cost) (hiring-cost ?d))``, IPC Cave Diving) are action costs."""
    text = re.sub(r";[^\n]*", " ", domain_text).lower()
    changed = re.search(r"\((?:increase|decrease|assign|scale-up|scale-down)\s*\(\s*(?!total-cost[\s)])", text)
    compared = re.search(r"\((?:<|>|<=|>=|=)\s*\(", text)
    return bool(changed or compared)


def requirement_refusal(domain_text: str, shown_file: str) -> str | None:
    """One line refusing a domain whose declared requirements (:func:`domain_requirements`, so
    through a composite such as ``:fluents`` too) include one of :data:`NOT_SUPPORTED`, naming
    ``shown_file``, the requirements and why; None when there is none. ``:numeric-fluents`` is
    refused only when the domain uses numbers beyond action costs (:func:`_numeric_beyond_costs`;
    many IPC domains declare it for action costs alone, which Fast Downward plans). It is said before any parser
    reads the domain, which would otherwise fail at the first unsupported construct with a syntax
    message (``:durative-action``: "malformed domain: expected ')'")."""
    bad = sorted(domain_requirements(domain_text) & set(NOT_SUPPORTED))
    if ":numeric-fluents" in bad and not _numeric_beyond_costs(domain_text):
        bad.remove(":numeric-fluents")   # declared for action costs only, as many IPC domains do
    if not bad:
        return None
    why = "; ".join(f"{r}: {NOT_SUPPORTED[r]}" for r in bad)
    return (f"{shown_file}: declares {', '.join(bad)}, which planarena does not support ({why}); "
            "no row, reference planner or the validator can use this domain")


_OBJECTS_RE = re.compile(r"\(:objects(.*?)\)", re.IGNORECASE | re.DOTALL)


def count_objects(problem_text: str) -> int:
    """Number of objects declared in ``(:objects ...)`` (type annotations ``- t`` not counted)."""
    m = _OBJECTS_RE.search(problem_text)
    if not m:
        return 0
    body = re.sub(r";[^\n]*", " ", m.group(1))
    tokens = body.split()
    n, skip = 0, False
    for tok in tokens:
        if skip:
            skip = False
            continue
        if tok == "-":
            skip = True
            continue
        n += 1
    return n


# ------------------------------------------------------------------------------------------------
# Problem text without its domain: objects, init atoms, conjunctive goal (no grounding)
# ------------------------------------------------------------------------------------------------


def format_atom(name: str, args: tuple[str, ...] | list[str]) -> str:
    """``("on", ("a", "b"))`` -> ``"(on a b)"`` (the text form of atoms and actions; no case change)."""
    return "(" + " ".join((name, *args)) + ")"


_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(frozen=True)
class ProblemText:
    """What FSF needs from a problem file.

    ``objects`` maps each declared object to its PDDL type (``None`` if untyped); ``init`` holds the
    positive initial atoms; ``goal`` the goal literals of a conjunctive goal (positive atoms as
    ``"(p a b)"``, negative ones as ``"(not (p a b))"``). All names are lower case.
    """

    path: str
    name: str
    objects: dict[str, str | None]
    init: tuple[str, ...]
    goal: tuple[str, ...]


def _sexp(text: str, path: str) -> list:
    text = re.sub(r";[^\n]*", " ", text).lower()
    stack: list[list] = [[]]
    for tok in _TOKEN.findall(text):
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if len(stack) == 1:
                raise PDDLError(f"{path}: unbalanced ')' in PDDL problem")
            inner = stack.pop()
            stack[-1].append(inner)
        else:
            stack[-1].append(tok)
    if len(stack) != 1:
        raise PDDLError(f"{path}: unbalanced '(' in PDDL problem")
    return stack[0]


def _typed_list(items: list, path: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    pending: list[str] = []
    i = 0
    while i < len(items):
        tok = items[i]
        if tok == "-":
            if i + 1 >= len(items):
                raise PDDLError(f"{path}: ':objects' ends with '-' and no type")
            typ = items[i + 1]
            typ = typ if isinstance(typ, str) else " ".join(t for t in typ if isinstance(t, str))
            for o in pending:
                out[o] = typ
            pending = []
            i += 2
            continue
        if not isinstance(tok, str):
            raise PDDLError(f"{path}: unexpected list in ':objects'")
        pending.append(tok)
        i += 1
    for o in pending:
        out[o] = None
    return out


def _goal_literals(node: Any, path: str, out: list[str]) -> None:
    if not isinstance(node, list) or not node:
        raise PDDLError(f"{path}: malformed goal {node!r}")
    head = node[0]
    if head == "and":
        for child in node[1:]:
            _goal_literals(child, path, out)
    elif head == "not":
        inner = node[1] if len(node) == 2 and isinstance(node[1], list) else None
        if inner is None or not all(isinstance(t, str) for t in inner):
            raise PDDLError(f"{path}: FSF supports conjunctive goals of literals only; got (not ...) over a formula")
        out.append(f"(not {format_atom(inner[0], inner[1:])})")
    elif isinstance(head, str) and all(isinstance(t, str) for t in node):
        out.append(format_atom(head, node[1:]))
    else:
        raise PDDLError(f"{path}: FSF supports conjunctive goals of literals only; found {head!r}")


@functools.lru_cache(maxsize=4096)
def _read_problem_cached(path: str, _mtime_ns: int, _size: int) -> ProblemText:
    tree = _sexp(Path(path).read_text(), path)
    define = next((x for x in tree if isinstance(x, list) and x and x[0] == "define"), None)
    if define is None:
        raise PDDLError(f"{path}: no (define (problem ...)) in file")
    name, objects, init, goal = Path(path).stem, {}, [], []
    for part in define[1:]:
        if not isinstance(part, list) or not part:
            continue
        head = part[0]
        if head == "problem" and len(part) > 1 and isinstance(part[1], str):
            name = part[1]
        elif head == ":objects":
            objects.update(_typed_list(part[1:], path))
        elif head == ":init":
            for a in part[1:]:
                if isinstance(a, list) and a and a[0] not in ("not", "=") and all(isinstance(t, str) for t in a):
                    init.append(format_atom(a[0], a[1:]))
        elif head == ":goal" and len(part) > 1:
            _goal_literals(part[1], path, goal)
    return ProblemText(path=path, name=name, objects=objects, init=tuple(init), goal=tuple(goal))


@functools.lru_cache(maxsize=256)
def _domain_constants_cached(path: str, _mtime_ns: int, _size: int) -> dict[str, str | None]:
    tree = _sexp(Path(path).read_text(), path)
    define = next((x for x in tree if isinstance(x, list) and x and x[0] == "define"), None)
    if define is None:
        raise PDDLError(f"{path}: no (define (domain ...)) in file")
    out: dict[str, str | None] = {}
    for part in define[1:]:
        if isinstance(part, list) and part and part[0] == ":constants":
            out.update(_typed_list(part[1:], path))
    return out


def domain_constants(path: str | os.PathLike) -> dict[str, str | None]:
    """The ``:constants`` of a PDDL domain file, each with its declared type (``None``: untyped);
    empty when the domain declares none. Cached per (path, mtime, size).

    Raises:
        PDDLError: the file is missing or malformed (the message starts with the path).
    """
    p = str(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise PDDLError(f"{p}: domain file not found") from None
    return dict(_domain_constants_cached(p, st.st_mtime_ns, st.st_size))


def read_problem_text(path: str | os.PathLike) -> ProblemText:
    """Objects (with types), initial atoms and goal literals of a PDDL problem file.

    A small s-expression reader (no domain file, no grounding; used by the FSF encoding,
    :mod:`planarena.features.fsf`); cached per (path, mtime, size). ``:constants`` of the domain are
    not read (none of the FSF domains has any). Initial atoms are the positive ground atoms of
    ``:init`` in file order (``=`` fluent assignments skipped); goal literals are in file order.

    Raises:
        PDDLError: (a ``ValueError``) the file is missing or malformed, or its goal is not a
            conjunction of literals (the message starts with the path).
    """
    p = str(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise PDDLError(f"{p}: problem file not found") from None
    return _read_problem_cached(p, st.st_mtime_ns, st.st_size)


def atoms_of(state: "pymimir.State") -> list[str]:
    """Sorted fluent and derived ground atoms of a state, as ``"(pred o1 o2)"`` strings."""
    return sorted(str(a) for a in state.get_atoms(ignore_static=True))


def atom_indices(state: "pymimir.State") -> tuple[list[int], list[int]]:
    """The state's ``(fluent, derived)`` ground atoms as indices into the problem's pymimir
    repositories: no strings, about 2 us a state against 15 us for :func:`atoms_of`. Turn an
    index into text once with :func:`atom_text`.

    Reads the wrapper's underlying state (pymimir 0.13 exposes the index lists only there).
    """
    adv = state._advanced_state
    return list(adv.get_fluent_atoms()), list(adv.get_derived_atoms())


def atom_text(problem: "pymimir.Problem", index: int, derived: bool = False) -> str:
    """``"(pred o1 o2)"`` of a fluent (or derived) atom index of :func:`atom_indices` (the text
    :func:`atoms_of` gives)."""
    repos = problem._advanced_problem.get_repositories()
    get = repos.get_derived_ground_atoms_from_indices if derived else repos.get_fluent_ground_atoms_from_indices
    return str(pymimir.GroundAtom(get([int(index)])[0]))


def state_from_atoms(problem: "pymimir.Problem", atoms) -> "pymimir.State":
    """The pymimir state of ``problem`` whose fluent atoms are those of ``atoms`` (texts
    ``"(pred o1 o2)"``; atoms of static predicates are ignored: pymimir takes them from the
    problem). Lets a search-free caller ask for the successors of any state, e.g. the test states of
    the schema-learning protocol. Reads the wrapper's repositories (pymimir 0.13 has no public
    constructor).

    Raises:
        PDDLError: an atom names an unknown predicate or object (one line naming both).
    """
    preds = {p.get_name(): p for p in problem.get_domain().get_predicates()}
    objs = {o.get_name(): o for o in problem.get_objects()}
    fluent = []
    for text in atoms:
        name, args = split_atom(text)
        if name not in preds or any(a not in objs for a in args):
            raise PDDLError(f"{problem.get_name()}: atom {text} names an unknown predicate or object")
        atom = problem.new_ground_atom(preds[name], [objs[a] for a in args])
        if atom.is_fluent():
            fluent.append(atom._advanced_ground_atom)
    repo = problem._search_context.get_state_repository()
    state, _ = repo.get_or_create_state(pymimir.advanced.formalism.FluentGroundAtomList(fluent), [])
    return type(problem.get_initial_state())(state, problem)


def static_atoms(problem: "pymimir.Problem") -> list[str]:
    """Sorted static ground atoms of a problem."""
    return sorted(str(a) for a in problem.get_initial_atoms(ignore_fluent=True, ignore_derived=True))


def goal_atoms(problem: "pymimir.Problem") -> list[str]:
    """Sorted positive goal atoms (negative goal literals are rendered as ``(not (p ...))``)."""
    out = []
    for lit in problem.get_goal_condition().get_literals():
        atom = str(lit.get_atom())
        out.append(atom if lit.get_polarity() else f"(not {atom})")
    return sorted(out)


def normalise_action(text: str) -> str:
    """``"(Pick-Up B1)"`` / ``"pick-up b1"`` -> ``"(pick-up b1)"`` (lower case, one space)."""
    t = text.strip().lower()
    if t.startswith("(") and t.endswith(")"):
        t = t[1:-1]
    return "(" + " ".join(t.split()) + ")"


def split_atom(text: str) -> tuple[str, tuple[str, ...]]:
    """``"(On A B)"`` / ``"on a b"`` -> ``("on", ("a", "b"))``: name and arguments, lower case
    (the tokens of :func:`normalise_action`).

    Raises:
        PDDLError: the string has no name (empty or ``"()"``).
    """
    toks = normalise_action(text)[1:-1].split()
    if not toks:
        raise PDDLError(f"empty atom {text!r}: no predicate or action name")
    return toks[0], tuple(toks[1:])


def read_plan_file(path: str | Path) -> list[str]:
    """Actions of a plan file (one ``(action args)`` per line; ``;`` comments ignored; an empty file
    is the empty plan).

    Raises:
        PDDLError: the file is missing, a directory, binary or not UTF-8 (one line naming it).
    """
    actions = []
    for line in read_pddl_file(path, "plan").splitlines():
        line = line.split(";", 1)[0].strip()
        if line:
            actions.append(normalise_action(line))
    return actions


def replay(problem: "pymimir.Problem", actions: list[str], source: str = "plan"):
    """Apply ``actions`` from the initial state and return (states, ground_actions).

    ``states`` has ``len(actions) + 1`` pymimir states. Matching is by the printed ground action,
    both sides normalised (pymimir prints a 0-ary action as ``"(clear-all )"``, a plan file
    ``"(clear-all)"``).

    Raises:
        PDDLError: an action is not applicable in the state reached (names ``source``, the step and
            the action).
    """
    state = problem.get_initial_state()
    states = [state]
    ground = []
    for t, act in enumerate(actions):
        wanted = normalise_action(act)
        match = None
        for ga in state.generate_applicable_actions():
            if normalise_action(str(ga)) == wanted:
                match = ga
                break
        if match is None:
            raise PDDLError(f"{source}: step {t}: action {wanted} is not applicable")
        state = match.apply(state)
        states.append(state)
        ground.append(match)
    return states, ground
