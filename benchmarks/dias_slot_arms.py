"""DIAS Blocks-3 names-only diagnosis: why every learned action keeps all M = 5 slots active.

At the paper's settings (Appendix A.2.2: 10,000 steps x batch 200, tau 0.1 at step 500, M = 5,
3 R-GCN layers; the resolved params of the claim ``dias-names-only-sound-complete``, committed
beside its page) every Blocks-3 run of that claim was sound but incomplete, with all three actions
5-ary, while the paper's Table 18 learns ``move`` 3-ary at the same O = M = 5. This script trains
the same row under arms that each change one suspect, and records what the claim run did not keep:
the slot activations sigma(w) of eq. 2 per action and slot every 500 steps, the learned domains and
the training facts.

Arms (``--arms``, all by default):

* ``as_now``: the claim's settings unchanged (its seeds 13-17 give its records back: a check);
* ``walk7``: the walk instance has 7 blocks (O > M): spare slots must choose among several leftover
  objects, which the GNN cannot tell apart, so an active spare slot's preconditions are smeared;
* ``raw_keys``: no key LayerNorm (``key_norm: none``) and 1,000 Sinkhorn iterations, the paper's
  architecture as written (it names no normalisation) with the iterations to converge;
* ``pcgrad_element``: eq. 19's projection per coordinate (``pcgrad: element``) instead of on the
  whole gradient vector: an auxiliary component that opposes the main one on a coordinate is
  dropped, whatever the rest of the vector does (Section 4.4: "we optimize L_aux only under the
  condition that L_main is optimized").

Each (arm, seed) runs in its own workspace under ``--work`` (``planarena stage schema_data``, then
``train`` and ``evaluate`` of one row: one workspace lock each, so ``--jobs`` of them run at once);
a finished run is skipped, so a killed invocation resumes. ``--out`` gets ``summary.json``,
``summary.md``, ``slot_activation.png`` (sigma(w) and the losses against the step, per run) and per
run the learned ``domain.pddl``, ``facts.json`` and its ``learn_schema`` record.

Usage::

    python benchmarks/dias_slot_arms.py --work ~/.cache/planarena/dias-arms \
        --out benchmarks/results/dias-slot-arms-2026-11-28 --seeds 13 --jobs 2
    python benchmarks/dias_slot_arms.py ... --summarise-only       # tables from what has finished
                                                                   # (a run still training: its last checkpoint)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BASE_PARAMS = REPO / "reports" / "claims" / "dias-names-only-sound-complete" / "params.yaml"
DOMAIN = "blocks3"

#: arm -> (walk instance blocks, dias overrides of the row block)
ARMS: dict[str, tuple[int, dict]] = {
    "as_now": (5, {}),
    "walk7": (7, {}),
    "raw_keys": (5, {"key_norm": "none", "sinkhorn_iters": 1000}),
    "pcgrad_element": (5, {"pcgrad": "element"}),
}


def row_name(arm: str, seed: int) -> str:
    return f"dias_{arm}_s{seed}"


def write_params(work: Path, arm: str, seed: int, steps: int | None = None) -> None:
    """The claim's resolved params with one row (this arm, this seed), ``jobs: 1`` and the walk size;
    ``steps``: fewer training steps (a check of this script, not a diagnosis)."""
    blocks, overrides = ARMS[arm]
    if steps is not None:
        overrides = {**overrides, "steps": steps, "eval_every": max(1, steps // 2)}
    p = yaml.safe_load(BASE_PARAMS.read_text())
    p["jobs"] = 1
    p["schema"]["domains"] = [DOMAIN]
    p["schema"]["generators"][DOMAIN]["train"] = {"num_blocks": blocks}
    block = {"method": "dias", "observation": "names", "domains": [DOMAIN], "seeds": [seed]}
    if overrides:
        block["overrides"] = overrides
    p["methods"] = {row_name(arm, seed): block}
    (work / "params.yaml").write_text(yaml.safe_dump(p, sort_keys=False))


def run_one(work_root: Path, arm: str, seed: int, steps: int | None = None) -> str:
    """Schema data, train and evaluate of one (arm, seed) in its own workspace; skipped when its
    ``learn_schema`` record exists. Returns a one-line status."""
    work = work_root / f"{arm}-s{seed}"
    row = row_name(arm, seed)
    results = work / "data" / "results" / f"{row}.jsonl"
    if results.exists() and any('"learn_schema"' in line for line in results.read_text().splitlines()):
        return f"{row}: done earlier"
    work.mkdir(parents=True, exist_ok=True)
    write_params(work, arm, seed, steps)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    log = (work / "run.log").open("a")
    t0 = time.time()
    for stage in (["schema_data"], ["train", row], ["evaluate", row]):
        start = time.time()
        proc = subprocess.run([str(Path(sys.executable).parent / "planarena"), "stage", *stage], cwd=work, env=env,
                              stdout=log, stderr=subprocess.STDOUT)
        print(f"[{time.strftime('%H:%M:%S')}] {row}: {' '.join(stage)} rc={proc.returncode} "
              f"{time.time() - start:.0f} s", flush=True)
        if proc.returncode:
            return f"{row}: {stage[0]} failed (rc {proc.returncode}; {work / 'run.log'})"
    return f"{row}: finished in {time.time() - t0:.0f} s"


def collect(work_root: Path, out: Path, arms: list[str], seeds: list[int]) -> list[dict]:
    """Copy each finished run's learned domain, facts and record under ``out`` and return its summary."""
    rows = []
    for arm in arms:
        for seed in seeds:
            work, row = work_root / f"{arm}-s{seed}", row_name(arm, seed)
            unit = work / "data" / "models" / row / DOMAIN / f"seed{seed}"
            res = work / "data" / "results" / f"{row}.jsonl"
            if not (unit / "facts.json").exists():
                partial = checkpoint_row(work, arm, seed, out)
                if partial:
                    rows.append(partial)
                continue
            facts = json.loads((unit / "facts.json").read_text())
            recs = [json.loads(x) for x in res.read_text().splitlines()] if res.exists() else []
            schema = next((r for r in recs if r["extra"].get("task") == "learn_schema"), None)
            dest = out / "runs" / f"{arm}-s{seed}"
            dest.mkdir(parents=True, exist_ok=True)
            for f in ("facts.json", "domain.pddl"):
                if (unit / f).exists():
                    shutil.copy(unit / f, dest / f)
            if schema:
                (dest / "learn_schema.json").write_text(json.dumps(schema, indent=1) + "\n")
            ex = (schema or {}).get("extra", {})
            rows.append(summary_row(arm, seed, facts, f"runs/{arm}-s{seed}/facts.json", ex,
                                    steps_run=facts.get("steps_run"), in_training=False))
    return rows


