"""Training batches of the symmetry-aware transformers: renamed sample pairs, tokenised.

Source: Fritzsche, Gestrin, Seipp (docs/papers/symmetry-aware-transformers.md), Section 4
(contrastive training: every sample is duplicated and renamed once; Rename-One keeps the first copy
under fixed names and randomises the second, used for the heuristic model; Rename-Both randomises
both, used for plan generation) and Appendix E (samples drawn uniformly over goal distances,
:mod:`planarena.methods.transformers.data`).

* :class:`PairBatches`: heuristic samples (state, h*) for the SATr encoder.
* :class:`PlanBatches`: (state, optimal plan) samples for the plan generators, as SATr atom rows
  plus decoder tokens (``encdec``) or PlanGPT token sequences (``plangpt``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from planarena.methods.transformers.data import ProblemSpace, sample_heuristic, sample_plans
from planarena.methods.transformers.tokens import (AtomVocabulary, local_rows, pad_batch,
                                                   pad_sequences, rename_rows)


class PairBatches:
    """Renamed pairs of heuristic samples (see the module docstring), tokenised once per state."""

    def __init__(self, vocab: AtomVocabulary, spaces: Sequence[ProblemSpace]):
        self.vocab, self.spaces = vocab, list(spaces)
        self._rows: dict[tuple[int, int], np.ndarray] = {}

    def rows(self, p: int, s: int) -> np.ndarray:
        key = (p, s)
        hit = self._rows.get(key)
        if hit is None:
            sp = self.spaces[p]
            hit = self._rows[key] = local_rows(self.vocab, sp.atoms(s), sp.goal, sp.objects)
        return hit

    def draw(self, n: int, rng: np.random.Generator, rename_one: bool):
        """``(ids_a, ids_b, mask, h*)`` tensors for ``n`` samples: ``ids_a`` under the fixed
        renaming (Rename-One) or a random one, ``ids_b`` under a random renaming."""
        m = self.vocab.max_objects
        a, b, targets = [], [], []
        for p, s, h in sample_heuristic(self.spaces, n, rng):
            rows = self.rows(p, s)
            k = len(set(self.spaces[p].objects))
            if k > m:
                raise ValueError(f"problem {self.spaces[p].name}: {k} objects but max_objects={m}")
            slot_a = np.arange(k) if rename_one else rng.choice(m, size=k, replace=False)
            a.append(rename_rows(self.vocab, rows, slot_a))
            b.append(rename_rows(self.vocab, rows, rng.choice(m, size=k, replace=False)))
            targets.append(h)
        ids_a, mask = pad_batch(a, self.vocab.width)
        ids_b, _ = pad_batch(b, self.vocab.width)
        return (torch.from_numpy(ids_a), torch.from_numpy(ids_b), torch.from_numpy(mask),
                torch.tensor(targets, dtype=torch.float32))


def _pad(seqs: Sequence[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    ids, mask = pad_sequences(seqs)
    return torch.from_numpy(ids), torch.from_numpy(mask)


class PlanBatches:
    """Renamed pairs of (state, optimal plan) samples (Rename-Both) for a plan generator.

    ``kind`` ``"encdec"``: ``vocab`` = ``(AtomVocabulary, ActionVocabulary)``; ``"plangpt"``:
    ``vocab`` = a :class:`planarena.methods.transformers.plangpt.PlanGPTVocabulary`.
    :meth:`draw` returns ``{"a": model inputs, "b": model inputs, "target": (2, B, T) ids,
    "target_mask": (B, T) bool, "perm": (B, T) or absent}``.
    """

    def __init__(self, kind: str, vocab, spaces: Sequence[ProblemSpace]):
        if kind not in ("encdec", "plangpt"):
            raise ValueError(f"PlanBatches kind {kind!r}: encdec or plangpt")
        self.kind, self.vocab, self.spaces = kind, vocab, list(spaces)
        self._rows: dict[tuple[int, int], np.ndarray] = {}
        self._types: dict[int, dict[str, str]] = {}

    def draw(self, n: int, rng: np.random.Generator) -> dict:
        samples = sample_plans(self.spaces, n, rng)
        return self._encdec(samples, rng) if self.kind == "encdec" else self._plangpt(samples, rng)

    def _encdec(self, samples, rng) -> dict:
        atoms, actions = self.vocab
        m = atoms.max_objects
        rows_a, rows_b, dec, tgt = [], [], ([], []), ([], [])
        for p, s, plan in samples:
            sp = self.spaces[p]
            rows = self._rows.get((p, s))
            if rows is None:
                rows = self._rows[(p, s)] = local_rows(atoms, sp.atoms(s), sp.goal, sp.objects)
            objs = sorted(set(sp.objects))
            if len(objs) > m:
                raise ValueError(f"problem {sp.name}: {len(objs)} objects but max_objects={m}")
            for copy, out in ((0, rows_a), (1, rows_b)):
                slots = rng.choice(m, size=len(objs), replace=False)
                out.append(rename_rows(atoms, rows, slots))
                d_in, d_out = actions.encode_plan(plan, dict(zip(objs, slots.tolist())))
                dec[copy].append(d_in)
                tgt[copy].append(d_out)
        ids_a, mask = pad_batch(rows_a, atoms.width)
        ids_b, _ = pad_batch(rows_b, atoms.width)
        mask = torch.from_numpy(mask)
        dec_a, dmask = _pad(dec[0])
        dec_b, _ = _pad(dec[1])
        tgt_a, _ = _pad(tgt[0])
        tgt_b, _ = _pad(tgt[1])
        return {"a": (torch.from_numpy(ids_a), mask, dec_a, dmask), "b": (torch.from_numpy(ids_b), mask, dec_b, dmask),
                "target": torch.stack([tgt_a, tgt_b]), "target_mask": dmask}

    def _plangpt(self, samples, rng) -> dict:
        from planarena.methods.transformers.plangpt import alignment, encode_sequence, object_types, type_renaming

        seqs, origins, prompt = ([], []), ([], []), []
        for p, s, plan in samples:
            sp = self.spaces[p]
            types = self._types.get(p)
            if types is None:
                types = self._types[p] = object_types(sp.objects, sp.static)
            for copy in (0, 1):
                names = type_renaming(types, self.vocab.max_objects, rng)
                ids, origin = encode_sequence(self.vocab, sp.atoms(s), sp.goal, names, plan, with_origin=True)
                seqs[copy].append(ids)
                origins[copy].append(origin)
            prompt.append(int(np.nonzero(seqs[0][-1] == self.vocab.id("<action>"))[0][0]) + 1)
        inp_a, mask = _pad([s[:-1] for s in seqs[0]])
        inp_b, _ = _pad([s[:-1] for s in seqs[1]])
        tgt_a, _ = _pad([s[1:] for s in seqs[0]])
        tgt_b, _ = _pad([s[1:] for s in seqs[1]])
        # the loss covers the plan and <EOS>: targets at input positions >= prompt length - 1
        pos = torch.arange(mask.shape[1])[None]
        target_mask = mask & (pos >= torch.tensor(prompt)[:, None] - 1)
        t = mask.shape[1]
        perm = np.tile(np.arange(t), (len(samples), 1))
        for i, (oa, ob) in enumerate(zip(origins[0], origins[1])):
            k = len(oa) - 1
            perm[i, :k] = alignment(oa[:-1], ob[:-1])
        return {"a": (inp_a, mask), "b": (inp_b, mask), "target": torch.stack([tgt_a, tgt_b]),
                "target_mask": target_mask, "perm": torch.from_numpy(perm)}


__all__ = ["PairBatches", "PlanBatches"]
