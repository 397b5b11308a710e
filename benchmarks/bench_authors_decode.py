"""Decoding speed of the state-centric authors' released decoder beside planarena's, one model.

Paper: Gupta, Pallagani, Aydin, Srivastava, "On Sample-Efficient Generalized Planning via Learned
Transition Models" (docs/papers/state-centric.md). The authors' beam decoder is
``solve_problem`` of ``code/modeling/inference_xgb.py`` (WL helpers in ``code/common/``) in their
repository. Their code is not a dependency of planarena and is not shipped with it: get it with ::

    git clone https://github.com/ai4society/state-centric-gen-planning /path/to/authors
    git -C /path/to/authors log -1      # the commit that is measured (also printed and saved)

Measured at commit 03a61f587ea5a2745192225a1d0be19ca045a774 (2026-03-19, "ICAPS official
results"). Their import chain also needs ``pyperplan`` (ground-truth successors), ``scipy``,
``torch`` and ``tqdm``: ``pip install pyperplan`` in planarena's environment adds the one that is
missing (pyperplan 2.1, pure Python).

What is timed, per round (``--rounds N``, default 5, alternated: authors, planarena, [stage],
authors, planarena, ...; medians are reported):

* ``authors``: their ``solve_problem`` on each problem of the split in turn (one problem at a
  time, as their ``run_inference`` does), unmodified, fed planarena's trained model and WL feature
  generator through a thin adapter (below);
* ``planarena``: :func:`planarena.search.decoding.decode_lockstep` over the whole split in one
  lockstep batch and one process (the coverage protocol deals a split to ``jobs`` processes in
  batches of ``evaluation.lockstep_batch``), with the workspace's model and encoders as
  ``benchmarks/bench_decode.py`` prepares them (a fresh state-embedding cache each round);
* ``stage`` (``--stage``): ``planarena stage evaluate <method>`` end to end, a subprocess, in a
  scratch copy of the workspace whose results file is removed first and whose method block gets
  the same ``decode`` settings and ``splits: [--split]``: the same problems as the two rows above,
  with everything a user waits for around the decoding (start-up, imports, loading the model and
  encoders, validating every plan, writing records).

Threads: one per process by default (``--threads``), as planarena's CLI pins them; the authors'
loop makes one model call per beam and one wlplan call per candidate, and OpenMP pools of 2 threads
on a busy 2-core machine made it 25-35x slower in our runs (planarena's decoder 5-14x).

Models, problems and encoders are loaded before timing: planarena's by ``bench_decode._prepare``;
the authors' per-problem pyperplan parsing and grounding and wlplan problem parsing are done once
before the rounds and then served from a cache by wrapping their module's ``Parser``, ``ground``
and ``parse_problem`` (their one-time cost is reported as ``authors_parse_s``, not in the total).

Adapter (both decoders rank successors with the same model and features):

* WL features: the workspace's ``embeddings/wl/<domain>/feature_generator.json`` (wlplan's own
  format, the file planarena's ``WLEmbedder`` loads) is loaded with wlplan's
  ``load_feature_generator``, as their ``run_inference`` loads theirs; the wlplan domain and
  predicate map are built by their own code path (``wlplan.planning.parse_domain``). Before timing,
  the initial state and goal of every problem are embedded both ways and must be equal.
* Model: their loop calls ``model.predict([phi(s), phi(g)])`` (an ``XGBRegressor``) and adds
  ``phi(s)`` in delta mode. The adapter's ``predict`` calls planarena's
  ``TransitionModel.step(phi(s), phi(g))`` (the trained booster, its constant columns put back) and
  returns ``v - phi(s)`` in float64, so that their ``phi(s) + pred`` is exactly planarena's target
  ``v`` (checked before timing).

Decoding settings. The paper's Algorithm 1: beam 3, horizon 100, beams ranked by this step's
distance. The authors' released loop differs and is not configurable: horizon
``max(--horizon, 10 x objects)`` (``max_steps`` default 100; 100-170 on the SATr Blocksworld
extrapolation split) and beams ranked by *cumulative* distance along the path (Euclidean in delta
mode). So that the two search the same way, planarena runs with
``DecodeSettings(beam_width=3, horizon=100, horizon_per_object=10, beam_score="cumulative",
metric="euclidean")``. What still differs by construction (the script names the problems whose plans
differ, and from which step):
their beam may hold one state twice (reached from two beams; planarena keeps it once, from the
better); ties in score are broken by ``str(plan)`` there and by (beam rank, action name) here; if
their *first* beam has no unvisited successor their step ends (``break``) and the beam never changes
again (planarena drops that beam and goes on); they test the goal only at the top of a step, so a
goal reached at the last step of the horizon is not reported as solved (planarena tests it);
distances are computed by scipy in float64 there and by numpy in float32 here. On the SATr
Blocksworld extrapolation split (the seed-13 WL-XGB delta model) every difference between the two
decoders' plans came from the first of these: an instrumented copy of their loop that keeps a state
once reproduces planarena's 20 outcomes and plans (their duplicates fill two of the three beam slots
from step 3-7 on in probBLOCKS-14-1, -16-1 and -17-0), while planarena's tie-break or float32
distances in their loop change none of their plans. Their ``break`` stalls probBLOCKS-10-1, -11-0
and -13-0 (unsolved by both decoders; without it their loop would solve probBLOCKS-11-0).

Per decoder it prints the total decode seconds (median over rounds), decoding steps (summed over
problems; the authors': plan length if their search reports the goal, else their horizon), ms per
step, solved (the decoder's own claim) and validated (:func:`planarena.core.validation.validate_plan`
on the returned plan; for the authors' unsolved problems that is their best beam's partial plan, as
their script hands it to VAL), and per problem whether the two plans are identical. ``--json FILE``
writes the rows, the per-problem table and the settings.

Example::

    python benchmarks/bench_authors_decode.py --authors /path/to/authors --workspace /path/to/satr-ws \\
        --rounds 5 --stage --json rows.json
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")
AUTHORS_REPO = "https://github.com/ai4society/state-centric-gen-planning"
AUTHORS_FILES = ("code/modeling/inference_xgb.py", "code/common/wl_wrapper.py", "code/common/utils.py")


class UsageError(SystemExit):
    """A one-line error for the user (exit status 2)."""

    def __init__(self, message: str):
        print(f"bench_authors_decode: error: {message}", file=sys.stderr)
        super().__init__(2)


def authors_checkout(path: Path) -> str:
    """Check that ``path`` is a checkout of the authors' repository; returns its commit line
    (``git log -1``), or a note when it is not a git work tree."""
    missing = [f for f in AUTHORS_FILES if not (path / f).is_file()]
    if not path.is_dir() or missing:
        raise UsageError(f"--authors {path}: not a checkout of {AUTHORS_REPO} "
                         f"(no {missing[0] if path.is_dir() else 'such folder'}); get it with "
                         f"`git clone {AUTHORS_REPO}`")
    try:
        out = subprocess.run(["git", "-C", str(path), "log", "-1", "--format=%H %cd %s", "--date=short"],
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown (not a git checkout)"


def import_authors(path: Path):
    """The authors' ``code.modeling.inference_xgb`` module. Their package is named ``code``, like
    the standard library's module: their checkout goes first on ``sys.path`` and a ``code`` module
    imported before (the standard library's) is set aside."""
    sys.path.insert(0, str(path))
    old = sys.modules.get("code")
    if old is not None and not str(getattr(old, "__file__", "")).startswith(str(path)):
        del sys.modules["code"]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            import code.modeling.inference_xgb as ax  # noqa: PLC0415 - the authors' module
    except ImportError as exc:
        raise UsageError(f"--authors {path}: cannot import code/modeling/inference_xgb.py: {exc} "
                         f"(their code needs pyperplan, scipy, torch, tqdm, wlplan, xgboost: `pip install {exc.name}`?)")
    if not str(Path(ax.__file__).resolve()).startswith(str(path.resolve())):
        raise UsageError(f"--authors {path}: imported {ax.__file__} instead of the checkout's module")
    return ax


class AuthorsModel:
    """What their loop calls: ``predict(x)`` with ``x = [phi(s), phi(g)]`` ``(1, 2D)`` float32;
    delta mode adds ``phi(s)`` to the result. Wraps planarena's trained transition model: returns
    ``v - phi(s)`` in float64 (exact), so their target ``phi(s) + pred`` equals ``v``."""

    def __init__(self, model, dim: int):
        self.model, self.dim, self.calls = model, dim, 0

    def predict(self, x):
        import numpy as np

        self.calls += 1
        x = np.asarray(x, dtype=np.float32)
        phi_s = x[:, : self.dim]
        v, _ = self.model.step(phi_s, x[:, self.dim:], None)
        return v.astype(np.float64) - phi_s.astype(np.float64)


class ParseCache:
    """Serves their module's ``Parser``, ``ground`` and ``parse_problem`` from a cache, so that
    their per-problem parsing and grounding (done once before the rounds) is not timed; planarena's
    problems are parsed before timing too. ``seconds`` is the one-time cost."""

    def __init__(self, ax):
        self.ax, self.seconds = ax, 0.0
        self.real = (ax.Parser, ax.ground, ax.parse_problem)
        self.parsed: dict = {}
        self.grounded: dict = {}
        self.wl: dict = {}
        cache = self

        class CachedParser:
            def __init__(self, domain_path, prob_path):
                self.key = (domain_path, prob_path)

            def parse_domain(self):
                return cache._parse(self.key)[0]

            def parse_problem(self, dom):
                return cache._parse(self.key)[1]

        def ground(prob):
            hit = cache.grounded.get(id(prob))
            if hit is None:
                t = time.perf_counter()
                hit = cache.grounded[id(prob)] = (prob, cache.real[1](prob))
                cache.seconds += time.perf_counter() - t
            return hit[1]

        def parse_problem(domain_path, prob_path):
            key = (domain_path, prob_path)
            if key not in cache.wl:
                t = time.perf_counter()
                cache.wl[key] = cache.real[2](domain_path, prob_path)
                cache.seconds += time.perf_counter() - t
            return cache.wl[key]

        ax.Parser, ax.ground, ax.parse_problem = CachedParser, ground, parse_problem

    def _parse(self, key):
        if key not in self.parsed:
            t = time.perf_counter()
            parser = self.real[0](*key)
            dom = parser.parse_domain()
            self.parsed[key] = (dom, parser.parse_problem(dom))
            self.seconds += time.perf_counter() - t
        return self.parsed[key]

    def objects(self, domain_path, prob_path) -> int:
        """Their object count (problem objects + domain constants), which sets their horizon."""
        dom, prob = self._parse((domain_path, prob_path))
        return len(prob.objects) + len(dom.constants)


def _setup(args):
    """Load everything before timing: planarena's method, model, problems and encoders
    (``bench_decode._prepare``), the authors' module, adapter and caches. Returns a namespace."""
    from types import SimpleNamespace

    import numpy as np

    sys.path.insert(0, str(HERE))
    from bench_decode import _prepare

    from planarena.search.decoding import DecodeSettings

    commit = authors_checkout(args.authors)
    ax = import_authors(args.authors.resolve())
    workspace = args.workspace.resolve()
    if not (workspace / "params.yaml").is_file():
        raise UsageError(f"--workspace {workspace}: no params.yaml (a planarena workspace with a trained {args.method})")
    t = time.perf_counter()
    p = _prepare(workspace, args.method, args.domain, args.split, args.limit)  # chdir(workspace)
    prepare_s = time.perf_counter() - t
    if p.method.mode != "delta" or getattr(p.method, "encoding", "wl") != "wl":
        raise UsageError(f"{args.method}: the authors' XGBoost loop is compared on WL delta models only")
    domain_file = str(workspace / "data" / "problems" / args.domain / "domain.pddl")
    files = [str(p.method.ps.problem_file(e)) for e in p.entries]
    fg_file = workspace / "data" / "embeddings" / "wl" / args.domain / "feature_generator.json"
    fg = ax.load_feature_generator(str(fg_file), quiet=True) if "quiet" in _params(ax.load_feature_generator) \
        else ax.load_feature_generator(str(fg_file))
    wl_domain = ax.parse_domain(domain_file)  # as their run_inference builds it
    pred_map = {pr.name: pr for pr in wl_domain.predicates}
    dim = int(p.model.dim)
    model = AuthorsModel(p.model, dim)
    cache = ParseCache(ax)
    settings = DecodeSettings(beam_width=args.beam, horizon=args.horizon, horizon_per_object=10,
                              beam_score="cumulative", metric="euclidean", revisit=False)

    # the same features and targets both ways, and the same horizon (checked before timing)
    checks = {"phi_max_abs_diff": 0.0, "target_max_abs_diff": 0.0, "horizons_equal": True}
    for k, (f, enc, todo) in enumerate(zip(files, p.encoders, p.todo)):
        task = ax.ground(ax.Parser(domain_file, f).parse_problem(None))
        wl_prob = ax.parse_problem(domain_file, f)
        init_a = ax.embed_state_wl(task.initial_state, fg, wl_domain, wl_prob, pred_map)
        init_p = enc.states([sorted(task.initial_state)])
        goal_ds = ax.DomainDataset(wl_domain, [ax.ProblemDataset(wl_prob, [ax.State(list(wl_prob.positive_goals))])])
        goal_a = np.asarray(fg.embed(goal_ds)[0], dtype=np.float32)
        checks["phi_max_abs_diff"] = max(checks["phi_max_abs_diff"], float(np.abs(init_a - init_p).max()),
                                         float(np.abs(goal_a - enc.goal()).max()))
        v, _ = p.model.step(init_p, enc.goal()[None, :], None)
        theirs = init_a + model.predict(np.hstack([init_a, goal_a[None, :]]))
        checks["target_max_abs_diff"] = max(checks["target_max_abs_diff"], float(np.abs(theirs - v).max()))
        n = cache.objects(domain_file, f)
        horizon = max(args.horizon, 10 * n)
        checks["horizons_equal"] &= horizon == settings.horizon_for(todo.n_objects)
    model.calls = 0
    if checks["phi_max_abs_diff"] or checks["target_max_abs_diff"] or not checks["horizons_equal"]:
        print(f"WARNING: the two decoders do not see the same features/targets/horizons: {checks}", flush=True)
    return SimpleNamespace(ax=ax, commit=commit, p=p, workspace=workspace, domain_file=domain_file, files=files,
                           fg=fg, wl_domain=wl_domain, pred_map=pred_map, model=model, cache=cache,
                           settings=settings, checks=checks, prepare_s=prepare_s)


def _params(fn) -> set:
    import inspect

    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return set()


def run_authors(s, args) -> dict:
    """One round of their loop over the split, one problem at a time."""
    out = []
    calls0 = s.model.calls
    start = time.perf_counter()
    for e, f in zip(s.p.entries, s.files):
        with contextlib.redirect_stdout(io.StringIO()):
            res = s.ax.solve_problem(
                prob_file=os.path.basename(f), domain_path=s.domain_file, prob_path=f, model=s.model,
                max_steps=args.horizon, delta=True, encoding_type="wl", feature_encoder=s.fg,
                wl_domain=s.wl_domain, pred_map=s.pred_map, beam_width=args.beam)
        out.append(res)
    total = time.perf_counter() - start
    rows = []
    for e, f, res in zip(s.p.entries, s.files, out):
        horizon = max(args.horizon, 10 * s.cache.objects(s.domain_file, f))
        solved = bool(res["search_solved"])
        rows.append({"problem": e.problem, "solved": solved, "plan": list(res["plan"]),
                     "steps": len(res["plan"]) if solved else horizon, "horizon": horizon})
    return {"total_s": total, "problems": rows, "model_calls": s.model.calls - calls0}


def run_planarena(s, args) -> dict:
    """One round of planarena's lockstep decoder over the split (a fresh embedding cache)."""
    from planarena.search.decoding import TransitionScorer, decode_lockstep

    p = s.p
    start = time.perf_counter()
    scorer = TransitionScorer(p.model, p.enc.split(p.encoders, p.problems), "euclidean")
    results = decode_lockstep(p.todo, scorer, s.settings)
    total = time.perf_counter() - start
    rows = [{"problem": e.problem, "solved": r.outcome == "solved", "plan": list(r.plan or []), "steps": int(r.steps),
             "horizon": s.settings.horizon_for(t.n_objects), "outcome": r.outcome, "reason": r.reason}
            for e, r, t in zip(p.entries, results, p.todo)]
    return {"total_s": total, "problems": rows}


def stage_workspace(s, args) -> Path:
    """A scratch copy of the workspace for ``planarena stage evaluate``: the method's results file
    removed before each run, its ``decode`` block set to the bench's settings and its ``splits`` to
    ``--split`` (so that the stage attempts the problems of the two decoder rows and nothing else)."""
    import yaml

    dest = Path(tempfile.mkdtemp(prefix="bench-authors-stage-")) / "ws"
    shutil.copytree(s.workspace, dest, symlinks=True)
    params = yaml.safe_load((dest / "params.yaml").read_text())
    block = params.setdefault("methods", {}).setdefault(args.method, {})
    block["decode"] = {"beam_width": args.beam, "horizon": args.horizon, "horizon_per_object": 10,
                       "beam_score": "cumulative", "metric": "euclidean"}
    block["splits"] = [args.split]  # the same problems as the two decoder rows, nothing else
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return dest


def run_stage(ws: Path, args, src: Path | None = None) -> dict:
    """``planarena stage evaluate`` in ``ws``, timed; ``src``: another planarena's ``src`` folder
    (``--baseline-src``) put first on ``PYTHONPATH``."""
    results = ws / "data" / "results" / f"{args.method}.jsonl"
    results.unlink(missing_ok=True)
    exe = Path(sys.executable).parent / "planarena"
    cmd = [str(exe)] if exe.exists() and src is None else [sys.executable, "-c", "from planarena.cli import main; main()"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))) \
        if src is not None else None
    start = time.perf_counter()
    proc = subprocess.run(cmd + ["stage", "evaluate", args.method], cwd=ws, capture_output=True, text=True, env=env)
    total = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"planarena stage evaluate {args.method} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    recs = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    plan_recs = [r for r in recs if (r.get("extra") or {}).get("task", "plan") == "plan"]
    mine = {r["problem"]: r for r in plan_recs if r["domain"] == args.domain and r["split"] == args.split}
    validator = sorted({r.get("validated_by") for r in plan_recs if r.get("validated_by")})
    rows = [{"problem": name, "solved": r["outcome"] == "solved", "plan": list(r.get("plan") or []),
             "steps": int((r.get("extra") or {}).get("steps", 0)), "validated": bool(r.get("validated"))}
            for name, r in sorted(mine.items())]
    return {"total_s": total, "problems": rows, "plan_records": len(plan_recs), "records": len(recs),
            "validated_by": validator}


