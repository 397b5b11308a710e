"""The sections of ``reports/leaderboard.md``, one module each, in the order DESIGN.md
("Leaderboards") fixes:

==================  ===================================================================
``problems``        errors, diverged runs, rejected plans, planning stage, data issues
``info``            provenance, method settings, methods with results
``coverage``        domain x split x method, mean ± std, best in bold, Sum row
``quality``         plan quality QS / QS_S (symmetry-aware-transformers paper, Appendix E)
``hitk``            successor-set Hit@k (and the task-metric table shared with schema)
``pool``            the candidate-pool Hit@k subsection (with ``pool_reading``)
``schema``          schema learning
``cost``            time per problem, wall time, model size, training and decoding time
``detail``          per-domain solved / attempted / timeouts
``published``       numbers copied from the papers, side by side with measured ones
==================  ===================================================================

Each module computes its tables from the records (pure functions the tests call directly) and
renders its markdown lines with ``render(...)``; :mod:`planarena.report.leaderboard` calls them.
"""
