"""Params keys the state-centric family reads (:mod:`planarena.paramkeys`): its row blocks and the
``transition_models`` section. The model settings (``lstm``, ``xgb``, ``identity`` and the rows'
``model_params``) are checked against each model's ``DEFAULTS`` when the model is built
(:mod:`planarena.methods.state_centric.models`); ``decode`` against
:class:`planarena.search.decoding.DecodeSettings`."""

from planarena.paramkeys import ANY, ROW_COMMON, ROW_PLAN

#: ``methods.<row>`` keys of ``method: state_centric``.
ROW_KEYS = ROW_COMMON | ROW_PLAN | {"encoding", "model", "mode", "model_params", "decode", "pool_protocols",
                                    "train_problems", "rank_splits"}
_MODELS = {"lstm": ANY, "xgb": ANY, "identity": ANY}
SECTION_KEYS = {"transition_models": {**_MODELS, "device": ANY, "splits": ANY,
                                      "pool": {"protocols": ANY, "validation_fraction": ANY, "seeds": ANY, **_MODELS}}}
