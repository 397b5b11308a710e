"""A claim run carried across machines: its finished training units, committed beside its page.

A claim takes hours on 2 cores, longer than one working session, and its workspace
(``~/.cache/planarena/claims/<id>``) lives on one machine. :func:`save` packs each finished
training unit of the workspace into its own archive under ``reports/claims/<id>/partial/``
(deterministic, written once: a unit saved again is the same file, so the repository's history holds
each unit once); :func:`restore` unpacks them into a fresh workspace before ``dvc repro``, so a run
started on one machine resumes on another.

A *unit* is either a folder holding ``unit.json`` (a unit that
:func:`planarena.methods.units.train_units` kept while its stage ran: transformers, DIAS) or a
finished cache, a folder ``data/cache/<family>/<key>/`` holding ``facts.json`` (a finished
training stage's cache, or a family's finished per-unit cache such as the R-GNN policies'); once a
stage's cache is saved, the archives of the units it was made of leave the folder. Each sits under a
key of everything its training reads (code, params, problems, trajectories): a unit restored on a
machine whose inputs differ has another key and is simply not used, so a restore never changes a
result, only saves its time. Sentence embeddings (``data/cache/text``) are not packed (large; cached
per text). A measurement claim (:mod:`planarena.claims.measure`) has no training stages: its unit is
a row of ``measurements.jsonl``, and the rows measured so far are saved as that file beside the
archives. The workspace's ``code.json`` (the commit whose code the run uses,
:mod:`planarena.claims.workspace`) is saved too, so the other machine runs the same code and the
units' keys match. When the claim's verdict is written (a finished run), :func:`discard` removes the folder.

Evaluation is carried too: each row's records written so far (``data/results/<row>.jsonl``, kept
per attempt as it ends) are saved as ``results/<row>.jsonl``, complete lines only (safe while the
run appends), and a restore appends the ones a workspace lacks; the evaluate stage keeps those
whose config fingerprint matches (same code, params and trained model) and runs only the rest.
The workspace's ``cost.json`` (wall time over its runs and the machines they ran on) is carried
with them, so a page resumed on another CPU type says which machines produced its records.

A unit still training carries its last checkpoint (``<unit>.ckpt`` beside the finished units,
written every few hundred steps by a family that checkpoints, e.g. DIAS): :func:`save` copies it to
``checkpoints/`` (rewritten as it advances, dropped once the unit finished), :func:`restore` puts
it back where the workspace has none, and the unit resumes from that step instead of step 0.
"""

from __future__ import annotations

import json
import re
import shutil
import tarfile
from pathlib import Path

from planarena.claims.measure import ROWS, row_key
from planarena.claims.workspace import CODE
from planarena.core.io import atomic_write_text, read_jsonl, write_tar_gz

#: The folder of unit archives in ``reports/claims/<id>/``.
PARTIAL = "partial"
#: The folder (in the workspace's ``data/`` and in ``partial/``) of the evaluation records.
RESULTS = "results"
#: The workspace's cost file (wall time and machines of its runs, :func:`planarena.claims.run.run`).
COST = "cost.json"
#: The folder (in ``partial/``) of the checkpoints of units still training.
CHECKPOINTS = "checkpoints"
#: Folders of ``data/cache`` left out (regenerable and large).
SKIPPED = ("text",)
_UNIT_MARKERS = ("unit.json",)
#: the ``<domain>/seed<N>`` part of a unit's file path
_SEED = re.compile(r"[^/]+/seed\d+(?=/)")


def units(work: Path) -> list[Path]:
    """The finished unit folders of the workspace ``work`` (see the module docstring), sorted."""
    cache = Path(work) / "data" / "cache"
    if not cache.is_dir():
        return []
    found = set()
    for marker in cache.rglob("*.json"):
        folder = marker.parent
        rel = folder.relative_to(cache).parts
        if not rel or rel[0] in SKIPPED or any(p.endswith(".tmp") for p in rel):
            continue
        if len(rel) > 2 and (cache / rel[0] / rel[1] / "facts.json").exists():
            continue   # inside a finished cache, which is the unit
        if marker.name in _UNIT_MARKERS or (marker.name == "facts.json" and len(rel) == 2):
            found.add(folder)
    return sorted(found)


