"""The plan generators of the symmetry-aware-transformers paper: the SATr encoder-decoder and the
PlanGPT decoder-only baseline, each with an incremental (KV-cached) decoding interface.

Source: Fritzsche, Gestrin, Seipp (docs/papers/symmetry-aware-transformers.md).

* :class:`SATrEncDec` (Section 4 "Addressing Positional Encodings in the Decoder", Figure A.1,
  Appendix E): the SATr encoder (:class:`planarena.methods.transformers.model.SATrEncoder`'s atom
  embedding and shared layer) feeds a Transformer decoder with causal self-attention, cross-
  attention to the encoded atoms and an MLP; no layer normalisation, no positional encoding at all
  (NoPE: the causal mask alone carries order) and ONE decoder layer applied ``layers`` times.
* :class:`PlanGPT` (Section 2 "PlanGPT", Section 3 Limitations 3-4): GPT-2: learned absolute
  positions, pre-LN blocks with separate weights per layer and a final LayerNorm, causal
  self-attention over ``prompt + plan``.

Both return, for the contrastive loss (Section 4, L_att and L_hid), every hidden state after every
layer and every attention score tensor; at inference both expose ``prefill`` / ``step`` over a
:class:`KVCache` so that a token costs one position's work (batch decoding).

Choices where the paper is silent (``PAPER_NOTES.md`` Section 7): the decoder has its own token
embedding table (action names, object tokens, ``<BOS>``/``<EOS>``) rather than sharing the
encoder's (the encoder's is ``token_dim`` wide and feeds a linear map over whole atoms); MLP width
``ff`` with GELU; the LM head is a linear map of the last hidden state.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from planarena.methods.transformers.model import AtomEmbedding, EncoderConfig, SharedEncoderLayer, attend


def _heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    b, t, d = x.shape
    return x.view(b, t, heads, d // heads).transpose(1, 2)


def _merge(x: torch.Tensor) -> torch.Tensor:
    b, h, t, dk = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dk)


@dataclass
class KVCache:
    """Keys and values of every self-attention application so far: ``keys[l]`` / ``values[l]``
    (B, h, S, dk); ``valid`` (B, S) bool marks real key positions (right-padded prompts leave
    holes); ``pos`` (B,) the next position of each row (PlanGPT's learned positions); ``memory``
    the SATr cross-attention keys/values ``(k, v)`` (B, h, N, dk) and ``memory_mask`` (B, N)
    (None for PlanGPT)."""

    keys: list[torch.Tensor]
    values: list[torch.Tensor]
    valid: torch.Tensor
    pos: torch.Tensor
    memory: tuple[torch.Tensor, torch.Tensor] | None = None
    memory_mask: torch.Tensor | None = None

    def select(self, rows: torch.Tensor) -> "KVCache":
        """The cache of rows ``rows`` (LongTensor), in that order."""
        mem = None if self.memory is None else (self.memory[0][rows], self.memory[1][rows])
        return KVCache([k[rows] for k in self.keys], [v[rows] for v in self.values], self.valid[rows],
                       self.pos[rows], mem, None if self.memory_mask is None else self.memory_mask[rows])

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append one position's ``k``/``v`` (B, h, 1, dk) to application ``layer``; returns the
        whole keys and values."""
        self.keys[layer] = torch.cat([self.keys[layer], k], 2)
        self.values[layer] = torch.cat([self.values[layer], v], 2)
        return self.keys[layer], self.values[layer]


class SharedDecoderLayer(nn.Module):
    """One NoPE decoder layer without layer normalisation (Section 2's decoder equations without
    the LNs, Appendix E): causal self-attention, cross-attention to the encoded atoms, MLP, each
    with a residual connection."""

    def __init__(self, d: int, heads: int, ff: int, dropout: float = 0.0):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.self_out = nn.Linear(d, d)
        self.cross_q = nn.Linear(d, d)
        self.cross_kv = nn.Linear(d, 2 * d)
        self.cross_out = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))
        self.drop = nn.Dropout(dropout)

    def memory(self, enc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Cross-attention keys and values (B, h, N, dk) of the encoder output (B, N, d); the same
        for every application of the shared layer."""
        k, v = self.cross_kv(enc).chunk(2, -1)
        return _heads(k, self.heads), _heads(v, self.heads)

    def forward(self, y, self_allowed, memory, memory_mask, cache: KVCache | None = None, layer: int = 0):
        """``y`` (B, T, d) -> ``(y, self scores (B, h, T, S), cross scores (B, h, T, N))``;
        ``self_allowed`` (B, 1, T, S) bool; with ``cache`` (T = 1) the new keys are appended."""
        q, k, v = (_heads(t, self.heads) for t in self.qkv(y).chunk(3, -1))
        if cache is not None:
            k, v = cache.append(layer, k, v)
        out, self_att = attend(q, k, v, self_allowed, self.training)
        y = y + self.drop(self.self_out(_merge(out)))
        out, cross_att = attend(_heads(self.cross_q(y), self.heads), memory[0], memory[1],
                                memory_mask[:, None, None, :], self.training)
        y = y + self.drop(self.cross_out(_merge(out)))
        y = y + self.drop(self.mlp(y))
        return y, self_att, cross_att


@dataclass(frozen=True)
class GeneratorOutput:
    """A training forward pass: ``logits`` (B, T, V); ``hidden`` every hidden state after every
    layer application, each ``(tensor (B, L, d), token mask (B, L))``; ``attention`` every score
    tensor, each ``(tensor (B, h, T, S), query mask (B, T), key mask (B, S))``."""

    logits: torch.Tensor
    hidden: list
    attention: list


class SATrEncDec(nn.Module):
    """The SATr encoder-decoder (Figure A.1). Encoder input: atom rows ``ids`` (B, N, 1+m) with
    ``mask`` (B, N) (:mod:`planarena.methods.transformers.tokens`); decoder input: token ids
    (B, T) of ``<BOS>`` + the plan's action and object tokens (:class:`ActionVocabulary`)."""

    def __init__(self, atom_vocab: int, width: int, out_vocab: int, cfg: EncoderConfig = EncoderConfig()):
        super().__init__()
        self.cfg = cfg
        self.embed = AtomEmbedding(atom_vocab, width, cfg.d, cfg.token_dim)
        self.encoder = SharedEncoderLayer(cfg.d, cfg.heads, cfg.ff, cfg.dropout)
        self.dec_embed = nn.Embedding(out_vocab, cfg.d, padding_idx=0)
        self.decoder = SharedDecoderLayer(cfg.d, cfg.heads, cfg.ff, cfg.dropout)
        self.head = nn.Linear(cfg.d, out_vocab)

    def encode(self, ids, mask):
        """Encoder output (B, N, d) and the per-layer ``(hidden, attention)`` lists."""
        x = self.embed(ids)
        hidden, attention = [], []
        for _ in range(self.cfg.layers):
            x, att = self.encoder(x, mask)
            hidden.append(x)
            attention.append(att)
        return x, hidden, attention

    def forward(self, ids, mask, dec, dec_mask) -> GeneratorOutput:
        """Teacher-forced pass; ``dec_mask`` (B, T) marks real decoder tokens."""
        enc, hid, att = self.encode(ids, mask)
        hidden = [(h, mask) for h in hid]
        attention = [(a, mask, mask) for a in att]
        memory = self.decoder.memory(enc)
        t = dec.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool, device=dec.device).tril()
        allowed = causal[None, None] & dec_mask[:, None, None, :]
        y = self.dec_embed(dec)
        for _ in range(self.cfg.layers):
            y, sa, ca = self.decoder(y, allowed, memory, mask)
            hidden.append((y, dec_mask))
            attention += [(sa, dec_mask, dec_mask), (ca, dec_mask, mask)]
        return GeneratorOutput(self.head(y), hidden, attention)

    def prefill(self, ids, mask, bos: int) -> tuple[torch.Tensor, KVCache]:
        """Encode ``ids`` and feed ``<BOS>`` to every row: ``(logits (B, V), cache)``."""
        enc, _, _ = self.encode(ids, mask)
        b = ids.shape[0]
        h, dk = self.cfg.heads, self.cfg.d // self.cfg.heads
        empty = enc.new_zeros(b, h, 0, dk)
        cache = KVCache([empty] * self.cfg.layers, [empty] * self.cfg.layers,
                        torch.zeros(b, 0, dtype=torch.bool, device=ids.device),
                        torch.zeros(b, dtype=torch.long, device=ids.device), self.decoder.memory(enc), mask)
        return self.step(cache, torch.full((b,), bos, dtype=torch.long, device=ids.device)), cache

    def step(self, cache: KVCache, tokens: torch.Tensor) -> torch.Tensor:
        """Feed one token per row (B,); returns next-token logits (B, V) and extends ``cache``."""
        cache.valid = torch.cat([cache.valid, torch.ones(len(tokens), 1, dtype=torch.bool, device=tokens.device)], 1)
        cache.pos = cache.pos + 1
        allowed = cache.valid[:, None, None, :]
        y = self.dec_embed(tokens)[:, None]
        for layer in range(self.cfg.layers):
            y, _, _ = self.decoder(y, allowed, cache.memory, cache.memory_mask, cache, layer)
        return self.head(y[:, 0])


