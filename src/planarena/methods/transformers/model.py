"""The SATr heuristic model and the symmetry-aware contrastive loss.

Source: Fritzsche, Gestrin, Seipp (docs/papers/symmetry-aware-transformers.md), Section 4 (atom
embeddings, shared weights, the contrastive objective L = w1 L_pred + w2 L_att + w3 L_hid), Figure 1
(readout of the summed first-k hidden dimensions) and Appendix E (no layer normalisation, k = 32,
MSE for the heuristic, weights 1/1/1).

* :class:`AtomEmbedding`: ``T = W (E[p] | E[o_1] | ... | E[pad]) + b`` per atom row.
* :class:`SharedEncoderLayer`: multi-head self-attention and an MLP with residual connections, no
  layer normalisation, no positional encoding (so the encoder is permutation-equivariant in the
  atoms); the SAME layer is applied ``layers`` times (weights shared across layers). It returns
  its attention scores, which the contrastive loss compares.
* :class:`SATrEncoder`: embedding -> shared layers -> readout ``MLP(sum over atoms of X[:, :k])``
  -> ``h`` (the predicted goal distance h*).
* :func:`contrastive_loss`: ``L_att`` (squared differences of every attention score of every layer
  and head) and ``L_hid`` (squared differences of the first ``k`` hidden dimensions of every token
  after every layer), each summed and divided by the batch size, over real atoms only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


class AtomEmbedding(nn.Module):
    """Atom rows ``(B, N, 1 + m)`` of token ids -> ``(B, N, d)`` atom embeddings (Section 4, the
    equation for ``T_{p(o_1..o_n)}``); padding id 0 has a zero embedding."""

    def __init__(self, vocab_size: int, width: int, d: int, token_dim: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, token_dim, padding_idx=0)
        self.project = nn.Linear(token_dim * width, d)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.project(self.tokens(ids).flatten(2))


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, allowed: torch.Tensor,
           need_scores: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Scaled dot-product attention (Section 2): ``q`` (B, h, T, dk), ``k``/``v`` (B, h, S, dk),
    ``allowed`` broadcastable to (B, h, T, S) bool. Returns ``(out (B, h, T, dk), scores (B, h, T,
    S))``; a query with no allowed key (a padding row) gets zero scores instead of NaN. Without
    ``need_scores`` (inference: the contrastive loss is not computed) the fused kernel runs and the
    scores are None (the same output up to float rounding)."""
    if not need_scores:
        any_key = allowed.any(-1, keepdim=True)
        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed | ~any_key)
        return out * any_key, None
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    s = s.masked_fill(~allowed, float("-inf"))
    att = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return att @ v, att


class SharedEncoderLayer(nn.Module):
    """One encoder layer (Section 2's equations without the LayerNorms, Appendix E); returns the
    new hidden states ``(B, N, d)`` and the attention scores ``(B, heads, N, N)`` (None in eval
    mode, where the fused attention kernel runs)."""

    def __init__(self, d: int, heads: int, ff: int, dropout: float = 0.0):
        super().__init__()
        if d % heads:
            raise ValueError(f"model dimension {d} is not divisible by {heads} heads")
        self.heads, self.dk = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, self.dk).permute(2, 0, 3, 1, 4)
        out, att = attend(q, k, v, mask[:, None, None, :], need_scores=self.training)
        x = x + self.drop(self.out(out.transpose(1, 2).reshape(b, n, d)))
        x = x + self.drop(self.mlp(x))
        return x, att


@dataclass(frozen=True)
class EncoderConfig:
    """Sizes of :class:`SATrEncoder`. Paper (Appendix E): 12 layers, d = 768, 12 heads, k = 32."""

    d: int = 128
    layers: int = 4
    heads: int = 4
    ff: int = 256
    k: int = 32
    token_dim: int = 32
    dropout: float = 0.0


class SATrEncoder(nn.Module):
    """The encoder-only heuristic model (Figure 1, path 4a).

    ``forward(ids (B, N, 1+m) int64, mask (B, N) bool)`` -> ``(h (B,), hidden, attention)`` with
    ``hidden`` the ``layers`` hidden-state tensors ``(B, N, d)`` and ``attention`` the
    ``layers`` score tensors ``(B, heads, N, N)`` (for :func:`contrastive_loss`).
    """

    def __init__(self, vocab_size: int, width: int, cfg: EncoderConfig = EncoderConfig()):
        super().__init__()
        if not 0 < cfg.k <= cfg.d:
            raise ValueError(f"k={cfg.k} must be in 1..d={cfg.d}")
        self.cfg = cfg
        self.embed = AtomEmbedding(vocab_size, width, cfg.d, cfg.token_dim)
        self.layer = SharedEncoderLayer(cfg.d, cfg.heads, cfg.ff, cfg.dropout)
        self.readout = nn.Sequential(nn.Linear(cfg.k, cfg.d), nn.GELU(), nn.Linear(cfg.d, 1))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor):
        x = self.embed(ids)
        hidden, attention = [], []
        for _ in range(self.cfg.layers):
            x, att = self.layer(x, mask)
            hidden.append(x)
            attention.append(att)
        pooled = (x[..., : self.cfg.k] * mask[..., None]).sum(1)
        return self.readout(pooled).squeeze(-1), hidden, attention


