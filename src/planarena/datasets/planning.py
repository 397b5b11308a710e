"""Fast Downward as a subprocess, with time and memory limits and a result cache.

Fast Downward (Helmert 2006) comes from the ``up-fast-downward`` wheel; we call its driver script
directly (``fast-downward.py``) so that limits, exit codes and statistics are ours to record.
Configurations are params blocks ``planners.<name>`` (:func:`fd_arguments`): a ``search`` string (with
optional component ``options`` such as ``["--evaluator", "h=ff()"]``) or an ``alias``, optional
``driver_options``, and the limits ``time_limit`` (CPU s) and ``memory_limit_mb``. Two are built in
and used when a block names neither ``search`` nor ``alias``:

* ``astar_lmcut``: ``--search "astar(lmcut())"`` (optimal; the state-centric paper's Stage 1, 60 s).
* ``lama_first``: ``--alias lama-first`` (satisficing; first plan of LAMA 2011).

A row ``methods.<row>: {method: fast_downward, planner: <name>}`` puts any configuration on the
leaderboard (:class:`planarena.methods.classical.FastDownward`).

The state-centric paper (Stage 1, Appendix) falls back from A*+LM-cut (60 s) to a satisficing
configuration (300 s) when A* fails; :func:`plan_with_fallback` does exactly that.

Every run is cached under ``data/cache/fd/<sha>.json``, keyed by the domain and problem *texts*, the
configuration and the planner version, so a killed or repeated stage never plans a problem twice.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata, resources
from pathlib import Path

from planarena.core.clock import wall_safety
from planarena.core.io import atomic_write_text

#: Fast Downward exit codes (https://www.fast-downward.org/ExitCodes) -> our outcome names.
EXIT_OUTCOMES = {
    0: "solved",
    1: "solved",
    2: "solved",
    3: "solved",
    10: "unsolved",
    11: "unsolved",
    12: "unsolved",
    20: "memout",
    21: "timeout",
    22: "memout",
    23: "timeout",
    24: "memout",
}

#: The built-in configurations (a ``planners.<name>`` block of these names without ``search`` or
#: ``alias`` gets these).
CONFIGS = {
    "astar_lmcut": {"search": "astar(lmcut())"},
    "lama_first": {"alias": "lama-first"},
}

#: keys of a ``planners.<name>`` block
CONFIG_KEYS = ("search", "alias", "options", "driver_options", "time_limit", "memory_limit_mb")
#: driver options planarena sets itself (the limits come from ``time_limit`` / ``memory_limit_mb``)
_OWN_OPTIONS = ("--plan-file", "--overall-time-limit", "--overall-memory-limit", "--alias", "--search")


def fd_arguments(name: str, block: dict | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(driver arguments before the files, component arguments after them)`` of the Fast Downward
    configuration ``planners.<name>`` (``block``; None: the built-in of that name).

    ``alias`` gives ``--alias <alias>`` (before the files); ``search`` gives ``[*options, "--search",
    search]`` after them; ``driver_options`` (a list) go before the files.

    Raises:
        ConfigError: an unknown key, both or neither of ``search`` and ``alias`` (for a name that is
            not built in), a non-list ``options`` / ``driver_options``, or a driver option that
            planarena sets itself (names the block).
    """
    from planarena.config import ConfigError

    block = dict(block or {})
    where = f"params: planners.{name}"
    unknown = sorted(set(block) - set(CONFIG_KEYS))
    if unknown:
        raise ConfigError(f"{where} has unknown key(s) {unknown}; valid: {list(CONFIG_KEYS)}")
    if not block.get("search") and not block.get("alias"):
        if name not in CONFIGS:
            raise ConfigError(f"{where}: set `search` (a Fast Downward search string, e.g. \"astar(lmcut())\") "
                              f"or `alias` (e.g. lama-first); built-in names: {sorted(CONFIGS)}")
        block = {**block, **CONFIGS[name]}
    if block.get("search") and block.get("alias"):
        raise ConfigError(f"{where}: set `search` or `alias`, not both")
    lists = {}
    for key in ("options", "driver_options"):
        value = block.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
            raise ConfigError(f"{where}.{key}: a list of command-line words, got {value!r}")
        lists[key] = tuple(str(v) for v in value)
    own = [o for o in lists["driver_options"] + lists["options"] if o.split("=")[0] in _OWN_OPTIONS]
    if own:
        raise ConfigError(f"{where}: {own[0]} is set by planarena (use `search`, `alias`, `time_limit`, "
                          f"`memory_limit_mb`)")
    before = lists["driver_options"] + (("--alias", str(block["alias"])) if block.get("alias") else ())
    after = (lists["options"] + ("--search", str(block["search"]))) if block.get("search") else lists["options"]
    return before, after


