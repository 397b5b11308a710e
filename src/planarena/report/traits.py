"""What each method declares for the report, read through the method registry.

The report knows no method family and tests no method name (docs/layout.md#the-package: the
report imports no family). What is family-specific comes from the records (``family``, ``extra``) or
from :meth:`planarena.methods.base.Method.report_traits`, which this module calls for each method
instance configured in params (``methods.<name>``, resolved by :func:`planarena.methods.resolve`).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from planarena.methods import resolve
from planarena.methods.base import ReportTraits

#: Traits of a method the params do not configure (stale results of a removed block).
PLAIN = ReportTraits()


def method_traits(params: Mapping, names: Iterable[str] = ()) -> dict[str, ReportTraits]:
    """Traits of every method configured in ``params["methods"]`` and of each of ``names``.

    A name without a params block gets :data:`PLAIN`. Importing a method's module is cheap (its
    heavy dependencies load lazily), and no data is read.

    Raises:
        KeyError: a params block names an unregistered ``method:`` (the message lists the valid
            names).
    """
    configured = params.get("methods") if isinstance(params, Mapping) else None
    configured = configured if isinstance(configured, Mapping) else {}
    out: dict[str, ReportTraits] = {}
    for name in [*configured, *names]:
        if name in out:
            continue
        if name not in configured:
            out[name] = PLAIN
            continue
        cls, config = resolve(name, dict(params))
        out[name] = cls.report_traits(config, dict(params))
    return out


def role(traits: Mapping[str, ReportTraits], method: str) -> str:
    """The method's :attr:`ReportTraits.role` (``"model"`` when it declares none)."""
    return traits.get(method, PLAIN).role


def variant(traits: Mapping[str, ReportTraits], method: str) -> str:
    """The method's :attr:`ReportTraits.variant` (``""`` when it declares none)."""
    return traits.get(method, PLAIN).variant


def floor_of(traits: Mapping[str, ReportTraits], method: str) -> str | None:
    """The floor method of ``method``'s :attr:`ReportTraits.floor_group` (None when it has no group,
    is a floor itself, or its group has no floor configured). An untrained twin is never a group's
    floor: it is the floor of its own row only (:func:`twins_of`)."""
    t = traits.get(method, PLAIN)
    if not t.floor_group or t.role == "floor":
        return None
    return next((m for m, o in traits.items() if o.role == "floor" and o.floor_group == t.floor_group
                 and not o.twin_of), None)


def twins_of(traits: Mapping[str, ReportTraits], method: str) -> list[str]:
    """The untrained twins of learned row ``method`` (:attr:`ReportTraits.twin_of`), in traits order
    (docs/concepts.md#untrained-twins)."""
    return [m for m, o in traits.items() if o.twin_of == method]


def is_twin(traits: Mapping[str, ReportTraits], method: str) -> bool:
    """Whether ``method`` is some learned row's untrained twin."""
    return bool(traits.get(method, PLAIN).twin_of)


def info_rows(traits: Mapping[str, ReportTraits]) -> list[tuple[str, str]]:
    """The Info rows every method declares, each distinct row once, in method order."""
    return list(dict.fromkeys(row for t in traits.values() for row in t.info))


def section_notes(
    traits: Mapping[str, ReportTraits], section: str, methods_by_family: Mapping[str, Iterable[str]]
) -> list[str]:
    """Sentences the methods declare for ``section`` (:attr:`ReportTraits.notes`), each once.

    ``methods_by_family``: the families with records in that section and their methods; the
    notes come in family order (sorted), then method order (sorted).
    """
    notes: list[str] = []
    for family in sorted(methods_by_family):
        for m in sorted(methods_by_family[family]):
            for sec, text in traits.get(m, PLAIN).notes:
                if sec == section and text not in notes:
                    notes.append(text)
    return notes


def row_order(methods: Iterable[str], family: Mapping[str, str], traits: Mapping[str, ReportTraits]) -> list[str]:
    """``methods`` in the order of the headline tables: by family (``family``: method -> the
    records' ``family``), then floor group, floors before the models read against them, then name."""
    def key(m: str) -> tuple:
        t = traits.get(m, PLAIN)
        return (family.get(m, ""), t.floor_group, t.role != "floor", m)
    return sorted(dict.fromkeys(methods), key=key)


def method_label(traits: Mapping[str, ReportTraits], method: str) -> str:
    """The method's row label in the headline tables: its name, marked *(floor)* when it is one
    (*(twin of r)* for an untrained twin of row r)."""
    twin = traits.get(method, PLAIN).twin_of
    if twin:
        return f"{method} *(twin of {twin})*"
    return f"{method} *(floor)*" if role(traits, method) == "floor" else method
