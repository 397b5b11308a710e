"""The schema-learning transitions of one domain as tensors (DIAS paper, Sections 3 and 4.1).

Reads ``data/schema/<domain>/`` (:mod:`planarena.datasets.schema`): every transition of the walk
instance becomes a pair of adjacency tensors ``A, A' in {0,1}^(R x O x O)`` (unary atom ``p(o_i)`` at
``[r, i, i]``), the action name's index and the objects of its arguments; the observation variant
decides which arguments the model sees (:func:`known_arguments`); :func:`add_noise` is the noise model
of Appendix A.4.2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch

#: the three observation variants of the paper (Section 3): full STRIPS actions, STRIPS+ actions,
#: action names only
OBSERVATIONS = ("strips", "strips_plus", "names")


@dataclass
class Transitions:
    """``N`` transitions of one instance: ``A``, ``A_next`` float ``(N, R, O, O)``; ``action`` long
    ``(N,)``; ``args`` long ``(N, max arity)``, the objects of the full STRIPS arguments (-1 padded)."""

    A: torch.Tensor
    A_next: torch.Tensor
    action: torch.Tensor
    args: torch.Tensor

    def __len__(self) -> int:
        return int(self.action.shape[0])


@dataclass
class DomainData:
    """One domain's schema-learning data: signature, objects of the walk instance, and its train /
    validation transitions."""

    domain: str
    predicates: tuple[tuple[str, int], ...]
    actions: tuple[tuple[str, int], ...]        # (name, true arity)
    strips_plus: tuple[tuple[int, ...], ...]     # per action: argument positions a STRIPS+ action shows
    objects: tuple[str, ...]
    train: Transitions
    validation: Transitions
    train_file: str = "transitions.train.jsonl"   # the walk file ``train`` was read from


def parse_atom(text: str) -> tuple[str, list[str]]:
    """``"(pred o1 o2)"`` -> ``("pred", ["o1", "o2"])``."""
    parts = text.strip("()").split()
    return parts[0], parts[1:]


def _transitions(path: Path, atoms: list[str], static: list[int], pred_index: dict, obj_index: dict,
                 act_index: dict, arity: int) -> Transitions:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    R, O = len(pred_index), len(obj_index)
    coords = []
    for text in atoms:
        name, args = parse_atom(text)
        i = obj_index[args[0]]
        coords.append((pred_index[name], i, obj_index[args[1]] if len(args) > 1 else i))
    coords_t = torch.tensor(coords, dtype=torch.long).reshape(-1, 3)

    def adjacency(ids_per_row: list[list[int]]) -> torch.Tensor:
        A = torch.zeros(len(ids_per_row), R, O, O)
        for n, ids in enumerate(ids_per_row):
            c = coords_t[torch.tensor([*static, *ids], dtype=torch.long)]
            A[n, c[:, 0], c[:, 1], c[:, 2]] = 1.0
        return A

    args = torch.full((len(rows), max(arity, 1)), -1, dtype=torch.long)
    action = torch.empty(len(rows), dtype=torch.long)
    for n, r in enumerate(rows):
        name, objs = parse_atom(r["a"])
        action[n] = act_index[name]
        for k, o in enumerate(objs):
            args[n, k] = obj_index[o]
    return Transitions(adjacency([r["s"] for r in rows]), adjacency([r["t"] for r in rows]), action, args)


def load_domain(root: str | Path, domain: str, noise: bool = False) -> DomainData:
    """The data of ``domain`` under ``root`` (``data/schema``).

    ``noise``: read the noise rows' training walk instead (``info.json``'s ``noise_train``: at least
    N_min = 200 transitions per action name, DIAS Appendix A.4.2, dias-action-schemas.txt line 512;
    :func:`planarena.datasets.schema.noise_bounds`); validation is the same walk either way.

    Raises:
        FileNotFoundError: the domain's folder or a file in it is missing, or (``noise``) the data
            predates the noise walk (run the ``schema_data`` stage).
    """
    folder = Path(root) / domain
    if not (folder / "info.json").exists():
        raise FileNotFoundError(f"{folder}/info.json: no schema-learning data for {domain}; run `dvc repro schema_data`")
    info = json.loads((folder / "info.json").read_text())
    inst = json.loads((folder / "atoms.json").read_text())[info["train_problem"]]
    predicates = tuple((p, int(a)) for p, a in info["predicates"])
    actions = tuple((a["name"], int(a["arity"])) for a in info["actions"])
    pred_index = {p: i for i, (p, _) in enumerate(predicates)}
    obj_index = {o: i for i, o in enumerate(inst["objects"])}
    act_index = {a: i for i, (a, _) in enumerate(actions)}
    arity = max(a for _, a in actions)
    train_file = "transitions.train.jsonl"
    if noise:
        if "noise_train" not in info:
            raise FileNotFoundError(f"{folder}/info.json: no noise training walk (Appendix A.4.2's N_min = 200); "
                                    f"rerun `dvc repro schema_data`")
        train_file = info["noise_train"]["file"]
    load = lambda split: _transitions(folder / f"transitions.{split}.jsonl", inst["atoms"], inst["static"],  # noqa: E731
                                      pred_index, obj_index, act_index, arity)
    train = _transitions(folder / train_file, inst["atoms"], inst["static"], pred_index, obj_index, act_index, arity)
    return DomainData(domain, predicates, actions, tuple(tuple(a["strips_plus"]) for a in info["actions"]),
                      tuple(inst["objects"]), train, load("validation"), train_file)


def known_arguments(data: DomainData, t: Transitions, observation: str, slots: int) -> torch.Tensor:
    """``(N, M)`` object index per slot where the observation shows the argument, -1 elsewhere.

    ``strips``: every argument, in its position (``M`` = the largest true arity); ``strips_plus``:
    the arguments a STRIPS+ action keeps (:func:`planarena.datasets.schema.strips_plus_arguments`),
    in the first slots (``M = slots``); ``names``: none (``M = slots``).

    Raises:
        ValueError: unknown observation, or a STRIPS+ action with more kept arguments than ``slots``.
    """
    if observation not in OBSERVATIONS:
        raise ValueError(f"observation {observation!r}; expected one of {OBSERVATIONS}")
    if observation == "strips":
        return t.args.clone()
    known = torch.full((len(t), slots), -1, dtype=torch.long)
    if observation == "strips_plus":
        for a, kept in enumerate(data.strips_plus):
            if len(kept) > slots:
                raise ValueError(f"{data.domain}: action {data.actions[a][0]} keeps {len(kept)} arguments > {slots} slots")
            rows = t.action == a
            for k, pos in enumerate(kept):
                known[rows, k] = t.args[rows, pos]
    return known


def add_noise(A: torch.Tensor, flips: float, unary: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``A`` (``(N, R, O, O)``) with ``flips`` atoms flipped per state in expectation (DIAS paper,
    Appendix A.4.2): spread evenly over the relations that have both true and false atoms in that
    state, and within a relation balanced between removals and additions (so a very sparse or very
    dense relation is perturbed less). Unary relations (``unary``: bool ``(R,)``) flip diagonal
    entries only. The paper counts flips per transition ``<s, s'>``; the caller passes half to each
    state.
    """
    if flips <= 0:
        return A
    N, R, O, _ = A.shape
    eye = torch.eye(O, dtype=torch.bool)
    valid = torch.where(unary[:, None, None], eye, torch.ones_like(eye))  # (R, O, O): entries an atom can hold
    valid = valid.expand(N, R, O, O)
    true = (A > 0.5) & valid
    false = (A <= 0.5) & valid
    n_true = true.sum(dim=(2, 3)).float()    # (N, R)
    n_false = false.sum(dim=(2, 3)).float()
    eligible = (n_true > 0) & (n_false > 0)
    share = flips / eligible.sum(dim=1, keepdim=True).clamp(min=1)   # expected flips per eligible relation
    p_remove = torch.where(eligible, (share / 2) / n_true.clamp(min=1), torch.zeros_like(share)).clamp(max=1)
    p_add = torch.where(eligible, (share / 2) / n_false.clamp(min=1), torch.zeros_like(share)).clamp(max=1)
    u = torch.rand(A.shape, generator=generator)
    remove = true & (u < p_remove[:, :, None, None])
    add = false & (u < p_add[:, :, None, None])
    out = A.clone()
    out[remove] = 0.0
    out[add] = 1.0
    return out
