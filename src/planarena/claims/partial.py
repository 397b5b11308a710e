"""A claim run carried across machines: what its workspace finished, committed beside its page.

A claim takes hours on 2 cores, longer than one working session, and its workspace
(``~/.cache/planarena/claims/<id>``) lives on one machine. :func:`save` packs the workspace's
finished training into ``reports/claims/<id>/partial.tar.gz`` (deterministic, committed with the
repository); :func:`restore` unpacks it into a fresh workspace before ``dvc repro``, so a run
started on one machine resumes on another.

What is packed: ``data/cache/`` but its ``text/`` folder (sentence embeddings: large, and cached
per text anyway). That holds every family's finished training units (``<key>.units/``, the folders
:func:`planarena.methods.units.train_units` keeps) and finished training caches (``<key>/``), each
under a key of everything its training reads (code, params, problems, trajectories): a unit
restored on a machine whose inputs differ has another key and is simply not used, so a restore
never changes a result, only saves its time. The page's verdict is written from a finished run
only (:data:`planarena.claims.run.FINISHED`); ``write_page`` removes the archive then.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from planarena.core.io import write_tar_gz

#: The archive's name in ``reports/claims/<id>/``.
PARTIAL = "partial.tar.gz"
#: Folders of ``data/cache`` left out (regenerable and large).
SKIPPED = ("text",)


def _members(work: Path) -> list[tuple[str, Path]]:
    cache = work / "data" / "cache"
    if not cache.is_dir():
        return []
    return sorted((str(f.relative_to(work)), f) for f in cache.rglob("*")
                  if f.is_file() and f.relative_to(cache).parts[0] not in SKIPPED
                  and not any(p.endswith(".tmp") for p in f.relative_to(cache).parts))


def save(work: Path, page_dir: Path) -> dict:
    """Pack the workspace ``work``'s finished training into ``page_dir/partial.tar.gz``.

    Returns ``{"files": n, "bytes": size, "path": str}`` (``files`` 0 and no archive written when
    the workspace has nothing finished yet)."""
    members = _members(Path(work))
    if not members:
        return {"files": 0, "bytes": 0, "path": ""}
    page_dir.mkdir(parents=True, exist_ok=True)
    path = page_dir / PARTIAL
    size = write_tar_gz(path, [(name, f.read_bytes()) for name, f in members])
    return {"files": len(members), "bytes": size, "path": str(path)}


def restore(work: Path, page_dir: Path) -> int:
    """Unpack ``page_dir/partial.tar.gz`` into the workspace ``work`` where a file is missing there
    (a file the workspace already has is kept). Returns the number of files restored (0 without an
    archive).

    Raises:
        ValueError: the archive is not one :func:`save` wrote (names the file).
    """
    path = Path(page_dir) / PARTIAL
    if not path.exists():
        return 0
    restored = 0
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            for member in tar.getmembers():
                if not member.isfile() or not member.name.startswith("data/cache/"):
                    raise ValueError(f"{path}: unexpected member {member.name!r}")
                if not (Path(work) / member.name).exists():
                    tar.extract(member, work, filter="data")
                    restored += 1
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ValueError(f"{path}: not a claim's partial run ({exc})") from None
    return restored


def describe(page_dir: Path) -> str | None:
    """One sentence for a claim's page about its committed partial run, or None without one."""
    path = Path(page_dir) / PARTIAL
    if not path.exists():
        return None
    with tarfile.open(path, mode="r:gz") as tar:
        names = tar.getnames()
    units = sorted({n.split("/seed")[0] + "/seed" + n.split("/seed")[1].split("/")[0] for n in names if "/seed" in n})
    return (f"A partial run is committed beside this page (`{PARTIAL}`: {len(names)} files, {len(units)} finished "
            f"training units, {path.stat().st_size / 1e6:.1f} MB); `planarena claims run` resumes from it on any machine.")


def discard(page_dir: Path) -> None:
    """Remove ``page_dir/partial.tar.gz`` (the claim's run finished: its records replace it)."""
    (Path(page_dir) / PARTIAL).unlink(missing_ok=True)


__all__ = ["PARTIAL", "describe", "discard", "restore", "save"]
