"""Params keys the DIAS family and the schema references read (:mod:`planarena.paramkeys`): their
row blocks and the ``dias`` section. ``model``, ``train``, ``by_observation.<o>.*``, ``noise`` and a
row's ``overrides`` are merged into one flat dict of
:class:`planarena.methods.dias.train.DiasConfig` fields (a test keeps :data:`CONFIG_FIELDS` equal to
them), so each of them takes any of those fields."""

from planarena.paramkeys import ANY, ROW_COMMON, Open

#: Keys of every schema-learning row (:mod:`planarena.protocols.schema`, :mod:`planarena.datasets.schema`).
ROW_SCHEMA = ROW_COMMON | {"domains", "states", "max_test_states", "max_test_problems"}
#: ``methods.<row>`` keys of ``method: dias``.
ROW_KEYS = ROW_SCHEMA | {"observation", "noise", "effects", "overrides"}
CONFIG_FIELDS = ("d", "slots", "layers", "lr", "batch", "steps", "weight_decay", "alpha", "pcgrad", "sinkhorn_iters",
                 "sinkhorn_tol", "key_norm", "tau_steps", "tau_fraction", "tau_floor", "threshold", "effects",
                 "observation", "mlp_hidden", "eval_every", "device")
_FLAT = dict.fromkeys(CONFIG_FIELDS, ANY)
SECTION_KEYS = {"dias": {
    "device": ANY, "slots": ANY, "threshold": ANY, "alpha": Open(ANY), "default_alpha": ANY,
    "model": _FLAT, "train": _FLAT, "noise": _FLAT,
    "by_observation": {o: {"model": _FLAT, "train": _FLAT} for o in ("strips", "strips_plus", "names")}}}