def summary_row(arm: str, seed: int, facts: dict, facts_file: str, schema_extra: dict, steps_run,
                in_training: bool) -> dict:
    """One run's summary: sigma(w) trace and end (eq. 2) from the facts, precision / recall /
    soundness / completeness from its ``learn_schema`` record's ``extra`` (empty while training)."""
    trace = facts.get("slot_activation") or []
    arities = None if in_training else facts.get("arities")
    # derive() order: the order of sigma(w)'s rows (a run still training has no names yet)
    actions = list(arities or {}) or ([f"action {i + 1}" for i in range(len(trace[-1][1]))] if trace else [])
    return {"arm": arm, "seed": seed, "walk_blocks": ARMS[arm][0], "overrides": ARMS[arm][1],
            "steps_run": steps_run, "in_training": in_training, "diverged": facts.get("diverged"),
            "arities": arities, "final_validation": None if in_training else facts.get("final_validation"),
            "selection_row_mass_min": facts.get("selection_row_mass_min"),
            "slot_activation_final": trace[-1][1] if trace else None, "slot_activation_trace": trace,
            "actions": actions, "precision": schema_extra.get("precision"), "recall": schema_extra.get("recall"),
            "sound": schema_extra.get("sound"), "complete": schema_extra.get("complete"),
            "train_time_s": schema_extra.get("train_time_s"), "facts_file": facts_file}   # relative to --out


def checkpoint_row(work: Path, arm: str, seed: int, out: Path) -> dict | None:
    """The summary row of a run still training (or stopped mid-way): the facts its newest checkpoint
    carries (``data/cache/dias/<key>.units/<domain>/seed<s>.ckpt``, written every 500 steps by
    ``planarena.methods.dias.train``), copied to ``runs/<arm>-s<seed>/facts.partial.json``; no
    arities, precision or recall (the schemas are derived at the end). None without a checkpoint."""
    ckpts = list((work / "data" / "cache" / "dias").glob(f"*.units/{DOMAIN}/seed{seed}.ckpt"))
    if not ckpts:
        return None
    import torch

    state = torch.load(max(ckpts, key=lambda f: f.stat().st_mtime), map_location="cpu", weights_only=False)
    facts = state.get("facts") or {}
    dest = out / "runs" / f"{arm}-s{seed}"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "facts.partial.json").write_text(json.dumps(facts, indent=1, default=str) + "\n")
    return summary_row(arm, seed, facts, f"runs/{arm}-s{seed}/facts.partial.json", {},
                       steps_run=state.get("step"), in_training=True)


