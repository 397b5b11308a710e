"""Successor prediction of DIAS's MLP-effects ablation (no PDDL domain to plan with).

Source: Reiter, Gebler, Geffner (docs/papers/dias.md), Section 5.4 and Appendix A.4.1, "Evaluation":
"the learned static preconditions P_pre^a are used to identify all applicable grounded actions for a
given test state. For each valid grounding, we construct a hard selection matrix from the
object-to-slot bindings and query the MLP to predict the successor state." Here the learned
preconditions are a PDDL domain whose actions have no effects (``preconditions.pddl``, written by the
train stage); pymimir grounds it on the test state (injective groundings only, Section 3), and each
grounding's slot bindings go to :meth:`planarena.methods.dias.model.DiasModel.mlp_successors`, one
batched call per action name. The protocol (:mod:`planarena.protocols.schema`) compares the
predicted changes with the true domain's, as for a learned PDDL domain (Table 3's precision and
recall).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import defaultdict
from pathlib import Path

import torch

from planarena.core.pddl import parse_domain, parse_problem_of, state_from_atoms
from planarena.methods.base import SuccessorModel
from planarena.methods.dias.data import parse_atom
from planarena.methods.dias.model import DiasModel, Vocab
from planarena.protocols.schema import all_fluent

#: groundings per batched MLP call (memory: chunk x R x O x O floats)
CHUNK = 256


class MlpSuccessors(SuccessorModel):
    """The MLP-effects model of one (domain, seed) unit as a :class:`SuccessorModel`.

    Args:
        model: a trained :class:`DiasModel` with ``effects="mlp"`` (eval mode).
        grounding_domain: the learned preconditions as a PDDL domain (actions without effects;
            parameters ``?x<k>``: slot k).
        threshold: an atom is true in the predicted successor when its probability exceeds it
            (eq. 5's output; 0.5 as for the static-effects derivation).
    """

    def __init__(self, model: DiasModel, grounding_domain: Path, threshold: float = 0.5):
        self.model = model
        self.grounding_domain = Path(grounding_domain)
        self.threshold = threshold
        vocab = model.vocab
        self._pred = {p: r for r, (p, _) in enumerate(vocab.predicates)}
        self._unary = torch.tensor([a == 1 for _, a in vocab.predicates])
        self._action = {a: i for i, (a, _) in enumerate(vocab.actions)}
        self._tmp = tempfile.TemporaryDirectory(prefix="planarena-mlp-")
        copy = Path(self._tmp.name) / "domain.pddl"   # every predicate fluent: test states set them all
        copy.write_text(all_fluent(self.grounding_domain.read_text()))
        self._domain = parse_domain(copy)
        self._slots = {}
        for a in self._domain.get_actions():
            if a.get_name() in self._action:
                # parameter ?x<k> is slot k (pymimir names it ?x<k>_<i>_<j>)
                self._slots[a.get_name()] = [int(re.match(r"\??x(\d+)", v.get_name()).group(1)) - 1
                                             for v in a.get_parameters()]
        self._problems: dict[str, tuple] = {}

    def _problem(self, problem_file: Path):
        key = str(problem_file)
        if key not in self._problems:
            problem = parse_problem_of(self._domain, problem_file)
            names = [o.get_name() for o in problem.get_objects()]
            O = len(names)
            valid = torch.where(self._unary[:, None, None], torch.eye(O, dtype=torch.bool),
                                torch.ones(O, O, dtype=torch.bool))
            self._problems[key] = (problem, names, {n: i for i, n in enumerate(names)}, valid)
        return self._problems[key]

    def adjacency(self, atoms, index: dict[str, int]) -> torch.Tensor:
        """``(R, O, O)`` 0/1 tensor of ``atoms`` (unary ``p(o_i)`` at ``[r, i, i]``); atoms of
        predicates outside the model's signature are left out."""
        A = torch.zeros(len(self._pred), len(index), len(index))
        for text in atoms:
            name, args = parse_atom(text)
            r = self._pred.get(name)
            if r is None or not args:
                continue
            i = index[args[0]]
            A[r, i, index[args[1]] if len(args) > 1 else i] = 1.0
        return A

    @torch.no_grad()
    def changes(self, problem_file: Path, atoms: frozenset[str]) -> set[frozenset[str]]:
        """See :meth:`planarena.methods.base.SuccessorModel.changes`.

        Raises:
            planarena.core.pddl.PDDLError: the problem file does not parse against the learned
                preconditions' domain, or an atom names an unknown predicate or object.
        """
        problem, names, index, valid = self._problem(problem_file)
        state = state_from_atoms(problem, atoms)
        bindings: dict[str, list[list[int]]] = defaultdict(list)
        for ga in state.generate_applicable_actions(cache_result=False):
            action = ga.get_action().get_name()
            if action not in self._slots:   # all_fluent's dummy action
                continue
            objects = [o.get_name() for o in ga.get_objects()]
            if len(set(objects)) < len(objects):
                continue   # the injective-binding assumption (Section 3)
            row = [-1] * self.model.M
            for slot, obj in zip(self._slots[action], objects):
                row[slot] = index[obj]
            bindings[action].append(row)
        A = self.adjacency(atoms, index)
        before = A > 0.5
        out = set()
        for action, rows in bindings.items():
            for start in range(0, len(rows), CHUNK):
                after = self.model.mlp_successors(A, self._action[action], rows[start:start + CHUNK]) > self.threshold
                added = after & ~before & valid
                deleted = ~after & before & valid
                for g in range(after.shape[0]):
                    change = ({f"+{self._text(r, i, j, names)}" for r, i, j in added[g].nonzero().tolist()}
                              | {f"-{self._text(r, i, j, names)}" for r, i, j in deleted[g].nonzero().tolist()})
                    if change:
                        out.add(frozenset(change))
        return out

    def _text(self, r: int, i: int, j: int, names: list[str]) -> str:
        pred, arity = self.model.vocab.predicates[r]
        return f"({pred} {names[i]})" if arity == 1 else f"({pred} {names[i]} {names[j]})"


def load_mlp_successors(unit: Path, schema_root: Path, domain: str) -> MlpSuccessors:
    """The :class:`MlpSuccessors` of a trained unit folder (``model.pt``, ``facts.json`` with the
    training ``config``, ``preconditions.pddl``) of schema domain ``domain`` (its signature from
    ``schema_root/<domain>/info.json``).

    Raises:
        FileNotFoundError: a file of the unit or the domain's ``info.json`` is missing.
    """
    facts = json.loads((unit / "facts.json").read_text())
    info = json.loads((Path(schema_root) / domain / "info.json").read_text())
    cfg = facts["config"]
    observation = cfg.get("observation", "names")
    vocab = Vocab(predicates=tuple((p, int(a)) for p, a in info["predicates"]),
                  actions=tuple((a["name"], int(a["arity"]) if observation == "strips" else None)
                                for a in info["actions"]))
    model = DiasModel(vocab, d=cfg["d"], slots=cfg["slots"], layers=cfg["layers"], observation=observation,
                      effects="mlp", mlp_hidden=cfg.get("mlp_hidden", 128), sinkhorn_iters=cfg["sinkhorn_iters"],
                      sinkhorn_tol=cfg["sinkhorn_tol"], key_norm=cfg.get("key_norm", "none"))
    model.load_state_dict(torch.load(unit / "model.pt", map_location="cpu"))
    model.eval()
    return MlpSuccessors(model, unit / "preconditions.pddl", float(cfg.get("threshold", 0.5)))


__all__ = ["CHUNK", "MlpSuccessors", "load_mlp_successors"]