@dataclass(frozen=True)
class PlanGPTConfig:
    """Sizes of :class:`PlanGPT` (paper, Appendix E: the same as the SATr models, 12 layers,
    d = 768, 12 heads); ``max_positions``: learned positions (longer sequences cannot be read)."""

    d: int = 128
    layers: int = 4
    heads: int = 4
    ff: int = 256
    k: int = 32
    dropout: float = 0.0
    max_positions: int = 2048


class _GPTBlock(nn.Module):
    """A GPT-2 block: pre-LN causal self-attention and MLP."""

    def __init__(self, d: int, heads: int, ff: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, allowed, cache: KVCache | None = None, layer: int = 0):
        q, k, v = (_heads(t, self.heads) for t in self.qkv(self.ln1(x)).chunk(3, -1))
        if cache is not None:
            if cache.keys[layer] is None:
                cache.keys[layer], cache.values[layer] = k, v
            else:
                k, v = cache.append(layer, k, v)
        out, att = attend(q, k, v, allowed, self.training)
        x = x + self.drop(self.out(_merge(out)))
        return x + self.drop(self.mlp(self.ln2(x))), att


class PlanGPT(nn.Module):
    """The decoder-only baseline: token ids (B, T) of :func:`planarena.methods.transformers.plangpt.encode_sequence`."""

    def __init__(self, vocab_size: int, cfg: PlanGPTConfig = PlanGPTConfig()):
        super().__init__()
        self.cfg = cfg
        self.tokens = nn.Embedding(vocab_size, cfg.d, padding_idx=0)
        self.positions = nn.Embedding(cfg.max_positions, cfg.d)
        self.blocks = nn.ModuleList(_GPTBlock(cfg.d, cfg.heads, cfg.ff, cfg.dropout) for _ in range(cfg.layers))
        self.ln = nn.LayerNorm(cfg.d)
        self.head = nn.Linear(cfg.d, vocab_size)

    def _check(self, t: int) -> None:
        if t > self.cfg.max_positions:
            raise ValueError(f"sequence of {t} tokens exceeds PlanGPT's {self.cfg.max_positions} learned positions")

    def forward(self, seq, mask) -> GeneratorOutput:
        """Teacher-forced pass over right-padded ``seq`` (B, T) with ``mask`` (B, T)."""
        b, t = seq.shape
        self._check(t)
        x = self.tokens(seq) + self.positions(torch.arange(t, device=seq.device))[None]
        causal = torch.ones(t, t, dtype=torch.bool, device=seq.device).tril()
        allowed = causal[None, None] & mask[:, None, None, :]
        hidden, attention = [], []
        for block in self.blocks:
            x, att = block(x, allowed)
            hidden.append((x, mask))
            attention.append((att, mask, mask))
        return GeneratorOutput(self.head(self.ln(x)), hidden, attention)

    def prefill(self, seq, lengths) -> tuple[torch.Tensor, KVCache]:
        """Run right-padded prompts ``seq`` (B, T) of ``lengths`` (B,): ``(logits (B, V) at each
        row's last prompt token, cache)``.

        Raises:
            ValueError: a prompt longer than ``max_positions``.
        """
        b, t = seq.shape
        self._check(t)
        dev = seq.device
        valid = torch.arange(t, device=dev)[None] < lengths[:, None]
        cache = KVCache([None] * self.cfg.layers, [None] * self.cfg.layers, valid, lengths.clone())
        x = self.tokens(seq) + self.positions(torch.arange(t, device=dev))[None]
        allowed = torch.ones(t, t, dtype=torch.bool, device=dev).tril()[None, None] & valid[:, None, None, :]
        for layer, block in enumerate(self.blocks):
            x, _ = block(x, allowed, cache, layer)
        last = self.ln(x[torch.arange(b, device=dev), lengths - 1])
        return self.head(last), cache

    def step(self, cache: KVCache, tokens: torch.Tensor) -> torch.Tensor:
        """Feed one token per row (B,) at each row's next position; returns logits (B, V).

        Raises:
            ValueError: a row runs past ``max_positions``.
        """
        if int(cache.pos.max()) >= self.cfg.max_positions:
            raise ValueError(f"PlanGPT ran past its {self.cfg.max_positions} learned positions")
        cache.valid = torch.cat([cache.valid, torch.ones(len(tokens), 1, dtype=torch.bool, device=tokens.device)], 1)
        x = (self.tokens(tokens) + self.positions(cache.pos))[:, None]
        cache.pos = cache.pos + 1
        allowed = cache.valid[:, None, None, :]
        for layer, block in enumerate(self.blocks):
            x, _ = block(x, allowed, cache, layer)
        return self.head(self.ln(x[:, 0]))


__all__ = ["GeneratorOutput", "KVCache", "PlanGPT", "PlanGPTConfig", "SATrEncDec", "SharedDecoderLayer"]
