"""Algorithm 4 of the symmetry-aware-transformers paper: greedy heuristic guidance with the SATr
encoder (Section 5, Appendix D4): from the current state apply the applicable action whose
successor has the lowest predicted h; no backtracking.

It runs on :func:`planarena.search.decoding.decode_lockstep` with beam width 1 and revisits allowed
(Algorithm 4 exactly); every step's successors of every problem of a split are scored in one
batched forward pass. A problem whose greedy choice returns to a state on its path stops there
(``stop_on_cycle``: the deterministic policy would repeat the cycle until the horizon, the same
outcome).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from planarena.methods.transformers.tokens import ProblemTokens
from planarena.search.decoding import DecodeProblem, DecodeSettings, decode_lockstep


class HeuristicScorer:
    """:class:`planarena.search.decoding.SuccessorScorer` of Algorithm 4: a successor's score is
    the model's h (lower is better); no per-beam context. The successors of every problem of the
    step are scored together, in length buckets (rows sorted by atom count, a new batch when a row
    is ``ratio`` times longer than the batch's first or the batch has ``chunk`` rows), so that a
    split of small and large problems does not pad every row to the largest."""

    def __init__(self, model, tokens: Sequence[ProblemTokens], chunk: int = 256, ratio: float = 1.25):
        self.model, self.tokens, self.chunk, self.ratio = model, list(tokens), chunk, ratio

    def start(self, problems, states):
        return None

    def score(self, ctx, beam_problem, successors, owner):
        import torch

        from planarena.methods.transformers.tokens import pad_batch

        which = beam_problem[owner]
        rows = [self.tokens[int(p)].rows(s) for p, s in zip(which, successors)]
        out = np.empty(len(rows), dtype=np.float64)
        dev = next(self.model.parameters()).device
        order = np.argsort([len(r) for r in rows], kind="stable")
        with torch.no_grad():
            lo = 0
            while lo < len(order):
                hi = lo + 1
                while (hi < len(order) and hi - lo < self.chunk
                       and len(rows[order[hi]]) <= self.ratio * len(rows[order[lo]])):
                    hi += 1
                ids, mask = pad_batch([rows[i] for i in order[lo:hi]], self.tokens[0].vocab.width)
                h = self.model(torch.from_numpy(ids).to(dev), torch.from_numpy(mask).to(dev))[0]
                out[order[lo:hi]] = h.cpu().numpy()
                lo = hi
        return out, None

    def select(self, cand_ctx, chosen):
        return None


def guide(model, problems: Sequence, tokens: Sequence[ProblemTokens], horizon: int, limits: Sequence[float],
          stats: dict | None = None):
    """Algorithm 4 over pymimir ``problems`` in lockstep (``tokens[i]``: problem ``i`` under its
    renaming); :class:`planarena.search.decoding.DecodeResult` per problem; ``stats`` as
    :func:`planarena.search.decoding.decode_lockstep`'s."""
    todo = [DecodeProblem(p, len(p.get_objects()), lim) for p, lim in zip(problems, limits)]
    settings = DecodeSettings(beam_width=1, horizon=horizon, revisit=True, stop_on_cycle=True)
    return decode_lockstep(todo, HeuristicScorer(model, tokens), settings, stats)


__all__ = ["HeuristicScorer", "guide"]
