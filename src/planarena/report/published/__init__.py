"""Numbers copied from the papers, as data: one YAML file per paper beside this file, parsed and
checked by :mod:`planarena.report.published.loader`. They appear only in labelled published tables
and columns of the leaderboard, never in measured rows or ``metrics.json``."""
