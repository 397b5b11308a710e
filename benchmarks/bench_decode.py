"""Beam-decoding speed of the state-centric transition models: lockstep vs one problem at a time.

Decodes every problem of a split with trained models of a planarena workspace (models loaded and
problems parsed before timing) in two ways through the one decoder,
:func:`planarena.search.decoding.decode_lockstep`:

* ``single``: one problem at a time (a batch of one: the pre-lockstep cost structure);
* ``lockstep``: every problem of the split advances together (one embedding call and one model
  call per step for all beams of all problems); ``--jobs N`` deals the split round-robin into N
  shards decoded in N forked processes, as the coverage protocol does with ``jobs``;
* ``decode``: the one-problem API :func:`planarena.search.decoding.decode`, which exists before and
  after lockstep decoding: ``PYTHONPATH=<checkout of 63421e0>/src`` times the pre-lockstep decoder.

Per (method, domain, mode, threads) it prints the total decode time, the number of decoding steps
(summed over problems), the time per step, the split of that time (pymimir successor generation,
embedding, model call, selection and bookkeeping) and whether the plans of the two ways are
identical. ``--json FILE`` writes the rows. Thread counts run in fresh processes (the thread
variables must be set before numpy/torch/xgboost load).

Workspace: any planarena workspace with trained ``state_centric`` methods and WL embeddings, e.g.
the SATr workspace of ``benchmarks/satr_wl_xgb_delta.sh`` (Blocksworld and VisitAll, Table 6
models, paper decoding: beam 3, horizon 100).

Example::

    python benchmarks/bench_decode.py --workspace /tmp/satr-ws --methods wl_xgb_delta wl_lstm_delta \\
        --domains blocksworld visitall --split extrapolation --threads 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


class _Timed:
    """Wraps an object and adds the wall time of the named methods to ``sink[key]``."""

    def __init__(self, inner, sink: dict, names: dict[str, str]):
        self._inner, self._sink, self._names = inner, sink, names

    def __getattr__(self, name):
        attr = getattr(self._inner, name)
        key = self._names.get(name)
        if key is None:
            return attr

        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self._sink[key] = self._sink.get(key, 0.0) + time.perf_counter() - t

        return timed


def _prepare(workspace: Path, method_name: str, domain: str, split: str, limit: int | None):
    """Everything one decode of ``split`` needs, loaded and warmed up (models loaded, problems
    parsed, goals embedded, one short decode run), as a namespace. Called once per process: in the
    bench's child and on each executor worker of ``--jobs N`` (wlplan and pymimir objects do not
    pickle, so a worker builds its own)."""
    from types import SimpleNamespace

    from planarena.config import Layout, get, load_params
    from planarena.core.pddl import goal_atoms, load_problem
    from planarena.core.problemset import ProblemSet
    from planarena.runner.stages import build_method
    try:
        from planarena.search.decoding import DecodeProblem, TransitionScorer, decode_lockstep
    except ImportError:  # a checkout from before lockstep decoding: only mode "decode" runs
        DecodeProblem = TransitionScorer = decode_lockstep = None

    os.chdir(workspace)
    params = load_params("params.yaml")
    layout = Layout(root=Path("data"))
    method = build_method(method_name, params, layout)
    method.load(layout.models / method_name)
    seed = int(get(params, "evaluation.seeds")[0])
    model = method._model(domain, seed)
    if not hasattr(model, "step"):
        raise SystemExit(f"{workspace}: no trained {method_name} model for {domain}: {model}")
    ps = ProblemSet(layout.problems)
    entries = ps.select(domain=domain, split=split)[:limit]
    problems = [load_problem(str(ps.domain_file(domain)), str(ps.problem_file(e))) for e in entries]
    enc = method.encoder(domain)
    encoders = [enc.for_problem(ps.problem_file(e), goal_atoms(p)) for e, p in zip(entries, problems)]
    for e in encoders:  # goals embedded (and cached) before timing, like the coverage protocol does
        e.goal()
    settings = method.decode_settings
    metric = settings.resolved_metric(method.mode)
    todo = split_enc = None
    if DecodeProblem is not None:
        todo = [DecodeProblem(p, e.objects) for e, p in zip(entries, problems)]
        split_enc = enc.split(encoders, problems)
        # warm-up: one short decode of the first problem (imports, lazy grounding of its first states)
        decode_lockstep(todo[:1], TransitionScorer(model, split_enc, metric),
                        type(settings)(**{**settings.__dict__, "horizon": 2}))
    return SimpleNamespace(method=method, model=model, entries=entries, problems=problems, enc=enc,
                           encoders=encoders, settings=settings, metric=metric, todo=todo, split_enc=split_enc)


class _Shard:
    """``--jobs N`` lockstep: shard ``k`` (problems k, k+N, ...) of the split, decoded on an executor
    worker as the coverage protocol deals a split to ``jobs`` processes. Picklable: it carries only
    where to load from, and each worker prepares once (:func:`_prepare`). Returns ``(indices,
    results, decode seconds, preparation seconds)``."""

    def __init__(self, workspace: Path, method_name: str, domain: str, split: str, limit: int | None, jobs: int):
        self.spec, self.jobs, self._ready = (workspace, method_name, domain, split, limit), jobs, None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_ready": None}

    def __call__(self, k: int):
        from planarena.search.decoding import TransitionScorer, decode_lockstep

        t = time.perf_counter()
        if self._ready is None:
            self._ready = _prepare(*self.spec)
        prep, p = time.perf_counter() - t, self._ready
        t = time.perf_counter()
        idx = list(range(k, len(p.todo), self.jobs))
        sub = p.enc.split([p.encoders[i] for i in idx], [p.problems[i] for i in idx])
        res = decode_lockstep([p.todo[i] for i in idx], TransitionScorer(p.model, sub, p.metric), p.settings)
        return idx, res, time.perf_counter() - t, prep


def run_one(workspace: Path, method_name: str, domain: str, split: str, mode: str, limit: int | None,
            jobs: int = 1) -> dict:
    """Decode ``split`` of ``domain`` with ``method_name``'s seed-``k`` model; returns one row."""
    p = _prepare(workspace, method_name, domain, split, limit)
    method, model, entries, problems, enc = p.method, p.model, p.entries, p.problems, p.enc
    encoders, settings, metric, split_enc = p.encoders, p.settings, p.metric, p.split_enc
    if mode == "decode":
        from types import SimpleNamespace

        todo = [SimpleNamespace(problem=pr, n_objects=e.objects) for e, pr in zip(entries, problems)]
    else:
        todo = p.todo
    parts: dict = {}
    timed_model = _Timed(model, parts, {"step": "model_s", "select": "model_s", "initial_state": "model_s"})
    timed_enc = _Timed(split_enc, parts, {"states": "embedding_s"}) if mode != "decode" else None
    # wlplan's own share of the embedding (its native calls; the rest is turning pymimir states
    # into wlplan states and rows into the array): the floor that the feature library sets
    impl = getattr(enc, "impl", None)
    if mode == "lockstep" and jobs == 1 and hasattr(impl, "fg"):
        impl.fg = _Timed(impl.fg, parts, {"embed": "wlplan_s", "set_problem": "wlplan_s"})
    stats: dict = {}
    start = time.perf_counter()
    if mode == "lockstep" and jobs > 1:
        # what the coverage protocol does with `jobs` processes: round-robin shards of the split,
        # each decoded in lockstep on its own executor worker (time split not collected). The
        # workers' preparation (loading the model and problems) is not decoding: the total is the
        # wall time of the shards less the longest preparation
        from planarena.core.executor import ExecutorConfig, configure, run_units

        configure(ExecutorConfig(jobs=jobs, min_units=1))  # one shard per worker: a cluster even for 2 units

        results = [None] * len(todo)
        shard_s, prep_s = [], []
        for idx, res, seconds, prep in run_units(_Shard(workspace, method_name, domain, split, limit, jobs),
                                                 list(range(jobs)), jobs=jobs):
            shard_s.append(round(seconds, 3))
            prep_s.append(prep)
            for i, r in zip(idx, res):
                results[i] = r
        stats["shard_s"] = shard_s
        start += max(prep_s)
    elif mode == "decode":
        # the public one-problem API, which exists before and after lockstep decoding: with
        # PYTHONPATH=<checkout of 63421e0>/src this times the pre-lockstep decoder
        from planarena.search.decoding import decode

        results = []
        for k, item in enumerate(todo):
            one = _Timed(encoders[k], parts, {"states": "embedding_s"})
            results.append(decode(item.problem, one, timed_model, method.mode, settings, n_objects=item.n_objects))
    elif mode == "lockstep":
        from planarena.search.decoding import TransitionScorer, decode_lockstep

        results = decode_lockstep(todo, TransitionScorer(timed_model, timed_enc, metric), settings, stats=stats)
    else:
        from planarena.search.decoding import TransitionScorer, decode_lockstep

        results = []
        for k, item in enumerate(todo):
            one = _Timed(enc.split([encoders[k]], [problems[k]]), parts, {"states": "embedding_s"})
            results += decode_lockstep([item], TransitionScorer(timed_model, one, metric), settings, stats=stats)
    total = time.perf_counter() - start
    steps = sum(r.steps for r in results)
    per = 1000.0 / max(1, steps)
    return {
        "method": method_name, "domain": domain, "split": split, "mode": mode,
        "threads": int(os.environ.get("OMP_NUM_THREADS", "0") or 0), "jobs": jobs, "problems": len(todo),
        "solved": sum(r.outcome == "solved" for r in results), "steps": steps,
        "total_s": round(total, 3), "ms_per_step": round(total * per, 4),
        "split_ms_per_step": {
            "successors": round(stats.get("successors_s", 0) * per, 4),
            "embedding": round(parts.get("embedding_s", 0) * per, 4),
            "of_which_wlplan": round(parts.get("wlplan_s", 0) * per, 4),
            "model": round(parts.get("model_s", 0) * per, 4),
            "select_and_bookkeeping": round((total - stats.get("successors_s", 0) - parts.get("embedding_s", 0)
                                             - parts.get("model_s", 0)) * per, 4),
        },
        "shard_s": stats.get("shard_s"),
        "plans": [r.plan for r in results],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--methods", nargs="+", default=["wl_xgb_delta"])
    ap.add_argument("--domains", nargs="+", default=["blocksworld"])
    ap.add_argument("--split", default="extrapolation")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--modes", nargs="+", default=["single", "lockstep"], choices=["single", "lockstep", "decode"])
    ap.add_argument("--limit", type=int, default=None, help="first N problems of the split")
    ap.add_argument("--repeat", type=int, default=1, help="runs per row; the row of the median total is kept")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--plans", type=Path, default=None,
                    help="write the plans of every row here (JSON), e.g. to compare two checkouts")
    ap.add_argument("--jobs", nargs="+", type=int, default=[1],
                    help="processes for lockstep mode (round-robin shards of the split, as the coverage protocol)")
    ap.add_argument("--_child", nargs=5, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._child:
        method, domain, mode, limit, jobs = args._child
        row = run_one(args.workspace.resolve(), method, domain, args.split, mode, int(limit) or None, int(jobs))
        print("ROW " + json.dumps(row))
        return 0
    rows = []
    all_plans: dict[str, list] = {}
    for threads in args.threads:
        env = {**os.environ, **{v: str(threads) for v in THREAD_VARS}}
        for method in args.methods:
            for domain in args.domains:
                plans = {}
                # forked workers of a process whose BLAS/OpenMP pools already run several threads can
                # hang: as in the harness (runner.entry.pin_threads), jobs > 1 runs one thread each
                runs = [(m, j) for m in args.modes for j in (args.jobs if m == "lockstep" else [1])
                        if j == 1 or threads == 1]
                for mode, jobs in runs:
                    reps = []
                    for _ in range(max(1, args.repeat)):
                        out = subprocess.run([sys.executable, __file__, "--workspace", str(args.workspace), "--split",
                                              args.split, "--_child", method, domain, mode, str(args.limit or 0),
                                              str(jobs)],
                                             env=env, capture_output=True, text=True)
                        line = next((ln for ln in out.stdout.splitlines() if ln.startswith("ROW ")), None)
                        if line is None:
                            print(out.stdout[-2000:], out.stderr[-4000:], file=sys.stderr)
                            return 1
                        reps.append(json.loads(line[4:]))
                    reps.sort(key=lambda r: r["total_s"])
                    row = reps[len(reps) // 2]
                    row["repeats_total_s"] = [r["total_s"] for r in reps]
                    plans[(mode, jobs)] = row.pop("plans")
                    all_plans[f"{method} {domain} {mode} threads={threads} jobs={jobs}"] = plans[(mode, jobs)]
                    rows.append(row)
                    sp = row["split_ms_per_step"]
                    print(f"{method:15s} {domain:12s} {mode:8s} threads={threads} jobs={jobs} problems={row['problems']:3d} "
                          f"solved={row['solved']:3d} steps={row['steps']:6d} total={row['total_s']:8.2f} s "
                          f"{row['ms_per_step']:.3f} ms/step (successors {sp['successors']:.3f}, embedding "
                          f"{sp['embedding']:.3f} of which wlplan {sp['of_which_wlplan']:.3f}, model "
                          f"{sp['model']:.3f}, select {sp['select_and_bookkeeping']:.3f})"
                          + (f" shards {row['shard_s']} s" if row.get("shard_s") else ""), flush=True)
                if len(plans) > 1:
                    first = next(iter(plans.values()))
                    same = all(p == first for p in plans.values())
                    print(f"{method:15s} {domain:12s} plans identical ({', '.join(f'{m} jobs={j}' for m, j in plans)}): "
                          f"{same}", flush=True)
                    for row in rows[-len(plans):]:
                        row["plans_identical"] = same
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    if args.plans:
        args.plans.write_text(json.dumps(all_plans, indent=0) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