#: How L_att and L_hid reduce their squared differences: ``sum`` (Section 4's equations: summed
#: over modules or layers, rows and columns or tokens and the first k dimensions, divided by the
#: batch size) or ``mean`` (Appendix E: "For the contrastive loss, we use MSE across all
#: architectures": the mean over every compared element, all modules or layers pooled).
REDUCTIONS = ("sum", "mean")


def _check_reduction(reduction: str) -> bool:
    """Whether ``reduction`` is ``mean`` (the compared elements must be counted).

    Raises:
        ValueError: not one of :data:`REDUCTIONS`.
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"transformers.train.contrastive_reduction must be one of {', '.join(REDUCTIONS)}, "
                         f"got {reduction!r}")
    return reduction == "mean"


def _reduce(total: torch.Tensor, count: torch.Tensor | None, batch: int) -> torch.Tensor:
    """A contrastive term from its summed squared differences: divided by the batch size (``sum``,
    ``count`` None) or by the ``count`` of compared elements (``mean``; a tensor, no device sync)."""
    return total / batch if count is None else total / count.clamp(min=1)


def contrastive_loss(out_a, out_b, mask: torch.Tensor, k: int,
                     reduction: str = "sum") -> tuple[torch.Tensor, torch.Tensor]:
    """``(L_att, L_hid)`` of two forward passes over the same atoms under two object renamings
    (Section 4): ``out_*`` are :meth:`SATrEncoder.forward` outputs for sequences whose row ``i``
    is the same atom; ``mask`` ``(B, N)`` marks real atoms (padded queries and keys are left out).
    ``reduction`` (:data:`REDUCTIONS`): ``sum``, the squared differences summed and divided by the
    batch size ``B`` (the equations); ``mean``, their mean (Appendix E's MSE).

    Raises:
        ValueError: an unknown ``reduction``.
    """
    mean = _check_reduction(reduction)
    _, hid_a, att_a = out_a
    _, hid_b, att_b = out_b
    b = mask.shape[0]
    pair = (mask[:, :, None] & mask[:, None, :])[:, None]          # (B, 1, N, N)
    l_att = sum(((a - c) ** 2 * pair).sum() for a, c in zip(att_a, att_b))
    tok = mask[..., None]
    l_hid = sum((((a[..., :k] - c[..., :k]) ** 2) * tok).sum() for a, c in zip(hid_a, hid_b))
    if not mean:
        return _reduce(l_att, None, b), _reduce(l_hid, None, b)
    # every module sees the same real pairs and tokens: count them once
    n_att = pair.sum() * sum(a.shape[1] for a in att_a)
    n_hid = tok.sum() * sum(min(k, a.shape[-1]) for a in hid_a)
    return _reduce(l_att, n_att, b), _reduce(l_hid, n_hid, b)


def _gather_tokens(x: torch.Tensor, perm: torch.Tensor, dim: int) -> torch.Tensor:
    """``x`` with its token axis ``dim`` reordered per batch row by ``perm`` (B, T)."""
    shape = [1] * x.dim()
    shape[0], shape[dim] = perm.shape
    idx = perm.view(shape).expand(*[x.shape[i] if i != dim else perm.shape[1] for i in range(x.dim())])
    return x.gather(dim, idx)


def pair_losses(out_a, out_b, k: int, perm: torch.Tensor | None = None,
                reduction: str = "sum") -> tuple[torch.Tensor, torch.Tensor]:
    """``(L_att, L_hid)`` (Section 4) of two plan-generator passes
    (:class:`planarena.methods.transformers.decoders.GeneratorOutput`) over renamed copies: every
    attention module (encoder self-, decoder self- and cross-attention, each layer application)
    and every hidden state after every layer, first ``k`` dimensions; squared differences over
    real tokens, summed, divided by the batch size. ``perm`` (B, T): copy b's token index of
    copy a's token ``t`` (PlanGPT sorts atoms after renaming, so the copies' token orders differ;
    None: the same order, as for the SATr models). ``reduction`` as :func:`contrastive_loss`.

    Raises:
        ValueError: an unknown ``reduction``.
    """
    mean = _check_reduction(reduction)
    b = out_a.logits.shape[0]
    l_att = out_a.logits.new_zeros(())
    n_att = out_a.logits.new_zeros(()) if mean else None
    for (a, qm, km), (c, _, _) in zip(out_a.attention, out_b.attention):
        if perm is not None:
            c = _gather_tokens(_gather_tokens(c, perm, 2), perm, 3)
        pair = qm[:, None, :, None] & km[:, None, None, :]
        l_att = l_att + ((a - c) ** 2 * pair).sum()
        if mean:   # modules differ in their masks (self- vs cross-attention)
            n_att = n_att + pair.sum() * a.shape[1]
    l_hid = out_a.logits.new_zeros(())
    n_hid = out_a.logits.new_zeros(()) if mean else None
    for (a, m), (c, _) in zip(out_a.hidden, out_b.hidden):
        if perm is not None:
            c = _gather_tokens(c, perm, 1)
        l_hid = l_hid + (((a[..., :k] - c[..., :k]) ** 2) * m[..., None]).sum()
        if mean:
            n_hid = n_hid + m.sum() * min(k, a.shape[-1])
    return _reduce(l_att, n_att, b), _reduce(l_hid, n_hid, b)


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters of ``model``."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


__all__ = ["REDUCTIONS", "AtomEmbedding", "EncoderConfig", "attend", "SATrEncoder", "SharedEncoderLayer",
           "contrastive_loss", "count_parameters", "pair_losses"]
