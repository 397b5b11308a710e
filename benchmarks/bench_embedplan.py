"""EmbedPlan speed on this machine: training time per domain (single-domain Extrapolation model,
the params' `embedplan.model`) and pool Hit@k evaluation throughput (queries per second, pool of
`embedplan.pool_size`, Acc@k over every applicable action included).

Needs the default workspace's `data/acp` and `data/embeddings/acp` (`dvc repro embed_acp`).
Usage: python benchmarks/bench_embedplan.py [--params params.yaml] [--seed 13]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from planarena.config import Layout, get, load_params
from planarena.datasets.acp import domains_available
from planarena.features.text.acp import acp_encoders
from planarena.features.text.encoder import encoder_slug
from planarena.methods.embedplan.model import (
    EmbedPlanConfig,
    build_model,
    evaluate_rows,
    project_states,
    train,
)
from planarena.protocols.pool import build_corpus, protocol_tasks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    params = load_params(args.params)
    layout = Layout()
    domains = [d for d in get(params, "acp.domains") if d in set(domains_available(layout.acp))]
    slug = encoder_slug(acp_encoders(params)[0])
    corpus = build_corpus(layout.acp, layout.embeddings / "acp" / slug, domains)
    cfg = EmbedPlanConfig.from_dict(get(params, "embedplan.model", {}))
    pool = int(get(params, "embedplan.pool_size", 128))
    print(f"encoder {slug}, torch threads {torch.get_num_threads()}, config {cfg}")
    print("| domain | train transitions | epochs | train time (s) | s/epoch | test queries | queries/s |")
    print("|---|---|---|---|---|---|---|")
    for task in protocol_tasks(corpus, "extrapolation", args.seed):
        if task.skipped:
            continue
        torch.manual_seed(args.seed)
        model = build_model(cfg, corpus.table.state_emb.shape[1], corpus.table.action_emb.shape[1])
        res = train(model, corpus.table, task.train_rows, cfg, args.seed)
        # throughput: every transition of the domain as a query (more queries, steadier figure)
        rows = corpus.domain_rows(task.train_key)
        t0 = time.perf_counter()
        latents = project_states(model, corpus.table)
        evaluate_rows(model, corpus.table, rows, pool_size=pool, distractors="problem", seed=0, latents=latents)
        dt = time.perf_counter() - t0
        print(f"| {task.train_key} | {len(task.train_rows)} | {res.epochs} | {res.train_time_s:.1f} | "
              f"{res.train_time_s / max(1, res.epochs):.2f} | {len(rows)} | {len(rows) / dt:,.0f} |")
    n = len(corpus.table)
    rows = np.arange(n)
    t0 = time.perf_counter()
    evaluate_rows(model, corpus.table, rows, pool_size=pool, distractors="domain", seed=0)
    print(f"all {n} transitions, domain pools: {n / (time.perf_counter() - t0):,.0f} queries/s")


if __name__ == "__main__":
    main()
