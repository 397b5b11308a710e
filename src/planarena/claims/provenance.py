"""What a claim's verdict is computed from, kept in the repository so that anyone can recompute it.

* **Records.** A claim run commits, beside its page (``reports/claims/<id>/``), everything its
  verdict reads: ``records/*.jsonl.gz`` (the workspace's result records, gzip without a time stamp,
  so the same records give the same bytes), ``index.json`` (the problems per (domain, split) of its
  manifest: a problem without a record counts unsolved), and ``training.json`` (every trained
  model's ``facts.json``: best step, final loss, accuracy, outcome; and the schema files a learner
  wrote). ``planarena claims report ID`` recomputes the verdict from these on a fresh clone
  (:func:`load_committed`).
* **Registration.** The commit that added the claim file (``git log --diff-filter=A``) is the
  moment its conditions were fixed (:func:`registration`).
* **Post-hoc.** A claim is marked post-hoc when a report committed *before* its registration already
  held a cell of its confirm condition: the report's pages name every method of a confirm atom, its
  split and its domain, and the report ran the claim's suite (:func:`posthoc`; checked from git
  history, not by a person).
* **First report.** The first verdict committed for a claim (the oldest commit of its
  ``verdict.json`` that says confirmed, refuted or inconclusive) is the one decided under the rules
  of its registration. When a later page says otherwise (new records, or verdict rules changed after
  the data were seen), the page and the front page show both (:func:`first_report`).
* **Attempts.** A claim file with ``supersedes: <id>`` is the next attempt at the same paper claim;
  both pages say "attempt k of n" and link each other (:func:`attempts`).
"""

from __future__ import annotations

import gzip
import io
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from planarena.claims.spec import DECIDED, Claim
from planarena.core.io import atomic_write_text

REPO = Path(__file__).resolve().parents[3]
RECORDS = "records"
INDEX = "index.json"
TRAINING = "training.json"


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def _gzip_bytes(text: str) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as f:
        f.write(text.encode())
    return buf.getvalue()


def commit_records(work: Path, out: Path, index: dict) -> dict:
    """Copy the workspace's records, index and training facts into ``out`` (the claim's page
    folder); returns counts ``{"records": n, "models": m}``. Records are sorted by file name and
    kept line for line."""
    results = work / "data" / "results"
    rec_dir = out / RECORDS
    rec_dir.mkdir(parents=True, exist_ok=True)
    for old in rec_dir.glob("*.jsonl*"):
        old.unlink()
    n = 0
    for f in sorted(results.glob("*.jsonl")) if results.is_dir() else []:
        text = f.read_text()
        n += sum(1 for line in text.splitlines() if line.strip())
        (rec_dir / f"{f.name}.gz").write_bytes(_gzip_bytes(text))
    atomic_write_text(out / INDEX, json.dumps({f"{d}/{s}": sorted(p) for (d, s), p in sorted(index.items())},
                                              indent=1, sort_keys=True) + "\n")
    models = work / "data" / "models"
    facts: dict = {}
    for f in sorted(models.rglob("facts.json")) if models.is_dir() else []:
        try:
            facts[str(f.parent.relative_to(models))] = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
    schemas = {str(f.relative_to(models)): f.read_text() for f in sorted(models.rglob("*.pddl"))
               if f.stat().st_size < 200_000} if models.is_dir() else {}
    atomic_write_text(out / TRAINING, json.dumps({"facts": facts, "learned_domains": schemas}, indent=1,
                                                 sort_keys=True, default=float) + "\n")
    return {"records": n, "models": len(facts)}


def has_committed(out: Path) -> bool:
    """Whether ``out`` holds committed records (``records/*.jsonl[.gz]``)."""
    return (out / RECORDS).is_dir() and any((out / RECORDS).glob("*.jsonl*"))


def load_committed(out: Path):
    """``(records, index)`` from a claim's committed folder: every ``records/*.jsonl[.gz]`` and
    ``index.json`` (an index of ``{}`` when a run committed none: schema-run claims do not need one)."""
    from planarena.core.records import ResultRecord

    records = []
    for f in sorted((out / RECORDS).glob("*.jsonl*")):
        raw = f.read_bytes()
        text = gzip.decompress(raw).decode() if f.name.endswith(".gz") else raw.decode()
        records += [ResultRecord.from_dict(json.loads(line)) for line in text.splitlines() if line.strip()]
    index = {}
    if (out / INDEX).exists():
        index = {tuple(k.split("/", 1)): frozenset(v) for k, v in json.loads((out / INDEX).read_text()).items()}
    return records, index