def _save_rows(work: Path, out: Path) -> tuple[int, int]:
    """Copy the workspace's measurement rows to ``out/measurements.jsonl`` (rows already saved are
    kept, new ones appended). Returns (rows saved, rows new)."""
    source = Path(work) / ROWS
    if not source.exists():
        return 0, 0
    saved = read_jsonl(out / ROWS) if (out / ROWS).exists() else []
    keys = {row_key(r) for r in saved}
    new = [r for r in read_jsonl(source) if row_key(r) not in keys]
    if new:
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / ROWS, "".join(json.dumps(r) + "\n" for r in saved + new))
    return len(saved) + len(new), len(new)


def commit(page_dir: Path) -> str | None:
    """The commit of the code a committed partial run used (``partial/code.json``), or None."""
    try:
        return json.loads((Path(page_dir) / PARTIAL / CODE).read_text())["commit"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _archive_name(work: Path, folder: Path) -> str:
    return "~".join(folder.relative_to(Path(work) / "data" / "cache").parts) + ".tar.gz"


def save(work: Path, page_dir: Path) -> dict:
    """Pack each finished unit of the workspace ``work`` not yet saved into
    ``page_dir/partial/<unit path with ~>.tar.gz``; a unit finished before the workspace's code was
    copied (a ``--fresh-code`` resume: it was trained with code the run no longer uses, under a key
    nothing reads) is left out, and its archive, saved with the replaced code, is removed.

    A measurement claim's rows (``work/measurements.jsonl``) are saved as ``page_dir/partial/
    measurements.jsonl``, a row a unit.

    Returns ``{"units": all saved units and rows, "new": written now, "bytes": their size,
    "records": evaluation records saved, "checkpoints": units still training, "path": folder}``."""
    out = Path(page_dir) / PARTIAL
    rows, new = _save_rows(work, out)
    size = (out / ROWS).stat().st_size if new else 0
    found = units(work)
    records, written = _save_records(work, out)
    rows += records
    size += written
    size += _save_checkpoints(work, out)
    code = Path(work) / CODE
    # the partial run beside the page was saved from other code: the workspace was given new code
    # (`--fresh-code`), so the archives of units trained before that are of keys nothing reads
    replaced = code.exists() and (out / CODE).exists() and _commit(out / CODE) != _commit(code)
    if code.exists() and (rows or found or checkpoints(work)):
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / CODE, code.read_text())
        if (Path(work) / COST).exists():
            atomic_write_text(out / COST, (Path(work) / COST).read_text())
    since = _code_copied(work)
    for folder in found:
        path = out / _archive_name(work, folder)
        if since is not None and _finished_at(folder) < since:
            if replaced and path.exists():
                path.unlink()   # saved before the code was replaced
            if not path.exists():
                continue   # trained with the code a `--fresh-code` resume replaced: its key is no longer used
        if len(folder.relative_to(Path(work) / "data" / "cache").parts) == 2:   # a finished cache holds its units
            for part in out.glob(path.name.removesuffix(".tar.gz") + ".units~*.tar.gz"):
                part.unlink()
        if path.exists():
            continue
        out.mkdir(parents=True, exist_ok=True)
        files = sorted(f for f in folder.rglob("*") if f.is_file())
        size += write_tar_gz(path, [(str(f.relative_to(work)), f.read_bytes()) for f in files])
        new += 1
    return {"units": len(found) + rows, "new": new, "bytes": size, "records": records,
            "checkpoints": len(checkpoints(work)), "path": str(out)}


def checkpoints(work: Path) -> list[Path]:
    """The checkpoint files (``*.ckpt``) of units still training in the workspace ``work``, sorted."""
    cache = Path(work) / "data" / "cache"
    if not cache.is_dir():
        return []
    return sorted(f for f in cache.rglob("*.ckpt")
                  if f.is_file() and not any(p.endswith(".tmp") for p in f.relative_to(cache).parts[:-1]))


def _save_checkpoints(work: Path, out: Path) -> int:
    """Copy each checkpoint of ``work`` to ``out/checkpoints/<path with ~>`` when it changed, and
    drop a saved checkpoint whose file the workspace no longer has (its unit finished). Returns the
    bytes written."""
    cache = Path(work) / "data" / "cache"
    folder = out / CHECKPOINTS
    keep, written = set(), 0
    for f in checkpoints(work):
        name = "~".join(f.relative_to(cache).parts)
        keep.add(name)
        data = f.read_bytes()
        target = folder / name
        if target.exists() and target.read_bytes() == data:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".part")
        tmp.write_bytes(data)
        tmp.replace(target)
        written += len(data)
    for old in folder.glob("*.ckpt") if folder.is_dir() else []:
        if old.name not in keep:
            old.unlink()
    return written


