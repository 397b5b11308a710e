"""Atom-level tokens of the symmetry-aware transformers (SATr) and their object renamings.

Source: Fritzsche, Gestrin, Seipp (docs/papers/symmetry-aware-transformers.md), Section 4
"Addressing Atom Order Symmetries with Encoders" and "Contrastive Training".

* Every atom ``p(o_1, ..., o_n)`` of a state, its static atoms and its goal is ONE input token: the
  row ``[id(p), id(o_1), ..., id(o_n), pad, ...]`` of width ``1 + m`` (``m`` the domain's largest
  arity); the model concatenates the row's embeddings and maps them linearly to the atom embedding
  (:class:`planarena.methods.transformers.model.AtomEmbedding`). Goal atoms use the predicate
  ``goal_p`` instead of ``p``, so state and goal form one set of tokens with no separator.
* Objects are never named by their PDDL names: each problem's objects are mapped injectively to
  the object tokens ``obj_0 .. obj_{M-1}`` of a fixed vocabulary (``M = max_objects``). The
  *fixed* renaming maps the i-th object (sorted by name) to ``obj_i`` (Rename-One's reference
  sequence X); a *random* renaming draws the map uniformly (X', and every sequence at evaluation:
  "we always fully randomize names for objects").

Token ids: ``0`` padding, ``1 .. P`` the predicates, ``P+1 .. 2P`` their ``goal_`` forms,
``2P+1 .. 2P+M`` the object tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np

from planarena.core.pddl import split_atom

PAD = 0


@dataclass(frozen=True)
class AtomVocabulary:
    """The token vocabulary of one domain (see the module docstring for the id layout).

    Attributes:
        predicates: the domain's predicate names (sorted; pymimir's typing predicates included).
        max_arity: ``m``, the largest arity of any predicate.
        max_objects: ``M``, object tokens available: a problem with more objects cannot be encoded
            (the paper's "fixed-size vocabulary" limitation, Section 6).
    """

    predicates: tuple[str, ...]
    max_arity: int
    max_objects: int

    @classmethod
    def of_domain(cls, problem, max_objects: int) -> "AtomVocabulary":
        """The vocabulary of ``problem``'s domain (a pymimir problem) with ``max_objects`` object
        tokens."""
        preds = sorted({(p.get_name(), p.get_arity()) for p in problem.get_domain().get_predicates()})
        return cls(tuple(name for name, _ in preds), max((a for _, a in preds), default=0), int(max_objects))

    @property
    def size(self) -> int:
        """Number of token ids (padding included)."""
        return 1 + 2 * len(self.predicates) + self.max_objects

    @property
    def width(self) -> int:
        """``1 + m``: ids per atom row."""
        return 1 + self.max_arity

    def predicate_id(self, name: str, goal: bool = False) -> int:
        """Id of predicate ``name`` (its ``goal_`` form if ``goal``).

        Raises:
            ValueError: the domain has no such predicate.
        """
        try:
            i = self._index[name]
        except KeyError:
            raise ValueError(f"predicate {name!r} is not in the domain's vocabulary {list(self.predicates)}") from None
        return 1 + i + (len(self.predicates) if goal else 0)

    def object_id(self, slot: int) -> int:
        """Id of object token ``obj_slot``."""
        return 1 + 2 * len(self.predicates) + int(slot)

    @cached_property
    def _index(self) -> dict[str, int]:
        return {p: i for i, p in enumerate(self.predicates)}


def renaming(objects: Sequence[str], max_objects: int, rng: np.random.Generator | None = None) -> dict[str, int]:
    """Object -> object-token slot: the fixed renaming (sorted objects to slots ``0, 1, ...``) when
    ``rng`` is None, else a uniformly random injective map into ``0 .. max_objects - 1``.

    Raises:
        ValueError: more objects than object tokens (names the counts).
    """
    objs = sorted(set(objects))
    if len(objs) > max_objects:
        raise ValueError(f"{len(objs)} objects but only {max_objects} object tokens (raise max_objects)")
    slots = np.arange(len(objs)) if rng is None else rng.choice(max_objects, size=len(objs), replace=False)
    return {o: int(s) for o, s in zip(objs, slots)}


def encode_atoms(vocab: AtomVocabulary, atoms: Iterable[str], goal: Iterable[str],
                 names: dict[str, int]) -> np.ndarray:
    """``(N, 1 + m)`` int64 token rows of a state's atoms (fluent and static, in the given order)
    followed by its goal atoms (``goal_`` predicates); ``names`` from :func:`renaming`.

    Raises:
        ValueError: a negative goal literal (SATr's goal tokens are atoms), an unknown predicate or
            an object without a name in ``names``.
    """
    rows: list[list[int]] = []
    for is_goal, group in ((False, atoms), (True, goal)):
        for text in group:
            if is_goal and text.lstrip("( ").startswith("not"):
                raise ValueError(f"negative goal literal {text!r}: SATr goal tokens are atoms")
            pred, args = split_atom(text)
            try:
                row = [vocab.predicate_id(pred, is_goal), *(vocab.object_id(names[a]) for a in args)]
            except KeyError as exc:
                raise ValueError(f"atom {text!r}: object {exc.args[0]!r} has no token (not in the renaming)") from None
            rows.append(row + [PAD] * (vocab.width - len(row)))
    return np.asarray(rows, dtype=np.int64).reshape(-1, vocab.width)


def local_rows(vocab: AtomVocabulary, atoms: Iterable[str], goal: Iterable[str],
               objects: Sequence[str]) -> np.ndarray:
    """:func:`encode_atoms` before renaming: ``(N, 1 + m)`` int64 rows whose predicate column holds
    final ids and whose object columns hold ``1 + `` the object's index in ``sorted(objects)``
    (0: padding). :func:`rename_rows` turns them into token ids for any renaming without parsing
    the atoms again (training renames every sample anew)."""
    local = {o: i for i, o in enumerate(sorted(set(objects)))}
    rows = encode_atoms(vocab, atoms, goal, local)
    obj = rows[:, 1:]
    obj[obj > 0] -= vocab.object_id(0) - 1
    return rows


def rename_rows(vocab: AtomVocabulary, rows: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Token ids of :func:`local_rows` output under a renaming: ``slots[i]`` is the object-token slot
    of the i-th object (sorted by name), e.g. ``np.array(list(renaming(objects, M, rng).values()))``."""
    out = rows.copy()
    obj = out[:, 1:]
    real = obj > 0
    obj[real] = vocab.object_id(0) + np.asarray(slots, dtype=np.int64)[obj[real] - 1]
    return out


def pad_batch(seqs: Sequence[np.ndarray], width: int) -> tuple[np.ndarray, np.ndarray]:
    """Stack token-row sequences of different lengths: ``(B, N_max, width)`` ids (padding rows all
    :data:`PAD`) and the ``(B, N_max)`` bool mask of real atoms."""
    n = max((len(s) for s in seqs), default=0)
    out = np.zeros((len(seqs), n, width), dtype=np.int64)
    mask = np.zeros((len(seqs), n), dtype=bool)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = s
        mask[i, :len(s)] = True
    return out, mask


def pad_sequences(seqs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad 1-d token-id sequences with :data:`PAD`: ``(ids (B, T_max), mask (B, T_max))``
    (:func:`pad_batch` with one id per position)."""
    ids, mask = pad_batch([np.asarray(s, dtype=np.int64)[:, None] for s in seqs], 1)
    return ids[..., 0], mask


@dataclass(frozen=True)
class ActionVocabulary:
    """The SATr encoder-decoder's output tokens (Figure A.1): ``0`` padding, ``1`` ``<BOS>``, ``2``
    ``<EOS>``, then the domain's action names (sorted), then the object tokens ``obj_0 ..
    obj_{M-1}`` (the same renaming as the encoder's input, so a plan names objects by slot)."""

    actions: tuple[str, ...]
    max_objects: int

    BOS = 1
    EOS = 2

    @classmethod
    def of_domain(cls, problem, max_objects: int) -> "ActionVocabulary":
        """The vocabulary of ``problem``'s domain (a pymimir problem)."""
        return cls(tuple(sorted(a.get_name().lower() for a in problem.get_domain().get_actions())), int(max_objects))

    @property
    def size(self) -> int:
        """Number of token ids."""
        return 3 + len(self.actions) + self.max_objects

    @cached_property
    def _action_ids(self) -> dict[str, int]:
        return {a: 3 + i for i, a in enumerate(self.actions)}

    def action_id(self, name: str) -> int:
        """Id of action ``name``.

        Raises:
            ValueError: the domain has no such action.
        """
        try:
            return self._action_ids[name]
        except KeyError:
            raise ValueError(f"action {name!r} is not in the domain's actions {list(self.actions)}") from None

    def object_id(self, slot: int) -> int:
        """Id of object token ``obj_slot``."""
        return 3 + len(self.actions) + int(slot)

    def encode_plan(self, plan: Sequence[str], names: dict[str, int]) -> np.ndarray:
        """Decoder input ``<BOS> a_1 o .. a_n o ..`` and target ``a_1 o .. <EOS>`` (both (T,) int64)
        of ``plan`` (action texts) under the renaming ``names``."""
        toks = [self.BOS]
        for text in plan:
            name, args = split_atom(text)
            toks += [self.action_id(name), *(self.object_id(names[a]) for a in args)]
        toks.append(self.EOS)
        arr = np.asarray(toks, dtype=np.int64)
        return arr[:-1], arr[1:]


class ProblemTokens:
    """Token rows of one pymimir problem's states under one object renaming: static and goal rows
    once, each fluent atom's row once (by pymimir atom index), so a successor costs a lookup."""

    def __init__(self, vocab: AtomVocabulary, problem, names: dict[str, int]):
        from planarena.core.pddl import goal_atoms, static_atoms

        self.vocab, self.problem, self.names = vocab, problem, names
        self.fixed = encode_atoms(vocab, static_atoms(problem), goal_atoms(problem), names)
        self._rows: dict[tuple[int, int], np.ndarray] = {}

    def rows(self, state) -> np.ndarray:
        """``(N, 1 + m)`` token rows of ``state`` (fluent and derived atoms, statics, goal)."""
        from planarena.core.pddl import atom_indices, atom_text

        fluent, derived = atom_indices(state)
        out = [self.fixed]
        for kind, indices in ((0, fluent), (1, derived)):
            for i in indices:
                row = self._rows.get((kind, i))
                if row is None:
                    text = atom_text(self.problem, i, derived=bool(kind))
                    row = self._rows[(kind, i)] = encode_atoms(self.vocab, [text], [], self.names)
                out.append(row)
        return np.concatenate(out)


__all__ = ["PAD", "ActionVocabulary", "AtomVocabulary", "ProblemTokens", "encode_atoms", "local_rows", "pad_batch", "pad_sequences", "rename_rows",
           "renaming"]