@dataclass(frozen=True)
class Registration:
    """The commit that added the claim file (``commit`` short hash, ``date`` ISO) or empty strings
    when the file is not committed yet."""

    commit: str
    date: str

    def line(self) -> str:
        return (f"registered in commit `{self.commit}` ({self.date[:10]})" if self.commit
                else "not yet committed (no registration commit)")


def registration(claim: Claim) -> Registration:
    """The commit that first added ``claims/<id>.yaml`` (its conditions fixed from then on)."""
    rel = claim.source.resolve()
    try:
        rel = rel.relative_to(REPO)
    except ValueError:
        return Registration("", "")
    out = _git("log", "--diff-filter=A", "--follow", "--format=%h %cI", "--", str(rel)).split()
    return Registration(out[-2], out[-1]) if len(out) >= 2 else Registration("", "")


def _cells(claim: Claim) -> list[tuple[list[str], str, str | None]]:
    """``(methods, split or protocol, domain)`` of each confirm atom that compares or bounds a method,
    but those on instances generated for the claim (:func:`fresh_data`)."""
    fresh = fresh_data(claim)
    domains = [str(d).lower() for d in claim.experiment.get("domains") or []]
    out = []
    for a in claim.confirm.atoms():
        if not a.split:
            continue
        if a.is_hit and fresh["hit"]:
            continue
        named = [a.domain.lower()] if a.domain else domains
        if not a.is_hit and named and all((d, a.split) in fresh["splits"] for d in named):
            continue
        out.append((list(a.methods), a.split, a.domain))
    return out


def fresh_data(claim: Claim) -> dict:
    """What the claim tests on instances generated for it, from its params overlay: ``splits``, the
    ``(domain, split)`` pairs of ``suites.<suite>.generate`` (:func:`planarena.datasets.suites.fresh_splits`),
    and ``hit``, True when the overlay sets its own top-level ``seed`` and the pool datasets are
    generated (``acp.source: generated``, the default): every Hit@k protocol. ``seeds`` lists the seeds
    that make them. No earlier report can hold a cell on such instances, as long as no report
    committed before the claim's registration ran with that seed (:func:`posthoc` checks it)."""
    from planarena.datasets.suites import fresh_splits

    overlay = claim.experiment.get("params") or {}
    suite = str(claim.experiment.get("suite") or "generated")
    gen = ((overlay.get("suites") or {}).get(suite) or {}).get("generate")
    splits = set(fresh_splits({"suites": overlay.get("suites") or {}}, suite)) if gen else set()
    seeds = [int(gen["seed"])] if splits else []
    acp_source = ((overlay.get("acp") or {}).get("source") or "generated")
    hit = isinstance(overlay.get("seed"), int) and acp_source == "generated"
    if hit:
        seeds.append(int(overlay["seed"]))
    return {"splits": splits, "hit": hit, "seeds": seeds}