@dataclass
class PlannerResult:
    """One Fast Downward run.

    ``outcome`` is one of solved/unsolved/timeout/memout/error; ``wall_time`` in seconds (of the
    original run, also when served from cache); ``peak_memory_kb`` as printed by the search;
    ``expansions`` states expanded (``None`` if the search did not report it).
    """

    config: str
    outcome: str
    plan: list[str] = field(default_factory=list)
    cost: float | None = None
    wall_time: float = 0.0
    expansions: int | None = None
    peak_memory_kb: int | None = None
    exit_code: int | None = None
    failure_reason: str | None = None
    cached: bool = False

    @property
    def plan_length(self) -> int | None:
        return len(self.plan) if self.outcome == "solved" else None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["plan_length"] = self.plan_length
        return d


def driver_path() -> Path:
    """Path of Fast Downward's driver script inside the up-fast-downward package."""
    return Path(str(resources.files("up_fast_downward").joinpath("downward/fast-downward.py")))


def planner_version() -> str:
    try:
        return "up-fast-downward " + metadata.version("up-fast-downward")
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"


def _command(args: tuple[tuple[str, ...], tuple[str, ...]], domain: Path, problem: Path, plan_file: Path,
             time_limit: float, memory_mb: int) -> list[str]:
    before, after = args
    return [sys.executable, str(driver_path()), "--plan-file", str(plan_file),
            "--overall-time-limit", f"{max(1, int(round(time_limit)))}s",
            "--overall-memory-limit", f"{int(memory_mb)}M", *before, str(domain), str(problem), *after]


_EXPANDED = re.compile(r"Expanded (\d+) state")
_PEAK = re.compile(r"Peak memory: (\d+) KB")
_XCPU = re.compile(r"(translate|search) exit code: -24\b")
_COST = re.compile(r";\s*cost\s*=\s*([\d.]+)")


def run_fast_downward(
    config: str,
    domain: str | Path,
    problem: str | Path,
    time_limit: float,
    memory_mb: int,
    block: dict | None = None,
) -> PlannerResult:
    """Run the Fast Downward configuration ``config`` (its ``planners.<config>`` block ``block``, or
    the built-in of that name: :func:`fd_arguments`) on one problem (no cache).

    A run past ``time_limit`` CPU seconds (Fast Downward's driver enforces ``--overall-time-limit``
    as CPU time, ``RLIMIT_CPU`` per component, so machine load decides no outcome) is a ``timeout``
    outcome; past ``memory_mb`` MiB a ``memout``; never an exception. A wall-clock kill at
    :func:`planarena.core.clock.wall_safety` of the limit is a safety net only (a hung process), also
    ``timeout``.
    """
    domain, problem = Path(domain).resolve(), Path(problem).resolve()
    with tempfile.TemporaryDirectory(prefix="planarena-fd-") as tmp:
        plan_file = Path(tmp) / "plan"
        cmd = _command(fd_arguments(config, block), domain, problem, plan_file, time_limit, memory_mb)
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd, cwd=tmp, capture_output=True, text=True, timeout=wall_safety(time_limit)
            )
        except subprocess.TimeoutExpired:
            return PlannerResult(config, "timeout", wall_time=time.perf_counter() - start,
                                 failure_reason=f"killed after {wall_safety(time_limit):.0f} s wall (safety net)")
        elapsed = time.perf_counter() - start
        out = proc.stdout + proc.stderr
        outcome = EXIT_OUTCOMES.get(proc.returncode, "error")
        if outcome == "error" and (proc.returncode in (-24, 232) or _XCPU.search(out)):
            outcome = "timeout"  # a component killed by SIGXCPU (CPU-time limit), e.g. the translator
        res = PlannerResult(config, outcome, wall_time=elapsed, exit_code=proc.returncode)
        if m := _EXPANDED.findall(out):
            res.expansions = int(m[-1])
        if m := _PEAK.findall(out):
            res.peak_memory_kb = int(m[-1])
        if outcome == "solved":
            files = sorted(Path(tmp).glob("plan*"))
            if not files:
                res.outcome, res.failure_reason = "error", "exit code 0 but no plan file written"
                return res
            text = files[-1].read_text()  # anytime configs write plan.1, plan.2, ...: keep the last
            from planarena.core.pddl import read_plan_file

            res.plan = read_plan_file(files[-1])
            cm = _COST.search(text)
            res.cost = float(cm.group(1)) if cm else float(len(res.plan))
        elif outcome == "error":
            tail = "\n".join(out.strip().splitlines()[-5:])
            res.failure_reason = f"exit code {proc.returncode}: {tail}"
        elif outcome in ("timeout", "memout"):
            res.failure_reason = f"{outcome} (limit {time_limit:.0f} s, {memory_mb} MiB)"
        else:
            res.failure_reason = "search space exhausted / unsolvable" if proc.returncode in (10, 11) else "incomplete search failed"
        return res


