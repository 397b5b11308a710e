"""The leaderboard (docs/concepts.md#the-pages; docs/layout.md#the-package: ``report/``).

* :mod:`~planarena.report.leaderboard`: the ``report`` stage (``run_stage``), a short orchestrator.
* :mod:`~planarena.report.records`: the inputs, and the record helpers every section shares.
* :mod:`~planarena.report.metrics`: each metric declared once (higher-is-better, aggregation, Sum
  row, format); tables derive "best", sums and cells from it.
* :mod:`~planarena.report.sections`: one module per section.
* :mod:`~planarena.report.published`: numbers copied from the papers, as data files, and their
  loader.
* :mod:`~planarena.report.traits`: what methods declare for the report
  (:meth:`planarena.methods.base.Method.report_traits`); the report imports no method family.
* :mod:`~planarena.report.plots`, :mod:`~planarena.report.markdown`: PNG plots, table helpers.
"""
