"""Published reference numbers, copied from the papers, loaded from the data files beside this module.

Published reference rows (docs/concepts.md#the-pages): numbers copied from the papers appear only in
clearly separated rows/tables labelled with paper and table number, never mixed into measured rows.
They live as data, one YAML file per paper (``report/published/<paper>.yaml``, with their
citation); this module parses and checks them:

* a :class:`PublishedMatrix` is one wide table of a paper: rows keyed by harness (domain, split),
  columns keyed by the system label as printed in the paper and, where the harness runs the same
  system, the harness method name (:attr:`PublishedColumn.method`); each cell is a
  :class:`PublishedCell` (mean and, when the paper gives one, std). Each row is written as the
  paper prints it (``"1.00 0.56±0.16 ..."``) and parsed by :func:`parse_cells`;
* a :class:`PublishedTable` is a table reproduced as printed (cells are text);
* a :class:`ReferenceColumn` holds the values set beside measured rows of the paper's own family
  (e.g. the candidate-pool summary's "published ..." columns);
* a :class:`PublishedSchemaTable` is a schema-learning table (``schema_tables`` in a data file):
  rows keyed by harness domain, column groups per system (a harness method or none), each cell a
  :class:`SchemaValue` (precision / recall as printed, or a run count ``N_s`` / ``N_c`` /
  ``N_sc`` out of the table's runs).

:data:`PAPERS` holds every file's :class:`PublishedPaper`, in file-name order;
:data:`PUBLISHED_TABLES` every matrix, in that order; :data:`PUBLISHED_SCHEMA_TABLES` every
schema-learning table, in that order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

#: Folder of the data files (``*.yaml``, shipped as package data).
DATA_DIR = Path(__file__).resolve().parent

#: One published value: ``"0.60"`` (no std) or ``"0.56±0.16"``.
_CELL = re.compile(r"^(\d+(?:\.\d+)?)(?:±(\d+(?:\.\d+)?))?$")


@dataclass(frozen=True)
class PublishedCell:
    """One published value: ``mean`` and ``std`` (``None`` when the paper gives no spread)."""

    mean: float
    std: float | None = None

    def format(self) -> str:
        """``"0.56 ± 0.16"``, or ``"0.60"`` without a std (two decimals, as in the papers)."""
        if self.std is None:
            return f"{self.mean:.2f}"
        return f"{self.mean:.2f} ± {self.std:.2f}"


def parse_cells(text: str) -> tuple[PublishedCell, ...]:
    """Cells of one row written as the paper prints it: whitespace-separated ``mean[±std]``.

    Raises:
        ValueError: a token is not ``mean`` or ``mean±std``.
    """
    cells = []
    for token in text.split():
        m = _CELL.match(token)
        if not m:
            raise ValueError(f"not a published value (mean or mean±std): {token!r}")
        std = None if m.group(2) is None else float(m.group(2))
        cells.append(PublishedCell(float(m.group(1)), std))
    return tuple(cells)


@dataclass(frozen=True)
class PublishedColumn:
    """One column (system) of a published table.

    ``label``: the system as printed in the paper (``"WL-XGB delta"``); ``method``: the harness
    method name that runs the same system (``"wl_xgb_delta"``), or ``None`` when the harness has
    none; ``group``: display group (wide tables are rendered as one markdown table per group).
    """

    label: str
    method: str | None
    group: str

    @property
    def heading(self) -> str:
        """Column title: the paper's label, with the harness method in parentheses if any."""
        return self.label if self.method is None else f"{self.label} ({self.method})"


@dataclass(frozen=True)
class PublishedMatrixRow:
    """One row: harness ``domain``/``split``, the paper's labels for them, one cell per column."""

    domain: str
    split: str
    domain_label: str
    split_label: str
    cells: tuple[PublishedCell, ...]


