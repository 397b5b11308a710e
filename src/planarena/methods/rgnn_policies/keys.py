"""Params keys the width-based R-GNN policy family reads (:mod:`planarena.paramkeys`): its row
blocks and the ``rgnn_policies`` section (``train``: the fields of
:class:`planarena.methods.rgnn_policies.train.TrainConfig`; a test keeps the lists equal)."""

from planarena.paramkeys import ANY, ROW_COMMON, ROW_PLAN

#: ``methods.<row>`` keys of ``method: rgnn_policy``.
ROW_KEYS = ROW_COMMON | ROW_PLAN | {"lookahead", "encoding", "tree_atoms", "goals", "train_problems"}
TRAIN_FIELDS = ("episodes", "lr", "min_lr", "lr_episodes", "temperature", "min_temperature", "temperature_episodes",
                "gamma", "train_steps", "batch", "rollouts", "max_jumps", "max_steps", "buffer_iw", "buffer_flat",
                "her_max", "mellowmax", "eval_every", "eval_choices", "max_seconds")
SECTION_KEYS = {"rgnn_policies": {
    "splits": ANY, "device": ANY, "capacity": ANY, "validation_from_train": ANY,
    "max_choices": {"width": ANY, "flat": ANY},
    "model": {"embedding_size": ANY, "layers": ANY, "depth_nodes": ANY, "depth_rank_weight": ANY},
    "train": dict.fromkeys(TRAIN_FIELDS, ANY)}}
