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

The IPC 2026 tracks dropped containers for a plainer form, which a row takes as ``ipc2026``
instead of ``learn`` / ``plan`` / ``image``::

    methods:
      my_planner:
        method: ipc_planner
        ipc2026:
          source: path/to/planner       # the self-contained source folder (copied, never written to)
          compile: ./compile            # run once in the copy (optional; CPU limit learn_time_limit)
          run: ./run                    # run DOMAIN PROBLEM PLANFILE, once per problem

Its train stage copies ``source`` to ``data/models/<row>/build`` and runs ``compile`` there; each
problem runs ``run DOMAIN PROBLEM PLANFILE`` in a fresh temporary folder, with every word of ``run``
that names a file of the build (``./run``, ``bin/planner``) given as its absolute path, under the
same CPU-time and memory limits, process-group kill and plan validation as the 2023 form. The block
is nested, with the track's own names, because a row's top-level ``run`` is already its on/off switch.

Training calls ``learn`` once per domain of the suite on its train split (smallest first) and keeps
``DK`` under ``data/models/<row>/<domain>/``; evaluation calls ``plan`` once per problem. A row
without ``learn`` plans with an empty ``DK`` file. Every plan the row returns is validated by the
harness like any other row's; of an anytime run's several plans the cheapest valid one is returned
(when none is valid, the last one, recorded as invalid); a single plan is returned unvalidated, for
the harness to validate once.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path

from planarena.config import ConfigError
from planarena.core.io import read_json_or_empty as json_or_empty
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
    learn = _absolute(_words(config["learn"], f"{where}.learn")) if config.get("learn") else None
    return learn, _absolute(_words(config["plan"], f"{where}.plan"))


def _absolute(words: list[str]) -> list[str]:
    """``words`` with each relative one that names an existing file (``examples/x/plan.py``,
    ``.venv-outside/bin/python``) made absolute against the working folder of the stage (the
    repository), since the contract runs every command in a fresh temporary folder. Not resolved:
    a virtual environment's ``bin/python`` is a link whose target would lose the environment."""
    return [os.path.abspath(w) if not os.path.isabs(w) and os.path.isfile(w) else w for w in words]


#: keys of an ``ipc2026`` block (the IPC 2026 compile / run form)
IPC2026_KEYS = ("source", "compile", "run")


def ipc2026_form(name: str, config: dict) -> dict | None:
    """The ``ipc2026`` block of an ``ipc_planner`` row as ``{source: Path, compile: words or None,
    run: words}``, or None when the row uses the 2023 form.

    Raises:
        ConfigError: the block is not a mapping, has an unknown key, lacks ``source`` or ``run``,
            ``source`` is not a folder, or the row also sets ``learn``, ``plan`` or ``image``
            (each names ``methods.<row>.ipc2026``).
    """
    block = config.get("ipc2026")
    if block is None:
        return None
    where = f"methods.{name}.ipc2026"
    if not isinstance(block, dict):
        raise ConfigError(f"params: {where}: a mapping with keys {list(IPC2026_KEYS)}, got {block!r}")
    unknown = sorted(set(block) - set(IPC2026_KEYS))
    if unknown:
        raise ConfigError(f"params: {where} has unknown key(s) {unknown}; valid: {list(IPC2026_KEYS)}")
    if any(config.get(k) for k in ("learn", "plan", "image")):
        raise ConfigError(f"params: {where}: the IPC 2026 form replaces `learn`, `plan` and `image`; set one form")
    if not block.get("source") or not block.get("run"):
        raise ConfigError(f"params: {where}: set `source` (the planner's folder) and `run` "
                          f"(the command run as `run DOMAIN PROBLEM PLANFILE`)")
    source = Path(str(block["source"]))
    if not source.is_dir():
        raise ConfigError(f"params: {where}.source: {source} is not a folder")
    return {"source": source,
            "compile": _words(block["compile"], f"{where}.compile") if block.get("compile") else None,
            "run": _words(block["run"], f"{where}.run")}


def in_build(words: list[str], build: Path) -> list[str]:
    """``words`` with each one that names a file of ``build`` (relative, e.g. ``./run``) replaced by
    its absolute path, so a command of the compiled planner runs from any working folder."""
    out = []
    for w in words:
        f = build / w
        out.append(str(f.resolve()) if not Path(w).is_absolute() and f.is_file() else w)
    return out


