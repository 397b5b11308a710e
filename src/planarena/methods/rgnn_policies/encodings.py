"""Input encodings of the R-GNN Q-functions: Aggregated-Actions (AA), External (Ext),
Aggregated-Delta (AD) and Appendix C's Internal (Int) and Internal-Delta (ID), on top of
pymimir-rgnn's relational GNN.

Source: Aichmüller et al. (docs/papers/rgnn-policies.md), Section 4 (R-GNN: smooth-max aggregation,
MLP messages) and Section 5 (encodings). The R-GNN, its state/goal encoders (R^s with the
``P_G,T`` / ``P_G,F`` goal relations), the ground-action encoder of AA and the transition-delta
encoder come from pymimir-rgnn; this module adds the paper's pieces:

* AD (Section 5, "Aggregated-Delta"): one graph for the whole lookahead tree: the root state's
  atoms R^s, one node ``o_s'`` per jump with ``P+`` / ``P-`` delta atoms (``s' \\ s`` and
  ``s \\ s'``) and goal deltas ``P+_G`` / ``P-_G`` (pymimir-rgnn's ``TransitionEffectsEncoder``,
  whose transition relation carries the tree edges ``P_E``), and :class:`DepthEncoder`'s depth
  nodes ``o_d`` with order atoms ``P_D(o_d, o_d')`` (d < d') and ``P_SD(o_s', o_d)``. Q(s, s') =
  MLP(f(o_s'), sum_o f(o)) (pymimir-rgnn's ``ActionScalarDecoder``): every candidate in one pass.
* Ext (Section 5, "External"): R^s and every R^s' encoded as separate graphs (one batched R-GNN
  call), Q(s, s') = MLP1(sum_o MLP2(f(o; R^s), f(o; R^s'))) (:class:`ExternalHead`).
* AA (Section 5, "Aggregated-Actions"): R^s plus one node per applicable ground action;
  Q(s, a) = MLP(f(o_a), sum_o f(o)); flat policies only.
* Int (Section 5's first interpolation, Appendix C, Table 6): one graph per transition s -> s' over
  the shared object nodes: R^s plus R^s' under a duplicated predicate set P' (state atoms
  ``P'(o)``, goal atoms ``P'_G,T`` / ``P'_G,F`` true / false in s'; :data:`PRIME`,
  :class:`SuccessorGoalEncoder`).
* ID (Section 5's second interpolation, Appendix C, Table 6): one graph per transition: R^s plus
  the delta atoms of s' without a state node, ``P+(o)`` / ``P-(o)`` / ``P+_G(o)`` / ``P-_G(o)``
  (:class:`DeltaAtomsEncoder`).
  Int and ID read out Q(s, s') = MLP(sum_o f(o)) per graph (pymimir-rgnn's
  ``ObjectsScalarDecoder``; the paper gives no readout for them: our choice, the AD / AA readout
  without a candidate node); all graphs of a batch go through one R-GNN call.
* Appendix C's "No Tree-Atoms" ablation (Table 5): AD without the tree atoms ``P_E``, the relation
  set R^T \\ R^T_E (:class:`NoTreeAtomsEncoder`; ``PolicyNetwork(tree_atoms=False)``).
"""

from __future__ import annotations

import warnings
from typing import Any

import pymimir_rgnn as rg
import torch
from pymimir_rgnn.utils import get_effect_relation_name
from torch import nn

from planarena.core.pddl import atom_indices

ENCODINGS = ("aa", "ext", "ad", "int", "id")
#: the encodings scored from one graph per transition whose objects are read out (Appendix C)
PER_TRANSITION = ("int", "id")
#: suffix of Internal's duplicated predicate set P' (relation ``relation_<P>'``); a PDDL name cannot
#: hold an apostrophe, so no primed relation can collide with a domain's own
PRIME = "'"
# pymimir-rgnn's smooth maximum uses torch's index_reduce, which warns on every call that it is beta
warnings.filterwarnings("ignore", message="index_reduce\\(\\) is in beta")


