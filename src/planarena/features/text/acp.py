"""Stage ``embed_acp``: render and embed every state and ground action of the ACPBench-domain
transition datasets, once per encoder of ``acp.encoders`` (EmbedPlan Appendix B.1.1: frozen
encoders, embeddings "computed once and cached").

Text comes from the foundation's templates (:mod:`planarena.features.text.templates`, one sentence per
fluent atom; actions as imperative sentences) and goes through the SQLite
:class:`planarena.features.text.cache.EmbeddingCache` at ``data/cache/text/<encoder slug>/``, shared with the
``embed_text`` stage: a text is encoded once, ever, per encoder, so rerunning this stage (or adding
a domain) only encodes new texts.

Output per encoder and domain: ``data/embeddings/acp/<slug>/<domain>.npz`` with

==================  =================  ================================================
array               shape, dtype       meaning
==================  =================  ================================================
``states``          (N_s, d) float32   every state of every problem, problem by problem
``state_offsets``   (P + 1,) int64     rows of problem j: ``state_offsets[j]:[j+1]``
``actions``         (N_a, d) float32   every ground action of ``ProblemTransitions.actions``
``action_offsets``  (P + 1,) int64
``problems``        (P,) str           problem names, in ``load_domain_dataset`` order
==================  =================  ================================================

and ``data/embeddings/acp/<slug>/meta.json`` (encoder, dim, counts, example texts).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from planarena.config import ConfigError, Layout, get
from planarena.features.text.cache import EmbeddingCache, text_cache_root
from planarena.features.text.encoder import TextEncoder, embed_text_params
from planarena.features.text.splits import save_npz
from planarena.features.text.templates import Renderer


def acp_encoders(params: dict) -> list[str]:
    """The ``acp.encoders`` list (default: the ``embed_text`` encoder).

    Raises:
        ConfigError: the param is not a non-empty list of strings.
    """
    enc = get(params, "acp.encoders", None) or [get(params, "embed_text.encoder")]
    if isinstance(enc, str):
        enc = [enc]
    if not isinstance(enc, list) or not all(isinstance(e, str) and e for e in enc):
        raise ConfigError(f"params: `acp.encoders` must be a list of encoder names or paths, got {enc!r}")
    return enc


def make_encoder(params: dict, name: str, index: int) -> TextEncoder:
    """A :class:`TextEncoder` for ``acp.encoders[index]`` with the ``embed_text`` device/batch
    settings.

    Raises:
        ConfigError: the encoder path does not exist (the message names ``acp.encoders[index]``).
    """
    cfg = embed_text_params(params)
    try:
        return TextEncoder(name, device=cfg["device"], batch_size=cfg["batch_size"],
                           max_seq_length=cfg.get("max_seq_length"))
    except ConfigError as exc:
        raise ConfigError(f"params: `acp.encoders[{index}]` = {name!r}: {exc}") from exc


def embed_domain(cache: EmbeddingCache, acp_dir: Path, domain: str, out: Path) -> dict:
    """Embed one domain's states and actions through ``cache``; write ``out`` (see module doc).
    Returns counts for ``meta.json``."""
    from planarena.datasets.acp import load_domain_dataset

    datasets = load_domain_dataset(acp_dir, domain)
    state_texts, action_texts, so, ao = [], [], [0], [0]
    for prob in datasets:
        r = Renderer(domain, static=prob.static)
        state_texts += [r.state(s) for s in prob.states]
        action_texts += [r.action(a) for a in prob.actions]
        so.append(len(state_texts))
        ao.append(len(action_texts))
    states = cache.encode(state_texts)
    actions = cache.encode(action_texts)
    save_npz(out, {"states": states.astype(np.float32), "state_offsets": np.asarray(so, np.int64),
                   "actions": actions.astype(np.float32), "action_offsets": np.asarray(ao, np.int64),
                   "problems": np.asarray([p.problem for p in datasets], dtype=str)})
    return {"problems": len(datasets), "states": len(state_texts), "actions": len(action_texts),
            "unique_state_texts": len(set(state_texts)),
            "example_state": state_texts[0] if state_texts else None,
            "example_action": action_texts[0] if action_texts else None}


def run_stage(params: dict, layout: Layout, *, encoder_override=None) -> dict:
    """Embed every domain of ``data/acp`` for every encoder of ``acp.encoders``; return the meta.

    Args:
        encoder_override: an :class:`planarena.features.text.cache.Encoder` to use for every entry (tests).

    Raises:
        ConfigError: a missing encoder path (names ``acp.encoders[i]``).
        FileNotFoundError: no ``data/acp`` datasets (run ``acp_data``).
    """
    from planarena.datasets.acp import domains_available

    domains = [d for d in get(params, "acp.domains") if d in set(domains_available(layout.acp))]
    if not domains:
        raise FileNotFoundError(f"{layout.acp}: no ACP transition datasets; run the acp_data stage first")
    from planarena.core.executor import remote, run_units

    metas = {}
    for i, name in enumerate(acp_encoders(params)):
        enc = encoder_override or make_encoder(params, name, i)
        root = layout.embeddings / "acp" / enc.slug
        meta = {"encoder": name, "encoder_id": enc.encoder_id, "domains": {}}
        cache_root = text_cache_root(layout, enc.slug)

        def embed(domain: str, enc=enc, root=root, cache_root=cache_root) -> tuple[dict, int, dict]:
            # one domain per unit; the SQLite cache takes concurrent writers, and a domain's
            # texts, hence its batches and vectors, do not depend on the other domains
            with EmbeddingCache(cache_root, enc, progress=False) as cache:
                info = embed_domain(cache, layout.acp, domain, root / f"{domain}.npz")
                return info, cache.dim, cache.stats.to_dict()

        # on a cluster the domains run on the workers; on the local machine in the stage process:
        # two single-threaded MiniLM encoders on this project's 2 vCPUs took 89 s against 73 s for
        # one (the vCPUs share the matrix units:
        # docs/scaling.md#what-the-executor-guarantees-and-checks), the vectors byte-identical
        hits: dict[str, int] = {}
        for domain, (info, dim, stats) in zip(domains, run_units(embed, domains, desc=f"embed_acp {enc.slug}",
                                                                  parallel=remote())):
            meta["domains"][domain] = info
            meta["dim"] = dim
            for k, v in stats.items():
                hits[k] = max(hits.get(k, 0), v) if k == "max_tokens" else round(hits.get(k, 0) + v, 3)
        # cache hits vary from run to run: printed, not written (meta.json is a DVC output and
        # must be identical when the embeddings are, or every rerun retrains the methods)
        print(f"embed_acp {enc.slug}: cache {hits}")
        root.mkdir(parents=True, exist_ok=True)
        (root / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        metas[enc.slug] = meta
    return metas