def _cannot_run(row: str, key: str, exc: OSError) -> str:
    """One line for a command that cannot start (``FileNotFoundError``, ``PermissionError``)."""
    what = getattr(exc, "filename", None) or str(exc)
    return (f"cannot run {what} (methods.{row}.{key}): {exc.strerror or exc}; is the planner installed? "
            f"(the outside planners of params.yaml: make outside)")


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
        self.ipc2026 = ipc2026_form(name, config)
        self.learn_cmd, self.plan_cmd = (None, []) if self.ipc2026 else contract_commands(name, config)
        self.model_dir: Path | None = None
        self.compiled = "ok"   # the IPC 2026 form's compile outcome (train.json, read by load)
        self.learned: dict = {}   # domain -> the learn command's outcome (train.json, read by load)

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        """A ``search`` row unless the block says its ``kind`` (an outside planner may be a policy)."""
        return ReportTraits(kind=str(config.get("kind", "search")))

    @property
    def input_files(self) -> tuple[Path, ...]:  # type: ignore[override]
        """The programs the row runs: every word of its commands (or its image) that is a file,
        but not the Python installation's own (an interpreter): an edit to one reruns its stages."""
        import sys

        if self.ipc2026:   # the source folder: an edit anywhere in it reruns the row
            return (self.ipc2026["source"],)
        words = [w for c in (self.learn_cmd, self.plan_cmd) if c for w in c]
        python = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix)}
        out = []
        for w in dict.fromkeys(words):
            f = Path(w)
            if f.is_file() and not any(root in f.resolve().parents for root in python):
                out.append(f)
        return tuple(out)

    @property
    def learn_time_limit(self) -> float:
        """CPU seconds per domain for ``learn`` (or the IPC 2026 form's ``compile``); default 1800."""
        return float(self.config.get("learn_time_limit", 1800))

    def _limits(self) -> tuple[int, float]:
        return int(self.config.get("memory_limit_mb", 8192)), float(self.config.get("kill_grace", 10))

    def train(self, model_dir: Path) -> dict:
        """``learn DK DOMAIN TASK...`` once per domain (train split, smallest first); ``DK`` is
        ``<model_dir>/<domain>/dk``. A learner that fails or passes its limit is recorded per domain
        (its domain's plan attempts then say so); one that wrote ``DK`` before the limit keeps it."""
        memory, grace = self._limits()
        limit = self.learn_time_limit
        if self.ipc2026:
            return self._compile(Path(model_dir), limit, memory, grace)
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
                try:
                    run = run_limited(cmd, tmp, limit, memory, grace, log=dk.parent / "learn.log")
                except OSError as exc:   # a command that is not installed: every plan attempt says so
                    (dk.parent / "learn.log").write_text(_cannot_run(self.name, "learn", exc) + "\n")
                    facts["domains"][domain] = {"learn": _cannot_run(self.name, "learn", exc), "tasks": len(tasks),
                                                "dk_written": False}
                    continue
            outcome = "timeout" if run.timed_out else "ok" if run.returncode == 0 else f"exit code {run.returncode}"
            facts["domains"][domain] = {"learn": outcome, "tasks": len(tasks), "dk_written": dk.exists()}
            facts["learn_cpu_s"] += run.cpu_s
        return facts

    def _compile(self, model_dir: Path, limit: float, memory: int, grace: float) -> dict:
        """The IPC 2026 form's training: copy ``source`` to ``<model_dir>/build`` and run ``compile``
        there once (its log: ``compile.log``). A failed or timed-out compile is recorded; every plan
        attempt of the row then says so."""
        build = model_dir / "build"
        if build.exists():
            shutil.rmtree(build)
        shutil.copytree(self.ipc2026["source"], build, symlinks=True)
        if self.ipc2026["compile"] is None:
            return {"compile": "none (the row has no compile command)"}
        run = run_limited(in_build(self.ipc2026["compile"], build), build, limit, memory, grace,
                          log=model_dir / "compile.log")
        outcome = "timeout" if run.timed_out else "ok" if run.returncode == 0 else f"exit code {run.returncode}"
        return {"compile": outcome, "compile_cpu_s": run.cpu_s}

    def load(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)
        facts = json_or_empty(self.model_dir / "train.json")
        self.compiled = facts.get("compile", "ok")
        self.learned = {d: f.get("learn") for d, f in (facts.get("domains") or {}).items()}

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """``plan DK DOMAIN TASK PLAN`` under the task's CPU-time limit; the cheapest valid plan of
        ``PLAN``, ``PLAN.1``, ... (:func:`plan_files`)."""
        domain = task.entry.domain
        model_dir = self.model_dir or self.layout.models / self.name
        files = [str(Path(task.domain_file).resolve()), str(Path(task.problem_file).resolve())]
        if self.ipc2026:
            build, log = model_dir / "build", model_dir / "compile.log"
            compiled = self.compiled
            if not build.is_dir() or not (compiled == "ok" or compiled.startswith("none")):
                tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
                return Attempt("error", None, f"compile: {compiled if build.is_dir() else 'no build folder'}"
                               + (f": {' | '.join(tail)}" if tail else ""))
            command = in_build(self.ipc2026["run"], build)
        else:
            dk = model_dir / domain / "dk"
            if not dk.exists():
                if self.learned.get(domain) == "timeout":   # the learner's budget, not a crash
                    limit = self.learn_time_limit
                    return Attempt("unsolved", None, f"learn reached its CPU time limit ({limit:g} s) without writing "
                                   f"domain knowledge for {domain}", extra={"stop": "budget"})
                log = dk.parent / "learn.log"
                tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
                return Attempt("error", None, f"learn wrote no domain knowledge for {domain}"
                               + (f": {' | '.join(tail)}" if tail else ""))
            command = [*self.plan_cmd, str(dk.resolve())]
        memory, grace = self._limits()
        with tempfile.TemporaryDirectory(prefix="planarena-plan-") as tmp:
            plan = Path(tmp) / "plan"
            cmd = [*command, *files, str(plan)]
            try:
                run = run_limited(cmd, tmp, task.time_limit, memory, grace, log=Path(tmp) / "plan.log")
            except OSError as exc:
                return Attempt("error", None, _cannot_run(self.name, "plan", exc))
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


__all__ = ["IPC2026_KEYS", "IPCPlanner", "contract_commands", "in_build", "ipc2026_form", "plan_files"]
