"""The sections of the report pages, one module each (the page each goes on:
:data:`planarena.report.pages.DETAIL_PAGES`; the front page ``leaderboard.md`` takes the headline
tables of ``coverage`` and ``ranking``, the problems box of ``problems`` and the method lines of
``info``):

==================  ===================================================================
``problems``        errors, diverged runs, rejected plans, unknown problems, planning
                    stage, empty splits, data consistency; the front page's box
``info``            provenance, method settings, methods with results; method lines
``coverage``        held-out headline (method x split), per-domain pivots, ceiling
``quality``         plan quality QS / QS_S (symmetry-aware-transformers paper, Appendix E)
``divergence``      training divergences per method and domain (the SATr paper's Table E.9)
``ranking``         the front page's successor-ranking tables (method x protocol Hit@k)
``hitk``            successor-set Hit@k pivots (and the task-metric table shared with schema)
``pool``            the candidate-pool page (with ``pool_reading``)
``schema``          schema learning
``cost``            time per problem, wall time, model size, training and decoding time
``detail``          per-domain solved / attempted / timeouts
``published``       numbers copied from the papers, side by side with measured ones
==================  ===================================================================

Each module computes its tables from the records (pure functions the tests call directly) and
renders its markdown lines with ``render(...)``; :mod:`planarena.report.pages` lays them out.
"""