def _restore_checkpoints(work: Path, page_dir: Path) -> int:
    """Put each saved checkpoint back into ``work`` where the workspace has neither it nor the
    finished unit it would resume (``<unit>/unit.json``). Returns the number restored."""
    cache = Path(work) / "data" / "cache"
    restored = 0
    for saved in sorted((Path(page_dir) / PARTIAL / CHECKPOINTS).glob("*.ckpt")):
        parts = saved.name.split("~")
        if ".." in parts or not parts[-1].endswith(".ckpt"):
            raise ValueError(f"{saved}: not a checkpoint of a claim's partial run")
        target = cache.joinpath(*parts)
        if target.exists() or (target.with_suffix("") / _UNIT_MARKERS[0]).exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(saved.read_bytes())
        restored += 1
    return restored


def _commit(code_json: Path) -> str | None:
    """The commit a ``code.json`` names (None: unreadable)."""
    try:
        return json.loads(code_json.read_text()).get("commit")
    except (OSError, ValueError, AttributeError):
        return None


def _code_copied(work: Path) -> float | None:
    """When the workspace's code was copied (``code.json``'s file time), or None without one."""
    code = Path(work) / CODE
    return code.stat().st_mtime if code.exists() else None


def _finished_at(folder: Path) -> float:
    """When a unit folder was finished: the time of its marker (``unit.json`` / ``facts.json``)."""
    for marker in (*_UNIT_MARKERS, "facts.json"):
        if (folder / marker).exists():
            return (folder / marker).stat().st_mtime
    return folder.stat().st_mtime


def _complete_lines(path: Path) -> str:
    """The text of ``path`` up to its last newline (a line being appended is left out)."""
    text = path.read_text()
    return text[: text.rfind("\n") + 1]


def complete_records(path: Path) -> list[dict]:
    """The records of a results file that a run is appending to: its complete lines, parsed
    ([] without the file)."""
    return [json.loads(line) for line in _complete_lines(path).splitlines() if line.strip()] if path.exists() else []


def _save_records(work: Path, out: Path) -> tuple[int, int]:
    """Copy each ``work/data/results/<row>.jsonl`` (complete lines) to ``out/results/``, rewriting
    a saved copy only when the workspace has more. Returns (records saved, bytes written)."""
    source = Path(work) / "data" / RESULTS
    total = written = 0
    for path in sorted(source.glob("*.jsonl")) if source.is_dir() else []:
        text = _complete_lines(path)
        n = text.count("\n")
        if not n:
            continue
        total += n
        target = out / RESULTS / path.name
        if target.exists() and target.read_text() == text:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, text)
        written += len(text.encode())
    return total, written


def _record_key(record: dict) -> tuple:
    return ((record.get("extra") or {}).get("task", "plan"), record.get("domain"), record.get("split"),
            record.get("problem"), record.get("seed"), record.get("config_hash"))


def _restore_records(work: Path, page_dir: Path) -> int:
    """Append to each workspace ``data/results/<row>.jsonl`` the saved records it lacks (by task,
    domain, split, problem, seed and config fingerprint). Returns the number appended."""
    added = 0
    for saved in sorted((Path(page_dir) / PARTIAL / RESULTS).glob("*.jsonl")):
        target = Path(work) / "data" / RESULTS / saved.name
        have = {_record_key(r) for r in read_jsonl(target)} if target.exists() else set()
        missing = [line for line in saved.read_text().splitlines(keepends=True)
                   if line.strip() and _record_key(json.loads(line)) not in have]
        if missing:
            target.parent.mkdir(parents=True, exist_ok=True)
            existing = _complete_lines(target) if target.exists() else ""
            atomic_write_text(target, existing + "".join(missing))
            added += len(missing)
    return added


def _restore_cost(work: Path, page_dir: Path) -> None:
    """Carry the saved ``cost.json`` into the workspace when it records more wall time (it is the
    later one of a run carried across machines)."""
    saved, mine = Path(page_dir) / PARTIAL / COST, Path(work) / COST
    if not saved.exists():
        return
    wall = lambda p: json.loads(p.read_text()).get("wall_s", 0.0) if p.exists() else -1.0  # noqa: E731
    if wall(saved) > wall(mine):
        Path(work).mkdir(parents=True, exist_ok=True)
        atomic_write_text(mine, saved.read_text())


