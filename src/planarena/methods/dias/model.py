"""The DIAS model: argument selection, lifted preconditions and effects, successor prediction, losses
and schema derivation.

Source: Reiter, Gebler, Geffner (docs/papers/dias.md), Section 4 and Appendix A.2 / A.4.1:

* :func:`sinkhorn_slack`: log-space rectangular Sinkhorn with one slack row (Algorithm 1, eq. 15-18);
* :func:`build_graph` / :func:`edge_type_names`: the transition graph of Section 4.1 (state atoms,
  added and deleted atoms, known-argument self-loops, every edge type reversed);
* :class:`DiasModel`: R-GCN keys, queries ``Q^a`` and slot logits ``w^a`` (eq. 1-2), effect and
  precondition logits ``P_eff``, ``P_pre`` (eq. 3, 10), the projections (eq. 4, 6), the scheduled
  precondition probability (eq. 8), the successor prediction (eq. 5) and the losses (eq. 9-13); the
  MLP-effects ablation (eq. 21, Appendix A.4.1);
* :func:`derive`: the learned schemas (Section 4.5, eq. 14) as :class:`LearnedSchema` (no file I/O).

Shapes: ``B`` transitions, ``R`` predicates, ``O`` objects, ``M`` slots, ``A`` action names, ``d``
embedding size. Adjacency tensors are float ``{0,1}^(B, R, O, O)``; a unary atom ``p(o_i)`` sits at
``[r, i, i]``. Paper-silent choices are stated where they are made (``layers``, ReLU placement,
parameter initialisation, the Sinkhorn defaults, unary entries off the diagonal in grounded space).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

OBSERVATIONS = ("names", "strips_plus", "strips")
EFFECTS = ("strips", "mlp")
KEY_NORMS = ("layer", "none")
#: log-probabilities are clamped from below here, as torch's ``BCELoss`` does
LOG_FLOOR = -100.0
#: probabilities entering ``log(1 - x)`` are clamped to at most ``1 - PROB_EPS`` (float32-safe)
PROB_EPS = 1e-7


@dataclass(frozen=True)
class Vocab:
    """The signature DIAS learns over: ``predicates`` as ``(name, arity)`` with arity 1 or 2, and
    ``actions`` as ``(name, true arity or None when unknown)``.

    Raises:
        ValueError: a predicate of arity other than 1 or 2 (named), a negative action arity, or a
            duplicate name.
    """

    predicates: tuple[tuple[str, int], ...]
    actions: tuple[tuple[str, int | None], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "predicates", tuple((str(p), int(a)) for p, a in self.predicates))
        object.__setattr__(self, "actions", tuple((str(n), None if a is None else int(a)) for n, a in self.actions))
        for name, arity in self.predicates:
            if arity not in (1, 2):
                raise ValueError(f"predicate {name!r} has arity {arity}; DIAS handles arity 1 or 2 only")
        for name, arity in self.actions:
            if arity is not None and arity < 0:
                raise ValueError(f"action {name!r} has negative arity {arity}")
        for kind, names in (("predicate", [p for p, _ in self.predicates]), ("action", [a for a, _ in self.actions])):
            if len(set(names)) != len(names):
                raise ValueError(f"duplicate {kind} name in {names}")

    @property
    def R(self) -> int:
        return len(self.predicates)

    @property
    def A(self) -> int:
        return len(self.actions)

    def unary(self) -> torch.Tensor:
        """bool ``(R,)``: which predicates are unary."""
        return torch.tensor([a == 1 for _, a in self.predicates], dtype=torch.bool)


# ---------------------------------------------------------------------------------------------
# Sinkhorn (Appendix A.2.1)


def sinkhorn_slack(C: torch.Tensor, iters: int = 100, tol: float = 1e-5,
                   mask: torch.Tensor | None = None) -> torch.Tensor:
    """Log-space rectangular Sinkhorn with one slack row (Algorithm 1, eq. 15-18).

    A zero slack row is appended to the logits ``C`` (..., M, O); row duals ``u`` (real rows) and
    column duals ``v`` start at 0; each iteration sets ``u_i = -logsumexp_j(C_ij + v_j)`` for the
    real rows, pins the slack dual to 0, and sets ``v_j = -logsumexp_i(C_ij + u_i)`` over all
    ``M + 1`` rows; it stops after ``iters`` iterations or when the l-inf change of ``u`` and ``v``
    (the maximum over the whole batch) is below ``tol``. The slack row is dropped from the result.
    Gradients flow through the unrolled iterations. Computed in float32 whatever ``C``'s dtype.

    Args:
        C: logits ``(..., M, O)``, any leading batch dims.
        iters: maximum iterations ``T_max`` (>= 1).
        tol: tolerance ``epsilon`` on the dual change.
        mask: optional bool, broadcastable to ``(..., M, O)``; True = the entry may not be chosen
            (logit -inf). A column mask is ``mask[..., None, :]``. A row with every entry masked is
            returned as zeros (the caller fills it, e.g. a known argument's one-hot row).

    Returns:
        float32 ``S`` (..., M, O): columns sum to <= 1 (exactly, up to rounding: the last update is
        the column one and the slack row absorbs the rest); rows sum to 1 at convergence. Where a
        column's real-row mass must reach 1 (``M = O``, or a slot peaked on one object) the slack
        entry can only vanish through ``v_j -> -inf``, which this iteration reaches as O(1/T): after
        ``T`` iterations such rows sum to about ``1 - 1/T``. More live rows than unmasked columns
        have no row-stochastic solution (the column constraint wins).

    Raises:
        ValueError: ``C`` has fewer than 2 dims, or ``iters < 1``.
    """
    if C.dim() < 2:
        raise ValueError(f"sinkhorn_slack: logits must be (..., M, O), got shape {tuple(C.shape)}")
    if iters < 1:
        raise ValueError(f"sinkhorn_slack: iters must be >= 1, got {iters}")
    C = C.float()
    *lead, M, O = C.shape
    if mask is not None and not bool(mask.any()):
        mask = None
    if mask is None:
        logits, live, row_src = C, None, C
    else:
        mask = torch.broadcast_to(mask.to(torch.bool), C.shape)
        logits = C.masked_fill(mask, float("-inf"))
        live = ~mask.all(-1)                                        # (..., M)
        row_src = torch.where(live[..., None], logits, torch.zeros_like(logits))  # no all -inf row in a logsumexp
    slack = torch.zeros(*lead, 1, O, dtype=C.dtype, device=C.device)
    u = torch.zeros(*lead, M, dtype=C.dtype, device=C.device)
    v = torch.zeros(*lead, O, dtype=C.dtype, device=C.device)
    for _ in range(iters):
        u_new = -torch.logsumexp(row_src + v[..., None, :], dim=-1)                   # eq. 15
        if live is not None:                                                          # dead rows: scale 0
            u_new = u_new.masked_fill(~live, float("-inf"))
        # eq. 16-17: the slack row (logit 0, dual pinned at 0) joins every column's logsumexp
        v_new = -torch.logsumexp(torch.cat([logits + u_new[..., :, None], slack], dim=-2), dim=-2)
        du_all = (u_new.detach() - u.detach()).abs()
        if live is not None:
            du_all = du_all.masked_fill(~live, 0.0)
        du = du_all.amax() if M else u.new_zeros(())
        dv = (v_new.detach() - v.detach()).abs().amax() if O else v.new_zeros(())
        u, v = u_new, v_new
        if float(torch.maximum(du, dv)) < tol:
            break
    return torch.exp(u[..., :, None] + logits + v[..., None, :])     # eq. 18


# ---------------------------------------------------------------------------------------------
# Transition graph (Section 4.1)


def edge_type_names(vocab: Vocab, slots: int) -> tuple[str, ...]:
    """Names of the edge types of :func:`build_graph`, in edge-type index order.

    ``T = 3R + A*slots`` forward types: ``"s:<p>"`` (atom of s), ``"add:<p>"`` (in s' not s),
    ``"del:<p>"`` (in s not s'), ``"arg:<action>:<k>"`` (k-th argument, 1-based, known); then the
    ``T`` reverse types, each the forward name prefixed with ``"~"`` (type index + T).
    """
    preds = [p for p, _ in vocab.predicates]
    fwd = ([f"s:{p}" for p in preds] + [f"add:{p}" for p in preds] + [f"del:{p}" for p in preds]
           + [f"arg:{a}:{k + 1}" for a, _ in vocab.actions for k in range(slots)])
    return tuple(fwd + ["~" + n for n in fwd])


def build_graph(A: torch.Tensor, A_next: torch.Tensor, action: torch.Tensor, known: torch.Tensor,
                num_actions: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The transition graphs of a batch as one disjoint union (Section 4.1).

    Node ``b * O + i`` is object ``i`` of transition ``b``. A binary atom ``p(o_i, o_j)`` is the
    edge ``i -> j`` of its type, a unary atom ``p(o_i)`` the self-loop ``i -> i``; atoms of ``s``,
    atoms added (in s' not s) and deleted (in s not s') have their own types per predicate; a known
    argument ``x_k = o_i`` of action ``a`` is the self-loop ``i -> i`` of type ``arg:a:k``; every
    edge ``i -> j`` of type ``t`` has its reverse ``j -> i`` of type ``t + T``
    (:func:`edge_type_names`).

    Args:
        A, A_next: float ``(B, R, O, O)`` adjacency of s and s' (entries > 0.5 are true).
        action: long ``(B,)``; known: long ``(B, M)``, object per slot or -1.
        num_actions: ``A`` (fixes the number of edge types).

    Returns:
        ``edge_index`` long ``(2, E)`` (row 0 source, row 1 target) and ``edge_type`` long ``(E,)``;
        forward edges in row-major order of (transition, type, i, j), then known arguments, then
        the reverses in the same order.
    """
    B, R, O, _ = A.shape
    M = known.shape[1]
    s, t = A > 0.5, A_next > 0.5
    rel = torch.cat([s, t & ~s, s & ~t], dim=1)                     # (B, 3R, O, O)
    b, typ, i, j = rel.nonzero(as_tuple=True)
    kb, kk = (known >= 0).nonzero(as_tuple=True)
    obj = known[kb, kk]
    src = torch.cat([b * O + i, kb * O + obj])
    dst = torch.cat([b * O + j, kb * O + obj])
    etype = torch.cat([typ, 3 * R + action[kb] * M + kk])
    T = 3 * R + num_actions * M
    edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    return edge_index, torch.cat([etype, etype + T])


# ---------------------------------------------------------------------------------------------
# Projection, preconditions, successor, BCE (eq. 4-9)


def project(S_tilde: torch.Tensor, P: torch.Tensor) -> torch.Tensor:
    """Eq. 4 / 6: ``S~^T P S~`` per predicate.

    ``S_tilde`` (B, M, O), ``P`` (B, ..., M, M) lifted probabilities -> (B, ..., O, O)."""
    return torch.einsum("bmi,b...mn,bnj->b...ij", S_tilde, P, S_tilde)


def log_p_pre(A: torch.Tensor, pre_pos: torch.Tensor, pre_neg: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. 8 in log space: ``log p_pre = sum_rij [log(1 - P~+ (1 - A)) + log(1 - P~- A)] /
    (tau R O^2 + 1 - tau)``; ``tau = 1`` is the geometric mean, ``tau = 0`` the product of eq. 7.

    ``A``, ``pre_pos``, ``pre_neg``: (B, R, O, O) -> (B,). Failure probabilities are clamped to
    ``1 - PROB_EPS`` so a crisp violation gives a finite log (about -16 per violated atom)."""
    R, O = A.shape[1], A.shape[2]
    hi = 1.0 - PROB_EPS
    logs = torch.log1p(-(pre_pos * (1 - A)).clamp(max=hi)) + torch.log1p(-(pre_neg * A).clamp(max=hi))
    return logs.sum(dim=(1, 2, 3)) / (tau * R * O * O + (1.0 - tau))


def successor(A: torch.Tensor, p_pre: torch.Tensor, P_add: torch.Tensor, P_del: torch.Tensor) -> torch.Tensor:
    """Eq. 5: ``A' = A + p_pre ((1 - A) P~add - A P~del)``; ``p_pre`` (B,), the rest (B, R, O, O)."""
    return A + p_pre[:, None, None, None] * ((1 - A) * P_add - A * P_del)


def successor_bce(A: torch.Tensor, A_next: torch.Tensor, P_add: torch.Tensor, P_del: torch.Tensor,
                  log_pp: torch.Tensor) -> torch.Tensor:
    """Eq. 9, ``L_adj = BCE_sum(A^', A')`` per transition (B,), with ``A^'`` of eq. 5.

    Computed exactly but in log space: with the flip probability ``c = p_pre * (A ? P~del : P~add)``,
    ``A^' = c`` where ``A = 0`` and ``1 - c`` where ``A = 1``, so an atom that flipped costs
    ``-log c = -(log p_pre + log P~)`` and one that kept its value ``-log(1 - c)``; this keeps the
    gradient of a rare flip that float32 would round away in ``1 - c``. Logs are floored at -100
    (torch's ``BCELoss`` convention)."""
    flip_p = torch.where(A > 0.5, P_del, P_add)
    log_c = (log_pp[:, None, None, None] + torch.log(flip_p.clamp_min(1e-30))).clamp_min(LOG_FLOOR)
    log_keep = torch.log1p(-torch.exp(log_c).clamp(max=1.0 - PROB_EPS)).clamp_min(LOG_FLOOR)
    flipped = (A_next > 0.5) != (A > 0.5)
    return -torch.where(flipped, log_c, log_keep).sum(dim=(1, 2, 3))


@dataclass
class DiasOutput:
    """One forward pass: ``main`` = ``L_main`` and ``aux`` = ``L_aux`` (eq. 13, averaged over the
    batch); per transition (B,): ``l_adj``, ``l_eff``, ``l_pre`` (eq. 9, 11, sums), ``n`` (eq. 12),
    ``p_pre`` (eq. 8)."""

    main: torch.Tensor
    aux: torch.Tensor
    l_adj: torch.Tensor
    l_eff: torch.Tensor
    l_pre: torch.Tensor
    n: torch.Tensor
    p_pre: torch.Tensor


# ---------------------------------------------------------------------------------------------
# The model


class DiasModel(nn.Module):
    """DIAS for one domain signature (Section 4).

    Args:
        vocab: the signature.
        d: embedding size (paper: 32; even, > 0).
        slots: ``M`` for ``names`` / ``strips_plus`` (paper: 5); with ``strips`` the model has
            ``max true arity`` slots and action ``a`` uses its first ``|a|`` (all known, active).
        layers: R-GCN layers (paper-silent; default 3), ReLU between layers, none after the last.
        observation: ``names`` | ``strips_plus`` | ``strips``.
        effects: ``strips`` (static ``P_eff``) | ``mlp`` (Appendix A.4.1).
        mlp_hidden: hidden width of the effects MLP (two hidden layers; paper-silent).
        sinkhorn_iters, sinkhorn_tol: ``T_max`` and ``epsilon`` of Algorithm 1 (paper-silent).
        key_norm: ``"layer"`` (default) normalises each final R-GCN embedding to zero mean and unit
            variance (no affine) before eq. 1, so ``|C| <= |Q|``; ``"none"`` keeps the raw embeddings.
            Paper-silent (the paper gives no R-GCN details). Without it, names-only training on
            Blocks-3 drove the keys' norms to ~1e5 and the logit gaps past what ``T_max`` Sinkhorn
            iterations resolve (each moves a dual by about log 3): rows of ``S`` summed to 1/3 with
            three slots sharing one object, an assignment no injective binding reproduces, and 0 of 5
            runs were sound (see :meth:`selection_row_mass`).

    Parameters (paper-silent initialisation): queries ``Q`` (A, M, d) ~ N(0, 1); slot logits ``w``
    (A, M) = 0 (activation 0.5); ``P_eff``, ``P_pre`` (A, R, M, M, 3) ~ 0.1 N(0, 1); R-GCN glorot
    (torch_geometric's default). With ``strips`` observations there is no R-GCN, no queries and no
    Sinkhorn. Buffer ``forced`` (A, M) marks slots seen as known arguments (:meth:`mark_known`);
    :func:`derive` keeps them active.

    Raises:
        ValueError: unknown ``observation`` / ``effects``, odd or non-positive ``d``, ``slots < 1``,
            ``layers < 1``, or ``strips`` with an action of unknown arity.
    """

    def __init__(self, vocab: Vocab, *, d: int = 32, slots: int = 5, layers: int = 3,
                 observation: str = "names", effects: str = "strips", mlp_hidden: int = 128,
                 sinkhorn_iters: int = 100, sinkhorn_tol: float = 1e-5, key_norm: str = "layer") -> None:
        super().__init__()
        if key_norm not in KEY_NORMS:
            raise ValueError(f"key_norm {key_norm!r}; expected one of {KEY_NORMS}")
        self.key_norm = key_norm
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation {observation!r}; expected one of {OBSERVATIONS}")
        if effects not in EFFECTS:
            raise ValueError(f"effects {effects!r}; expected one of {EFFECTS}")
        if d <= 0 or d % 2:
            raise ValueError(f"d must be even and positive (half noise, half zero), got {d}")
        if slots < 1 or layers < 1:
            raise ValueError(f"slots and layers must be >= 1, got slots={slots}, layers={layers}")
        self.vocab, self.d, self.observation, self.effects = vocab, d, observation, effects
        self.sinkhorn_iters, self.sinkhorn_tol = sinkhorn_iters, sinkhorn_tol
        R, A = vocab.R, vocab.A
        if observation == "strips":
            missing = [n for n, a in vocab.actions if a is None]
            if missing:
                raise ValueError(f"observation 'strips' needs every action's arity; unknown for {missing}")
            M = max([a for _, a in vocab.actions] + [1])
            slot_ok = torch.tensor([[k < a for k in range(M)] for _, a in vocab.actions], dtype=torch.bool)
        else:
            M = slots
            slot_ok = torch.ones(A, M, dtype=torch.bool)
        self.M = M
        unary = vocab.unary()
        eye = torch.eye(M, dtype=torch.bool)
        # entries of the lifted tensors that are learnable: unary predicates on the diagonal only
        shape_ok = torch.where(unary[:, None, None], eye, torch.ones_like(eye))                 # (R, M, M)
        ent_ok = shape_ok[None] & slot_ok[:, None, :, None] & slot_ok[:, None, None, :]           # (A, R, M, M)
        self.register_buffer("unary", unary)
        self.register_buffer("shape_ok", shape_ok)
        self.register_buffer("slot_ok", slot_ok)
        self.register_buffer("ent_ok", ent_ok)
        self.register_buffer("forced", torch.zeros(A, M, dtype=torch.bool))
        self.register_buffer("fixed_logits", torch.tensor([0.0, float("-inf"), float("-inf")]))
        self.w = nn.Parameter(torch.zeros(A, M))
        self.P_pre = nn.Parameter(0.1 * torch.randn(A, R, M, M, 3))
        if effects == "strips":
            self.P_eff = nn.Parameter(0.1 * torch.randn(A, R, M, M, 3))
            self.mlp = None
        else:
            self.P_eff = None
            self.mlp = nn.Sequential(nn.Linear(R * M * M, mlp_hidden), nn.ReLU(), nn.Linear(mlp_hidden, mlp_hidden),
                                     nn.ReLU(), nn.Linear(mlp_hidden, A * R * M * M * 3))
        if observation == "strips":
            self.queries, self.gnn = None, None
        else:
            from torch_geometric.nn import RGCNConv
            self.queries = nn.Parameter(torch.randn(A, M, d))
            n_types = len(edge_type_names(vocab, M))
            self.gnn = nn.ModuleList(RGCNConv(d, d, n_types) for _ in range(layers))

    # -- lifted logits (eq. 3, 10) -------------------------------------------------------------

    def _mask_unary(self, logits: torch.Tensor) -> torch.Tensor:
        """Unary predicates' off-diagonal entries fixed to ``[0, -inf, -inf]`` (eq. 3); ``logits``
        (..., R, M, M, 3)."""
        return torch.where(self.shape_ok[..., None], logits, self.fixed_logits)

    def pre_logits(self) -> torch.Tensor:
        """Precondition logits (A, R, M, M, 3): (none, positive, negative)."""
        return self._mask_unary(self.P_pre)

    def eff_logits(self) -> torch.Tensor:
        """Static effect logits (A, R, M, M, 3): (none, add, delete).

        Raises:
            ValueError: the model has MLP effects (they depend on the state)."""
        if self.P_eff is None:
            raise ValueError("MLP-effects model: effects depend on the state; use mlp_successors")
        return self._mask_unary(self.P_eff)

    def mlp_logits(self, A_sel: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """Eq. 21: the shared MLP on the lifted substate ``A~`` (B, R, M, M), the slice of each
        transition's action -> effect logits (B, R, M, M, 3), unary off-diagonal fixed."""
        B, R, M = A_sel.shape[0], self.vocab.R, self.M
        out = self.mlp(A_sel.reshape(B, -1)).view(B, self.vocab.A, R, M, M, 3)
        return self._mask_unary(out[torch.arange(B, device=out.device), action])

    # -- argument selection (Section 4.1, eq. 1-2) ---------------------------------------------

    def mark_known(self, action: torch.Tensor, known: torch.Tensor) -> None:
        """Record in ``forced`` every (action, slot) that some transition shows as known."""
        rows = (known >= 0).nonzero()                                                  # (n, 2): (b, k)
        with torch.no_grad():
            self.forced[action[rows[:, 0]].to(self.forced.device), rows[:, 1].to(self.forced.device)] = True

    def keys(self, A: torch.Tensor, A_next: torch.Tensor, action: torch.Tensor, known: torch.Tensor,
             generator: torch.Generator | None = None) -> torch.Tensor:
        """R-GCN object embeddings ``K`` (B, O, d) of the transition graphs (:func:`build_graph`).

        Node features start fresh on every call: the first ``d/2`` dims ``0.1 N(0, 1)`` (drawn from
        ``generator`` if given), the rest zero (Appendix A.2.2)."""
        B, _, O, _ = A.shape
        edge_index, edge_type = build_graph(A, A_next, action, known, self.vocab.A)
        h = torch.zeros(B * O, self.d, device=A.device)
        h[:, : self.d // 2] = 0.1 * torch.randn(B * O, self.d // 2, generator=generator, device=A.device)
        for n, conv in enumerate(self.gnn):
            h = conv(h, edge_index, edge_type)
            if n + 1 < len(self.gnn):
                h = torch.relu(h)
        if self.key_norm == "layer":
            h = F.layer_norm(h, (self.d,))
        return h.view(B, O, self.d)

    def select(self, A: torch.Tensor, A_next: torch.Tensor, action: torch.Tensor, known: torch.Tensor,
               generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """The selection ``S~ = diag(sigma(w^a)) S^a`` (eq. 2) and the slot activations.

        ``S^a = Sinkhorn(Q^a K^T / sqrt(d))`` (eq. 1) over the slots and objects not fixed by a
        known argument; a known slot's row is the one-hot of its object and its activation is 1.
        With ``strips`` observations, ``S`` is the one-hot of the arguments (no Sinkhorn) and a slot
        is active iff its argument is given.

        Returns:
            ``S_tilde`` float (B, M, O) and ``act`` float (B, M).

        Raises:
            ValueError: ``known`` is not (B, M) with this model's ``M``, or ``strips`` observations
                miss an argument within the action's arity.
        """
        B, O = A.shape[0], A.shape[2]
        if known.dim() != 2 or known.shape != (B, self.M):
            raise ValueError(f"known must be ({B}, {self.M}), got {tuple(known.shape)}")
        is_known = known >= 0
        onehot = F.one_hot(known.clamp(min=0), O).float() * is_known[..., None]
        if self.observation == "strips":
            if (self.slot_ok[action] & ~is_known).any():
                raise ValueError("observation 'strips': every argument within an action's arity must be known")
            return onehot, is_known.float()
        K = self.keys(A, A_next, action, known, generator)
        C = self.queries[action] @ K.transpose(1, 2) / math.sqrt(self.d)              # (B, M, O), eq. 1
        taken = onehot.sum(dim=1) > 0                                                 # (B, O)
        mask = is_known[:, :, None] | taken[:, None, :]
        S = sinkhorn_slack(C, self.sinkhorn_iters, self.sinkhorn_tol, mask) + onehot
        act = torch.where(is_known, torch.ones_like(C[..., 0]), torch.sigmoid(self.w[action]))
        return act[..., None] * S, act                                                 # eq. 2

    # -- prediction and losses (eq. 3-13) ------------------------------------------------------

    def predict(self, A: torch.Tensor, S_tilde: torch.Tensor, action: torch.Tensor, tau: float,
                eff_logits: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Eq. 3-8 and 5 for a given selection.

        Args:
            A: (B, R, O, O); S_tilde: (B, M, O); action: (B,); tau: the eq. 8 exponent schedule value.
            eff_logits: per-transition effect logits (B, R, M, M, 3) (MLP effects); default the
                static ``P_eff`` of each transition's action.

        Returns:
            ``A_hat`` (B, R, O, O) of eq. 5, ``log p_pre`` (B,) of eq. 8, and the projected
            ``(P~add, P~del, P~pre+, P~pre-)`` stacked as (B, 4, R, O, O).
        """
        eff = self.eff_logits()[action] if eff_logits is None else eff_logits
        pe, pp = eff.softmax(-1), self.pre_logits()[action].softmax(-1)
        Pt = project(S_tilde, torch.stack([pe[..., 1], pe[..., 2], pp[..., 1], pp[..., 2]], dim=1))
        lpp = log_p_pre(A, Pt[:, 2], Pt[:, 3], tau)
        return successor(A, lpp.exp(), Pt[:, 0], Pt[:, 1]), lpp, Pt

    def forward(self, A: torch.Tensor, A_next: torch.Tensor, action: torch.Tensor, known: torch.Tensor,
                tau: float, generator: torch.Generator | None = None) -> DiasOutput:
        """The losses of a batch of transitions of one instance (eq. 9-13).

        ``L_adj`` (eq. 9, :func:`successor_bce`); ``L_eff = -sum log P_no.eff`` and
        ``L_pre = -sum log(sigma(w_i) sigma(w_j) (1 - P_no.pre))`` over the learnable entries
        (eq. 11; a known slot's activation is 1; with ``strips``, the action's slots); ``N`` of
        eq. 12 per transition (``R O^2 + 2 * #learnable entries``); ``L_main = mean(L_adj / N)``,
        ``L_aux = mean((L_eff + L_pre) / N)`` (eq. 13).

        Note: every grounded entry counts in eq. 5-9, unary predicates' off-diagonal ones included
        (eq. 12's ``R O^2``); with a soft selection they penalise unary mass spread across objects.
        """
        S_t, act = self.select(A, A_next, action, known, generator)
        eff = None
        if self.effects == "mlp":
            A_sel = torch.einsum("bmi,brij,bnj->brmn", S_t, A, S_t)                    # eq. 21
            eff = self.mlp_logits(A_sel, action)
        _, lpp, Pt = self.predict(A, S_t, action, tau, eff)
        l_adj = successor_bce(A, A_next, Pt[:, 0], Pt[:, 1], lpp)
        ent = self.ent_ok[action]                                                     # (B, R, M, M)
        eff_logits = self.P_eff[action] if eff is None else eff
        log_none_eff = eff_logits.log_softmax(-1)[..., 0].clamp_min(LOG_FLOOR)
        l_eff = -torch.where(ent, log_none_eff, torch.zeros_like(log_none_eff)).sum(dim=(1, 2, 3))
        raw = self.P_pre[action]                                                      # unmasked: finite logs
        log_some_pre = torch.logsumexp(raw[..., 1:], -1) - torch.logsumexp(raw, -1)
        if self.observation == "strips":
            log_act = torch.zeros_like(act)
        else:
            log_act = torch.where(known >= 0, torch.zeros_like(act), F.logsigmoid(self.w[action]))
        term = (log_act[:, None, :, None] + log_act[:, None, None, :] + log_some_pre).clamp_min(LOG_FLOOR)
        l_pre = -torch.where(ent, term, torch.zeros_like(term)).sum(dim=(1, 2, 3))
        R, O = A.shape[1], A.shape[2]
        n = R * O * O + 2 * ent.sum(dim=(1, 2, 3)).to(l_adj.dtype)
        return DiasOutput(main=(l_adj / n).mean(), aux=((l_eff + l_pre) / n).mean(), l_adj=l_adj,
                          l_eff=l_eff, l_pre=l_pre, n=n, p_pre=lpp.exp())

    @torch.no_grad()
    def selection_row_mass(self, A: torch.Tensor, A_next: torch.Tensor, action: torch.Tensor, known: torch.Tensor,
                           generator: torch.Generator | None = None) -> torch.Tensor:
        """Row sums of ``S^a`` (before eq. 2's activations) for the slots a transition does not fix,
        float (n,) with n = B x unknown slots; Section 4.1 requires 1 for each. A row well below 1 means
        Sinkhorn stopped before convergence (logit gaps beyond what ``sinkhorn_iters`` resolves) and
        several slots share one object, which no injective binding can reproduce. Empty for
        ``strips`` observations (no Sinkhorn)."""
        if self.observation == "strips":
            return torch.zeros(0)
        S_t, act = self.select(A, A_next, action, known, generator)
        rows = S_t.sum(-1) / act.clamp_min(1e-12)
        return rows[known < 0]

    def active_slots(self) -> torch.Tensor:
        """bool (A, M): the learned arity mask of Section 4.5, ``sigma(w) > 1/2`` or seen known
        (``strips``: the action's arity)."""
        if self.observation == "strips":
            return self.slot_ok.clone()
        return (torch.sigmoid(self.w) > 0.5) | self.forced

    @torch.no_grad()
    def mlp_successors(self, A: torch.Tensor, action: int, bindings) -> torch.Tensor:
        """MLP-effects successors for hard bindings (Appendix A.4.1, "Evaluation").

        Args:
            A: float (R, O, O) one state, or (G, R, O, O) one per binding.
            action: index of the action name.
            bindings: long (G, M) or a list of G lists of M entries: the object of each slot, -1 for
                an inactive slot (one list of M is one binding).

        Returns:
            float (G, R, O, O): eq. 5 with ``p_pre = 1`` (the caller checked the preconditions) and a
            one-hot ``S~`` (selected objects, activation 1); threshold at 0.5 for the atoms.

        Raises:
            ValueError: static-effects model, or bindings not of width M / out of range.
        """
        if self.mlp is None:
            raise ValueError("mlp_successors needs effects='mlp'")
        b = torch.as_tensor(bindings, dtype=torch.long, device=A.device)
        b = b[None] if b.dim() == 1 else b
        O = A.shape[-1]
        if b.dim() != 2 or b.shape[1] != self.M or (b >= O).any() or (b < -1).any():
            raise ValueError(f"bindings must be (G, {self.M}) object indices in [-1, {O}), got {tuple(b.shape)}")
        G = b.shape[0]
        A = A.float().expand(G, *A.shape[-3:]) if A.dim() == 3 else A.float()
        S = F.one_hot(b.clamp(min=0), O).float() * (b >= 0)[..., None]
        act = torch.full((G,), int(action), dtype=torch.long, device=A.device)
        pe = self.mlp_logits(torch.einsum("bmi,brij,bnj->brmn", S, A, S), act).softmax(-1)
        Pt = project(S, torch.stack([pe[..., 1], pe[..., 2]], dim=1))
        return successor(A, torch.ones(G, device=A.device), Pt[:, 0], Pt[:, 1])


# ---------------------------------------------------------------------------------------------
# Schema derivation (Section 4.5)

Literal = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class LearnedSchema:
    """A learned action schema: ``parameters`` ``?x<k>`` (k = 1-based slot number of an active
    slot, ascending), literals ``(predicate, (param, ...))`` sorted by (predicate index, slots)."""

    name: str
    parameters: tuple[str, ...]
    pre_pos: tuple[Literal, ...]
    pre_neg: tuple[Literal, ...]
    add: tuple[Literal, ...]
    delete: tuple[Literal, ...]


@torch.no_grad()
def derive(model: DiasModel, vocab: Vocab, threshold: float = 0.5) -> list[LearnedSchema]:
    """Eq. 14: the learned schemas, one per action name, in ``vocab.actions`` order.

    Active slots: :meth:`DiasModel.active_slots`; an atom over an inactive slot is dropped; unary
    predicates are read from the diagonal. A literal is kept when its softmax probability exceeds
    ``threshold`` (paper 0.5; 0.75 under noise). MLP-effects models have no static effects: their
    ``add`` / ``delete`` are empty (preconditions as usual).

    Raises:
        ValueError: ``vocab`` differs from the model's, or ``threshold`` not in [0, 1).
    """
    if vocab != model.vocab:
        raise ValueError("derive: vocab differs from the model's")
    if not 0.0 <= threshold < 1.0:
        raise ValueError(f"derive: threshold must be in [0, 1), got {threshold}")
    active = model.active_slots().cpu()
    pre = model.pre_logits().softmax(-1).cpu()
    eff = model.eff_logits().softmax(-1).cpu() if model.P_eff is not None else None
    ent = model.ent_ok.cpu()
    out = []
    for a, (name, _) in enumerate(vocab.actions):
        params = tuple(f"?x{k + 1}" for k in range(model.M) if active[a, k])
        lits: dict[str, list[Literal]] = {"pre_pos": [], "pre_neg": [], "add": [], "delete": []}
        for r, (pred, arity) in enumerate(vocab.predicates):
            for i in range(model.M):
                for j in range(model.M):
                    if not (ent[a, r, i, j] and active[a, i] and active[a, j]):
                        continue
                    lit = (pred, (f"?x{i + 1}",) if arity == 1 else (f"?x{i + 1}", f"?x{j + 1}"))
                    for key, table, c in (("pre_pos", pre, 1), ("pre_neg", pre, 2), ("add", eff, 1), ("delete", eff, 2)):
                        if table is not None and float(table[a, r, i, j, c]) > threshold:
                            lits[key].append(lit)
        out.append(LearnedSchema(name, params, *(tuple(lits[k]) for k in ("pre_pos", "pre_neg", "add", "delete"))))
    return out


__all__ = ["DiasModel", "DiasOutput", "EFFECTS", "LearnedSchema", "OBSERVATIONS", "Vocab", "build_graph",
           "derive", "edge_type_names", "log_p_pre", "project", "sinkhorn_slack", "successor", "successor_bce"]
