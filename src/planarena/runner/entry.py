"""Entry point of every stage script: params, one-line errors, the workspace lock, thread pinning.

``stages/<name>.py`` calls :func:`stage_main`; so does ``planarena stage <name>``. It

- takes the workspace lock ``data/.planarena.lock`` (:class:`WorkspaceLock`): two stage
  processes in one workspace (a ``dvc repro`` and a hand-run ``planarena stage``, or two of
  either) could interleave records in the same files, so the second one stops at once with a
  message naming the holder (its pid, stage and start time). DVC's own lock already keeps two
  ``dvc repro`` apart; this one also covers direct runs. ``dvc exp run --queue`` runs each
  experiment in its own workspace, so queued experiments never wait on it;
- turns expected input errors (bad params, malformed PDDL, missing suite directory) into exit
  status 1 and a one-line message naming the file or param, instead of a traceback.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import Callable

#: environment variables that cap the threads of OpenMP, BLAS, torch and xgboost in this process
#: and in the workers it forks (set before those libraries load)
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def pin_threads() -> None:
    """One compute thread per process (unless the user set the variables): every unit of a
    train/evaluate stage computes the same way for any ``jobs``, and ``jobs`` processes use the
    cores instead of threads fighting over them. Must run before torch/xgboost/numpy load."""
    for var in THREAD_VARS:
        os.environ.setdefault(var, "1")


class WorkspaceLockedError(RuntimeError):
    """Another planarena stage holds this workspace's lock (the message names it)."""


class WorkspaceLock:
    """Exclusive, non-blocking lock on ``<data root>/.planarena.lock`` (``fcntl.flock``: released by
    the kernel when the holder exits, even if it is killed, so a stale lock cannot survive).

    Raises:
        WorkspaceLockedError: on enter, when another process holds the lock.
    """

    def __init__(self, root: str | os.PathLike = "data", what: str = "stage"):
        self.path = Path(root) / ".planarena.lock"
        self.what = what
        self._fh = None

    def __enter__(self) -> "WorkspaceLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = self.path.open("a+")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            fh.close()
            try:
                h = json.loads(holder)
                holder = f"pid {h['pid']}, {h['stage']}, since {h['since']}"
            except (ValueError, KeyError, TypeError):
                pass
            raise WorkspaceLockedError(
                f"{self.path}: another planarena stage is running in this workspace ({holder}); "
                f"wait for it to finish (records of two runs must not interleave)") from None
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "stage": self.what,
                             "since": time.strftime("%Y-%m-%d %H:%M:%S")}))
        fh.flush()
        self._fh = fh
        return self

    def __exit__(self, *exc) -> None:
        if self._fh is not None:
            self._fh.seek(0)
            self._fh.truncate()
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


#: what counts as the user's input being wrong (bad params, malformed PDDL, missing files, a held
#: workspace lock): one line per problem and exit status 1, never a traceback
INPUT_ERRORS = (ValueError, FileNotFoundError, KeyError, WorkspaceLockedError)


def debug_enabled() -> bool:
    """``PLANARENA_DEBUG=1`` (or the CLI's ``--debug``): show the traceback of input errors too."""
    return os.environ.get("PLANARENA_DEBUG", "") not in ("", "0")


def report_input_error(exc: BaseException) -> None:
    """Print an input error as ``error: <line>`` lines on stderr (one per bad file; a
    :class:`planarena.core.pddl.PDDLError` may list several) and exit with status 1; with
    :func:`debug_enabled`, re-raise it so the traceback shows.

    Raises:
        SystemExit: status 1. The original exception, in debug mode.
    """
    if debug_enabled():
        raise exc
    msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    for line in str(msg).splitlines() or [type(exc).__name__]:
        print(f"error: {line}", file=sys.stderr)
    raise SystemExit(1) from None


def stage_main(fn: Callable, *args, params_file: str = "params.yaml", what: str | None = None, **kwargs) -> None:
    """Load params, configure the executor (params ``jobs``, ``executor``), take the workspace lock,
    run ``fn(params, Layout(), *args, **kwargs)``, close the executor's cluster.

    Expected input errors (:data:`INPUT_ERRORS`: bad params, malformed PDDL, missing suite
    directory, a held workspace lock) exit with status 1 and one line per problem naming the file or
    param (:func:`report_input_error`; ``PLANARENA_DEBUG=1`` shows the traceback).
    """
    from planarena.config import Layout, load_params

    from planarena.core import executor

    label = what or " ".join([getattr(fn, "__name__", "stage"), *map(str, args)])
    try:
        params = load_params(params_file)
        layout = Layout()
        executor.configure(executor.config_from_params(params, layout.root))
        with WorkspaceLock(layout.root, label):
            fn(params, layout, *args, **kwargs)
    except INPUT_ERRORS as exc:
        report_input_error(exc)
    finally:
        executor.shutdown()


def run_stage_script(name: str, *args: str, params_file: str = "params.yaml", force: bool = False) -> None:
    """What ``stages/<name>.py`` and ``planarena stage <name>`` run: the stage's entry point from the
    stage table (:data:`planarena.runner.inputs.STAGES`, plus ``resolve`` / ``resolve_methods``),
    under :func:`stage_main`. ``train`` and ``evaluate`` (``args``: rows, all when none; ``force``:
    run them even when up to date) pin one compute thread per process first."""
    import importlib

    if name in ("train", "evaluate"):
        pin_threads()
    from planarena.runner.inputs import ENTRIES

    module, _, fn = ENTRIES[name].partition(":")
    stage_main(getattr(importlib.import_module(module), fn), *args, params_file=params_file,
               what=" ".join([name, *args]), **({"force": True} if force else {}))
