"""Markdown helpers shared by every section of ``reports/leaderboard.md``.

Two table renderers exist because the leaderboard has always used both and its bytes must not
change: :func:`md_table` writes every cell as text (left-aligned, numbers never reparsed), and
:func:`md_table_numeric` lets ``tabulate`` right-align numeric columns (the candidate-pool tables).
"""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

#: The cell of a method / split without records (an en dash).
DASH = "–"
#: The cell of a split without instances.
NO_INSTANCES = "no instances"

#: Examples listed per group in the Problems tables before "… (+N)".
EXAMPLES = 3
#: Characters of free text (failure reasons) kept in one table cell.
REASON_CHARS = 200


def md_table(df: pd.DataFrame) -> str:
    """``df`` as a GitHub markdown table, every cell as text (no number parsing), no index."""
    return df.astype(str).to_markdown(index=False, disable_numparse=True)


def md_table_numeric(df: pd.DataFrame) -> str:
    """``df`` as a GitHub markdown table with ``tabulate``'s number parsing (numbers right-aligned)."""
    return df.to_markdown(index=False)


def md_text(text: Any, limit: int = REASON_CHARS) -> str:
    """Free text made safe for one markdown table cell: whitespace collapsed (no newlines),
    truncated to ``limit`` characters with "…", pipes escaped."""
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("|", "\\|")


def examples(items: Sequence[str], shown: int = EXAMPLES) -> str:
    """The first ``shown`` of ``items`` (sorted), comma-separated, then ``… (+N)`` for the rest."""
    items = sorted(items)
    text = ", ".join(items[:shown])
    return text + (f", … (+{len(items) - shown})" if len(items) > shown else "")
