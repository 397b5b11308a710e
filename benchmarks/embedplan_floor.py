"""Why EmbedPlan's untrained floor sits above chance (5/128 = 3.9 % Hit@5): compare, on the same
pools, the untrained network (random weights, Appendix D.6) with the *identity* predictor that
returns the current state's own projected latent ``z_s`` (what the residual transition
``z' = z_s + FFN([z_s; z_a])`` reduces to when the FFN term is small).

If the identity predictor scores far above chance, successors are simply close to their source
states in the (randomly projected) sentence-embedding space, and a residual network inherits that
even with random weights. Needs the default workspace's ``data/acp`` and ``data/embeddings/acp``.
Usage: python benchmarks/embedplan_floor.py [--params params.yaml]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from planarena.config import Layout, get, load_params
from planarena.features.text.acp import acp_encoders
from planarena.features.text.encoder import encoder_slug
from planarena.methods.embedplan.model import (
    EmbedPlanConfig,
    build_model,
    evaluate_rows,
)
from planarena.protocols.pool import build_corpus, protocol_tasks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    params = load_params(args.params)
    layout = Layout()
    slug = encoder_slug(acp_encoders(params)[0])
    corpus = build_corpus(layout.acp, layout.embeddings / "acp" / slug, get(params, "acp.domains"))
    cfg = EmbedPlanConfig.from_dict(get(params, "embedplan.model", {}))
    seeds = [int(s) for s in get(params, "evaluation.seeds")]
    pool = int(get(params, "embedplan.pool_size", 128))
    print(f"encoder {slug}; Hit@5 % on the pool of {pool}, mean over "
          f"domains and seeds {seeds}")
    print(f"| protocol | untrained network | identity (z' = z_s) | chance (5/{pool}) |")
    print("|---|---|---|---|")
    for proto in ("interpolation", "extrapolation"):
        hits: dict[str, list[float]] = {"untrained": [], "identity": []}
        for seed in seeds:
            for variant in hits:
                torch.manual_seed(seed)
                model = build_model(cfg, corpus.table.state_emb.shape[1], corpus.table.action_emb.shape[1]).eval()
                if variant == "identity":
                    model.transition = lambda zs, za: zs  # the residual branch removed
                for task in protocol_tasks(corpus, proto, seed):
                    for test in task.tests:
                        res = evaluate_rows(model, corpus.table, test.rows, pool_size=pool,
                                            distractors=test.distractors, seed=seed)
                        hits[variant].append(float(np.mean(res.rank < 5)))
        print(f"| {proto} | {100 * np.mean(hits['untrained']):.1f} | {100 * np.mean(hits['identity']):.1f} | {500 / pool:.1f} |")


if __name__ == "__main__":
    main()
