"""Params keys the WL-GOOSE family reads (:mod:`planarena.paramkeys`): its row blocks (it reads the
shared ``embed_wl`` section, declared with the core sections)."""

from planarena.paramkeys import ROW_COMMON, ROW_PLAN

#: ``methods.<row>`` keys of ``method: wl_goose``.
ROW_KEYS = ROW_COMMON | ROW_PLAN | {"alpha", "max_expansions", "train_problems"}
SECTION_KEYS: dict = {}