class DepthEncoder(rg.Encoder):
    """AD's depth nodes (Section 5): one auxiliary node per depth 1..d_max of the tree, order atoms
    ``P_D(o_d, o_d')`` for d < d' and ``P_SD(o_s', o_d)`` linking each jump node to its depth.

    Input value: the list of jump depths, aligned with the jump nodes the preceding
    ``TransitionEffectsEncoder`` created (the instance's action nodes, in order)."""

    ORDER, STATE_DEPTH = "lookahead_depth_order", "lookahead_state_depth"

    def get_relations(self, domain) -> list[tuple[str, int]]:
        return [(self.ORDER, 2), (self.STATE_DEPTH, 2)]

    def encode(self, input_value: Any, state, encoding, context) -> None:
        depths = list(input_value)
        nodes = context.get_action_ids()[-len(depths):] if depths else []
        ids = {d: context.new_or_existing_auxiliary_id(("depth", d)) for d in sorted(set(depths))}
        rel = encoding.flattened_relations
        for d in ids:
            for e in ids:
                if d < e:
                    rel.setdefault(self.ORDER, []).extend([ids[d], ids[e]])
        for node, d in zip(nodes, depths):
            rel.setdefault(self.STATE_DEPTH, []).extend([node, ids[d]])


class NoTreeAtomsEncoder(rg.TransitionEffectsEncoder):
    """AD's transition encoder without tree atoms: Appendix C's "No Tree-Atoms" ablation (Table 5),
    "omitting the encoding step for the parent relation atoms, resulting in the relation set
    R^T \\ R^T_E". The state nodes ``o_s'`` and their delta atoms ``P+`` / ``P-`` / ``P+_G`` /
    ``P-_G`` are AD's (pymimir-rgnn's ``TransitionEffectsEncoder``); no ``P_E(o_s', o_s'')`` is
    written, and the relation is not declared, so the R-GNN has no message function for it.

    Input value: as the parent's, ``(effects, edges, goal condition)``; ``edges`` is ignored."""

    def get_relations(self, domain) -> list[tuple[str, int]]:
        edge = get_effect_relation_name(self.suffix)
        return [r for r in super().get_relations(domain) if r[0] != edge]

    def encode(self, input_value: Any, state, encoding, context) -> None:
        effects, _edges, goal = input_value
        super().encode((effects, [], goal), state, encoding, context)


class SuccessorGoalEncoder(rg.GoalEncoder):
    """Internal's goal atoms of the successor (Section 5, Appendix C): the goal part of R^s' under
    the duplicated predicate set, ``P'_G,T(o)`` for a goal atom true in s' and ``P'_G,F(o)`` for one
    false in s'. pymimir-rgnn's ``GoalEncoder`` decides truth in the graph's first state (the root
    s); this one decides it in s'. Construct with ``suffix=PRIME``.

    Input value: ``(s', goal condition)`` (pymimir state, ground conjunctive condition)."""

    def encode(self, input_value: Any, state, encoding, context) -> None:
        succ, goal = input_value
        super().encode(goal, succ, encoding, context)


class DeltaAtomsEncoder(rg.Encoder):
    """Internal-Delta's successor atoms (Section 5: "represents s' by delta predicates R^s_Δs'
    without an explicit o_s' state-node"; Appendix C): for one transition s -> s', ``P+(o)`` for
    each atom P(o) of s' \\ s, ``P-(o)`` for each of s \\ s', and ``P+_G(o)`` / ``P-_G(o)`` for
    those that are goal atoms. Each relation has P's arity (AD's are anchored at ``o_s'``: arity
    + 1). Relation names: :meth:`relation` (``delta_<P>+``, ``delta_<P>-_goal``, ...; a PDDL name
    holds no '+', so none collides with another predicate's). A nullary atom has no object to
    send to and carries no message (as nullary atoms of R^s in pymimir-rgnn).

    Input value: ``(literals, goal condition)``: the transition's :meth:`DeltaLiterals.deltas`
    entry (positive literal: added atom; negative: deleted) and the goal the policy is
    conditioned on (a positive conjunction)."""

    @staticmethod
    def relation(predicate: str, added: bool, goal: bool) -> str:
        """Relation name of the delta atoms of ``predicate`` (added or deleted; goal or not)."""
        return f"delta_{predicate}{'+' if added else '-'}{'_goal' if goal else ''}"

    def get_relations(self, domain) -> list[tuple[str, int]]:
        preds = [p for p in domain.get_predicates() if p.get_name() != "number"]  # as pymimir-rgnn's encoders
        return [(self.relation(p.get_name(), added, goal), p.get_arity())
                for p in preds for added in (True, False) for goal in (False, True)]

    def encode(self, input_value: Any, state, encoding, context) -> None:
        literals, goal = input_value
        goal_atoms = {lit.get_atom() for lit in goal if lit.get_polarity()}
        rel = encoding.flattened_relations
        for lit in literals:
            atom = lit.get_atom()
            ids = [context.get_object_id(o.get_index()) for o in atom.get_terms()]
            name, added = atom.get_predicate().get_name(), bool(lit.get_polarity())
            rel.setdefault(self.relation(name, added, False), []).extend(ids)
            if atom in goal_atoms:
                rel.setdefault(self.relation(name, added, True), []).extend(ids)