def restore(work: Path, page_dir: Path) -> int:
    """Unpack every unit archive of ``page_dir/partial/`` into the workspace ``work`` where the file
    is missing there (a file the workspace already has is kept), append the saved evaluation records
    and measurement rows the workspace lacks, and carry the saved ``cost.json`` over; a workspace row that names no code (measured
    before rows were stamped) takes the ``code`` of its saved copy. Returns the number of files and
    rows restored (0 without a partial run).

    Raises:
        ValueError: an archive is not one :func:`save` wrote (names the file).
    """
    restored = _restore_records(work, page_dir) + _restore_checkpoints(work, page_dir)
    _restore_cost(work, page_dir)
    saved = Path(page_dir) / PARTIAL / ROWS
    if saved.exists():
        target = Path(work) / ROWS
        rows = read_jsonl(target) if target.exists() else []
        stamps = {row_key(r): r["code"] for r in read_jsonl(saved) if r.get("code")}
        if any(not r.get("code") and row_key(r) in stamps for r in rows):
            rows = [r if r.get("code") or row_key(r) not in stamps else {**r, "code": stamps[row_key(r)]}
                    for r in rows]
            atomic_write_text(target, "".join(json.dumps(r) + "\n" for r in rows))
        have = {row_key(r) for r in rows}
        missing = [r for r in read_jsonl(saved) if row_key(r) not in have]
        if missing:
            Path(work).mkdir(parents=True, exist_ok=True)
            with open(target, "a") as out:
                out.writelines(json.dumps(r) + "\n" for r in missing)
            restored += len(missing)
    for path in sorted((Path(page_dir) / PARTIAL).glob("*.tar.gz")):
        try:
            with tarfile.open(path, mode="r:gz") as tar:
                for member in tar.getmembers():
                    if not member.isfile() or not member.name.startswith("data/cache/") or ".." in member.name:
                        raise ValueError(f"{path}: unexpected member {member.name!r}")
                    if not (Path(work) / member.name).exists():
                        tar.extract(member, work, filter="data")
                        restored += 1
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise ValueError(f"{path}: not a unit of a claim's partial run ({exc})") from None
    return restored


def describe(page_dir: Path) -> str | None:
    """One sentence for a claim's page about its committed partial run, or None without one."""
    archives = sorted((Path(page_dir) / PARTIAL).glob("*.tar.gz"))
    saved = Path(page_dir) / PARTIAL / ROWS
    if saved.exists():
        n = len(read_jsonl(saved))
        return (f"A partial run is committed beside this page (`{PARTIAL}/{ROWS}`: {n} measurement rows); "
                "`planarena claims run` resumes from it on any machine.")
    results = sorted((Path(page_dir) / PARTIAL / RESULTS).glob("*.jsonl"))
    records = sum(len(read_jsonl(f)) for f in results)
    held = f" and {records} evaluation records of {len(results)} rows (`{RESULTS}/`)" if records else ""
    ckpts = sorted((Path(page_dir) / PARTIAL / CHECKPOINTS).glob("*.ckpt"))
    if ckpts:
        held += f"; {len(ckpts)} units still training, carried as checkpoints (`{CHECKPOINTS}/`)"
    if not archives and not records and not ckpts:
        return None
    size = sum(a.stat().st_size for a in archives)
    units = 0
    for archive in archives:   # a finished stage cache holds several (domain, seed) units
        with tarfile.open(archive, mode="r:gz") as tar:
            seeds = {m.group(0) for m in map(_SEED.search, tar.getnames()) if m}
        units += len(seeds) or 1
    code = commit(page_dir)
    return (f"A partial run is committed beside this page (`{PARTIAL}/`: {units} finished training units in "
            f"{len(archives)} archives, {size / 1e6:.1f} MB{held}{f', run with the code of commit {code}' if code else ''}); "
            "`planarena claims run` resumes from it on any machine.")


def discard(page_dir: Path) -> None:
    """Remove ``page_dir/partial/`` (the claim's run finished: its records replace it)."""
    shutil.rmtree(Path(page_dir) / PARTIAL, ignore_errors=True)


__all__ = ["CHECKPOINTS", "COST", "PARTIAL", "RESULTS", "checkpoints", "complete_records", "commit", "describe", "discard", "restore", "save", "units"]
