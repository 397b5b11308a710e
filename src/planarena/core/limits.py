"""Run an outside program under a CPU-time and memory limit, as the IPC 2023 Learning Track does.

The program runs in its own process group. Its CPU time is the sum over every process of the group
(polled every :data:`POLL_S` s with psutil; a process keeps the last CPU time seen before it exited, so
one that lives shorter than a poll is not counted), so the limit that
decides a ``timeout`` is CPU time, never wall time (:mod:`planarena.core.clock`). At the limit the
whole group gets SIGTERM (the track's signal: a planner may catch it to write its last plan or its
domain knowledge), then SIGKILL after ``grace_s`` seconds. Memory: every process of the group gets
``RLIMIT_AS`` of ``memory_mb`` MiB (set on the first process right after it starts; the processes
it starts inherit it). A wall-clock kill at :func:`planarena.core.clock.wall_safety` of the limit is
a safety net for a program that hangs without using CPU.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from planarena.core.clock import wall_safety

#: seconds between two polls of the group's CPU time
POLL_S = 0.05


@dataclass
class LimitedRun:
    """What :func:`run_limited` saw.

    ``returncode``: the program's exit status (negative: the signal that ended it); ``cpu_s``: CPU
    seconds of the whole group; ``wall_s``: wall seconds; ``timed_out``: it passed the CPU-time
    limit (or the wall safety net) and was stopped; ``output``: the last lines of its stdout and
    stderr together.
    """

    returncode: int
    cpu_s: float
    wall_s: float
    timed_out: bool
    output: str


def _group_cpu(root, seen: dict) -> float:
    """CPU seconds of ``root`` and its descendants; ``seen`` keeps each process's last value."""
    import psutil

    try:
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        procs = []
    for p in procs:
        try:
            t = p.cpu_times()
            seen[(p.pid, p.create_time())] = t.user + t.system
        except psutil.Error:
            continue
    return sum(seen.values())


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_group(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Stop the process group that ``proc`` leads (started with ``start_new_session=True``): if
    ``proc`` still runs, SIGTERM to the group and up to ``grace_s`` seconds for it to exit; then
    SIGKILL to whatever of the group is left."""
    if proc.poll() is None:
        _kill_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    _kill_group(proc.pid, signal.SIGKILL)
    try:
        proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        pass


def run_limited(cmd: list[str], cwd: str | os.PathLike, cpu_limit_s: float, memory_mb: int | None = None,
                grace_s: float = 10.0, log: Path | None = None) -> LimitedRun:
    """Run ``cmd`` in ``cwd`` with its own process group, stopping it at ``cpu_limit_s`` CPU seconds
    (SIGTERM to the group, SIGKILL ``grace_s`` seconds later) and limiting each of its processes to
    ``memory_mb`` MiB of address space. stdout and stderr go to ``log`` (a file) or a temporary
    file; their last 20 lines are returned.

    Raises:
        FileNotFoundError / PermissionError: ``cmd[0]`` does not exist or is not executable.
    """
    import psutil

    log = Path(log) if log else Path(cwd) / ".planarena-run.log"
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    if memory_mb:
        limit = int(memory_mb) * 1024 * 1024
        try:
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (limit, limit))
        except (ProcessLookupError, PermissionError, ValueError):
            pass
    try:
        root = psutil.Process(proc.pid)
    except psutil.Error:
        root = None
    seen: dict = {}
    cpu, timed_out, term_at = 0.0, False, None
    safety = wall_safety(cpu_limit_s)
    while proc.poll() is None:
        if root is not None:
            cpu = _group_cpu(root, seen)
        wall = time.perf_counter() - start
        if term_at is None and (cpu > cpu_limit_s or wall > safety):
            timed_out, term_at = True, wall
            _kill_group(proc.pid, signal.SIGTERM)
        elif term_at is not None and wall - term_at > grace_s:
            _kill_group(proc.pid, signal.SIGKILL)
        time.sleep(POLL_S)
    _kill_group(proc.pid, signal.SIGKILL)  # whatever the program left behind
    lines = log.read_text(errors="replace").splitlines()[-20:] if log.exists() else []
    return LimitedRun(proc.returncode, round(max(cpu, sum(seen.values())), 3),
                      round(time.perf_counter() - start, 3), timed_out, "\n".join(lines))


__all__ = ["LimitedRun", "POLL_S", "run_limited", "stop_group"]
