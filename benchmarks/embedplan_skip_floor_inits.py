"""Spread of the residual and the no-skip untrained EmbedPlan floors over ten initialisations
(seeds 13-22), Interpolation and Extrapolation Hit@5 on the default run's pool data
(docs/papers/embedplan.md#two-untrained-floors). Usage: python benchmarks/embedplan_skip_floor_inits.py
"""
import numpy as np, torch
torch.set_num_threads(1)
from planarena.config import Layout, get, load_params
from planarena.features.text.acp import acp_encoders
from planarena.features.text.encoder import encoder_slug
from planarena.methods.embedplan.model import EmbedPlanConfig, build_model, evaluate_rows
from planarena.protocols.pool import build_corpus, protocol_tasks
params = load_params("params.yaml"); layout = Layout()
slug = encoder_slug(acp_encoders(params)[0])
corpus = build_corpus(layout.acp, layout.embeddings / "acp" / slug, get(params, "acp.domains"))
base = dict(get(params, "embedplan.model", {})); T = corpus.table
for proto in ("interpolation", "extrapolation"):
    for v in ("residual", "noskip"):
        per_seed, per_dom = [], {}
        for seed in range(13, 23):
            torch.manual_seed(seed)
            m = build_model(EmbedPlanConfig.from_dict({**base, "arch": "mlp"}), T.state_emb.shape[1], T.action_emb.shape[1]).eval()
            if v == "noskip":
                m.transition = lambda zs, za, m=m: m.trans.ffn(torch.cat([zs, za], -1))
            hs = []
            for task in protocol_tasks(corpus, proto, 13):
                for test in task.tests:
                    res = evaluate_rows(m, T, test.rows, pool_size=128, distractors=test.distractors, seed=seed)
                    h = float(np.mean(res.rank < 5)); hs.append(h); per_dom.setdefault(test.domain, []).append(h)
            per_seed.append(np.mean(hs))
        print(proto, v, "per-init mean %.1f, std over inits %.1f, min %.1f max %.1f" % (100*np.mean(per_seed), 100*np.std(per_seed), 100*min(per_seed), 100*max(per_seed)),
              {d: round(100*np.mean(x), 1) for d, x in per_dom.items()}, flush=True)
