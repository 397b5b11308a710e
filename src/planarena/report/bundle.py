"""The run's records, committed beside the front page: ``reports/records.tar.gz``.

The report stage writes one deterministic archive (sorted members, mtime 0, no owner; the same
inputs give the same bytes) of everything it read: the reported rows' result records
(``results/<row>.jsonl``), the planning-stage records (``plans/records.jsonl``), the problems and
their manifest (``problems/``, for the horizon ceiling), the schema manifest, the transition
datasets' summaries (``acp/``), the stage inputs (``inputs/``, the code hash) and the machine it ran
on (``environment.json``: CPU model, vector extensions, cores, Python, torch build, key packages).
About 0.5 MB for the default profile.

So a fresh clone can ``planarena compare`` two rows, re-render the report (``planarena report``)
and ``planarena check-repro`` its own run against the committed one without running anything:
:func:`restore` unpacks the archive into a folder laid out like ``data/`` (a temporary one: the
workspace's ``data/`` belongs to DVC).
"""

from __future__ import annotations

import json
import os
import platform
import tarfile
from pathlib import Path
from typing import Iterable

from planarena.config import Layout
from planarena.core.io import write_tar_gz

#: The archive's name under ``reports/``.
BUNDLE = "records.tar.gz"
#: The machine description inside the archive.
ENVIRONMENT = "environment.json"


def environment() -> dict:
    """The machine a run ran on, in the fields that move its numbers: CPU model, vector extensions,
    cores, Python, the torch build and the key packages' versions
    (:mod:`planarena.report.sections.info`); and the checkout's git revision and whether it was
    dirty (``git_revision`` / ``git_dirty``, None outside git), so a page rendered later from the
    archive names the run's commit, not the renderer's."""
    from planarena.report.sections import info

    rev, dirty = info.git_state()
    return {"cpu_model": info.cpu_model(), "vector_extensions": info.vector_extensions(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(), "torch": info.torch_build(),
            "packages": info.package_versions(), "git_revision": rev, "git_dirty": dirty}


def _files(layout: Layout, methods: Iterable[str]) -> list[tuple[str, Path]]:
    """``(name in the archive, file)`` of what the report reads, sorted by name."""
    root = Path(layout.root)
    out: list[tuple[str, Path]] = []
    for m in sorted(set(methods)):
        f = Path(layout.results) / f"{m}.jsonl"
        if f.exists():
            out.append((f"results/{m}.jsonl", f))
    for folder, pattern in ((layout.problems, "**/*"), (layout.acp, "**/*.json"), (root / "inputs", "**/*.json")):
        folder = Path(folder)
        if folder.is_dir():
            out += [(f"{folder.name}/{f.relative_to(folder)}", f) for f in folder.glob(pattern) if f.is_file()]
    for f in (Path(layout.plans) / "records.jsonl", Path(layout.schema) / "manifest.jsonl"):
        if f.exists():
            out.append((f"{f.parent.name}/{f.name}", f))
    return sorted(out)


def write(layout: Layout, methods: Iterable[str], path: str | os.PathLike) -> dict:
    """Write the archive of the run's records for ``methods`` (the reported rows) to ``path``;
    returns ``{"files": n, "bytes": size}``. Deterministic: the same files give the same bytes."""
    members = _files(layout, methods)
    env = json.dumps(environment(), indent=1, sort_keys=True).encode()
    size = write_tar_gz(path, [(ENVIRONMENT, env), *((n, f.read_bytes()) for n, f in members)])
    return {"files": len(members) + 1, "bytes": size}


def restore(path: str | os.PathLike, root: str | os.PathLike) -> Layout:
    """Unpack the archive at ``path`` into ``root`` (laid out like ``data/``) and return its
    :class:`~planarena.config.Layout`.

    Raises:
        FileNotFoundError: no archive at ``path``.
        ValueError: the archive is not one this module wrote (names the file).
    """
    path, root = Path(path), Path(root)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no committed records (the report stage writes them)")
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            tar.extractall(root, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ValueError(f"{path}: not a records archive ({exc})") from None
    return Layout(root)


def committed_environment(path: str | os.PathLike) -> dict:
    """The ``environment.json`` of the archive at ``path`` ({} when it has none)."""
    with tarfile.open(path, mode="r:gz") as tar:
        try:
            member = tar.extractfile(ENVIRONMENT)
        except KeyError:
            return {}
        return json.loads(member.read()) if member is not None else {}


__all__ = ["BUNDLE", "ENVIRONMENT", "committed_environment", "environment", "restore", "write"]
