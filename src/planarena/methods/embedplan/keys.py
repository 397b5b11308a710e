"""Params keys the EmbedPlan family reads (:mod:`planarena.paramkeys`): its row blocks and the
``embedplan`` section (``model``: the fields of
:class:`planarena.methods.embedplan.model.EmbedPlanConfig`, a test keeps the two lists equal)."""

from planarena.paramkeys import ANY, ROW_COMMON

#: ``methods.<row>`` keys of ``method: embedplan`` (no plan task: no splits or time limit).
ROW_KEYS = ROW_COMMON | {"arch", "model_params", "protocols"}
MODEL_FIELDS = ("arch", "proj_dim", "proj_hidden", "proj_layers", "hidden", "layers", "dropout", "action_weight",
                "max_actions", "temperature", "lr", "weight_decay", "batch_size", "max_epochs", "warmup_epochs",
                "patience", "val_fraction", "time_budget_s")
SECTION_KEYS = {"embedplan": {"protocols": ANY, "pool_size": ANY, "pessimistic_ties": ANY, "test_fraction": ANY,
                              "max_train_transitions": ANY, "device": ANY,
                              "model": dict.fromkeys(MODEL_FIELDS, ANY)}}
