"""Params keys the transformer family (SATr, PlanGPT) reads (:mod:`planarena.paramkeys`): its row
blocks and the ``transformers`` section (``model`` / ``train``: the fields of
:class:`~planarena.methods.transformers.model.EncoderConfig` plus PlanGPT's ``max_positions``, and of
:class:`~planarena.methods.transformers.train.TrainConfig`; a test keeps the lists equal)."""

from planarena.paramkeys import ANY, ROW_COMMON, ROW_PLAN

#: ``methods.<row>`` keys of ``method: satr``.
ROW_KEYS = ROW_COMMON | ROW_PLAN | {"arch", "contrastive", "decoding", "train_problems"}
MODEL_FIELDS = ("d", "layers", "heads", "ff", "k", "token_dim", "dropout", "max_positions")
TRAIN_FIELDS = ("steps", "schedule_steps", "batch", "lr", "min_lr", "warmup", "weight_decay", "contrastive",
                "contrastive_reduction", "weights",
                "rename_one", "eval_every", "window", "spike", "plateau")
_MODEL = dict.fromkeys(MODEL_FIELDS, ANY)
_TRAIN = dict.fromkeys(TRAIN_FIELDS, ANY)
SECTION_KEYS = {"transformers": {
    "splits": ANY, "device": ANY, "max_objects": ANY, "max_states": ANY, "horizon": ANY, "max_tokens": ANY,
    "select_with": ANY, "select_strategies": ANY, "model": _MODEL, "train": _TRAIN,
    "by_arch": {arch: {"model": _MODEL, "train": _TRAIN} for arch in ("encoder", "encdec", "plangpt")}}}
