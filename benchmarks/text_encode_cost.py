"""CPU seconds per state text of a sentence encoder on a workspace's ACP pool data, per domain, and
the encoding's projected cost (unique state texts x CPU s per text).

Measured in process CPU time on one thread (``torch.set_num_threads(1)``), so the figure does not
depend on other work sharing the cores; a 64-text sample per domain, batch 64.

Usage (repository root)::

    python benchmarks/text_encode_cost.py WORKSPACE [--encoder ~/.cache/planarena/encoders/all-mpnet-base-v2]

``WORKSPACE`` holds ``data/acp`` (a claim workspace under ``~/.cache/planarena/claims/<id>`` or
this checkout after ``dvc repro``).
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--encoder", type=Path, default=Path.home() / ".cache/planarena/encoders/all-mpnet-base-v2")
    ap.add_argument("--sample", type=int, default=64)
    args = ap.parse_args(argv)

    import torch
    from sentence_transformers import SentenceTransformer

    from planarena.datasets.acp import load_domain_dataset
    from planarena.features.text.acp import Renderer

    torch.set_num_threads(1)
    model = SentenceTransformer(str(args.encoder), device="cpu")
    acp = args.workspace / "data" / "acp"
    rng = random.Random(0)
    total_s = 0.0
    print(f"| domain | unique state texts | tokens (mean / max of 200) | CPU s per text | projected CPU min |\n|---|---|---|---|---|")
    for dom in sorted(p.name for p in acp.iterdir() if p.is_dir()):
        texts = []
        for prob in load_domain_dataset(acp, dom):
            r = Renderer(dom, static=prob.static)
            texts += [r.state(s) for s in prob.states]
        uniq = sorted(set(texts))
        lens = [len(model.tokenizer(t)["input_ids"]) for t in rng.sample(uniq, min(200, len(uniq)))]
        sample = rng.sample(uniq, min(args.sample, len(uniq)))
        t0 = time.process_time()
        model.encode(sample, batch_size=64)
        per = (time.process_time() - t0) / len(sample)
        total_s += per * len(uniq)
        print(f"| {dom} | {len(uniq)} | {np.mean(lens):.0f} / {max(lens)} | {per:.3f} | {per * len(uniq) / 60:.0f} |", flush=True)
    print(f"\nProjected: {total_s / 3600:.1f} CPU hours for the state texts (actions add a few per cent).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