def render(rows: list[dict]) -> str:
    lines = ["# DIAS Blocks-3 names-only slot arms", "",
             "Generated by `benchmarks/dias_slot_arms.py` from the runs under `runs/` (learned domains, "
             "facts with sigma(w) every 500 steps, `learn_schema` records). Paper settings otherwise "
             "(the claim `dias-names-only-sound-complete`'s resolved params).", "",
             "| arm | seed | walk blocks | arities | sigma(w) at the end (per action: slots 1-5) | "
             "precision | recall | sound & complete | row mass min | train s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        act = r["slot_activation_final"] or []
        sig = "; ".join(" ".join(f"{x:.2f}" for x in slots) for slots in act)
        ar = ", ".join(f"{k} {v}" for k, v in (r["arities"] or {}).items())
        if r.get("in_training"):
            ar = f"still training: step {r['steps_run']} of the checkpoint"
        sc = None if r["sound"] is None else bool(r["sound"] and r["complete"])
        f = lambda v, d=4: "-" if v is None else (f"{v:.{d}f}" if isinstance(v, float) else str(v))  # noqa: E731
        lines.append(f"| {r['arm']} | {r['seed']} | {r['walk_blocks']} | {ar} | {sig} | {f(r['precision'])} | "
                     f"{f(r['recall'])} | {f(sc)} | {f(r['selection_row_mass_min'], 3)} | {f(r['train_time_s'], 0)} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path) -> Path:
    """One row of panels per run: sigma(w) of every (action, slot) against the step (eq. 14's 1/2
    dashed), and the training L_main and L_aux against the step (log scale). Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 3.2 * max(1, len(rows))), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(max(1, len(rows)), 2, squeeze=False)
    for (a1, a2), r in zip(axes, rows):
        trace = r["slot_activation_trace"]
        steps = [t for t, _ in trace]
        for ai, name in enumerate(r["actions"] or []):
            for k in range(len(trace[0][1][ai]) if trace else 0):
                a1.plot(steps, [act[ai][k] for _, act in trace], lw=1.0, marker=".", ms=3, color=f"C{ai}",
                        label=f"{name}" if k == 0 else None)
        a1.axhline(0.5, color="black", ls="--", lw=0.8)
        a1.set_title(f"{r['arm']}, seed {r['seed']}: sigma(w) per action and slot"
                     + (f" (training, step {r['steps_run']})" if r.get("in_training") else ""), fontsize=9)
        a1.set_ylim(-0.02, 1.02)
        a1.legend(fontsize=7)
        facts = json.loads((path.parent / r["facts_file"]).read_text())
        losses = facts.get("train_loss") or []
        a2.plot([x[0] for x in losses], [x[1] for x in losses], marker=".", ms=3, label="L_main (train batch)")
        a2.plot([x[0] for x in losses], [x[2] for x in losses], marker=".", ms=3, label="L_aux (train batch)")
        a2.set_yscale("log")
        a2.set_title("losses (eq. 13)", fontsize=9)
        a2.legend(fontsize=7)
        for ax in (a1, a2):
            ax.set_xlabel("step", fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=90, metadata={"Software": None})
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path.home() / ".cache" / "planarena" / "dias-arms")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[13])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--summarise-only", action="store_true")
    ap.add_argument("--steps", type=int, default=None, help="fewer training steps: to check this script only")
    a = ap.parse_args(argv)
    if not a.summarise_only:
        units = [(arm, s) for s in a.seeds for arm in a.arms]     # seed-major: every arm gets its first seed first
        with ThreadPoolExecutor(a.jobs) as pool:
            for status in pool.map(lambda u: run_one(a.work, *u, a.steps), units):
                print(status, flush=True)
    rows = collect(a.work, a.out, a.arms, a.seeds)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    (a.out / "summary.md").write_text(render(rows) + "\n![sigma(w) and losses per run](slot_activation.png)\n")
    if rows:
        plot(rows, a.out / "slot_activation.png")
    print(render(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