class DepthNodeDecoder(rg.Decoder):
    """Final embeddings of each instance's auxiliary nodes (AD's depth nodes, in depth order 1..d)."""

    def forward(self, node_embeddings: torch.Tensor, encoding) -> tuple[torch.Tensor, ...]:
        return node_embeddings.index_select(0, encoding.auxiliary_indices).split(encoding.auxiliary_sizes.tolist())


def depth_rank_loss(z: torch.Tensor) -> torch.Tensor:
    """Section 6's depth-order loss for one tree: with scores ``z`` (shape (d_max,), z[k-1] of
    depth k), L = (1/Z) sum_{k<l} w_kl log(1 + exp(z_k - z_l)), w_kl = 1/(l - k), Z = sum w_kl
    (Burges et al. 2005's RankNet loss: deeper nodes should score higher). 0 for d_max < 2."""
    d = z.shape[0]
    if d < 2:
        return z.sum() * 0.0
    k, l = torch.triu_indices(d, d, offset=1, device=z.device)
    w = 1.0 / (l - k).to(z.dtype)
    return (w * torch.nn.functional.softplus(z[k] - z[l])).sum() / w.sum()


class _AddAuxiliary(torch.autograd.Function):
    """Identity on ``q``; on the backward pass, gradient 1 into the scalar ``aux``: the auxiliary
    loss joins the gradient of whatever loss ``q`` enters (pymimir-rl's DQN step), exactly as if
    it were added to it, without changing the library's loss code."""

    @staticmethod
    def forward(ctx, q: torch.Tensor, aux: torch.Tensor) -> torch.Tensor:
        return q.clone()

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return grad, torch.ones((), dtype=grad.dtype, device=grad.device)


class DeltaLiterals:
    """Memoised pymimir ground literals of one problem's fluent atoms, for the delta atoms of AD."""

    def __init__(self, problem):
        import pymimir

        self._mm = pymimir
        self.problem = problem
        self._repos = problem._advanced_problem.get_repositories()
        self._memo: dict[tuple[int, bool], Any] = {}

    def literal(self, index: int, positive: bool):
        key = (index, positive)
        got = self._memo.get(key)
        if got is None:
            atom = self._mm.GroundAtom(self._repos.get_fluent_ground_atoms_from_indices([int(index)])[0])
            got = self._memo[key] = self._mm.GroundLiteral.new(atom, positive, self.problem)
        return got

    def deltas(self, root, tree) -> list[list]:
        """Per jump of ``tree``: its added (positive) and deleted (negative) fluent literals
        relative to ``root`` (Section 5: s' \\ s and s \\ s')."""
        base = set(atom_indices(root)[0])
        out = []
        for jump in tree.jumps:
            atoms = set(atom_indices(jump.state)[0])
            out.append([self.literal(a, True) for a in sorted(atoms - base)]
                       + [self.literal(a, False) for a in sorted(base - atoms)])
        return out


class ExternalHead(nn.Module):
    """Ext's readout: Q(s, s') = MLP1(sum_o MLP2([f(o; R^s), f(o; R^s')])) (Section 5)."""

    def __init__(self, k: int):
        super().__init__()
        self.inner = rg.MLP(2 * k, k)
        self.outer = rg.MLP(k, 1)

    def forward(self, root: torch.Tensor, succ: torch.Tensor) -> torch.Tensor:
        """``root`` (n_objects, k), ``succ`` (n_candidates, n_objects, k) -> (n_candidates,)."""
        pair = torch.cat([root.unsqueeze(0).expand_as(succ), succ], dim=-1)
        return self.outer(self.inner(pair).sum(dim=1)).view(-1)


