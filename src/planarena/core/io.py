"""File and randomness helpers every stage shares: atomic writes, JSON lines, stable hashes, seeds.

One implementation each (docs/layout.md#the-package: ``core/io.py``), so every stage writes files
the same crash-safe way (temp file in the same directory + ``os.replace``: a reader sees the old
file or the new one, never half of one) and derives seeds the same order-independent way.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import IO, Any, Callable, Iterable


def _tmp_path(path: Path) -> Path:
    # per-process name: two processes writing the same file never share a temp file
    return path.with_name(f".{path.name}.tmp{os.getpid()}")


def atomic_write(path: str | os.PathLike, write: Callable[[IO[bytes]], None]) -> None:
    """Write ``path`` atomically: ``write(fh)`` fills a binary temp file, which then replaces it.

    The parent directory is created. If ``write`` raises, the temp file is removed and ``path``
    keeps its old content.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp_path(path)
    try:
        with tmp.open("wb") as fh:
            write(fh)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_write`)."""
    atomic_write(path, lambda fh: fh.write(data))


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically (see :func:`atomic_write`)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def dumps_json(obj: Any, indent: int | None = 2, default: Callable[[Any], Any] | None = None) -> str:
    """Canonical JSON text: sorted keys, newline at the end (stable bytes for DVC outputs);
    ``default`` converts what JSON lacks (e.g. ``float`` for NumPy scalars)."""
    return json.dumps(obj, indent=indent, sort_keys=True, default=default) + "\n"


def atomic_write_json(path: str | os.PathLike, obj: Any, indent: int | None = 2,
                      default: Callable[[Any], Any] | None = None) -> None:
    """Write ``obj`` as canonical JSON (:func:`dumps_json`) to ``path`` atomically."""
    atomic_write_text(path, dumps_json(obj, indent, default))


def without_times(info: dict) -> dict:
    """``info`` without its wall-time keys (``*_s``): times differ between identical runs, so they
    go to the untracked logs under ``data/logs/``, never into DVC outputs."""
    return {k: v for k, v in info.items() if not k.endswith("_s")}


def read_json_or_empty(path: str | os.PathLike) -> dict:
    """The JSON object in ``path``, or ``{}`` when it is missing or unreadable (for optional logs)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


def stable_hash(obj: Any, n: int = 12) -> str:
    """Short SHA-256 (``n`` hex digits) of the canonical JSON of ``obj`` (sorted keys); used for
    config fingerprints. Unlike Python's ``hash`` it is the same in every process."""
    data = json.dumps(obj, sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()[:n]


def derive_seed(*parts: Any, bits: int = 32) -> int:
    """Deterministic seed from ``parts`` (joined with ``/``): the first bytes of their SHA-256.

    Independent of the order in which work is done and of the process, so a unit of work (a
    problem, a (domain, seed) model, a pool query) gets the same stream wherever it runs.
    ``bits`` is 32 (``int.from_bytes(digest[:4])``) or 63 (``digest[:8] >> 1``, fits an int64).

    Raises:
        ValueError: ``bits`` is neither 32 nor 63.
    """
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    if bits == 32:
        return int.from_bytes(digest[:4], "big")
    if bits == 63:
        return int.from_bytes(digest[:8], "big") >> 1
    raise ValueError(f"derive_seed: bits must be 32 or 63, not {bits}")


# ------------------------------------------------------------------------------------------------
# JSON lines (result records, planner summaries)
# ------------------------------------------------------------------------------------------------


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """Read a JSON-lines file; a missing file is empty; a truncated *last* line is ignored.

    Raises:
        ValueError: a line other than the last is not valid JSON (names the file and line).
    """
    path = Path(path)
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if i == len(lines) - 1:
                break  # interrupted write: drop the partial last line
            raise ValueError(f"{path}:{i + 1}: not valid JSON: {exc}") from exc
    return out


class JsonlWriter:
    """Append-only JSON-lines writer that flushes and fsyncs each line (crash-safe resume).

    A partial last line left by a killed process is cut off when the file is opened.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._repair()
        self._fh = self.path.open("a")

    def _repair(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            self.path.write_bytes(data[:cut])

    def write(self, obj: dict) -> None:
        self._fh.write(json.dumps(obj, sort_keys=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def tell(self) -> int:
        """The file's size in bytes now (the offset :meth:`rewrite_tail` takes)."""
        self._fh.flush()
        return self.path.stat().st_size

    def rewrite_tail(self, offset: int, rows: list[dict]) -> None:
        """Replace everything after byte ``offset`` with ``rows`` (one line each), atomically: a
        process killed meanwhile leaves either the old file or the new one, never fewer lines.

        Raises:
            ValueError: ``offset`` is not at a line start within the file."""
        self._fh.flush()
        data = self.path.read_bytes()
        if offset > len(data) or (offset and data[offset - 1:offset] != b"\n"):
            raise ValueError(f"{self.path}: offset {offset} is not a line start")
        tail = "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows).encode()
        if data[offset:] == tail:
            return
        self._fh.close()
        atomic_write_bytes(self.path, data[:offset] + tail)
        self._fh = self.path.open("a")

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict]) -> None:
    """Write rows (one canonical JSON object per line) to ``path`` atomically."""
    text = "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)
    atomic_write_text(path, text)


def write_tar_gz(path: str | os.PathLike, members: Iterable[tuple[str, bytes]]) -> int:
    """Write ``members`` (``(name in the archive, bytes)``) to the gzip'd tar ``path``,
    deterministically: members in the order given, mtime 0, mode 0644, no owner, gzip mtime 0 (the
    same members give the same bytes, so a committed archive changes only when its content does).
    Written atomically. Returns the archive's size in bytes."""
    import gzip
    import io
    import tarfile

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.size, ti.mtime, ti.mode = len(data), 0, 0o644
            tar.addfile(ti, io.BytesIO(data))
    packed = gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)
    atomic_write_bytes(path, packed)
    return len(packed)