def _versions() -> dict:
    from importlib import metadata

    out = {}
    for name in ("xgboost", "wlplan", "pyperplan", "numpy", "scipy", "pymimir"):
        for dist in (name, f"{name}-cpu"):  # xgboost ships as xgboost-cpu too
            try:
                out[name] = metadata.version(dist)
                break
            except metadata.PackageNotFoundError:
                out[name] = None
    return out


def _planarena_source() -> str:
    """Where planarena was imported from, and its commit when that is a git checkout (``+`` when
    its ``src/`` has uncommitted changes): the version of the decoder that was timed."""
    import planarena

    src = Path(planarena.__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "-C", str(src), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=30)
        dirty = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=30)
        if head.returncode == 0:
            return f"{src} at {head.stdout.strip()}{'+' if dirty.stdout.strip() else ''}"
    except (OSError, subprocess.SubprocessError):
        pass
    return f"{src} (not a git checkout)"


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _median_round(rounds: list[dict]) -> dict:
    order = sorted(range(len(rounds)), key=lambda i: rounds[i]["total_s"])
    return rounds[order[len(order) // 2]]


def _first_difference(a: list[str], b: list[str]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i + 1
    return None if len(a) == len(b) else min(len(a), len(b)) + 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=f"Get the authors' code with: git clone {AUTHORS_REPO}")
    ap.add_argument("--authors", type=Path, required=True, help="a checkout of " + AUTHORS_REPO)
    ap.add_argument("--workspace", type=Path, required=True,
                    help="a planarena workspace with a trained WL-XGB delta method (params.yaml, data/)")
    ap.add_argument("--method", default="wl_xgb_delta")
    ap.add_argument("--domain", default="blocksworld")
    ap.add_argument("--split", default="extrapolation")
    ap.add_argument("--limit", type=int, default=None, help="first N problems of the split")
    ap.add_argument("--rounds", type=int, default=5, help="alternated rounds; medians are reported")
    ap.add_argument("--beam", type=int, default=3)
    ap.add_argument("--horizon", type=int, default=100, help="their max_steps (their horizon is max(this, 10 x objects))")
    ap.add_argument("--stage", action="store_true",
                    help="a third row: `planarena stage evaluate METHOD` end to end in a scratch copy of the workspace")
    ap.add_argument("--baseline-src", type=Path, default=None,
                    help="with --stage: a fourth row, the stage run by another planarena (its `src` folder, e.g. "
                         "`git archive <commit> src | tar -x -C DIR`, then DIR/src); plans are compared with --stage's")
    ap.add_argument("--threads", type=int, default=None,
                    help="OMP/MKL/OpenBLAS threads of this process and the stage (default: 1 unless the variables "
                         "are set, as planarena's CLI pins them)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--label", default=None, help="a note saved with the results, e.g. which planarena version ran")
    args = ap.parse_args(argv)
    for var in THREAD_VARS:  # before numpy/xgboost load (as planarena.runner.entry.pin_threads)
        if args.threads:
            os.environ[var] = str(args.threads)
        else:
            os.environ.setdefault(var, "1")
    args.authors = args.authors.expanduser().resolve()
    authors_checkout(args.authors)  # a clear error before loading anything
    if args.json is not None:
        args.json = args.json.resolve()  # _prepare changes the working directory

    s = _setup(args)
    from planarena.core.validation import validate_plan

    print(f"authors' code: {args.authors} at {s.commit}", flush=True)
    source = _planarena_source()
    print(f"planarena: {source}" + (f" ({args.label})" if args.label else ""), flush=True)
    print(f"workspace: {s.workspace}; {args.method} {args.domain} {args.split}: {len(s.files)} problems; "
          f"planarena prepared in {s.prepare_s:.1f} s; settings {s.settings}; threads "
          f"{os.environ.get('OMP_NUM_THREADS', 'inherited')}; checks {s.checks}", flush=True)
    # their per-problem parsing and grounding, once (served from the cache in the rounds)
    print(f"authors' parsing and grounding (once, not timed): {s.cache.seconds:.2f} s", flush=True)
    load_before = _loadavg()
    ws = stage_workspace(s, args) if args.stage else None
    base = args.baseline_src.resolve() if (ws and args.baseline_src) else None
    rounds: dict[str, list[dict]] = {"authors": [], "planarena": [], **({"stage": []} if ws else {}),
                                     **({"stage_baseline": []} if base else {})}
    try:
        for k in range(max(1, args.rounds)):
            for name in rounds:
                r = (run_authors(s, args) if name == "authors" else run_planarena(s, args) if name == "planarena"
                     else run_stage(ws, args, base if name == "stage_baseline" else None))
                rounds[name].append(r)
                print(f"round {k + 1}: {name:9s} {r['total_s']:8.2f} s", flush=True)
    finally:
        if ws is not None:
            shutil.rmtree(ws.parent, ignore_errors=True)

    load_after = _loadavg()
    print(f"load average (1 min) before/after the rounds: {load_before} / {load_after} on {os.cpu_count()} CPUs",
          flush=True)
    rows, per = [], {}
    for name, rs in rounds.items():
        med = _median_round(rs)
        deterministic = all([x["plan"] for x in r["problems"]] == [x["plan"] for x in rs[0]["problems"]] for r in rs)
        for x in med["problems"]:
            if "validated" not in x:
                x["validated"] = bool(x["plan"]) and validate_plan(s.domain_file, s.p.method.ps.problem_file(
                    next(e for e in s.p.entries if e.problem == x["problem"])), x["plan"]).valid
            per.setdefault(x["problem"], {})[name] = x
        steps = sum(x["steps"] for x in med["problems"])
        rows.append({
            "decoder": name, "method": args.method, "domain": args.domain, "split": args.split,
            "problems": len(med["problems"]), "solved": sum(x["solved"] for x in med["problems"]),
            "validated": sum(x["validated"] for x in med["problems"]), "steps": steps,
            "total_s": round(med["total_s"], 3), "ms_per_step": round(1000 * med["total_s"] / max(1, steps), 4),
            "rounds_total_s": [round(r["total_s"], 3) for r in rs], "plans_same_every_round": deterministic,
            **({"model_calls": med["model_calls"]} if "model_calls" in med else {}),
            **({"plan_records": med["plan_records"], "records": med["records"], "validated_by": med["validated_by"],
                "note": "end to end: process start, imports, model and encoder loading, the split in lockstep "
                        "batches (in the stage process or on `jobs` workers), validation, records; ms_per_step is "
                        "the total over the decoding steps"
                        + (f"; planarena from {base}" if name == "stage_baseline" else "")}
               if name.startswith("stage") else {}),
        })
    problems = []
    for name in (e.problem for e in s.p.entries):
        a, b = per[name]["authors"], per[name]["planarena"]
        same = a["solved"] == b["solved"] and (a["plan"] == b["plan"] if a["solved"] else True)
        first = _first_difference(a["plan"], b["plan"]) if a["solved"] and b["solved"] and not same else None
        row = {"problem": name, "horizon": b["horizon"],
               "authors": {"solved": a["solved"], "validated": a["validated"], "plan_length": len(a["plan"])},
               "planarena": {"solved": b["solved"], "validated": b["validated"], "plan_length": len(b["plan"]),
                             "outcome": b["outcome"], "reason": b["reason"]},
               "identical": same, "first_different_step": first}
        if "stage" in per[name]:
            c = per[name]["stage"]
            row["stage"] = {"solved": c["solved"], "validated": c["validated"], "plan_length": len(c["plan"]),
                            "identical_to_planarena": c["solved"] == b["solved"] and c["plan"] == b["plan"]}
        if "stage_baseline" in per[name]:
            c, d = per[name]["stage"], per[name]["stage_baseline"]
            row["stage_baseline"] = {"solved": d["solved"], "validated": d["validated"], "plan_length": len(d["plan"]),
                                     "identical_to_stage": c["solved"] == d["solved"] and c["plan"] == d["plan"]}
        problems.append(row)
    identical = sum(r["identical"] for r in problems)
    for row in rows:
        row["plans_identical"] = f"{identical}/{len(problems)}"

    print()
    print(f"{'decoder':10s} {'problems':>8s} {'solved':>6s} {'valid':>5s} {'steps':>6s} {'total s':>8s} "
          f"{'ms/step':>8s}  rounds (s)")
    for r in rows:
        per_step = "n/a" if r["ms_per_step"] is None else f"{r['ms_per_step']:.3f}"
        print(f"{r['decoder']:10s} {r['problems']:8d} {r['solved']:6d} {r['validated']:5d} {r['steps']:6d} "
              f"{r['total_s']:8.2f} {per_step:>8s}  {r['rounds_total_s']}"
              + ("" if r["plans_same_every_round"] else "  (plans changed between rounds)"))
        if r["decoder"].startswith("stage"):
            print(f"{'':10s} (`planarena stage evaluate {args.method}`, end to end: {r['plan_records']} plan "
                  f"attempts, start-up and validation included; validated by {', '.join(r['validated_by'])})")
    ratio = {r["decoder"]: r for r in rows}
    for name in ("planarena", "stage", "stage_baseline"):
        if name in ratio:
            a, b = ratio["authors"], ratio[name]
            print(f"authors / {name}: total {a['total_s'] / b['total_s']:.2f}x, per step "
                  f"{a['ms_per_step'] / b['ms_per_step']:.2f}x")
    print(f"plans identical (authors vs planarena, per problem; both unsolved counts as identical): "
          f"{identical}/{len(problems)}")
    for r in problems:
        a, b = r["authors"], r["planarena"]
        tag = ("same" if r["identical"] else f"DIFFER from step {r['first_different_step']}" if r["first_different_step"]
               else "DIFFER: " + ("only the authors solve it" if a["solved"] else "only planarena solves it"))
        extra = ""
        if "stage" in r:
            extra = f"  stage {'solved' if r['stage']['solved'] else 'unsolved'}/{r['stage']['plan_length']}" + (
                " =planarena" if r["stage"]["identical_to_planarena"] else " !=planarena")
        if "stage_baseline" in r:
            extra += " =baseline" if r["stage_baseline"]["identical_to_stage"] else " !=baseline"
        print(f"  {r['problem']:18s} horizon {r['horizon']:3d}  authors {'solved' if a['solved'] else 'unsolved':8s} "
              f"len {a['plan_length']:3d} valid {str(a['validated']):5s}  planarena "
              f"{'solved' if b['solved'] else 'unsolved':8s} len {b['plan_length']:3d} valid {str(b['validated']):5s}"
              f"  {tag}{extra}")
    if args.json:
        meta = {"authors_commit": s.commit, "planarena": source, "label": args.label, "workspace": str(s.workspace), "settings": s.settings.__dict__,
                "authors_max_steps": args.horizon, "authors_horizon": "max(max_steps, 10 x objects)",
                "authors_beam_score": "cumulative", "rounds": args.rounds,
                "threads": os.environ.get("OMP_NUM_THREADS"), "checks": s.checks,
                "authors_parse_s": round(s.cache.seconds, 3), "planarena_prepare_s": round(s.prepare_s, 3),
                "cpus": os.cpu_count(), "loadavg_1min_before_after": [load_before, load_after],
                "python": sys.version.split()[0], "packages": _versions(),
                **({"stage_jobs": int(getattr(s.p.method, "jobs", 0) or 0) or os.cpu_count()} if args.stage else {})}
        args.json.write_text(json.dumps({"meta": meta, "rows": rows, "problems": problems}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