class PlannerCache:
    """Content-addressed cache of :class:`PlannerResult` under ``root`` (one JSON file per run)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def key(config: str, domain: Path, problem: Path, time_limit: float, memory_mb: int,
            block: dict | None = None) -> str:
        """The run's key: configuration name and arguments (:func:`fd_arguments`), limits, planner
        version and the two files' bytes."""
        h = hashlib.sha256()
        args = fd_arguments(config, block)
        # a built-in configuration keeps the key it had before configurations were params
        extra = () if config in CONFIGS and args == fd_arguments(config) else (*args[0], "|", *args[1])
        for part in (config, str(time_limit), str(memory_mb), planner_version(), *extra):
            h.update(part.encode() + b"\0")
        h.update(Path(domain).read_bytes() + b"\0")
        h.update(Path(problem).read_bytes())
        return h.hexdigest()[:24]

    def get(self, key: str) -> PlannerResult | None:
        f = self.root / f"{key}.json"
        if not f.exists():
            return None
        try:
            d = json.loads(f.read_text())
        except json.JSONDecodeError:
            return None
        d.pop("plan_length", None)
        res = PlannerResult(**d)
        res.cached = True
        return res

    def put(self, key: str, res: PlannerResult) -> None:
        f = self.root / f"{key}.json"
        atomic_write_text(f, json.dumps(res.to_dict()))


def plan_cached(
    config: str,
    domain: str | Path,
    problem: str | Path,
    time_limit: float,
    memory_mb: int,
    cache: PlannerCache | None,
    block: dict | None = None,
) -> PlannerResult:
    """:func:`run_fast_downward` through ``cache`` (if given). Errors are not cached."""
    if cache is None:
        return run_fast_downward(config, domain, problem, time_limit, memory_mb, block)
    key = cache.key(config, Path(domain), Path(problem), time_limit, memory_mb, block)
    hit = cache.get(key)
    if hit is not None:
        return hit
    res = run_fast_downward(config, domain, problem, time_limit, memory_mb, block)
    if res.outcome != "error":
        cache.put(key, res)
    return res


def plan_with_fallback(
    domain: str | Path,
    problem: str | Path,
    planners: dict,
    cache: PlannerCache | None,
) -> list[PlannerResult]:
    """The state-centric paper's Stage 1: A*+LM-cut, then (if it did not solve) the fallback.

    ``planners`` is ``params['planners']``: ``astar_lmcut`` and ``lama_first`` blocks with
    ``time_limit`` (s) and ``memory_limit_mb``, ``fallback`` (name of the fallback configuration,
    or null to disable) and ``splits`` (splits that get reference plans; null: all). Returns the attempts in order; the last solved one is kept.
    """
    attempts = []
    primary = planners.get("primary", "astar_lmcut")
    for name in [primary, planners.get("fallback")]:
        if not name:
            continue
        cfg = planners[name]
        res = plan_cached(name, domain, problem, float(cfg["time_limit"]), int(cfg["memory_limit_mb"]), cache,
                          block=cfg)
        attempts.append(res)
        if res.outcome == "solved":
            break
    return attempts
