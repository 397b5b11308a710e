"""Running a claim: its own DVC workspace, then its verdict page under ``reports/claims/<id>/``.

:func:`planarena.claims.workspace.prepare` makes (or resumes) the workspace, its code pinned for
the whole run. :func:`run` runs ``dvc repro`` there (resumable: DVC skips finished stages and the
evaluate stage keeps the records it has), streaming DVC's output to a log, then :func:`write_page`
computes the verdict from the workspace's records and writes ``verdict.json``, ``claim.md``, the
workspace's ``params.yaml`` and its report (the page itself: :mod:`planarena.claims.page`).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import yaml

from planarena.claims import partial
from planarena.claims.spec import Claim
from planarena.claims.page import page_of, provenance_lines, training_facts, write_verdict
from planarena.claims.verdict import Measurements, Verdict, evaluate
from planarena.claims.workspace import (  # noqa: F401  (REPO, claim_params: this module's API too)
    DEFAULT_WORK,
    PAGES,
    REPO,
    claim_params,
    env,
    external_paths,
    git_head,
    prepare,
)
from planarena.config import ConfigError, Layout
from planarena.core.io import atomic_write_text, read_jsonl
from planarena.core.limits import stop_group
from planarena.core.problemset import ProblemSet
from planarena.core.records import iter_records
from planarena.report.records import instance_index

#: the line the train and evaluate stages print as each row starts (planarena.runner.stages)
ROW_START = re.compile(r"(train|evaluate)@\S+: running \(")


def run(claim: Claim, work: Path, echo=print, fresh_code: bool = False) -> float:
    """Prepare the workspace (its code pinned to the commit its run began with, unless
    ``fresh_code``) and run ``dvc repro`` in it; DVC's output goes to ``work/run.log`` and, a stage
    a line, to ``echo``. Returns the wall seconds of this call (the cost; a resumed run adds up in
    ``work/cost.json``).

    A measurement claim measures in this process with the working tree's code (no DVC stages).

    Raises:
        RuntimeError: ``dvc repro`` failed (the message names the log).
        ConfigError: the claim does not fit the params (names the claim file).
    """
    if claim.is_measure:
        head = git_head()
        from planarena.claims import measure

        start = time.perf_counter()
        params = claim_params(claim, (REPO / "params.yaml").read_text(), check_methods=False)
        work.mkdir(parents=True, exist_ok=True)
        atomic_write_text(work / "params.yaml", yaml.safe_dump(params, sort_keys=False, width=120))
        (work / FINISHED).unlink(missing_ok=True)
        restored = partial.restore(work, PAGES / claim.id)   # rows measured on another machine
        if restored:
            echo(f"[{claim.id}] restored {restored} measurement rows from {PAGES / claim.id / partial.PARTIAL}/")
        measure.run(claim, work, params, echo, code=head)
        _add_cost(work, time.perf_counter() - start, head)
        _mark_finished(work, head)
        return time.perf_counter() - start
    head = prepare(claim, work, fresh_code=fresh_code, carried=partial.commit(PAGES / claim.id), echo=echo)
    (work / FINISHED).unlink(missing_ok=True)
    restored = partial.restore(work, PAGES / claim.id)   # a run begun on another machine resumes here
    if restored:
        echo(f"[{claim.id}] restored {restored} files of finished training from {PAGES / claim.id / partial.PARTIAL}/")
    start = time.perf_counter()
    log = work / "run.log"
    with open(log, "a") as out, _terminated_as_exit():
        # its own process group: stopping this run stops DVC's stage and its workers with it (a
        # stage left running holds the workspace lock and the core)
        proc = subprocess.Popen(["dvc", "repro"], cwd=work, env=env(work), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        inherit_niceness(proc.pid)
        try:
            for line in proc.stdout:
                out.write(line)
                # DVC's stages, and each row of the train and evaluate stages (`train@<row>: running`)
                if line.startswith("Running stage") or ROW_START.match(line):
                    echo(f"[{claim.id}] {line.strip()}")
            rc = proc.wait()
        finally:
            stop_group(proc, grace_s=30.0)
            seconds = time.perf_counter() - start
            _add_cost(work, seconds, head)   # a stopped run's time counts too
    if rc != 0:
        raise RuntimeError(f"claim {claim.id}: dvc repro failed (exit {rc}); see {log}")
    _mark_finished(work, head)
    return seconds


def inherit_niceness(pid: int) -> bool:
    """Give the session that ``pid`` leads this process's nice value. A new session is a new
    autogroup on Linux, and the scheduler shares the CPU between autogroups whatever their
    processes' nice values, so without this `nice -n 10 planarena claims run ...` would compete with
    a `dvc repro` beside it as an equal (measured: a nice-0 encoding got a third of the CPU against
    two nice-10 claim runs). Returns whether the autogroup was set (False: no autogroup here, or
    this process is not niced)."""
    import os

    niceness = os.nice(0)
    group = Path(f"/proc/{pid}/autogroup")
    if niceness <= 0 or not group.exists():
        return False
    try:
        group.write_text(str(niceness))
        return True
    except OSError:
        return False


@contextlib.contextmanager
def _terminated_as_exit():
    """SIGTERM raises SystemExit while the block runs (in the main thread), so that the ``finally``
    that stops the run's process group runs too; the previous handler is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _exit(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


