"""An outside learning planner under the IPC 2023 Learning Track's contract.

The track runs an entrant as two commands:

- ``learn DK DOMAIN TASK1 ... TASKN``: learn domain knowledge from the training tasks (given in
  ascending difficulty) and write it to the path ``DK``;
- ``plan DK DOMAIN TASK PLAN``: solve ``TASK`` with that knowledge, writing ``PLAN`` (anytime
  planners write ``PLAN.1``, ``PLAN.2``, ...; the cheapest valid plan counts).

At a limit the whole process group gets SIGTERM (it may still write its domain knowledge or last
plan), then SIGKILL (:func:`planarena.core.limits.run_limited`; the limit is CPU time).

A row runs any program that follows the contract, with no edit to planarena::

    methods:
      my_planner:
        method: ipc_planner
        learn: path/to/learn            # a command: a path or words, e.g. "python learn.py"
        plan: path/to/plan              # or image: planner.sif (apptainer run --app learn|plan IMAGE ...)
        learn_time_limit: 1800          # CPU s per domain (the track: 24 h); plan: evaluation.time_limit
        memory_limit_mb: 8192
        kill_grace: 10                  # s between SIGTERM and SIGKILL

Training calls ``learn`` once per domain of the suite on its train split (smallest first) and keeps
``DK`` under ``data/models/<row>/<domain>/``; evaluation calls ``plan`` once per problem. A row
without ``learn`` plans with an empty ``DK`` file. Every plan the row returns is validated by the
harness like any other row's; of an anytime run's several plans the cheapest valid one is returned
(when none is valid, the last one, recorded as invalid); a single plan is returned unvalidated, for
the harness to validate once.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tempfile
from pathlib import Path

from planarena.config import ConfigError
from planarena.core.limits import run_limited
from planarena.core.pddl import PDDLError, read_plan_file
from planarena.core.validation import validate_plan
from planarena.methods.base import Attempt, Method, PlanningTask, ReportTraits
from planarena.methods.keys import IPC_PLANNER_KEYS

#: keys of an ``ipc_planner`` block (besides ``method``, ``run``, ``splits``, ``seeds``, ``time_limit``,
#: ``train_problems``), declared with every row's keys in :mod:`planarena.methods.keys`
KEYS = IPC_PLANNER_KEYS
_NUMBERED = re.compile(r"\.(\d+)$")


def _words(value, where: str) -> list[str]:
    if isinstance(value, str):
        return shlex.split(value)
    if isinstance(value, list) and value and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v) for v in value]
    raise ConfigError(f"params: {where}: a command (a string or a list of words), got {value!r}")


def contract_commands(name: str, config: dict) -> tuple[list[str] | None, list[str]]:
    """``(learn command or None, plan command)`` of an ``ipc_planner`` block: the ``learn`` and
    ``plan`` commands as words, or for ``image`` the track's Apptainer calls
    (``apptainer run --app learn IMAGE`` / ``--app plan IMAGE``). The contract's arguments are
    appended when run.

    Raises:
        ConfigError: neither ``plan`` nor ``image``, or both ``image`` and a command (names the block).
    """
    where = f"methods.{name}"
    image = config.get("image")
    if image and (config.get("learn") or config.get("plan")):
        raise ConfigError(f"params: {where}: set `image`, or `learn` and `plan`, not both")
    if image:
        return (["apptainer", "run", "--app", "learn", str(image)], ["apptainer", "run", "--app", "plan", str(image)])
    if not config.get("plan"):
        raise ConfigError(f"params: {where}: set `plan` (the command run as `plan DK DOMAIN TASK PLAN`) "
                          f"or `image` (an Apptainer image with apps learn and plan)")
    learn = _words(config["learn"], f"{where}.learn") if config.get("learn") else None
    return learn, _words(config["plan"], f"{where}.plan")


def plan_files(plan: Path) -> list[Path]:
    """The plan files of one ``plan`` call as the IPC reads them: ``PLAN`` and ``PLAN.1``,
    ``PLAN.2``, ... that exist, in the order written (``PLAN`` first, then by number)."""
    numbered = sorted((p for p in plan.parent.glob(plan.name + ".*") if _NUMBERED.search(p.name)),
                      key=lambda p: int(_NUMBERED.search(p.name).group(1)))
    return ([plan] if plan.is_file() else []) + [p for p in numbered if p.is_file()]


class IPCPlanner(Method):
    """An outside planner called through the IPC 2023 Learning Track's ``learn`` / ``plan``
    commands (see the module docstring for the params block).

    Raises (on construction):
        ConfigError: a bad block (:func:`contract_commands`), an unknown key, or a ``kind`` that is
            not one of :data:`planarena.methods.base.KINDS`.
    """

    family = "outside-planner"
    tasks = frozenset({"plan"})
    stochastic = False
    parallel = True

    def __init__(self, name: str, config: dict, params: dict, layout):
        super().__init__(name, config, params, layout)
        unknown = sorted(set(config) - set(KEYS) - {"method", "run", "splits", "seeds", "time_limit", "train_problems"})
        if unknown:
            raise ConfigError(f"params: methods.{name} has unknown key(s) {unknown}; valid: {list(KEYS)}")
        self.learn_cmd, self.plan_cmd = contract_commands(name, config)
        self.model_dir: Path | None = None

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        """A ``search`` row unless the block says its ``kind`` (an outside planner may be a policy)."""
        return ReportTraits(kind=str(config.get("kind", "search")))

    @property
    def input_files(self) -> tuple[Path, ...]:  # type: ignore[override]
        """The programs the row runs: every word of its commands (or its image) that is a file,
        but not the Python installation's own (an interpreter): an edit to one reruns its stages."""
        import sys

        words = [w for c in (self.learn_cmd, self.plan_cmd) if c for w in c]
        python = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix)}
        out = []
        for w in dict.fromkeys(words):
            f = Path(w)
            if f.is_file() and not any(root in f.resolve().parents for root in python):
                out.append(f)
        return tuple(out)

    def _limits(self) -> tuple[int, float]:
        return int(self.config.get("memory_limit_mb", 8192)), float(self.config.get("kill_grace", 10))

    def train(self, model_dir: Path) -> dict:
        """``learn DK DOMAIN TASK...`` once per domain (train split, smallest first); ``DK`` is
        ``<model_dir>/<domain>/dk``. A learner that fails or passes its limit is recorded per domain
        (its domain's plan attempts then say so); one that wrote ``DK`` before the limit keeps it."""
        memory, grace = self._limits()
        limit = float(self.config.get("learn_time_limit", 1800))
        facts: dict = {"domains": {}, "learn_cpu_s": 0.0}   # *_s: times go to the train log, not train.json
        for domain in self.ps.domains:
            dk = model_dir / domain / "dk"
            if dk.parent.exists():
                shutil.rmtree(dk.parent)
            dk.parent.mkdir(parents=True)
            if self.learn_cmd is None:
                dk.write_text("")
                facts["domains"][domain] = {"learn": "none (the row has no learn command)"}
                continue
            tasks = sorted(self.training_problems(domain), key=lambda e: (e.objects, e.problem))
            cmd = [*self.learn_cmd, str(dk.resolve()), str(self.ps.domain_file(domain).resolve()),
                   *(str(self.ps.problem_file(e).resolve()) for e in tasks)]
            with tempfile.TemporaryDirectory(prefix="planarena-learn-") as tmp:
                run = run_limited(cmd, tmp, limit, memory, grace, log=dk.parent / "learn.log")
            outcome = "timeout" if run.timed_out else "ok" if run.returncode == 0 else f"exit code {run.returncode}"
            facts["domains"][domain] = {"learn": outcome, "tasks": len(tasks), "dk_written": dk.exists()}
            facts["learn_cpu_s"] += run.cpu_s
        return facts

    def load(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """``plan DK DOMAIN TASK PLAN`` under the task's CPU-time limit; the cheapest valid plan of
        ``PLAN``, ``PLAN.1``, ... (:func:`plan_files`)."""
        domain = task.entry.domain
        dk = (self.model_dir or self.layout.models / self.name) / domain / "dk"
        if not dk.exists():
            log = dk.parent / "learn.log"
            tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
            return Attempt("error", None, f"learn wrote no domain knowledge for {domain}"
                           + (f": {' | '.join(tail)}" if tail else ""))
        memory, grace = self._limits()
        with tempfile.TemporaryDirectory(prefix="planarena-plan-") as tmp:
            plan = Path(tmp) / "plan"
            cmd = [*self.plan_cmd, str(dk.resolve()), str(Path(task.domain_file).resolve()),
                   str(Path(task.problem_file).resolve()), str(plan)]
            run = run_limited(cmd, tmp, task.time_limit, memory, grace, log=Path(tmp) / "plan.log")
            found = []
            for f in plan_files(plan):
                try:
                    found.append(read_plan_file(f))
                except PDDLError:
                    found.append(None)
        extra = {"plans_written": len(found), "cpu_s": run.cpu_s, "exit_code": run.returncode}
        readable = [a for a in found if a is not None]
        if len(readable) == 1:  # nothing to choose: the harness validates it (once) like any row's plan
            return Attempt("solved", readable[0], wall_time=run.wall_s, extra=extra)
        best, best_cost = None, None
        for actions in readable:
            verdict = validate_plan(task.domain_file, task.problem_file, actions)
            if verdict.valid and (best_cost is None or verdict.cost < best_cost):
                best, best_cost = actions, verdict.cost
        if best is not None:
            return Attempt("solved", best, wall_time=run.wall_s, extra={**extra, "cost": best_cost})
        last = readable[-1] if readable else None
        if last is not None:   # no valid plan: return the last one, which the harness records as invalid
            return Attempt("solved", last, wall_time=run.wall_s, extra=extra)
        if run.timed_out:
            return Attempt("timeout", None, f"CPU time limit {task.time_limit:g} s, no plan file", wall_time=run.wall_s,
                           extra=extra)
        if run.returncode != 0:
            tail = " | ".join(run.output.strip().splitlines()[-3:])
            return Attempt("error", None, f"plan exited {run.returncode}: {tail}", wall_time=run.wall_s, extra=extra)
        return Attempt("unsolved", None, "plan exited 0 without a plan file", wall_time=run.wall_s, extra=extra)


__all__ = ["IPCPlanner", "contract_commands", "plan_files"]
