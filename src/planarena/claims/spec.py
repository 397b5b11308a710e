"""Claim files: one paper claim as a pre-registered experiment (``claims/<id>.yaml``).

A claim file holds, written before the run:

* ``paper`` (a family's paper stem), ``where`` (table or section) and ``claim``: the claim in one
  sentence as the paper states it;
* ``experiment``: ``suite`` (and optionally its ``path``), ``domains``, ``splits``, ``methods``
  (configured method names), ``seeds``, and ``params``: an overlay deep-merged over the project's
  ``params.yaml`` (what the experiment changes from the default profile);
* ``cost``: expected CPU minutes on 2 cores (``cpu_minutes``) and whether a GPU helps (``gpu``);
  a claim that does not fit 2 cores gives ``gpu_hours`` instead and says why in ``needs``: one
  paragraph (the size a run that could pass its power check takes, and what a feasible-size pilot
  showed); its page says "not run" with it, and ``claims run --all`` skips it unless forced;
* ``published``: the paper's values, labelled (shown beside the measured ones, never mixed in); with
  ``published_split`` and the shape ``{domain: {method: percent}}`` (coverage), or with
  ``published_metric: hit@k`` and the shape ``{protocol: {method: percent}}``, the page says whether
  each lies inside the measured 95 % interval; ``published_protocol`` (text, e.g. "best of 5 runs
  on the test split") names a paper that reports its best run: the page then adds each method's best
  seed on that split beside it, labelled as the paper's protocol and read by no condition;
* ``gate``, ``confirm``, ``refute``: conditions (:class:`Condition`), evaluated from records only by
  :mod:`planarena.claims.verdict`.

A condition is an atom or ``{all: [...]}`` / ``{any: [...]}`` of conditions. Atoms:

* ``{better: [A, B], split: S, domain: D}``: A solves significantly more of the problems than B
  (paired test of :func:`planarena.stats.paired_coverage` at ``alpha``, the problem the unit and its
  seeds nested in it). Holm's correction runs over the ``better`` atoms of a block that sit below an
  ``any`` (a union of tests); a ``better`` atom reached through ``all`` only is one test of an
  intersection-union test (Berger 1982) and is tested at ``alpha`` itself, since every one of them
  must hold;
* ``{equivalent: [A, B, m], ...}``: the two one-sided tests (TOST, Schuirmann 1987) at ``alpha``:
  the ``1 - 2 alpha`` interval of the mean paired difference A - B (problems, then seeds,
  bootstrapped) lies inside ``[-m, m]``;
* ``{at_least: [A, x], ...}`` / ``{at_most: [A, x], ...}``: A's coverage (fraction of attempts solved,
  problems x seeds) is at least / at most x; with ``in_seeds: k``: in at least ``k`` of A's seeds,
  each seed's coverage on its own;
* ``{gap_at_most: [A, B, x], ...}`` / ``{gap_at_least: [A, B, x], ...}``: the whole 95 % interval of
  the mean paired difference A - B lies at or below x / at or above x (one-sided margins: "A is not
  worse than B by more than 0.05" is ``gap_at_least: [A, B, -0.05]``);
* ``not_better`` is **retired**: without a margin it held for 0 vs 0. Files registered before the
  change still load (it is evaluated as "no significant ``better``", outside Holm), but
  ``planarena claims check`` fails a claim that uses it; write ``gap_at_least`` or ``equivalent``.

``split`` is required; ``domain`` optional (all domains of the split together); ``seed`` optional
(one evaluation seed's records only: "every seed solves at least x" is ``all`` of one ``at_least``
per seed, "in at least 2 of 3 seeds" an ``any`` of the pairs).

``metric: sound_complete`` (or ``sound``, ``complete``, ``trained``) makes an ``at_least`` /
``at_most`` atom about the runs of a schema-learning method (its ``learn_schema`` records, one per
(domain, seed), split ``schema-test``; :mod:`planarena.protocols.schema`): the fraction of its runs
whose learned domain is sound and complete on the test states (the paper's N_sc / runs; ``sound``:
N_s, ``complete``: N_c), or that trained to the end (outcome neither ``diverged`` nor ``error``), with
its Wilson interval; "4 of 5 runs" is ``at_least: [A, 0.8]``.

``metric: hit@k`` (k of 1, 5, 10) makes an atom about the successor-ranking records of the candidate-
pool protocols (:mod:`planarena.protocols.pool`) instead of coverage: ``protocol`` replaces
``split`` and names the protocol of both methods, or a list of two, one per method (the same method
under two protocols: ``{better: [m, m], metric: hit@5, protocol: [interpolation, extrapolation]}``).
Within one protocol the units are the queries (both methods rank the same pools); across protocols
the queries differ and the units are the test problems both protocols query (each side's mean
Hit@k over that problem's queries, seeds and training sources; the test domains for records that
do not name their queries' problems). A changed claim is a new claim file: the
verdict page shows the file's hash.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from planarena.config import ConfigError
from planarena.protocols.pool import PROTOCOLS

ATOMS = ("better", "not_better", "equivalent", "at_least", "at_most", "gap_at_most", "gap_at_least")
#: Kinds comparing two methods (A, B); the others take one method and a threshold.
PAIRED = ("better", "not_better", "equivalent", "gap_at_most", "gap_at_least")
#: Kinds of a margin (a threshold that is a difference, possibly negative, not a fraction).
MARGIN = ("equivalent", "gap_at_most", "gap_at_least")
#: Kinds still read from files registered before they were retired; ``claims check`` fails them.
RETIRED = ("not_better",)
#: Atoms of a measurement claim (``experiment.measure``; :mod:`planarena.claims.measure`), over
#: per-problem values of its sides: ``{lower: [A, B], metric: M}``, ``{ratio_at_most: [A, B, x],
#: metric: M}`` / ``ratio_at_least``, ``{ratio_falls_with: [A, B], metric: M}`` (against the
#: problems' ``objects``, stratified by domain; ``in_domains: k``: falls in at least k of the
#: domains where it can be measured), ``{lower_in_most: [A, B], metric: M}`` (A lower on more units
#: than chance: the exact one-sided sign test, for paired runs such as seeds with and without a
#: loss term) and ``{completed_at_least: [A, x]}``; ``split`` / ``domain`` optional.
MEASURE_ATOMS = ("lower", "lower_in_most", "ratio_at_most", "ratio_at_least", "ratio_falls_with",
                 "completed_at_least")
#: Measurement kinds taking a threshold, and those comparing two sides.
MEASURE_THRESHOLD = ("ratio_at_most", "ratio_at_least", "completed_at_least")
MEASURE_PAIRED = ("lower", "lower_in_most", "ratio_at_most", "ratio_at_least", "ratio_falls_with")
#: Metrics over the runs of a schema-learning method (one ``learn_schema`` record per run).
RUN_METRICS = ("sound_complete", "sound", "complete", "trained")
#: Metrics of an atom: coverage, Hit@k of the candidate-pool protocols, or a schema-run metric.
METRICS = ("coverage", "hit@1", "hit@5", "hit@10", *RUN_METRICS)
BLOCKS = ("gate", "confirm", "refute")
#: The verdicts a run decides (``not run`` and ``not recomputable`` are states of a page, not verdicts).
DECIDED = ("confirmed", "refuted", "inconclusive")


@dataclass(frozen=True)
class Atom:
    """One comparison: ``kind`` (one of :data:`ATOMS`), ``methods`` (A, and B for the paired kinds),
    ``threshold`` (a fraction, for the kinds that take one), ``split`` (coverage) and ``domain``
    (None: all domains); ``metric`` (:data:`METRICS`) and, for Hit@k, ``protocols`` (one per
    method)."""

    kind: str
    methods: tuple[str, ...]
    split: str
    domain: str | None = None
    threshold: float | None = None
    metric: str = "coverage"
    protocols: tuple[str, ...] = ()
    seed: int | None = None
    in_seeds: int | None = None
    in_domains: int | None = None

    @property
    def is_hit(self) -> bool:
        return self.metric.startswith("hit@")

    @property
    def is_run(self) -> bool:
        """An atom over the runs of a schema-learning method (:data:`RUN_METRICS`)."""
        return self.metric in RUN_METRICS

    @property
    def k(self) -> int:
        """The k of a Hit@k atom."""
        return int(self.metric.partition("@")[2])

    @property
    def is_measure(self) -> bool:
        """An atom of a measurement claim (:data:`MEASURE_ATOMS`)."""
        return self.kind in MEASURE_ATOMS

    def sides(self) -> list[tuple[str, str]]:
        """``(method, protocol)`` of each side of a Hit@k atom."""
        return list(zip(self.methods, self.protocols))

    def label(self) -> str:
        """``"better(wl_xgb_delta, wl_xgb_state) on blocksworld/extrapolation"``, or for Hit@k
        ``"better(m@interpolation, m@extrapolation) in Hit@5 on all domains"``."""
        thr = f", {self.threshold:g}" if self.threshold is not None else ""
        if self.is_measure:
            metric = f" in {self.metric}" if self.kind != "completed_at_least" else ""
            return (f"{self.kind}({', '.join(self.methods)}{thr}){metric} on "
                    f"{self.domain or 'all domains'}/{self.split or 'all splits'}")
        if self.is_run:
            return f"{self.kind}({', '.join(self.methods)}{thr}) in {self.metric} runs on {self.domain or 'all domains'}"
        if self.is_hit:
            args = ", ".join(f"{m}@{p}" for m, p in self.sides())
            return f"{self.kind}({args}{thr}) in Hit@{self.k} on {self.domain or 'all domains'}"
        where = f"{self.domain or 'all domains'}/{self.split}"
        seed = f", seed {self.seed}" if self.seed is not None else ""
        seed += f", in at least {self.in_seeds} seeds" if self.in_seeds is not None else ""
        return f"{self.kind}({', '.join(self.methods)}{thr}) on {where}{seed}"


@dataclass(frozen=True)
class Condition:
    """``op`` is ``all`` or ``any`` over ``parts`` (atoms or conditions)."""

    op: str
    parts: tuple[Any, ...]

    def atoms(self) -> list[Atom]:
        """Every atom below this condition, in file order."""
        out: list[Atom] = []
        for p in self.parts:
            out += p.atoms() if isinstance(p, Condition) else [p]
        return out


@dataclass(frozen=True)
class Claim:
    """A parsed claim file (see the module docstring). ``source`` is the file, ``digest`` the
    sha256 of its bytes (first 12 hex digits)."""

    id: str
    paper: str
    where: str
    claim: str
    experiment: dict
    cost: dict
    published: dict
    gate: Condition
    confirm: Condition
    refute: Condition
    source: Path
    digest: str
    alpha: float = 0.05
    notes: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def methods(self) -> list[str]:
        return list(self.experiment.get("methods") or [])

    @property
    def is_measure(self) -> bool:
        """A measurement claim: ``experiment.measure`` names a ``module:function`` producing
        per-problem values of the sides (``experiment.methods``), not a pipeline run."""
        return bool(self.experiment.get("measure"))


def _fail(path: Path, what: str) -> ConfigError:
    return ConfigError(f"{path}: {what}")


def _measure_atom(path: Path, node: Mapping) -> Atom:
    kinds = [k for k in MEASURE_ATOMS if k in node]
    if len(kinds) != 1:
        raise _fail(path, f"a condition of a measurement claim needs exactly one of {', '.join(MEASURE_ATOMS)} "
                          f"(or all / any), got {dict(node)}")
    kind = kinds[0]
    args = node[kind]
    n_methods = 2 if kind in MEASURE_PAIRED else 1
    n_args = n_methods + (kind in MEASURE_THRESHOLD)
    if not isinstance(args, list) or len(args) != n_args:
        raise _fail(path, f"{kind}: expects a list of {n_methods} side(s)"
                          f"{' and a threshold' if kind in MEASURE_THRESHOLD else ''}, got {args!r}")
    unknown = set(node) - {kind, "metric", "split", "domain", "in_domains"}
    if unknown:
        raise _fail(path, f"{kind}{args}: unknown key(s) {', '.join(sorted(unknown))}")
    in_domains = node.get("in_domains")
    if in_domains is not None and (kind != "ratio_falls_with" or isinstance(in_domains, bool)
                                   or not isinstance(in_domains, int) or in_domains < 1):
        raise _fail(path, f"{kind}{args}: in_domains takes a positive integer, on ratio_falls_with only")
    metric = node.get("metric")
    if kind != "completed_at_least" and not isinstance(metric, str):
        raise _fail(path, f"{kind}{args}: needs a metric (a value the measurement records)")
    threshold = None
    if kind in MEASURE_THRESHOLD:
        threshold = args[-1]
        high = 1 if kind == "completed_at_least" else math.inf
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= high:
            raise _fail(path, f"{kind}: the threshold must be a number in (0, {high:g}], got {threshold!r}")
        threshold = float(threshold)
    return Atom(kind, tuple(str(a) for a in args[:n_methods]), str(node.get("split") or ""), node.get("domain"),
                threshold, str(metric or "completed"), in_domains=in_domains)


def _atom(path: Path, node: Mapping, measure: bool = False) -> Atom:
    if measure:
        return _measure_atom(path, node)
    kinds = [k for k in ATOMS if k in node]
    if len(kinds) != 1:
        raise _fail(path, f"a condition needs exactly one of {', '.join(ATOMS)} (or all / any), got {dict(node)}")
    kind = kinds[0]
    args = node[kind]
    n_methods = 2 if kind in PAIRED else 1
    n_args = n_methods + (kind not in ("better", "not_better"))
    if not isinstance(args, list) or len(args) != n_args:
        what = {2: "two methods", 3: "two methods and a threshold"}.get(n_args, "a method and a threshold")
        raise _fail(path, f"{kind}: expects a list of {what}, got {args!r}")
    metric = str(node.get("metric", "coverage")).lower()
    if metric not in METRICS:
        raise _fail(path, f"{kind}{args}: metric must be one of {', '.join(METRICS)}, got {metric!r}")
    if metric in RUN_METRICS and kind not in ("at_least", "at_most"):
        raise _fail(path, f"{kind}{args}: metric {metric} takes at_least / at_most (a fraction of the runs)")
    where = "protocol" if metric.startswith("hit@") else "split"
    if where not in node:
        raise _fail(path, f"{kind}{args}: needs a {where}" + (" (the metric is Hit@k)" if where == "protocol" else ""))
    unknown = set(node) - {kind, where, "domain", "metric", "seed", "in_seeds"}
    if unknown:
        raise _fail(path, f"{kind}{args}: unknown key(s) {', '.join(sorted(unknown))}")
    threshold = None
    if n_args > n_methods:
        threshold = args[-1]
        low = -1 if kind.startswith("gap_") else 0
        if kind == "equivalent":   # a margin: |A - B| <= m
            if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
                raise _fail(path, f"{kind}: the margin must be a fraction in (0, 1], got {threshold!r}")
        elif isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not low <= threshold <= 1:
            raise _fail(path, f"{kind}: the threshold must be a fraction in [{low}, 1], got {threshold!r}")
        threshold = float(threshold)
    methods = tuple(str(a) for a in args[:n_methods])
    seed = node.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or metric != "coverage"):
        raise _fail(path, f"{kind}{args}: seed must be an integer evaluation seed (coverage atoms only), got {seed!r}")
    in_seeds = node.get("in_seeds")
    if in_seeds is not None and (isinstance(in_seeds, bool) or not isinstance(in_seeds, int) or in_seeds < 1
                                 or kind not in ("at_least", "at_most") or metric != "coverage" or seed is not None):
        raise _fail(path, f"{kind}{args}: in_seeds takes a positive integer, on coverage at_least / at_most "
                          f"without seed, got {in_seeds!r}")
    protocols: tuple[str, ...] = ()
    split = ""
    if not metric.startswith("hit@"):
        split = str(node["split"])
    else:
        proto = node["protocol"]
        protocols = tuple(str(p) for p in proto) if isinstance(proto, list) else (str(proto),) * n_methods
        if len(protocols) != n_methods:
            raise _fail(path, f"{kind}{args}: protocol needs one name, or one per method ({n_methods})")
        bad = [p for p in protocols if p not in PROTOCOLS]
        if bad:
            raise _fail(path, f"{kind}{args}: unknown protocol {', '.join(bad)}; known: {', '.join(PROTOCOLS)}")
        split = protocols[0]
    return Atom(kind, methods, split, node.get("domain"), threshold, metric, protocols, seed, in_seeds)


def _condition(path: Path, node: Any, measure: bool = False) -> Condition:
    if isinstance(node, list):
        node = {"all": node}
    if not isinstance(node, Mapping):
        raise _fail(path, f"a condition must be a mapping, got {node!r}")
    for op in ("all", "any"):
        if op in node:
            if set(node) != {op} or not isinstance(node[op], list) or not node[op]:
                raise _fail(path, f"{op}: expects a non-empty list and nothing beside it")
            return Condition(op, tuple(_condition(path, p, measure) if isinstance(p, Mapping) and
                                       ({"all", "any"} & set(p)) else _atom(path, p, measure) for p in node[op]))
    return Condition("all", (_atom(path, node, measure),))


def load_claim(path: str | Path) -> Claim:
    """Parse and check one claim file.

    Raises:
        ConfigError: the file is missing, not YAML, lacks a field, or a condition is malformed or
            names a method the experiment does not run (one line naming the file and what is wrong).
    """
    path = Path(path)
    try:
        raw_bytes = path.read_bytes()
        doc = yaml.safe_load(raw_bytes)
    except OSError as exc:
        raise _fail(path, f"cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise _fail(path, f"not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(doc, dict):
        raise _fail(path, "expected a mapping at the top level")
    missing = [k for k in ("id", "paper", "where", "claim", "experiment", "cost", *BLOCKS) if k not in doc]
    if missing:
        raise _fail(path, f"missing field(s) {', '.join(missing)}")
    if doc["id"] != path.stem:
        raise _fail(path, f"id {doc['id']!r} must equal the file name {path.stem!r}")
    exp = doc["experiment"]
    if not isinstance(exp, dict) or not exp.get("methods"):
        raise _fail(path, "experiment.methods: name the configured methods the claim runs")
    measure = exp.get("measure")
    if measure is not None and (not isinstance(measure, str) or ":" not in measure):
        raise _fail(path, f"experiment.measure: expects 'module:function', got {measure!r}")
    blocks = {b: _condition(path, doc[b], bool(measure)) for b in BLOCKS}
    methods = set(exp["methods"])
    for b, cond in blocks.items():
        for a in cond.atoms():
            unknown = [m for m in a.methods if m not in methods]
            if unknown:
                raise _fail(path, f"{b}: {a.label()} names {', '.join(unknown)}, not in experiment.methods")
    known = {"id", "paper", "where", "claim", "experiment", "cost", "published", "alpha", "notes", *BLOCKS}
    power = doc.get("power")
    if power is not None and not isinstance(power, dict):
        raise _fail(path, "power: expects a mapping (paper / floor rates, icc; docs/claims.md#the-power-check)")
    return Claim(
        id=doc["id"], paper=str(doc["paper"]), where=" ".join(str(doc["where"]).split()), claim=" ".join(str(doc["claim"]).split()),
        experiment=exp, cost=dict(doc["cost"] or {}), published=dict(doc.get("published") or {}),
        gate=blocks["gate"], confirm=blocks["confirm"], refute=blocks["refute"], source=path,
        digest=hashlib.sha256(raw_bytes).hexdigest()[:12], alpha=float(doc.get("alpha", 0.05)),
        notes=str(doc.get("notes") or ""), extra={k: v for k, v in doc.items() if k not in known},
    )


def load_claims(folder: str | Path) -> list[Claim]:
    """Every ``*.yaml`` claim of ``folder``, sorted by id.

    Raises:
        ConfigError: a file is malformed (see :func:`load_claim`) or the folder does not exist.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no claims folder")
    return [load_claim(p) for p in sorted(folder.glob("*.yaml"))]


__all__ = ["ATOMS", "Atom", "BLOCKS", "DECIDED", "MARGIN", "RETIRED", "Claim", "Condition", "MEASURE_ATOMS", "METRICS", "PAIRED", "RUN_METRICS", "load_claim",
           "load_claims"]
