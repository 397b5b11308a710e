"""Content-addressed text-embedding cache of the ``embed_text`` and ``embed_acp`` stages (SQLite).

EmbedPlan notes that "embeddings are computed once and cached"
("Textual Planning with Explicit Latent Transitions", Appendix B.1.1 "Frozen Encoders";
docs/papers/embedplan.md): :class:`EmbeddingCache` stores one float32 vector per (encoder id, text),
key :func:`text_key`, in SQLite under :func:`text_cache_root` (``data/cache/text/<encoder slug>/``
or ``$PLANARENA_TEXT_CACHE/<slug>``; not a DVC output), so the same text is never encoded twice.
:class:`Encoder` is what the cache needs from an encoder
(:class:`planarena.features.text.encoder.TextEncoder`, or a fake in tests).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Protocol, Sequence

import numpy as np
from tqdm.auto import tqdm

from planarena.config import Layout

#: Environment variable overriding the root of the text embedding cache (see :func:`text_cache_root`).
CACHE_ENV = "PLANARENA_TEXT_CACHE"

_SQL_CHUNK = 500  # keys per SELECT ... IN (...)


class Encoder(Protocol):
    """What :class:`EmbeddingCache` and :func:`run_stage` need from an encoder (tests inject fakes).

    ``slug`` names the output and cache folders; ``encoder_id`` is part of every cache key (two
    encoders with different ids never share entries); ``dim`` is the embedding width;
    ``encode(texts)`` returns a float32 array of shape ``(len(texts), dim)``. Optional:
    ``token_counts(texts) -> list[int]`` and ``max_seq_length`` (for truncation statistics).
    """

    slug: str
    encoder_id: str

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass
class CacheStats:
    """Counters of :meth:`EmbeddingCache.encode`: ``texts`` requested, ``unique`` among them,
    ``hits`` (unique texts found in the cache), ``misses`` (unique texts encoded now),
    ``truncated`` (unique texts longer than the encoder's ``max_seq_length`` word pieces, as far
    as token counts are known), ``max_tokens`` and ``encode_seconds`` (time in the encoder)."""

    texts: int = 0
    unique: int = 0
    hits: int = 0
    misses: int = 0
    truncated: int = 0
    max_tokens: int = 0
    encode_seconds: float = 0.0

    def add(self, other: "CacheStats") -> None:
        """Accumulate ``other`` into this object."""
        for name in ("texts", "unique", "hits", "misses", "truncated", "encode_seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.max_tokens = max(self.max_tokens, other.max_tokens)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["encode_seconds"] = round(d["encode_seconds"], 3)
        return d


def text_key(encoder_id: str, text: str) -> bytes:
    """Cache key: ``sha256(encoder_id + NUL + text)`` (32 raw bytes)."""
    return hashlib.sha256(f"{encoder_id}\0{text}".encode("utf-8")).digest()


class EmbeddingCache:
    """Content-addressed embedding store for one encoder, persisted in SQLite.

    File: ``<root>/<sha256(encoder_id)[:16]>.sqlite`` (``root`` is normally
    ``layout.cache / "text" / encoder.slug``), table ``emb(key BLOB PRIMARY KEY, vec BLOB,
    ntok INTEGER)`` with ``key`` = :func:`text_key`, ``vec`` = float32 bytes, ``ntok`` = word pieces
    (``NULL`` if the encoder cannot count). Write-ahead log; every encoded chunk is committed, so a
    killed run keeps all chunks finished before the kill and never leaves a half-written entry. A
    file SQLite reports as corrupt (e.g. truncated by a full disk) is renamed ``*.corrupt-<time>``
    with a warning and the cache starts empty: it is a cache, never the source of truth.

    Args:
        root: folder of the store (created).
        encoder: an :class:`Encoder`.
        chunk_size: texts per encoder call and per commit (default ``16 * encoder.batch_size`` or
            1024); bounds the work lost by a kill.
        progress: show a tqdm bar while encoding (``None``: only on a terminal).
    """

    def __init__(
        self,
        root: str | os.PathLike,
        encoder: Encoder,
        *,
        chunk_size: int | None = None,
        progress: bool | None = None,
    ):
        self.root = Path(root)
        self.encoder = encoder
        self.encoder_id = str(encoder.encoder_id)
        bs = int(getattr(encoder, "batch_size", 64) or 64)
        self.chunk_size = int(chunk_size or max(16 * bs, 256))
        self.progress = progress
        self.path = self.root / f"{hashlib.sha256(self.encoder_id.encode()).hexdigest()[:16]}.sqlite"
        self.stats = CacheStats()
        self.last_stats = CacheStats()
        self._dim: int | None = None
        self._conn: sqlite3.Connection | None = None
        self._open()

    # -- storage ---------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=120.0)
        conn.execute("PRAGMA busy_timeout = 120000")
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:  # e.g. a filesystem without shared memory: keep rollback journal
            pass
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
        conn.execute(
            # a rowid table: vectors (1.5 KiB for 384 floats) are too large for WITHOUT ROWID
            "CREATE TABLE IF NOT EXISTS emb (key BLOB PRIMARY KEY, vec BLOB NOT NULL, ntok INTEGER)"
        )
        conn.commit()
        rows = dict(conn.execute("SELECT k, v FROM meta").fetchall())
        if rows.get("encoder_id", self.encoder_id) != self.encoder_id:
            conn.close()
            raise ValueError(
                f"{self.path}: cache belongs to encoder {rows['encoder_id']!r}, not {self.encoder_id!r}"
            )
        if "dim" in rows:
            self._dim = int(rows["dim"])
        if "encoder_id" not in rows:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('encoder_id', ?)", (self.encoder_id,))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('dtype', 'float32')")
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('format', '1')")
            conn.commit()
        return conn

    def _open(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = self._connect()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._quarantine(exc)
            self._conn = self._connect()

    def _quarantine(self, exc: Exception) -> None:
        """Move a corrupt store aside (with its WAL/SHM files) and start an empty one."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for suffix in ("", "-wal", "-shm", "-journal"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                p.replace(Path(f"{p}.corrupt-{stamp}"))
        self._dim = None
        warnings.warn(f"{self.path}: embedding cache unreadable ({exc}); moved aside, starting empty")

    def _with_recovery(self, fn):
        try:
            return fn()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._quarantine(exc)
            self._conn = self._connect()
            return fn()

    def _lookup(self, keys: list[bytes]) -> dict[bytes, tuple[np.ndarray, int | None]]:
        def run():
            found: dict[bytes, tuple[np.ndarray, int | None]] = {}
            width = None if self._dim is None else 4 * self._dim
            for i in range(0, len(keys), _SQL_CHUNK):
                part = keys[i : i + _SQL_CHUNK]
                q = f"SELECT key, vec, ntok FROM emb WHERE key IN ({','.join('?' * len(part))})"
                for key, vec, ntok in self._conn.execute(q, part):
                    if width is not None and len(vec) != width:
                        continue  # wrong width: treat as a miss, the entry is re-encoded and replaced
                    found[bytes(key)] = (np.frombuffer(vec, dtype=np.float32), ntok)
            return found

        return self._with_recovery(run)

    def _store(self, rows: list[tuple[bytes, bytes, int | None]], dim: int) -> None:
        def run():
            with self._conn:  # one transaction: all rows of the chunk or none
                if self._dim is None:
                    self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('dim', ?)", (str(dim),))
                self._conn.executemany("INSERT OR REPLACE INTO emb (key, vec, ntok) VALUES (?, ?, ?)", rows)
            self._dim = dim

        self._with_recovery(run)

    # -- public ----------------------------------------------------------------------------

    @property
    def dim(self) -> int:
        """Embedding width: from the store if it has entries, else from the encoder."""
        if self._dim is None:
            self._dim = int(self.encoder.dim)
        return self._dim

    def __len__(self) -> int:
        return int(self._with_recovery(lambda: self._conn.execute("SELECT count(*) FROM emb").fetchone()[0]))

    def __contains__(self, text: str) -> bool:
        return bool(self._lookup([text_key(self.encoder_id, text)]))

    def encode(self, texts: Iterable[str]) -> np.ndarray:
        """Embeddings of ``texts``: float32 array ``(N, dim)``, row ``i`` for ``texts[i]``.

        Only texts not yet in the store are encoded: de-duplicated, ordered by length (less
        padding), in chunks of :attr:`chunk_size` committed one by one. Counters of this call go to
        :attr:`last_stats` and are added to :attr:`stats`.

        Raises:
            ValueError: the encoder returned an array of the wrong shape (names the encoder).
        """
        texts = [str(t) for t in texts]
        st = CacheStats(texts=len(texts))
        keys = [text_key(self.encoder_id, t) for t in texts]
        unique: dict[bytes, str] = dict(zip(keys, texts))
        st.unique = len(unique)
        found = self._lookup(list(unique)) if unique else {}
        st.hits = len(found)
        missing = sorted((k for k in unique if k not in found), key=lambda k: len(unique[k]))
        st.misses = len(missing)
        if missing:
            bar = tqdm(total=len(missing), desc="encode", unit="text", leave=False, disable=self._bar_disabled())
            with bar:
                for i in range(0, len(missing), self.chunk_size):
                    chunk = missing[i : i + self.chunk_size]
                    ctexts = [unique[k] for k in chunk]
                    t0 = time.perf_counter()
                    vecs = np.asarray(self.encoder.encode(ctexts), dtype=np.float32)
                    counter = getattr(self.encoder, "token_counts", None)
                    ntoks = list(counter(ctexts)) if counter is not None else [None] * len(ctexts)
                    st.encode_seconds += time.perf_counter() - t0
                    bad_dim = self._dim is not None and vecs.ndim == 2 and vecs.shape[1] != self._dim
                    if vecs.ndim != 2 or vecs.shape[0] != len(ctexts) or bad_dim:
                        raise ValueError(
                            f"encoder {self.encoder_id!r} returned shape {vecs.shape} for {len(ctexts)} texts"
                            + (f" (cache dim {self._dim})" if self._dim is not None else "")
                        )
                    vecs = np.ascontiguousarray(vecs)
                    self._store([(k, v.tobytes(), n) for k, v, n in zip(chunk, vecs, ntoks)], vecs.shape[1])
                    for k, v, n in zip(chunk, vecs, ntoks):
                        found[k] = (v, n)
                    bar.update(len(chunk))
        limit = getattr(self.encoder, "max_seq_length", None)
        ntok_known = [n for _v, n in found.values() if n is not None]
        if ntok_known:
            st.max_tokens = int(max(ntok_known))
            if limit:
                st.truncated = int(sum(n > limit for n in ntok_known))
        self.last_stats = st
        self.stats.add(st)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k][0] for k in keys]).astype(np.float32, copy=False)

    def _bar_disabled(self) -> bool | None:
        return None if self.progress is None else not self.progress

    def close(self) -> None:
        """Close the SQLite connection (entries are already committed)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "EmbeddingCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    """True for 'malformed'/'not a database' errors; False for locks and other transient errors."""
    msg = str(exc).lower()
    return type(exc) is sqlite3.DatabaseError or "malformed" in msg or "not a database" in msg


def text_cache_root(layout: Layout, slug: str) -> Path:
    """Folder of the embedding store of one encoder: ``$PLANARENA_TEXT_CACHE/<slug>`` if that
    environment variable is set (e.g. an absolute path shared by ``dvc exp run --queue``/``--temp``
    workers, whose temporary workspaces do not contain the untracked ``data/cache``), else
    ``layout.cache / "text" / slug``. The location never changes results, only speed."""
    base = os.environ.get(CACHE_ENV, "").strip()
    return (Path(base).expanduser() if base else layout.cache / "text") / slug


__all__ = ["CACHE_ENV", "CacheStats", "EmbeddingCache", "Encoder", "text_cache_root", "text_key"]
