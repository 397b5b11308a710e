"""SATr contrastive objective: how large L_att and L_hid are next to L_pred, under each reduction.

The claim ``satr-contrastive-lower-validation-loss`` implements L_att and L_hid as Section 4's
equations write them (squared differences summed over modules or layers, rows and columns or tokens
and the first k dimensions, divided by the batch size), while Appendix E says "For the contrastive
loss, we use MSE across all architectures" (symmetry-aware-transformers.txt line 483). The two
readings differ by the number of compared elements. This script trains the claim's encoder-decoder
(its params: Gripper's SATr training problems, d 64, 4 layers, its learning rate) for a few hundred
steps on **training batches only** (no validation problem is read) under each arm and logs, every
``--log-every`` steps, L_pred, L_att, L_hid of the step's batch and the gradient norm of L_pred and of
L_att + L_hid with respect to every weight: which term drives the update.

Arms: ``sum`` (the equations; the claim as registered), ``mean`` (Appendix E's MSE), ``none`` (no
contrastive terms). All start from the same initial weights and draw the same batches (``--seed``,
not one of the claim's seeds).

Usage::

    python benchmarks/contrastive_scale.py --steps 300 --out benchmarks/results/contrastive-scale-2026-11-29
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLAIM = ROOT / "claims" / "satr-contrastive-lower-validation-loss.yaml"


def run_arm(params: dict, arm: str, seed: int, steps: int, log_every: int) -> list[dict]:
    """Train one arm for ``steps`` steps; every ``log_every`` steps (and at step 0) one row of the
    terms of that step's batch and their gradient norms."""
    import numpy as np
    import torch

    from planarena.config import get
    from planarena.methods.transformers.batches import PlanBatches
    from planarena.methods.transformers.measure import state_spaces, suite_files
    from planarena.methods.transformers.method import build_model, vocabulary
    from planarena.methods.transformers.train import TrainConfig, fit, generator_terms

    t = get(params, "transformers", {}) or {}
    over = (t.get("by_arch") or {}).get("encdec") or {}
    model_cfg = {**(t.get("model") or {}), **(over.get("model") or {})}
    train = {**(t.get("train") or {}), **(over.get("train") or {})}
    domain_file, files = suite_files(params, "gripper")
    spaces = state_spaces(str(domain_file), tuple(map(str, files["train"])), None)
    torch.set_num_threads(1)
    vocab = vocabulary(domain_file, files["train"][0], spaces, int(t.get("max_objects", 64)))
    torch.manual_seed(seed)
    model, tokens = build_model("encdec", vocab, model_cfg)
    batches = PlanBatches("encdec", tokens, spaces)
    cfg = TrainConfig(**{**train, "steps": steps, "eval_every": steps, "contrastive": arm != "none",
                         "contrastive_reduction": "sum" if arm == "none" else arm, "rename_one": False})
    weights = [p for p in model.parameters() if p.requires_grad]
    rows: list[dict] = []
    step = {"n": 0}

    def norm(loss) -> float:
        grads = torch.autograd.grad(loss, weights, retain_graph=True, allow_unused=True)
        return float(torch.sqrt(sum((g ** 2).sum() for g in grads if g is not None)))

    def step_loss(rng):
        batch = batches.draw(cfg.batch, rng)
        # the terms under both reductions are logged for every arm; the arm's own is optimised
        l_pred, l_att, l_hid = generator_terms(model, batch, model.cfg.k, True, cfg.contrastive_reduction)
        if step["n"] % log_every == 0:
            row = {"arm": arm, "step": step["n"], "l_pred": float(l_pred.detach()), "l_att": float(l_att.detach()),
                   "l_hid": float(l_hid.detach()), "grad_pred": norm(l_pred), "grad_contrastive": norm(l_att + l_hid)}
            rows.append(row)
            print(json.dumps(row), flush=True)
        step["n"] += 1
        return l_pred + l_att + l_hid if arm != "none" else l_pred

    fit(model, step_loss, cfg, seed)
    return rows


def main() -> int:
    from planarena.claims.spec import load_claim
    from planarena.claims.workspace import claim_params

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--log-every", type=int, default=25)
    ap.add_argument("--seed", type=int, default=99, help="not one of the claim's seeds (13-24)")
    ap.add_argument("--satr", type=Path, default=None, help="the SATr splits (default: params.yaml's suites.satr.path)")
    ap.add_argument("--arms", nargs="+", default=["sum", "mean", "none"])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    # the params the claim's measurement runs with (planarena.claims.run)
    params = claim_params(load_claim(CLAIM), (ROOT / "params.yaml").read_text(), check_methods=False)
    if args.satr:
        params["suites"]["satr"]["path"] = str(args.satr.resolve())
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for arm in args.arms:
        c0 = time.process_time()
        rows += run_arm(params, arm, args.seed, args.steps, args.log_every)
        print(f"{arm}: {time.process_time() - c0:.0f} CPU s", flush=True)
    (args.out / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = ["| arm | step | L_pred | L_att | L_hid | (L_att + L_hid) / L_pred | grad norm L_pred | "
             "grad norm L_att + L_hid |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['arm']} | {r['step']} | {r['l_pred']:.3f} | {r['l_att']:.4g} | {r['l_hid']:.4g} | "
                     f"{(r['l_att'] + r['l_hid']) / r['l_pred']:.3g} | {r['grad_pred']:.3g} | "
                     f"{r['grad_contrastive']:.3g} |")
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
