"""Moved to :mod:`planarena.core.executor` (it imports nothing of planarena, so it is a core module
that every layer may use).

This name is kept for the importers under ``methods/`` that still use it (``methods/units.py``,
``methods/embedplan/method.py``, ``methods/state_centric/method.py``): it *is* the core module
(one module object in ``sys.modules``, so its cluster, its configuration and a test's monkeypatch
are shared). New code imports :mod:`planarena.core.executor`; remove this file once nothing
imports it (tests/test_layers.py lists those imports as the known exceptions).
"""

import sys

from planarena.core import executor as _executor

sys.modules[__name__] = _executor