@dataclass(frozen=True)
class PublishedMatrix:
    """A wide block of numbers copied from one table of one paper.

    Attributes:
        key: short identifier (stable; used in tests and for lookups).
        paper_title: the paper's title, verbatim.
        paper_file: where the repository cites the paper (its docs page, ``docs/papers/<page>.md``),
            printed as the table's source.
        table: the table as numbered in the paper (``"Table 1"``).
        caption: the start of the paper's caption, verbatim (to find the table in the text).
        metric: what the values are, in the harness's terms (``"coverage"``).
        aggregation: how the values aggregate runs (``"mean ± std over 3 seeds"``).
        columns: the systems, in the paper's order.
        rows: the copied rows, in the paper's order; every row has one cell per column.
        notes: caveats a reader needs to compare these numbers with measured ones.

    Raises:
        ValueError: a row's cell count differs from the column count, or a column label, a
            harness method or a (domain, split) row key appears twice.
    """

    key: str
    paper_title: str
    paper_file: str
    table: str
    caption: str
    metric: str
    aggregation: str
    columns: tuple[PublishedColumn, ...]
    rows: tuple[PublishedMatrixRow, ...]
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        labels = [c.label for c in self.columns]
        methods = [c.method for c in self.columns if c.method is not None]
        keys = [(r.domain, r.split) for r in self.rows]
        for what, items in (("column label", labels), ("harness method", methods), ("row", keys)):
            dup = sorted({str(x) for x in items if items.count(x) > 1})
            if dup:
                raise ValueError(f"{self.key}: {what} repeated: {', '.join(dup)}")
        for r in self.rows:
            if len(r.cells) != len(self.columns):
                raise ValueError(
                    f"{self.key}: row {r.domain_label} {r.split_label} has {len(r.cells)} values, "
                    f"expected {len(self.columns)} (one per column)"
                )

    @property
    def label(self) -> str:
        """Heading that says these numbers were copied, not measured, and where from."""
        return (
            f"Published (not measured here): {self.table} of '{self.paper_title}' — "
            f"{self.metric}, {self.aggregation}"
        )

    @property
    def groups(self) -> tuple[str, ...]:
        """Column groups in first-appearance order."""
        return tuple(dict.fromkeys(c.group for c in self.columns))

    @property
    def methods(self) -> tuple[str, ...]:
        """Harness methods that have a column, in column order."""
        return tuple(c.method for c in self.columns if c.method is not None)

    def column(self, name: str) -> PublishedColumn | None:
        """The column whose harness method or paper label is ``name`` (method first)."""
        for c in self.columns:
            if c.method == name:
                return c
        for c in self.columns:
            if c.label == name:
                return c
        return None

    def row(self, domain: str, split: str) -> PublishedMatrixRow | None:
        """The row of harness ``domain``/``split``, or ``None`` if the paper has none."""
        for r in self.rows:
            if (r.domain, r.split) == (domain, split):
                return r
        return None

    def cell(self, domain: str, split: str, column: str) -> PublishedCell | None:
        """Published value for harness ``domain``/``split`` and a column (method or paper label);
        ``None`` when the paper has no such row or column."""
        col = self.column(column)
        row = self.row(domain, split)
        if col is None or row is None:
            return None
        return row.cells[self.columns.index(col)]


