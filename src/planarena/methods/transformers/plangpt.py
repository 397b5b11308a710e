"""PlanGPT's token sequences (the decoder-only baseline of the symmetry-aware-transformers paper).

Source: Fritzsche, Gestrin, Seipp (docs/papers/symmetry-aware-transformers.md), Section 2 "PlanGPT"
and Section 3 (Limitations 1-4): the input is ``<start>``, the initial-state atoms, ``<goal>``, the
goal atoms, ``<action>``; the output is the plan's actions, then ``<EOS>``. Every atom and action
becomes its name token followed by one token per argument. State and goal atoms are **sorted**
(PlanGPT pre-sorts them, Limitation 3), and objects are **renamed by type** to random names from a
fixed vocabulary (``truck5`` becomes ``truck2``, Limitation 1). The model reads positions through
learned absolute embeddings (Limitation 4), so unlike the SATr encoder its input, and therefore its
output, changes with the renaming and with the positions atoms end up in.

Where the paper is silent (``PAPER_NOTES.md`` section 1.1): an object's type is the sorted set of
its unary static predicates (the SATr domains are untyped: ``ball``, ``room``, ``airport+location``,
...), ``object`` when it has none; each type has ``max_objects`` names ``<type>_0 ..``; atoms are
sorted after renaming, lexicographically by their tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np

from planarena.core.pddl import split_atom

SPECIALS = ("<pad>", "<start>", "<goal>", "<action>", "<EOS>")


def object_types(objects: Iterable[str], static: Iterable[str]) -> dict[str, str]:
    """Object -> type name: the ``+``-joined sorted names of the unary static predicates that hold
    for it (e.g. ``airport+location``), or ``object``."""
    unary: dict[str, set[str]] = {o: set() for o in objects}
    for atom in static:
        pred, args = split_atom(atom)
        if len(args) == 1 and args[0] in unary:
            unary[args[0]].add(pred)
    return {o: "+".join(sorted(preds)) or "object" for o, preds in unary.items()}


@dataclass(frozen=True)
class PlanGPTVocabulary:
    """Token ids: the specials (``<pad>`` is 0), predicate names, action names, then ``max_objects``
    names per object type (``<type>_<i>``)."""

    predicates: tuple[str, ...]
    actions: tuple[str, ...]
    types: tuple[str, ...]
    max_objects: int

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        """Every token, in id order."""
        names = tuple(f"{t}_{i}" for t in self.types for i in range(self.max_objects))
        return (*SPECIALS, *self.predicates, *self.actions, *names)

    @cached_property
    def _ids(self) -> dict[str, int]:
        return {tok: i for i, tok in enumerate(self.tokens)}

    @property
    def size(self) -> int:
        """Number of token ids."""
        return len(self.tokens)

    def id(self, token: str) -> int:
        """Id of ``token``.

        Raises:
            ValueError: not in the vocabulary (e.g. a type or predicate unseen in training).
        """
        try:
            return self._ids[token]
        except KeyError:
            raise ValueError(f"token {token!r} is not in the PlanGPT vocabulary") from None


def type_renaming(types: dict[str, str], max_objects: int, rng: np.random.Generator | None = None) -> dict[str, str]:
    """Object -> renamed object token ``<type>_<i>``: per type, objects (sorted by name) get the
    names ``0, 1, ..`` (``rng`` None) or a uniformly random injective choice among ``max_objects``.

    Raises:
        ValueError: a type with more objects than names (names the type).
    """
    by_type: dict[str, list[str]] = {}
    for o in sorted(types):
        by_type.setdefault(types[o], []).append(o)
    out: dict[str, str] = {}
    for t, objs in sorted(by_type.items()):
        if len(objs) > max_objects:
            raise ValueError(f"type {t!r} has {len(objs)} objects but only {max_objects} names")
        slots = np.arange(len(objs)) if rng is None else rng.choice(max_objects, size=len(objs), replace=False)
        out.update({o: f"{t}_{int(s)}" for o, s in zip(objs, slots)})
    return out


def _atom_tokens(text: str, names: dict[str, str]) -> tuple[str, ...]:
    name, args = split_atom(text)
    return (name, *(names[a] for a in args))


def encode_sequence(vocab: PlanGPTVocabulary, state: Sequence[str], goal: Sequence[str], names: dict[str, str],
                    plan: Sequence[str] | None = None, with_origin: bool = False):
    """PlanGPT's token ids: ``<start>`` sorted renamed state atoms ``<goal>`` sorted renamed goal
    atoms ``<action>`` (the prompt), then, if ``plan`` is given, its renamed actions and ``<EOS>``.

    With ``with_origin`` also returns ``origin`` (T,) int64: for each token, a number that names the
    same token of the input whatever the renaming (atom ``i`` of ``state`` / ``goal`` in the given
    order, argument ``j``), so two renamed copies can be aligned token by token (the contrastive
    loss, :func:`planarena.methods.transformers.model.pair_losses`).

    Raises:
        ValueError: a negative goal literal, or a token outside the vocabulary.
    """
    if any(g.lstrip("( ").startswith("not") for g in goal):
        raise ValueError("PlanGPT goal tokens are atoms: negative goal literals are not supported")
    width = 1 + max((len(split_atom(a)[1]) for a in (*state, *goal)), default=0)
    seq, origin = ["<start>"], [0]
    for marker, group, base in (("<goal>", state, 1), ("<action>", goal, 1 + width * len(state))):
        for toks, i in sorted((_atom_tokens(a, names), i) for i, a in enumerate(group)):
            seq += toks
            origin += [base + width * i + j for j in range(len(toks))]
        seq.append(marker)
        origin.append(-len(seq))
    if plan is not None:
        for action in plan:
            seq += _atom_tokens(action, names)
        seq.append("<EOS>")
        origin += [-(n + 1) for n in range(len(origin), len(seq))]
    ids = np.asarray([vocab.id(t) for t in seq], dtype=np.int64)
    return (ids, np.asarray(origin, dtype=np.int64)) if with_origin else ids


def alignment(origin_a: np.ndarray, origin_b: np.ndarray) -> np.ndarray:
    """``perm`` (T,): the position in copy b of copy a's token ``t`` (:func:`encode_sequence`'s
    ``origin`` of two renamed copies of one sample).

    Raises:
        ValueError: the copies do not hold the same tokens.
    """
    where = {int(o): t for t, o in enumerate(origin_b)}
    try:
        return np.asarray([where[int(o)] for o in origin_a], dtype=np.int64)
    except KeyError:
        raise ValueError("the two sequences are not renamed copies of one sample") from None


__all__ = ["SPECIALS", "PlanGPTVocabulary", "alignment", "encode_sequence", "object_types", "type_renaming"]