#: Written into a claim's workspace when its run finished (``dvc repro`` exited 0): only such a
#: workspace has the records of a verdict (a killed or partial run's records are not one).
FINISHED = "finished.json"


def _mark_finished(work: Path, head: str) -> None:
    atomic_write_text(work / FINISHED, json.dumps({"commit": head, "at": time.strftime("%Y-%m-%dT%H:%M:%S")}) + "\n")


def finished(work: Path) -> bool:
    """Whether the claim's workspace ``work`` holds a finished run (:data:`FINISHED`)."""
    return (work / FINISHED).exists()


def run_unit(unit: tuple[str, str]) -> dict:
    """One claim of ``planarena claims run --all`` as an executor unit (:mod:`planarena.core.executor`:
    a local cluster's worker, a scheduler's or a Slurm job's): ``unit`` is ``(claim file, workspace)``,
    both paths every worker sees. Runs the claim's ``dvc repro`` in its workspace (resumable:
    finished stages are skipped) and returns ``{"claim", "ok", "wall_s"}`` or ``{"claim", "ok":
    False, "error"}``: a failed run is an outcome, not a crash of the others. The page is written by
    the calling process (:func:`write_page`), never by a worker."""
    from planarena.claims.spec import load_claim

    source, work = unit
    claim = load_claim(Path(source))
    try:
        return {"claim": claim.id, "ok": True, "wall_s": round(run(claim, Path(work), echo=lambda _line: None), 1)}
    except (RuntimeError, OSError, ConfigError) as exc:
        return {"claim": claim.id, "ok": False, "error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}


def _add_cost(work: Path, seconds: float, head: str) -> None:
    """Add one run's wall ``seconds`` to ``work/cost.json`` and record the commit it ran."""
    cost_file = work / "cost.json"
    cost = json.loads(cost_file.read_text()) if cost_file.exists() else {"wall_s": 0.0, "runs": 0}
    machines = sorted(set(cost.get("machines") or []) | {machine()})
    cost = {"wall_s": round(cost["wall_s"] + seconds, 1), "runs": cost["runs"] + 1, "commit": head,
            "machines": machines}
    cost_file.write_text(json.dumps(cost))


def machine() -> str:
    """This machine as a claim's cost names it: ``"<CPU model> (<vector extensions>)"``, e.g.
    ``"AMD EPYC 7B13 (sse4_2 avx avx2 fma (no AVX-512))"``. A run resumed on several machines (its
    partial run carried across, :mod:`planarena.claims.partial`) lists each; floats can differ
    between CPU types (docs/cost.md), so a page says which produced its records."""
    from planarena.report.sections.info import cpu_model, vector_extensions

    return f"{cpu_model()} ({vector_extensions()})"


def _records_and_index(work: Path):
    layout = Layout(root=work / "data")
    files = sorted(Path(layout.results).glob("*.jsonl")) if Path(layout.results).is_dir() else []
    records = list(iter_records(files))
    return records, instance_index(ProblemSet(layout.problems).entries, records)


def measurements_of(work: Path) -> Measurements:
    """The solved matrices of the workspace's records (:class:`Measurements`)."""
    return Measurements(*_records_and_index(work))


def verdict_of(claim: Claim, work: Path, seed: int = 0) -> Verdict:
    """The verdict from the workspace's records (``work/data``)."""
    records, index = _records_and_index(work)
    return evaluate(claim, records, index, seed)


def portable_params(params: dict) -> dict:
    """``params`` as committed beside a verdict: each external folder (:func:`external_paths`) that
    the workspace made absolute is written relative to the repository again when it lies beside it
    (no path of this machine in a tracked file); other absolute paths are kept."""
    out = copy.deepcopy(params)
    for holder, key in external_paths(out):
        path = holder[key]
        if Path(path).is_absolute() and Path(path).is_relative_to(REPO.parent):
            holder[key] = os.path.relpath(path, REPO)
    return out


def write_page(claim: Claim, work: Path, out_root: Path, power=None, forced: bool = False) -> Verdict:
    """Compute the verdict from the workspace and write ``out_root/<id>/``: ``verdict.json``,
    ``claim.md``, ``params.yaml`` (the workspace's), the records the verdict reads
    (:func:`planarena.claims.provenance.commit_records`: ``records/``, ``index.json``,
    ``training.json``) and ``report/`` (the workspace's leaderboard and detail pages, when it has
    them); for a measurement claim the rows (``measurements.jsonl``) instead. ``power``: the
    claim's :class:`planarena.claims.power.PowerReport` (its table goes on the page); ``forced``:
    the run went ahead past a failed check (the page says so)."""
    from planarena.claims import measure, provenance as pv

    params = yaml.safe_load((work / "params.yaml").read_text()) or {}
    seed = int(params.get("seed", 0) or 0)
    cost_file = work / "cost.json"
    cost = json.loads(cost_file.read_text()) if cost_file.exists() else {}
    commit = cost.get("commit") or git_head()  # the code the run used (its last resumption)
    out = out_root / claim.id
    out.mkdir(parents=True, exist_ok=True)
    rows, records, index = [], [], {}
    if claim.is_measure:
        rows = read_jsonl(work / measure.ROWS) if (work / measure.ROWS).exists() else []
        codes = sorted({r["code"] for r in rows if r.get("code")})
        if codes:   # each row names the code that measured it: a run resumed across commits says so
            commit = " and ".join(codes)
        measure.write_rows(rows, out)
        measure.write_curves(claim, rows, out)
    else:
        records, index = _records_and_index(work)
        pv.commit_records(work, out, index)
    prov = provenance_lines(claim, power, forced, "the records committed beside this page")
    verdict, page, extra = page_of(claim, records, index, rows, seed, cost, commit, prov, training_facts(out))
    write_verdict(claim, out, verdict, page, cost, commit, extra, power, forced)
    atomic_write_text(out / "params.yaml", yaml.safe_dump(portable_params(params), sort_keys=False, width=120))
    if not claim.is_measure and (work / "reports" / "leaderboard.md").exists():
        if (out / "report").is_dir():
            shutil.rmtree(out / "report")
        shutil.copytree(work / "reports", out / "report")
    partial.discard(out)   # the finished run's records replace its partial training
    return verdict


__all__ = ["DEFAULT_WORK", "FINISHED", "claim_params", "finished", "inherit_niceness", "measurements_of",
           "portable_params", "prepare", "run", "run_unit", "verdict_of", "write_page"]