def posthoc(claim: Claim, reg: Registration | None = None) -> list[str]:
    """The report folders committed before the claim's registration that already held a cell of its
    confirm condition (module docstring), as ``"reports/<folder> (commit <hash>)"``; ``[]`` when
    none, or when the claim is not committed."""
    reg = reg or registration(claim)
    if not reg.commit:
        return []
    parent = _git("rev-parse", "--short", f"{reg.commit}^").strip()
    if not parent:
        return []
    files = _git("ls-tree", "-r", "--name-only", parent, "--", "reports").split("\n")
    folders: dict[str, list[str]] = {}
    for f in files:
        parts = f.split("/")
        # the published-values pages quote the paper, not a measured cell
        if len(parts) < 3 or parts[1] == "claims" or not f.endswith((".md", ".yaml")) or parts[-1] == "published.md":
            continue
        folders.setdefault(parts[1], []).append(f)
    suite = str(claim.experiment.get("suite") or "generated")
    domains = [str(d).lower() for d in claim.experiment.get("domains") or []]
    found = []
    fresh_seeds = fresh_data(claim)["seeds"]
    if fresh_seeds:   # a seed of the claim's fresh instances that an earlier run used: nothing is fresh
        ran_with = "\n".join(_git("show", f"{parent}:{f}") for f in files if f.endswith("params.yaml")) + \
            _git("show", f"{parent}:params.yaml")
        if any(re.search(rf"\bseed:\s*{s}\b", ran_with) for s in fresh_seeds):
            return [f"params of a report before the registration use the claim's data seed {fresh_seeds}"]
    for folder, paths in sorted(folders.items()):
        params = next((p for p in paths if p.endswith("params.yaml")), None)
        pages = [p for p in paths if p.endswith(".md")]
        text = "\n".join(_git("show", f"{parent}:{p}") for p in pages)
        ran = _git("show", f"{parent}:{params}") if params else text
        if not re.search(rf"\bsuite:?\s*`?{re.escape(suite)}\b", ran) and suite not in folder:
            continue
        metrics = _git("show", f"{parent}:reports/{folder}/metrics.json")
        coverage = (json.loads(metrics).get("coverage") or {}) if metrics.strip().startswith("{") else None
        for methods, split, domain in _cells(claim):
            if coverage is not None:    # the report's own numbers: a cell is a measured value
                held = all(isinstance(coverage.get(m), dict) and coverage[m].get(split) is not None for m in methods)
            else:                       # pages only: every method a table row, the split a table column
                rows = [ln for ln in text.splitlines() if ln.startswith("|")]
                named = [domain.lower()] if domain else domains
                held = (all(any(re.search(rf"\|\s*`?{re.escape(m)}`?\s*\|", ln) for ln in rows) for m in methods)
                        and any(split in ln for ln in rows)
                        and (not named or any(d in text.lower() for d in named)))
            if held:
                last = _git("log", "-1", "--format=%h", parent, "--", f"reports/{folder}").strip()
                found.append(f"reports/{folder} (commit {last})")
                break
    return found


@dataclass(frozen=True)
class FirstReport:
    """The first committed verdict of a claim (``verdict``, ``commit``, ``date`` ISO) and
    ``changed_in``: the first later commit of its ``verdict.json`` with another decided verdict
    ("" when none did)."""

    verdict: str
    commit: str
    date: str
    changed_in: str = ""


def first_report(claim_id: str) -> FirstReport | None:
    """The first verdict committed in ``reports/claims/<claim_id>/verdict.json`` (git history,
    oldest first; pages that say ``not run`` or ``not recomputable`` are skipped), with the first
    later commit whose decided verdict differs; None when no decided verdict was ever committed
    (or outside git)."""
    path = f"reports/claims/{claim_id}/verdict.json"
    first = None
    for line in _git("log", "--reverse", "--format=%h %cI", "--", path).splitlines():
        commit, _, date = line.partition(" ")
        try:
            verdict = json.loads(_git("show", f"{commit}:{path}")).get("verdict")
        except ValueError:
            continue
        if verdict not in DECIDED:
            continue
        if first is None:
            first = FirstReport(verdict, commit, date)
        elif verdict != first.verdict:
            return FirstReport(first.verdict, first.commit, first.date, commit)
    return first


def attempts(claim: Claim, claims: Iterable[Claim]) -> tuple[int, int, list[str]]:
    """``(k, n, chain)``: this claim is attempt ``k`` of ``n`` at its paper claim, following
    ``supersedes:`` links among ``claims``; ``chain`` the ids in order (oldest first)."""
    by_id = {c.id: c for c in claims}
    by_id.setdefault(claim.id, claim)
    prev = {c.id: str(c.extra.get("supersedes")) for c in by_id.values() if c.extra.get("supersedes")}
    nxt = {v: k for k, v in prev.items()}
    first = claim.id
    seen = {first}
    while first in prev and prev[first] in by_id and prev[first] not in seen:
        first = prev[first]
        seen.add(first)
    chain = [first]
    while chain[-1] in nxt and nxt[chain[-1]] not in chain:
        chain.append(nxt[chain[-1]])
    return chain.index(claim.id) + 1, len(chain), chain


__all__ = ["DECIDED", "FirstReport", "INDEX", "RECORDS", "Registration", "TRAINING", "attempts", "commit_records",
           "first_report", "has_committed", "load_committed", "posthoc", "registration"]
