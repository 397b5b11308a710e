"""One small executor interface for the independent units of a stage (DESIGN.md "Scaling").

A stage hands :func:`run_units` a function and a list of units (method x domain x seed x
protocol; problem x seed); the results come back *in the order of the units*, whatever ran where,
so a stage writes the same bytes for any ``jobs``. The stage process alone writes files.

Backends:

- ``serial`` (``jobs: 1``): in the stage process;
- ``processes`` (default): a local pool of forked processes, ``jobs`` of them (0 = all cores).
  Forking shares what the stage loaded (models, encoded data) with the workers without pickling;
  only unit indices go out and results come back. Workers inherit ``OMP_NUM_THREADS=1`` and
  friends from :func:`planarena.runner.entry.pin_threads`, so every unit computes with one thread
  whatever ``jobs`` is: results are identical for any ``jobs`` (a test checks it).

A distributed engine (Dask) plugs in as one more backend behind :func:`run_units`.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from typing import Any, Callable, Iterator, Sequence, TypeVar

from tqdm import tqdm

T = TypeVar("T")
R = TypeVar("R")

#: what forked workers call: set by :func:`run_units` just before the pool forks
_WORK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def n_workers(jobs: int | None) -> int:
    """Worker count for ``jobs`` (0 or None: every core of this machine)."""
    jobs = int(jobs or 0)
    return jobs if jobs > 0 else (os.cpu_count() or 1)


def _call(index: int) -> Any:
    fn, units = _WORK  # type: ignore[misc]
    return fn(units[index])


def run_units(fn: Callable[[T], R], units: Sequence[T], jobs: int | None = 0, desc: str | None = None,
              show: bool = True) -> Iterator[R]:
    """Yield ``fn(unit)`` for every unit, in the order of ``units``.

    ``fn`` may be a closure or a bound method: forked workers inherit it. It must return picklable
    results and should not raise for an ordinary failure (return an outcome instead); an exception
    in a worker is re-raised here. Progress is shown with tqdm when ``desc`` is given.

    Raises:
        whatever ``fn`` raises for a unit.
    """
    global _WORK
    units = list(units)
    workers = min(n_workers(jobs), len(units))
    bar = tqdm(total=len(units), desc=desc, disable=not (show and desc), file=sys.stderr)
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for unit in units:
            yield fn(unit)
            bar.update()
        bar.close()
        return
    _WORK = (fn, units)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for result in pool.imap(_call, range(len(units)), chunksize=1):
                yield result
                bar.update()
    finally:
        _WORK = None
        bar.close()
