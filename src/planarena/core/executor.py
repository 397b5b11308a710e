"""The one executor of the independent units of a stage (docs/scaling.md).

A stage hands :func:`run_units` a function and a list of units (method x domain x seed x
protocol for training; problem x seed for evaluation; problem for planning); the results come back
*in the order of the units*, whatever ran where, so a stage writes the same bytes for any executor
and any number of workers. The stage process alone writes records.

Where the units run (params ``jobs`` and ``executor``, set once per stage by :func:`configure`):

- **serial**: in the stage process, when the executor is local and ``jobs`` is 1, or the units
  are too few to pay for worker processes: fewer than ``executor.min_units``, or when that is 0,
  fewer than the caller's ``min_units`` (2 by default: one unit runs in the stage process; the
  coverage protocol asks 3 for its lockstep shards, each a batch of up to 16 problems decoded in
  about a second, where a cluster's start-up and a second load of every model and problem on each
  worker cost more than they save: docs/scaling.md);
- **local cluster** (the default; nothing to start): a ``dask.distributed`` ``LocalCluster`` of
  ``jobs`` single-threaded worker processes (0 = one per core), started by the stage when it first
  needs it and closed when the stage ends. Workers are forked from the stage process (Linux), so
  they start in a fraction of a second with the stage's modules already imported;
- **existing scheduler** (``executor.address: tcp://host:8786``): ``dask scheduler`` and
  ``dask worker`` processes started by the user on any machines;
- **Slurm** (``executor.slurm: {queue, cores, memory, walltime, jobs, ...}``): workers started as
  Slurm jobs through ``dask-jobqueue``'s ``SLURMCluster``.

The function is serialised once per call (cloudpickle bytes), fetched once by every worker and
unpickled there once; each unit then travels alone. What the function closes over must pickle
before any unit ran (per-process caches go in :attr:`planarena.methods.base.Method.transient` or
:meth:`~planarena.methods.base.Method.memo`); what the units then cache on a worker stays there. Workers read and write the stage's files through a filesystem they share with
the stage process: before the first dispatch the stage checks that every worker sees its data
root, and stops with one line naming the folder if one does not.

Every unit computes with one thread (``OMP_NUM_THREADS=1`` and friends in every worker; see
:func:`planarena.runner.entry.pin_threads`) and seeds its own random numbers, so results do not
depend on where or next to what it ran (a test compares ``jobs: 1`` with a 2-worker cluster).

Faults: a worker that dies mid-unit (killed, out of memory, node lost) loses only that unit; the
scheduler reruns it on another worker, up to ``executor.retries`` times, after which the unit's
result is ``on_failure(unit, reason)`` (e.g. a record with outcome ``error``). An exception raised
by the function itself is a bug, not a fault: it stops the stage after the results before it.

GPU: a unit whose torch device is ``cuda``/``cuda:N`` asks for the worker resource ``GPU=1`` and
runs only on workers that declare it (``dask worker --resources GPU=1``; a local cluster declares
the GPUs torch sees). ``auto`` runs anywhere and uses the worker's GPU when it has one.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TypeVar

from tqdm import tqdm

T = TypeVar("T")
R = TypeVar("R")

#: keys of the ``executor`` params block and of ``executor.slurm``
EXECUTOR_KEYS = ("address", "slurm", "retries", "connect_timeout", "memory_limit", "min_units")
SLURM_KEYS = ("queue", "account", "cores", "processes", "memory", "walltime", "jobs", "gpus",
              "job_extra_directives", "job_script_prologue", "local_directory", "python", "interface")


class ExecutorError(ValueError):
    """The executor's params are wrong, or its cluster cannot run the stage's units (the message is
    one line naming the param, address or folder). A ``ValueError``: stages print it as one line."""


@dataclass(frozen=True)
class ExecutorConfig:
    """Where units run. ``jobs``: local worker processes (0: one per core); ``address``: an
    existing ``dask scheduler``; ``slurm``: ``SLURMCluster`` settings; ``retries``: reruns of a
    unit whose worker died (Dask's ``allowed-failures``); ``connect_timeout`` (s): how long to wait
    for a scheduler and its first worker; ``memory_limit``: per local worker (``0``: none, as a
    plain process; else Dask's notation, e.g. ``"4GB"``); ``min_units``: the fewest units a local
    cluster is started for (0: what the caller of :func:`run_units` asks, 2 by default; fewer run
    in the stage process);
    ``root``: the data root every worker must see (the stage's ``Layout.root``)."""

    jobs: int = 0
    address: str | None = None
    slurm: dict | None = None
    retries: int = 2
    connect_timeout: float = 60.0
    memory_limit: str | int = 0
    min_units: int = 0
    root: str = "data"
    extra: dict = field(default_factory=dict)

    @property
    def mode(self) -> str:
        """``slurm``, ``address`` or ``local``."""
        return "slurm" if self.slurm else "address" if self.address else "local"

    @property
    def local_workers(self) -> int:
        return n_workers(self.jobs)


def n_workers(jobs: int | None) -> int:
    """Worker count for ``jobs`` (0 or None: every core of this machine)."""
    jobs = int(jobs or 0)
    return jobs if jobs > 0 else (os.cpu_count() or 1)


def config_from_params(params: dict, root: str | os.PathLike = "data") -> ExecutorConfig:
    """The :class:`ExecutorConfig` of params ``jobs`` and ``executor`` (both optional).

    Raises:
        ExecutorError: an unknown key, a wrong type, or both ``address`` and ``slurm`` set.
    """
    block = params.get("executor") or {}
    if not isinstance(block, dict):
        raise ExecutorError(f"params: `executor` must be a mapping, got {block!r}")
    unknown = sorted(set(block) - set(EXECUTOR_KEYS))
    if unknown:
        raise ExecutorError(f"params: executor has unknown key(s) {unknown}; valid: {list(EXECUTOR_KEYS)}")
    address, slurm = block.get("address"), block.get("slurm")
    if address and slurm:
        raise ExecutorError("params: set at most one of `executor.address` and `executor.slurm`")
    if address is not None and not (isinstance(address, str) and "://" in address):
        raise ExecutorError(f"params: `executor.address` = {address!r}; expected e.g. tcp://host:8786")
    if slurm is not None:
        if not isinstance(slurm, dict):
            raise ExecutorError(f"params: `executor.slurm` must be a mapping, got {slurm!r}")
        bad = sorted(set(slurm) - set(SLURM_KEYS))
        if bad:
            raise ExecutorError(f"params: executor.slurm has unknown key(s) {bad}; valid: {list(SLURM_KEYS)}")
        for key in ("cores", "memory", "walltime"):
            if not slurm.get(key):
                raise ExecutorError(f"params: `executor.slurm.{key}` is required (e.g. cores: 8, memory: 16GB, "
                                    f"walltime: '04:00:00')")
    try:
        retries = int(block.get("retries", 2))
        timeout = float(block.get("connect_timeout", 60))
        jobs = int(params.get("jobs", 0) or 0)
        min_units = int(block.get("min_units", 0) or 0)
    except (TypeError, ValueError):
        raise ExecutorError("params: `jobs`, `executor.retries`, `executor.connect_timeout` and "
                            "`executor.min_units` must be numbers") from None
    if retries < 0 or jobs < 0 or min_units < 0:
        raise ExecutorError("params: `jobs`, `executor.retries` and `executor.min_units` must be >= 0")
    return ExecutorConfig(jobs=jobs, address=address or None, slurm=dict(slurm) if slurm else None, retries=retries,
                          connect_timeout=timeout, memory_limit=block.get("memory_limit", 0) or 0,
                          min_units=min_units, root=str(Path(root).resolve()))


#: the configuration of this process (set by :func:`configure`; local with all cores until then)
_CONFIG: ExecutorConfig | None = None
#: the live cluster and client of this process: (config, cluster or None, client)
_LIVE: tuple[ExecutorConfig, Any, Any] | None = None


def configure(config: ExecutorConfig | None) -> None:
    """Set where :func:`run_units` sends units in this process (``None``: back to the default).
    A different configuration closes the cluster of the previous one."""
    global _CONFIG
    if _LIVE is not None and _LIVE[0] != config:
        shutdown()
    _CONFIG = config


def current() -> ExecutorConfig:
    """This process's :class:`ExecutorConfig`."""
    return _CONFIG if _CONFIG is not None else ExecutorConfig(root=str(Path("data").resolve()))


def unit_resources(device: str | None) -> dict[str, float] | None:
    """Dask worker resources a unit on torch ``device`` needs: ``{"GPU": 1}`` for ``cuda`` /
    ``cuda:N``, none for ``cpu`` and ``auto``."""
    dev = str(device or "cpu").strip().lower()
    return {"GPU": 1} if dev == "cuda" or dev.startswith("cuda:") else None


def remote() -> bool:
    """Whether units of this process go to a cluster the user runs (``address`` or ``slurm``):
    then a GPU the stage process lacks may still be on the workers."""
    return current().mode != "local"


@dataclass
class _Work:
    """What every worker receives once per :func:`run_units` call: the function and the stage's
    working directory (relative paths of the stage resolve the same way on the worker)."""

    fn: Callable
    cwd: str


#: the functions this worker process has unpickled, by dispatch tag (the newest few)
_LOADED: dict[str, _Work] = {}


def _run_unit(tag: str, payload: bytes, unit: Any) -> Any:
    """Run one unit on a worker. The function travels as cloudpickle *bytes* and is unpickled once
    per worker process: the live object then fills its caches (models, pymimir and wlplan objects),
    which must never be pickled again to reach another worker."""
    work = _LOADED.get(tag)
    if work is None:
        import cloudpickle

        while len(_LOADED) >= 2:  # a long-running worker serves stage after stage
            _LOADED.pop(next(iter(_LOADED)))
        work = _LOADED[tag] = cloudpickle.loads(payload)
    if os.getcwd() != work.cwd:
        os.chdir(work.cwd)
    return work.fn(unit)


def _code_digest() -> str:
    """Digest of the planarena sources on disk (``src/planarena/**/*.py``), taken when this module
    is first imported: a long-running worker that imported older code must not run a stage's units
    (its modules are not reloaded when the files change)."""
    import hashlib

    h = hashlib.sha256()
    pkg = Path(__file__).resolve().parents[1]
    for f in sorted(pkg.rglob("*.py")):
        h.update(str(f.relative_to(pkg)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


#: the code this process runs (:func:`_code_digest`)
CODE_DIGEST = _code_digest()


def _worker_code() -> str:
    return CODE_DIGEST


def desc_of(fn: Callable) -> str:
    """``module.qualname`` of a unit function, for messages."""
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"


def _identity(x):
    return x


def _sees(root: str) -> bool:
    return os.path.isdir(root)


def _gpu_count() -> int:
    if "torch" not in sys.modules:  # no torch loaded: this stage has no GPU units to place
        return 0
    try:
        return int(sys.modules["torch"].cuda.device_count())
    except Exception:  # a broken CUDA setup is no GPU
        return 0


def _start(cfg: ExecutorConfig):
    """``(cluster or None, client)`` for ``cfg``; the cluster is owned (closed) by this process
    unless it is an existing scheduler."""
    import dask
    from distributed import Client, LocalCluster

    # a unit whose worker dies is rerun this many times (the scheduler counts; for an existing
    # scheduler its own configuration decides:
    # docs/scaling.md#what-the-executor-guarantees-and-checks)
    # worker-saturation 1.0: a worker holds only the unit it runs (Dask's default, 1.1, sends a
    # single-threaded worker a second one in advance), so a worker that dies takes only that unit
    # with it; with 1.1 a queued bystander was counted as a suspect of the death and, after two
    # deaths, lost (tests/test_executor.py::test_unit_that_keeps_killing_its_worker_is_an_error_record)
    dask.config.set({"distributed.scheduler.allowed-failures": cfg.retries,
                     "distributed.scheduler.worker-saturation": 1.0})
    quiet = logging.ERROR
    if cfg.mode == "address":
        try:
            client = Client(cfg.address, timeout=f"{cfg.connect_timeout}s")
        except OSError as exc:
            raise ExecutorError(f"params: executor.address: no Dask scheduler at {cfg.address} ({exc})") from None
        return None, client
    if cfg.mode == "slurm":
        cluster = slurm_cluster(cfg)
        cluster.scale(jobs=int(cfg.slurm.get("jobs", 1)))
        return cluster, Client(cluster)
    if "fork" in __import__("multiprocessing").get_all_start_methods():
        dask.config.set({"distributed.worker.multiprocessing-method": "fork"})
    gpus = _gpu_count()
    cluster = LocalCluster(n_workers=cfg.local_workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit=cfg.memory_limit, silence_logs=quiet,
                           resources={"GPU": gpus} if gpus else None)
    return cluster, Client(cluster)


def slurm_kwargs(slurm: dict) -> dict:
    """``SLURMCluster`` keyword arguments of an ``executor.slurm`` block. Every Dask worker is
    single-threaded (units seed process-wide random generators, so two must never share a
    process): a CPU job runs one worker per core (``processes`` = ``cores`` unless set); a job with
    ``gpus`` runs one worker per GPU (``--gres=gpu:N``, worker resource ``GPU=1``), its other cores
    left to the libraries.

    Raises:
        ExecutorError: more worker processes than GPUs in a GPU job.
    """
    cores = int(slurm["cores"])
    gpus = int(slurm.get("gpus") or 0)
    processes = int(slurm.get("processes") or gpus or cores)
    if gpus and processes > gpus:
        raise ExecutorError(f"params: executor.slurm: processes ({processes}) > gpus ({gpus}); a GPU job runs one "
                            f"worker per GPU")
    extra = list(slurm.get("job_extra_directives") or [])
    worker_args = ["--nthreads", "1"]  # after jobqueue's own --nthreads cores/processes: the last one counts
    if gpus:
        extra.append(f"--gres=gpu:{gpus}")
        worker_args += ["--resources", "GPU=1"]
    kwargs = {"cores": cores, "processes": processes, "memory": str(slurm["memory"]),
              "walltime": str(slurm["walltime"]), "job_extra_directives": extra,
              "worker_extra_args": worker_args, "job_script_prologue": list(slurm.get("job_script_prologue") or []),
              "python": slurm.get("python") or sys.executable}
    for key in ("queue", "account", "local_directory", "interface"):
        if slurm.get(key):
            kwargs[key] = slurm[key]
    return kwargs


def slurm_cluster(cfg: ExecutorConfig):
    """A ``dask_jobqueue.SLURMCluster`` for ``cfg.slurm`` (:func:`slurm_kwargs`); no job is
    submitted until it is scaled."""
    from dask_jobqueue import SLURMCluster

    return SLURMCluster(**slurm_kwargs(cfg.slurm))


def client() -> Any:
    """The ``distributed.Client`` of this process's configuration (started on first use, checked:
    at least one worker, every worker runs this planarena code and sees the data root).

    Raises:
        ExecutorError: no worker within ``connect_timeout``, a worker with other code, or one that
        cannot read the data root.
    """
    global _LIVE
    cfg = current()
    if _LIVE is not None and _LIVE[0] == cfg:
        return _LIVE[2]
    shutdown()
    cluster, cl = _start(cfg)
    _LIVE = (cfg, cluster, cl)
    try:
        cl.wait_for_workers(1, timeout=cfg.connect_timeout)
    except TimeoutError:
        shutdown()
        raise ExecutorError(f"executor ({cfg.mode}): no Dask worker joined within {cfg.connect_timeout:g} s "
                            f"(executor.connect_timeout)") from None
    stale = sorted(w for w, digest in cl.run(_worker_code).items() if digest != CODE_DIGEST)
    if stale:
        shutdown()
        raise ExecutorError(f"executor: worker(s) {', '.join(stale)} run other planarena code than this stage "
                            f"(edited since they started, or another checkout); restart them from this checkout")
    # the data root (or, before a stage made it, the working directory) must look the same to workers
    seen = cfg.root if os.path.isdir(cfg.root) else os.getcwd()
    blind = sorted(w for w, ok in cl.run(_sees, seen).items() if not ok)
    if blind:
        shutdown()
        raise ExecutorError(f"executor: worker(s) {', '.join(blind)} cannot read {seen}; inputs and outputs "
                            f"must live on a filesystem every worker sees (docs/scaling.md)")
    return cl


def shutdown() -> None:
    """Close this process's client and the cluster it started (an existing scheduler and its
    workers keep running)."""
    global _LIVE
    if _LIVE is None:
        return
    _, cluster, cl = _LIVE
    _LIVE = None
    # a closing cluster logs the loss of its workers' data: expected here
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    try:
        cl.close()
        if cluster is not None:
            cluster.close()
    except Exception:  # closing a cluster that already lost its workers must not fail a stage
        pass


atexit.register(shutdown)


def run_units(fn: Callable[[T], R], units: Sequence[T], jobs: int | None = None, desc: str | None = None,
              show: bool = True, device: str | None = None, parallel: bool = True,
              on_failure: Callable[[T, str], R] | None = None, min_units: int = 2) -> Iterator[R]:
    """Yield ``fn(unit)`` for every unit, in the order of ``units``.

    Args:
        fn: picklable with cloudpickle (closures and bound methods are); returns picklable results;
            should not raise for an ordinary failure (return an outcome instead).
        jobs: local workers (default: the configured ``jobs``); ignored by a remote executor.
        device: the torch device param of the units (``cuda``: they need a worker with a GPU).
        parallel: False runs the units in the stage process whatever the executor.
        min_units: on a local executor, fewer units than this run in the stage process (the params'
            ``executor.min_units`` overrides it when set; see the module).
        on_failure: the result of a unit that kept killing its worker (``retries`` exhausted),
            given the unit and the reason; without it, that raises :class:`RuntimeError`.

    Raises:
        whatever ``fn`` raises for a unit; :class:`ExecutorError` when no worker can run a unit.
    """
    for _, result in _units(fn, units, jobs, desc, show, device, parallel, on_failure, min_units, ordered=True):
        yield result


def run_units_as_completed(fn: Callable[[T], R], units: Sequence[T], jobs: int | None = None,
                           desc: str | None = None, show: bool = True, device: str | None = None,
                           on_failure: Callable[[T, str], R] | None = None,
                           min_units: int = 2, parallel: bool = True) -> Iterator[tuple[T, R]]:
    """Yield ``(unit, fn(unit))`` for every unit as each finishes (not in the order of ``units``).

    For callers that write each result as it comes (a claim's measurement rows): with
    :func:`run_units` one slow unit holds back every finished unit after it, and a run stopped then
    loses them. Arguments and errors as :func:`run_units`.
    """
    yield from _units(fn, units, jobs, desc, show, device, parallel, on_failure, min_units, ordered=False)


def _units(fn, units, jobs, desc, show, device, parallel, on_failure, min_units, ordered: bool) -> Iterator[tuple]:
    """:func:`run_units` / :func:`run_units_as_completed`: ``(unit, result)`` pairs, in unit order
    when ``ordered`` or on a path that runs the units in this process."""
    units = list(units)
    cfg = current()
    local_workers = n_workers(jobs if jobs is not None else cfg.jobs)
    few = len(units) < (cfg.min_units or min_units)
    bar = tqdm(total=len(units), desc=desc, disable=not (show and desc), file=sys.stderr)
    if not parallel or (cfg.mode == "local" and (local_workers <= 1 or few)):
        for unit in units:
            yield unit, fn(unit)
            bar.update()
        bar.close()
        return
    if cfg.mode == "local" and local_workers != cfg.local_workers:
        configure(ExecutorConfig(**{**cfg.__dict__, "jobs": local_workers}))
    try:
        yield from _dispatch(fn, units, device, on_failure, bar, ordered)
    finally:
        bar.close()


def _dispatch(fn, units, device, on_failure, bar, ordered: bool) -> Iterator[tuple]:
    """Submit the units and yield ``(unit, result)``: in unit order (``ordered``) or as they finish."""
    from distributed import KilledWorker

    cl = client()
    resources = unit_resources(device)
    if resources and not any((w.get("resources") or {}).get("GPU") for w in cl.scheduler_info()["workers"].values()):
        raise ExecutorError(f"device {device!r}: no worker of the executor ({current().mode}) has a GPU; start "
                            f"workers with `dask worker --resources GPU=1` or set the device to cpu/auto")
    import cloudpickle

    tag = uuid.uuid4().hex[:8]
    try:
        payload = cloudpickle.dumps(_Work(fn, os.getcwd()))
    except Exception as exc:
        raise TypeError(f"{desc_of(fn)} cannot be sent to the executor's workers: {exc} (keep per-process caches "
                        f"in Method.transient or Method.memo)") from exc
    # the function's bytes as a task (not scattered data): if every worker holding them dies, the
    # scheduler recomputes them from the graph; each worker fetches them once
    with warnings.catch_warnings():
        # the bytes are sent once on purpose (e.g. EmbedPlan's embeddings, ~70 MiB with MPNet)
        warnings.filterwarnings("ignore", message=".*[Ll]arge (object|graph).*")
        work = cl.submit(_identity, payload, key=f"work-{tag}", pure=False)
    futures = [cl.submit(_run_unit, tag, work, unit, key=f"unit-{tag}-{i}", pure=False, resources=resources)
               for i, unit in enumerate(units)]
    # the bar counts units as they finish (results are still yielded in unit order: counting those
    # showed 2 of 51 done, and a 3-hour ETA, when 17 models were written)
    lock = threading.Lock()

    def finished(_fut) -> None:
        with lock:
            bar.update()

    for fut in futures:
        fut.add_done_callback(finished)
    if ordered:
        order = iter(range(len(units)))
    else:
        from distributed import as_completed

        index = {f.key: i for i, f in enumerate(futures)}
        order = (index[f.key] for f in as_completed(list(futures)))
    try:
        for i in order:
            unit, fut = units[i], futures[i]
            try:
                result = fut.result()
            except KilledWorker as exc:
                reason = (f"the unit's worker died {current().retries + 1} time(s) (executor.retries = "
                          f"{current().retries}): {exc}" if current().mode != "address" else
                          f"the unit's worker died as often as the scheduler allows (its allowed-failures): {exc}")
                if on_failure is None:
                    raise RuntimeError(f"unit {unit!r}: {reason}") from None
                result = on_failure(unit, reason)
            futures[i] = None  # release the result on the worker
            yield unit, result
    finally:
        live = [f for f in futures if f is not None]
        if live:
            cl.cancel(live)
        cl.cancel([work])
