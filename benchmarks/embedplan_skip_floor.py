"""Why EmbedPlan's untrained twin scores above chance (docs/papers/embedplan.md#two-untrained-floors).

On the default run's pool data (data/acp, data/embeddings/acp: run `make repro` first), Hit@5 per protocol of
the untrained residual network, the identity predictor, the network without its skip (the
`noskip` floor), the FFN term scaled by 0.1 / 10 / 100, and the hypernetwork with and without the
skip; then the magnitudes at initialisation (||FFN|| / ||z_s||, cosines). Seeds 13-15, no training.
Usage (repository root): python benchmarks/embedplan_skip_floor.py [protocol,protocol,...]
"""
import sys, time
import numpy as np, torch
torch.set_num_threads(1)
from planarena.config import Layout, get, load_params
from planarena.features.text.acp import acp_encoders
from planarena.features.text.encoder import encoder_slug
from planarena.methods.embedplan.model import EmbedPlanConfig, build_model, evaluate_rows
from planarena.protocols.pool import build_corpus, protocol_tasks

t0 = time.process_time()
params = load_params("params.yaml")
layout = Layout()
slug = encoder_slug(acp_encoders(params)[0])
corpus = build_corpus(layout.acp, layout.embeddings / "acp" / slug, get(params, "acp.domains"))
base = dict(get(params, "embedplan.model", {}))
T = corpus.table
ds, da = T.state_emb.shape[1], T.action_emb.shape[1]
seeds = [13, 14, 15]
protos = sys.argv[1].split(",") if len(sys.argv) > 1 else ["interpolation", "extrapolation", "cross_domain"]

def make(variant, seed, arch="mlp"):
    torch.manual_seed(seed)
    if variant == "identity_raw":
        return build_model(EmbedPlanConfig.from_dict({**base, "arch": "identity"}), ds, da).eval()
    m = build_model(EmbedPlanConfig.from_dict({**base, "arch": arch}), ds, da).eval()
    if variant == "identity_proj":
        m.transition = lambda zs, za: zs
    elif variant == "noskip":
        if arch == "mlp":
            m.transition = lambda zs, za, m=m: m.trans.ffn(torch.cat([zs, za], -1))
        else:
            orig = m.trans.forward
            m.transition = lambda zs, za, orig=orig: orig(zs, za) - zs
    elif variant.startswith("x"):  # FFN term scaled by c
        c = float(variant[1:])
        m.transition = lambda zs, za, m=m, c=c: zs + c * (m.trans(zs, za) - zs)
    return m

variants = ["residual", "identity_proj", "identity_raw", "noskip", "x0.1", "x10", "x100"]
print("Hit@5 %, mean over domains x seeds", seeds)
print("| protocol | " + " | ".join(variants) + " | hyper residual | hyper noskip | chance |")
for proto in protos:
    hits = {v: [] for v in variants + ["h_res", "h_noskip"]}
    chance = []
    for seed in seeds:
        for v in hits:
            arch = "hyper" if v.startswith("h_") else "mlp"
            vv = {"h_res": "residual", "h_noskip": "noskip"}.get(v, v)
            model = make(vv, seed, arch)
            for task in protocol_tasks(corpus, proto, seed, 0.2, get(params, "embedplan.max_train_transitions", None)):
                if task.skipped:
                    continue
                for test in task.tests:
                    res = evaluate_rows(model, T, test.rows, pool_size=128, distractors=test.distractors, seed=seed)
                    hits[v].append(float(np.mean(res.rank < 5)))
                    if v == "residual":
                        chance.append(float(np.mean(np.minimum(1, 5 / res.pool))))
    print(f"| {proto} | " + " | ".join(f"{100*np.mean(hits[v]):.1f}" for v in variants)
          + f" | {100*np.mean(hits['h_res']):.1f} | {100*np.mean(hits['h_noskip']):.1f} | {100*np.mean(chance):.1f} |", flush=True)

# magnitudes at init
torch.manual_seed(13)
m = build_model(EmbedPlanConfig.from_dict({**base, "arch": "mlp"}), ds, da).eval()
with torch.no_grad():
    se = torch.as_tensor(T.state_emb); ae = torch.as_tensor(T.action_emb)
    zs = m.project_state(se[T.s]); za = m.project_action(ae[T.a]); zs2 = m.project_state(se[T.s2])
    f = m.trans.ffn(torch.cat([zs, za], -1))
    F = torch.nn.functional
    print("||z_s|| mean %.3f, ||FFN|| mean %.3f, ratio %.2f" % (zs.norm(dim=-1).mean(), f.norm(dim=-1).mean(), (f.norm(dim=-1)/zs.norm(dim=-1)).mean()))
    print("cos(pred, z_s) mean %.3f" % F.cosine_similarity(zs + f, zs).mean())
    print("cos(z_s, z_s') mean %.3f (projected), raw %.3f" % (F.cosine_similarity(zs, zs2).mean(), F.cosine_similarity(se[T.s], se[T.s2]).mean()))
    # vs random state of the same problem
    rng = np.random.default_rng(0)
    prob = T.state_problem
    rnd = np.array([rng.choice(np.nonzero(prob == prob[x])[0]) for x in T.s2])
    zr = m.project_state(se[rnd])
    print("cos(z_s, z_random same problem) mean %.3f (projected), raw %.3f" % (F.cosine_similarity(zs, zr).mean(), F.cosine_similarity(se[T.s], se[rnd]).mean()))
print("cpu s", round(time.process_time() - t0, 1))