@dataclass(frozen=True)
class PublishedTable:
    """A table reproduced as printed: its number, caption, header and rows of text cells.

    ``source`` names the paper in the bold title line (``"EmbedPlan (embedplan-latent-transitions)"``).

    Raises:
        ValueError: a row's cell count differs from the header's.
    """

    source: str
    number: str
    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        for r in self.rows:
            if len(r) != len(self.header):
                raise ValueError(
                    f"{self.source}, Table {self.number}: row {r[:1]} has {len(r)} cells, "
                    f"expected {len(self.header)} (one per header column)"
                )

    def markdown(self) -> str:
        """The table as markdown, under a bold line naming paper, table number and caption."""
        out = [f"**Published: {self.source}, Table {self.number}.** {self.caption}", "",
               "| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]  # fmt: skip
        out += ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join(out)


@dataclass(frozen=True)
class ReferenceColumn:
    """Published values set beside measured rows of the paper's family, per protocol.

    ``values``: protocol -> value; ``floor``: the value beside a floor row (``None``: no value);
    ``variants``: variant -> protocol -> value, replacing ``values`` for that variant.
    """

    key: str
    title: str
    values: Mapping[str, float]
    floor: float | None = None
    variants: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def value(self, protocol: str, role: str = "model", variant: str = "") -> float | None:
        """The value beside a row of ``protocol`` whose method has ``role`` and ``variant``: a floor
        row gets the paper's floor only when it is the paper's own floor (no ``variant``; e.g. an
        identity floor the paper does not report gets nothing)."""
        if role == "floor":
            return self.floor if not variant else None
        own = self.variants.get(variant, {})
        return own[protocol] if protocol in own else self.values.get(protocol)


#: Metrics a schema-learning table may hold: rates (a fraction in [0, 1]) and run counts.
SCHEMA_RATES: tuple[str, ...] = ("precision", "recall")
SCHEMA_COUNTS: tuple[str, ...] = ("N_s", "N_c", "N_sc")

#: A rate as printed (``"0.80"``, ``"0.8636"``, ``"0"``) and a run count (``"10"``).
_RATE = re.compile(r"^\d+(?:\.\d+)?$")
_COUNT = re.compile(r"^\d+$")


@dataclass(frozen=True)
class SchemaValue:
    """One published schema-learning value: ``text`` as printed and its ``value`` (a fraction for
    precision / recall, a number of runs for ``N_s`` / ``N_c`` / ``N_sc``)."""

    text: str
    value: float


@dataclass(frozen=True)
class SchemaGroup:
    """One column group (system) of a schema-learning table.

    ``label``: the group as printed (``"Action names only"``); ``method``: the harness method that
    runs the same configuration, or ``None``; ``headers``: the group's column headers as printed
    (``"Pr."``); ``keys``: the harness metric of each column (``"precision"``, ``"N_sc"``).
    """

    label: str
    method: str | None
    headers: tuple[str, ...]
    keys: tuple[str, ...]

    @property
    def heading(self) -> str:
        """Group title: the paper's label, with the harness method in parentheses if any."""
        return self.label if self.method is None else f"{self.label} ({self.method})"


@dataclass(frozen=True)
class SchemaRow:
    """One row: harness ``domain``, the paper's label, one value per column (groups in order)."""

    domain: str
    domain_label: str
    values: tuple[SchemaValue, ...]


def parse_schema_values(text: str, keys: Sequence[str]) -> tuple[SchemaValue, ...]:
    """A schema-learning row written as the paper prints it: one whitespace-separated token per
    key of ``keys`` (a rate for precision / recall, an integer for the counts).

    Raises:
        ValueError: the token count differs from ``len(keys)``, or a token does not parse.
    """
    tokens = text.split()
    if len(tokens) != len(keys):
        raise ValueError(f"{len(tokens)} values, expected {len(keys)}")
    out = []
    for token, key in zip(tokens, keys):
        if key in SCHEMA_COUNTS:
            if not _COUNT.match(token):
                raise ValueError(f"not a run count ({key}): {token!r}")
            out.append(SchemaValue(token, float(int(token))))
        else:
            if not _RATE.match(token):
                raise ValueError(f"not a published rate ({key}): {token!r}")
            out.append(SchemaValue(token, float(token)))
    return tuple(out)


@dataclass(frozen=True)
class PublishedSchemaTable:
    """A schema-learning table of one paper (precision, recall and run counts per domain).

    Attributes:
        key: short identifier (``"dias-table1"``).
        paper_title: the paper's title, verbatim.
        paper_file: where the repository cites the paper (its docs page, ``docs/papers/<page>.md``),
            printed as the table's source.
        table: the table as numbered in the paper (``"Table 1"``).
        caption: the start of the paper's caption, verbatim.
        runs: runs per cell (the denominator of the counts).
        aggregation: how the values aggregate runs, in words.
        groups: the column groups, in the paper's order.
        rows: the copied rows, in the paper's order.
        printed: the table is reproduced as printed on the schema page (otherwise its values
            appear only in the side-by-side views).
        notes: caveats a reader needs to compare these numbers with measured ones.

    Raises:
        ValueError: a row has the wrong value count, a key is not a schema metric, a rate is
            outside [0, 1], a count exceeds ``runs``, ``N_sc`` exceeds ``N_s`` or ``N_c``, a group
            with every run sound (complete) prints a precision (recall) below 1, or a domain, group
            label or harness method appears twice (the message names the table and the row).
    """

    key: str
    paper_title: str
    paper_file: str
    table: str
    caption: str
    runs: int
    aggregation: str
    groups: tuple[SchemaGroup, ...]
    rows: tuple[SchemaRow, ...]
    printed: bool = True
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        labels = [g.label for g in self.groups]
        methods = [g.method for g in self.groups if g.method is not None]
        domains = [r.domain for r in self.rows]
        for what, items in (("group label", labels), ("harness method", methods), ("domain", domains)):
            dup = sorted({str(x) for x in items if items.count(x) > 1})
            if dup:
                raise ValueError(f"{self.key}: {what} repeated: {', '.join(dup)}")
        for g in self.groups:
            unknown = [k for k in g.keys if k not in (*SCHEMA_RATES, *SCHEMA_COUNTS)]
            if unknown or len(g.keys) != len(g.headers) or len(set(g.keys)) != len(g.keys):
                raise ValueError(f"{self.key}: group {g.label!r} has bad columns {list(g.keys)}; "
                                 f"valid: {', '.join((*SCHEMA_RATES, *SCHEMA_COUNTS))}, each once")
        width = sum(len(g.keys) for g in self.groups)
        for r in self.rows:
            where = f"{self.key}: row {r.domain_label}"
            if len(r.values) != width:
                raise ValueError(f"{where} has {len(r.values)} values, expected {width}")
            for g in self.groups:
                v = {k: self.value(r.domain, g.label, k).value for k in g.keys}
                for k in g.keys:
                    if k in SCHEMA_RATES and not 0.0 <= v[k] <= 1.0:
                        raise ValueError(f"{where}, {g.label}: {k} {v[k]} is not in [0, 1]")
                    if k in SCHEMA_COUNTS and v[k] > self.runs:
                        raise ValueError(f"{where}, {g.label}: {k} {v[k]:g} exceeds {self.runs} runs")
                if "N_sc" in v and v["N_sc"] > min(v.get("N_s", self.runs), v.get("N_c", self.runs)):
                    raise ValueError(f"{where}, {g.label}: N_sc exceeds N_s or N_c")
                for count, rate in (("N_s", "precision"), ("N_c", "recall")):
                    if v.get(count) == self.runs and rate in v and v[rate] < 1.0:
                        raise ValueError(f"{where}, {g.label}: {count} = {self.runs} runs but {rate} {v[rate]}")

    @property
    def label(self) -> str:
        """Heading that says these numbers were copied, not measured, and where from."""
        return f"Published (not measured here): {self.table} of '{self.paper_title}' — {self.aggregation}"

    @property
    def methods(self) -> tuple[str, ...]:
        """Harness methods that have a column group, in group order."""
        return tuple(g.method for g in self.groups if g.method is not None)

    def group(self, name: str) -> SchemaGroup | None:
        """The group whose harness method or paper label is ``name`` (method first)."""
        return next((g for g in self.groups if g.method == name), None) or next(
            (g for g in self.groups if g.label == name), None
        )

    def row(self, domain: str) -> SchemaRow | None:
        """The row of harness ``domain``, or ``None`` if the paper has none."""
        return next((r for r in self.rows if r.domain == domain), None)

    def value(self, domain: str, group: str, key: str) -> SchemaValue | None:
        """The published value of harness ``domain``, a group (method or label) and a metric key;
        ``None`` when the paper has no such row, group or column."""
        g, r = self.group(group), self.row(domain)
        if g is None or r is None or key not in g.keys:
            return None
        start = 0
        for other in self.groups:
            if other is g:
                break
            start += len(other.keys)
        return r.values[start + g.keys.index(key)]

    def as_printed(self, source: str) -> PublishedTable:
        """The table as printed (paper's domain labels, values as text), as a
        :class:`PublishedTable` of ``source``; headers ``"<group> <column>"`` when the table has
        several groups."""
        header = ["Domain"] + [
            h if len(self.groups) == 1 else f"{g.label} {h}" for g in self.groups for h in g.headers
        ]
        number = self.table.removeprefix("Table ").strip()
        caption = self.caption.split(": ", 1)[1] if self.caption.startswith(f"{self.table}: ") else self.caption
        rows = tuple((r.domain_label, *(v.text for v in r.values)) for r in self.rows)
        return PublishedTable(source, number, caption, tuple(header), rows)


@dataclass(frozen=True)
class PublishedPaper:
    """Everything copied from one paper: its file's contents.

    Attributes:
        family: the method family the paper defines (``dias-action-schemas``, ...).
        name: short name (``"EmbedPlan"``).
        paper_file: where the repository cites the paper (its docs page, ``docs/papers/<page>.md``).
        protocol: the evaluation protocol the printed tables are about (``"pool"``), or ``""``;
            the leaderboard prints them only when the run has results of that protocol.
        matrices: wide tables with a side-by-side view.
        tables: tables reproduced as printed.
        pool_note: the sentence introducing :attr:`pool_columns`.
        pool_columns: reference values beside the family's candidate-pool summary rows.
        pool_reading: the name of the reading of the run against the paper
            (:data:`planarena.report.sections.pool_reading.READINGS`), or ``""``.
        schema_tables: schema-learning tables (rendered on the schema-learning page).
    """

    family: str
    name: str
    paper_file: str
    protocol: str = ""
    matrices: tuple[PublishedMatrix, ...] = ()
    tables: tuple[PublishedTable, ...] = ()
    pool_note: str = ""
    pool_columns: tuple[ReferenceColumn, ...] = ()
    pool_reading: str = ""
    schema_tables: tuple[PublishedSchemaTable, ...] = ()

    @property
    def source(self) -> str:
        """``"EmbedPlan (embedplan-latent-transitions)"``."""
        return f"{self.name} ({self.family})"

    def reference(self, key: str) -> ReferenceColumn:
        """The reference column ``key``.

        Raises:
            KeyError: no such column (lists the paper's keys).
        """
        for c in self.pool_columns:
            if c.key == key:
                return c
        raise KeyError(f"{self.family}: no reference column {key!r}; has {[c.key for c in self.pool_columns]}")


def _matrix(d: Mapping[str, Any]) -> PublishedMatrix:
    columns = tuple(
        PublishedColumn(label, method, g["group"]) for g in d["column_groups"] for label, method in g["columns"]
    )
    rows = tuple(
        PublishedMatrixRow(d["domains"][dom], d["splits"][split], dom, split, parse_cells(text))
        for dom, split, text in d["rows"]
    )
    return PublishedMatrix(
        key=d["key"], paper_title=d["paper_title"], paper_file=d["paper_file"], table=d["table"],
        caption=d["caption"], metric=d["metric"], aggregation=d["aggregation"], columns=columns,
        rows=rows, notes=tuple(d.get("notes") or ()),
    )  # fmt: skip


def _schema_table(d: Mapping[str, Any]) -> PublishedSchemaTable:
    groups = tuple(
        SchemaGroup(g["group"], g.get("method"), tuple(str(h) for h, _ in g["columns"]),
                    tuple(str(k) for _, k in g["columns"]))
        for g in d["column_groups"]
    )
    keys = [k for g in groups for k in g.keys]
    rows = []
    for label, text in d["rows"]:
        try:
            values = parse_schema_values(text, keys)
        except ValueError as e:
            raise ValueError(f"{d['key']}: row {label}: {e}") from None
        rows.append(SchemaRow(d["domains"][label], label, values))
    return PublishedSchemaTable(
        key=d["key"], paper_title=d["paper_title"], paper_file=d["paper_file"], table=d["table"],
        caption=d["caption"], runs=int(d["runs"]), aggregation=d["aggregation"], groups=groups,
        rows=tuple(rows), printed=bool(d.get("printed", True)), notes=tuple(d.get("notes") or ()),
    )  # fmt: skip


def load_paper(path: str | Path) -> PublishedPaper:
    """Parse and check one paper's data file.

    Raises:
        OSError: the file cannot be read.
        KeyError: a required key is missing.
        ValueError: a value does not parse or a row has the wrong cell count (the message names
            the table and the row).
    """
    d = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    source = f"{d['name']} ({d['family']})"
    pool = d.get("pool_summary") or {}
    return PublishedPaper(
        family=d["family"],
        name=d["name"],
        paper_file=d["paper_file"],
        protocol=d.get("protocol") or "",
        matrices=tuple(_matrix(m) for m in d.get("matrices") or ()),
        tables=tuple(
            PublishedTable(source, str(t["number"]), t["caption"], tuple(t["header"]),
                           tuple(tuple(r) for r in t["rows"]))
            for t in d.get("tables") or ()
        ),
        pool_note=pool.get("note", ""),
        pool_columns=tuple(
            ReferenceColumn(c["key"], c["title"], dict(c.get("values") or {}), c.get("floor"),
                            {k: dict(v) for k, v in (c.get("variants") or {}).items()})
            for c in pool.get("columns") or ()
        ),
        pool_reading=pool.get("reading", ""),
        schema_tables=tuple(_schema_table(t) for t in d.get("schema_tables") or ()),
    )


def load_papers(folder: str | Path = DATA_DIR) -> tuple[PublishedPaper, ...]:
    """Every ``*.yaml`` paper file in ``folder``, in file-name order (see :func:`load_paper`)."""
    return tuple(load_paper(p) for p in sorted(Path(folder).glob("*.yaml")))


#: Every paper's published numbers, in file-name order.
PAPERS: tuple[PublishedPaper, ...] = load_papers()

#: Every published matrix the report renders, in display order.
PUBLISHED_TABLES: tuple[PublishedMatrix, ...] = tuple(m for p in PAPERS for m in p.matrices)

#: Every published schema-learning table, in file-name order, then the file's order.
PUBLISHED_SCHEMA_TABLES: tuple[PublishedSchemaTable, ...] = tuple(t for p in PAPERS for t in p.schema_tables)