class PolicyNetwork(nn.Module):
    """The R-GNN Q-function of one domain under one encoding.

    Args:
        domain: the pymimir domain (relations are per predicate / action schema name, so one model
            serves every problem of the domain file).
        encoding: ``aa`` | ``ext`` | ``ad`` (Section 5) | ``int`` | ``id`` (Appendix C, Table 6).
        embedding_size: k (the paper: 32). layers: message-passing iterations.
        depth_nodes: AD with the depth nodes (the paper's full encoding); False: Appendix C's
            "No Depthnodes" ablation.
        depth_rank_weight: weight of Section 6's depth-ranking loss (AD with depth nodes only).
        tree_atoms: AD with the tree atoms ``P_E`` (the paper's full encoding); False: Appendix C's
            "No Tree-Atoms" ablation (:class:`NoTreeAtomsEncoder`).

    Raises:
        ValueError: unknown encoding; ``tree_atoms=False`` with another encoding than AD (only AD
            has tree atoms).
    """

    def __init__(self, domain, encoding: str, embedding_size: int = 32, layers: int = 30, depth_nodes: bool = True,
                 depth_rank_weight: float = 0.0, tree_atoms: bool = True):
        super().__init__()
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding {encoding!r}; one of {', '.join(ENCODINGS)}")
        if not tree_atoms and encoding != "ad":
            raise ValueError(f"tree_atoms=False (No Tree-Atoms): only the AD encoding has tree atoms, not {encoding!r}")
        self.encoding = encoding
        self.depth_nodes = depth_nodes
        self.tree_atoms = bool(tree_atoms)
        self._args = (domain, encoding, embedding_size, layers, depth_nodes, depth_rank_weight, self.tree_atoms)
        #: weight of Section 6's depth-ranking loss (AD with depth nodes; 0: off); it joins the
        #: gradient of the loss the Q-values enter while training (:class:`_AddAuxiliary`)
        self.depth_rank_weight = float(depth_rank_weight) if encoding == "ad" and depth_nodes else 0.0
        hp = rg.HyperparameterConfig(domain=domain, embedding_size=embedding_size, num_layers=layers)
        spec: tuple = (rg.StateEncoder(), rg.GoalEncoder())
        if encoding == "aa":
            spec += (rg.GroundActionsEncoder(),)
        elif encoding == "ad":
            effects = rg.TransitionEffectsEncoder() if self.tree_atoms else NoTreeAtomsEncoder()
            spec += (effects,) + ((DepthEncoder(),) if depth_nodes else ())
        elif encoding == "int":
            spec += (rg.StateEncoder(PRIME), SuccessorGoalEncoder(PRIME))
        elif encoding == "id":
            spec += (DeltaAtomsEncoder(),)
        self._spec = spec
        # the decoders are built before the message functions, as they always were: the order of
        # parameter initialisation (hence every row's initial weights) stays what it was
        if encoding == "ext":
            out = [("objects", rg.ObjectsEmbeddingDecoder())]
        elif encoding in PER_TRANSITION:
            out = [("q", rg.ObjectsScalarDecoder(hp))]
        else:
            out = [("q", rg.ActionScalarDecoder(hp))]
        if encoding == "ad" and depth_nodes:
            out.append(("depth", DepthNodeDecoder()))
        modules = rg.ModuleConfig(aggregation_function=rg.SmoothMaximumAggregation(),
                                  message_function=rg.PredicateMLPMessages(hp, spec),
                                  update_function=rg.MLPUpdates(hp))
        self.rgnn = rg.RelationalGraphNeuralNetwork(hp, modules, spec, out)
        self.head = ExternalHead(embedding_size) if encoding == "ext" else None
        #: Section 6's probe W_theta: z_d = W f(o_d) for each depth node
        self.depth_probe = nn.Linear(embedding_size, 1, bias=False) if encoding == "ad" and depth_nodes else None

    def clone(self) -> "PolicyNetwork":
        """A copy with the same weights (a deep copy cannot copy the pymimir domain)."""
        twin = PolicyNetwork(*self._args)
        twin.load_state_dict(self.state_dict())
        return twin.to(next(self.parameters()).device)

    def _graphs(self, items: list[tuple]) -> tuple[list[tuple], list[int]]:
        """The pymimir-rgnn input instances of ``items`` (see :meth:`q_values`) and how many each
        item has: Ext 1 + n (the root, then each candidate), Int / ID n (one per transition),
        AA / AD 1 (the whole tree).

        Raises:
            ValueError: AD or ID without the tree's deltas.
        """
        if self.encoding in ("ad", "id") and any(deltas is None for *_, deltas in items):
            raise ValueError(f"the {self.encoding} encoding needs each tree's deltas (LookaheadCache(with_deltas=True))")
        batch: list[tuple] = []
        sizes: list[int] = []
        for state, goal, tree, deltas in items:
            if self.encoding == "ext":
                batch.append((state, goal))
                batch.extend((j.state, goal) for j in tree.jumps)
                sizes.append(1 + len(tree.jumps))
            elif self.encoding == "aa":
                batch.append((state, goal, [j.actions[0] for j in tree.jumps]))
                sizes.append(1)
            elif self.encoding == "ad":
                effects = (deltas, list(tree.edges), goal)
                batch.append((state, goal, effects) + (([j.depth for j in tree.jumps],) if self.depth_nodes else ()))
                sizes.append(1)
            elif self.encoding == "int":
                batch.extend((state, goal, j.state, (j.state, goal)) for j in tree.jumps)
                sizes.append(len(tree.jumps))
            else:  # id
                batch.extend((state, goal, (d, goal)) for d in deltas)
                sizes.append(len(deltas))
        return batch, sizes

    def relations(self) -> list[tuple[str, int]]:
        """The relations of this network's input, ``(name, arity)`` sorted by name (pymimir-rgnn's
        ``get_relations_from_encoders``): each of positive arity has its own message function."""
        from pymimir_rgnn.encoders import get_relations_from_encoders

        return get_relations_from_encoders(self._args[0], self._spec)

    def encoded(self, items: list[tuple]):
        """The R-GNN input that :meth:`q_values` builds for ``items``: pymimir-rgnn's
        ``EncodedTensors`` (``flattened_relations``: relation name -> int tensor of node ids, arity
        ids per atom, concatenated; ``node_sizes`` / ``object_sizes`` / ``action_sizes`` /
        ``auxiliary_sizes``: per graph). Node ids: per graph, the objects (problem objects, then
        the domain's constants), then its candidate nodes ``o_s'`` (AA, AD), then its auxiliary
        (depth) nodes. For inspection and tests; no forward pass."""
        from pymimir_rgnn.encoders import get_input_from_encoders

        batch, _ = self._graphs(items)
        return get_input_from_encoders(batch, self._spec, self.rgnn.get_device())

    def q_values(self, items: list[tuple]) -> list[torch.Tensor]:
        """Q-values of every candidate of each item, in the tree's jump order.

        Args:
            items: ``(state, goal_condition, tree, deltas)`` per decision; ``tree`` a
                :class:`~planarena.methods.rgnn_policies.lookahead.LookaheadTree` with at least one
                jump; ``deltas`` (AD and ID only) :meth:`DeltaLiterals.deltas` of the tree.

        Returns:
            One float tensor of shape (len(tree.jumps),) per item. AA and AD: one R-GNN forward
            pass over all items; Ext: one batched pass over 1 + len(tree.jumps) graphs per item;
            Int and ID: one batched pass over len(tree.jumps) graphs per item.

        Raises:
            ValueError: AD or ID items without deltas.
        """
        batch, sizes = self._graphs(items)
        if self.encoding == "ext":
            objects = self.rgnn.forward(batch).readout("objects")
            out, at = [], 0
            for n in sizes:
                root = objects[at]
                succ = torch.stack(objects[at + 1: at + n])
                out.append(self.head(root, succ))
                at += n
            return out
        if self.encoding in PER_TRANSITION:
            return list(self.rgnn.forward(batch).readout("q").split(sizes))
        state = self.rgnn.forward(batch)
        qs = list(state.readout("q"))
        if self.depth_rank_weight > 0 and self.training and torch.is_grad_enabled():
            depth = state.readout("depth")
            scale = self.depth_rank_weight / len(qs)  # the DQN loss is a mean over the batch
            qs = [_AddAuxiliary.apply(q, scale * depth_rank_loss(self.depth_probe(e).view(-1)))
                  for q, e in zip(qs, depth)]
        return qs


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters of ``model``."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


__all__ = ["ENCODINGS", "PER_TRANSITION", "PRIME", "DeltaAtomsEncoder", "DeltaLiterals", "DepthEncoder",
           "DepthNodeDecoder", "depth_rank_loss", "ExternalHead", "NoTreeAtomsEncoder", "PolicyNetwork",
           "SuccessorGoalEncoder", "count_parameters"]
