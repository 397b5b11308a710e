"""Section "Info": provenance (docs/concepts.md#the-pages: git revision, params hash, package
versions, profile, hardware), the settings methods declare for the report
(:attr:`planarena.methods.base.ReportTraits.info`), and one row per method with results."""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from planarena.core.io import stable_hash
from planarena.core.records import ResultRecord
from planarena.methods.base import ReportTraits
from planarena.report.markdown import md_table
from planarena.report.records import latest_records, method_order, record_task
from planarena.report.metrics import PARAMETERS, TIME, TREE_NODES, WALL_TIME, geometric_mean
from planarena.report.traits import info_rows, method_label, row_order

#: Distributions whose versions the Info section lists (planarena's key dependencies).
KEY_PACKAGES: tuple[str, ...] = (
    "dvc",
    "pymimir",
    "wlplan",
    "up-fast-downward",
    "unified-planning",
    "pddl",
    "torch",
    "xgboost-cpu",
    "sentence-transformers",
    "pypddl-datasets",
    "pandas",
)


def _run_git(args: Sequence[str]) -> str | None:
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout


def git_state() -> tuple[str | None, bool | None]:
    """Short HEAD revision and whether tracked files differ from it (None, None outside git).

    Changes to ``params.yaml`` (captured by the params hash), ``dvc.lock`` and ``reports/`` (written
    by the pipeline itself) do not make the tree dirty.
    """
    rev = _run_git(["rev-parse", "--short", "HEAD"])
    if rev is None:
        return None, None
    status = _run_git(
        [
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ".",
            ":(exclude)params.yaml",
            ":(exclude)dvc.lock",
            ":(exclude)reports",
        ]
    )
    return rev.strip(), (None if status is None else bool(status.strip()))


def package_versions(names: Sequence[str] = KEY_PACKAGES) -> dict[str, str]:
    """Installed version of each distribution, or ``not installed``."""
    out = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def cpu_model(cpuinfo: str | os.PathLike = "/proc/cpuinfo") -> str:
    """First ``model name`` in ``/proc/cpuinfo``, else :func:`platform.processor`, else unknown."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


#: The vector extensions that move floats and timings between machines (``/proc/cpuinfo`` flags).
VECTOR_FLAGS: tuple[str, ...] = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile")


def vector_extensions(cpuinfo: str | os.PathLike = "/proc/cpuinfo") -> str:
    """``"avx avx2 fma sse4_2 (no AVX-512)"``: which of :data:`VECTOR_FLAGS` the first CPU's ``flags``
    line lists, and whether AVX-512 is absent; ``"unknown"`` without ``/proc/cpuinfo``."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            if line.lower().startswith("flags") and ":" in line:
                flags = set(line.split(":", 1)[1].split())
                have = [f for f in VECTOR_FLAGS if f in flags]
                return " ".join(have) + ("" if "avx512f" in flags else " (no AVX-512)")
    except OSError:
        pass
    return "unknown"


def torch_build() -> str:
    """``"2.13.0+cu130 (CUDA 13.0 build)"`` / ``"2.13.0+cpu (CPU build)"``: the installed torch and
    whether it is a CUDA build (a CPU-only machine then carries GPU libraries it never uses), read
    from the distribution metadata and ``torch/version.py`` without importing torch; ``"not
    installed"``."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return "not installed"
    text = ""
    version_file = Path(list(spec.submodule_search_locations)[0]) / "version.py"
    try:
        text = version_file.read_text()
    except OSError:
        pass
    fields = {}
    for line in text.splitlines():   # `__version__ = '2.13.0+cu130'`, `cuda: Optional[str] = '13.0'`
        if "=" not in line:
            continue
        left, value = line.split("=", 1)
        key = left.split(":", 1)[0].strip()
        if key in ("__version__", "cuda"):
            fields[key] = value.strip().strip("'\"")
    version = fields.get("__version__") or package_versions(("torch",))["torch"]
    cuda = fields.get("cuda")
    return f"{version} (" + (f"CUDA {cuda} build" if cuda and cuda != "None" else "CPU build") + ")"


def _suite_name(params: Mapping) -> str:
    suite = params.get("suite")
    if isinstance(suite, Mapping):
        suite = suite.get("name")
    return str(suite) if suite is not None else "unknown"


def planner_limits(params: Mapping) -> str:
    """``"astar_lmcut 10 s / 4096 MiB; lama_first 60 s / 4096 MiB"`` from ``params['planners']``."""
    planners = params.get("planners") or {}
    parts = [
        f"{name} {cfg.get('time_limit')} s / {cfg.get('memory_limit_mb')} MiB"
        for name, cfg in sorted(planners.items())
        if isinstance(cfg, Mapping) and "time_limit" in cfg
    ]
    return "; ".join(parts) or "unknown"


def code_hash(inputs_dir: str | os.PathLike | None) -> str | None:
    """A hash of the code that produced the records: the ``code`` fingerprints (AST hashes of each
    stage's import closure, :func:`planarena.core.fingerprint.code_fingerprint`) of every stage inputs
    file under ``inputs_dir`` (``data/inputs``, written by the ``resolve`` stages). None when there
    are none. Unlike git's dirty flag, a README edit or a comment does not change it."""
    if inputs_dir is None or not Path(inputs_dir).is_dir():
        return None
    codes = {}
    for f in sorted(Path(inputs_dir).rglob("*.json")):
        try:
            code = json.loads(f.read_text()).get("code")
        except (OSError, ValueError):
            continue
        if code:
            codes[str(f.relative_to(inputs_dir))] = code
    return stable_hash(codes) if codes else None


def report_params(inputs_dir: str | os.PathLike | None) -> dict | None:
    """The resolved params the run's ``report`` stage read (``<inputs_dir>/stages/report.json``,
    written by the ``resolve`` stage: every param but ``jobs``, ``executor`` and ``profiles``), or
    None when there is no such file (a report rendered without the resolve stage)."""
    if inputs_dir is None:
        return None
    try:
        return json.loads((Path(inputs_dir) / "stages" / "report.json").read_text())["params"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def collect_info(params: Mapping, traits: Mapping[str, ReportTraits] | None = None,
                 inputs_dir: str | os.PathLike | None = None, environment: Mapping | None = None) -> dict:
    """Provenance for the section, as a dict (git, code hash, params hash, profile, suite, CPU,
    Python, packages, planner limits), plus ``method_settings``: the ``(item, value)`` rows the
    configured methods declare (:func:`planarena.report.traits.info_rows` of ``traits``).
    ``inputs_dir``: the stage inputs folder (``data/inputs``) for :func:`code_hash` and the params
    hash (of :func:`report_params`; of ``params`` when it has none);
    ``environment``: the machine the records came from (:func:`planarena.report.bundle.environment`
    of a committed run) instead of this one's."""
    rev, dirty = git_state()
    env = dict(environment or {})
    rendered_at = None
    if environment is not None:  # a committed run's records: its own commit, and where this page was rendered
        rendered_at = rev if rev != env.get("git_revision") else None
        rev, dirty = env.get("git_revision"), env.get("git_dirty")
    return {
        "git_revision": rev,
        "git_dirty": dirty,
        "rendered_at": rendered_at,
        "code_hash": code_hash(inputs_dir),
        # the run's params (also when the page is rendered later from its committed records)
        "params_hash": stable_hash(report_params(inputs_dir) or params),
        "profile": str(params.get("profile", "unknown")),
        "suite": _suite_name(params),
        "cpu_model": env.get("cpu_model") or cpu_model(),
        "cpu_count": env.get("cpu_count") or os.cpu_count(),
        "vector_extensions": env.get("vector_extensions") or vector_extensions(),
        "torch_build": env.get("torch") or torch_build(),
        "python": env.get("python") or platform.python_version(),
        "packages": env.get("packages") or package_versions(),
        "planner_limits": planner_limits(params),
        "method_settings": info_rows(traits or {}),
    }


def methods_table(records: Iterable[ResultRecord]) -> pd.DataFrame:
    """One row per method: Method, Family, Task, Seeds, Records (in use), config_hash, and, when
    some row read reduced features, ``Features reduced``: per domain, what the features stage cut
    and why (the records' ``features_reduced``, e.g. fewer WL iterations under
    ``embed_wl.max_features``)."""
    latest = latest_records(records)
    rows = []
    for m in method_order(latest):
        recs = [r for r in latest if r.method == m]
        reduced: dict = {}
        for r in recs:
            reduced.update((r.extra or {}).get("features_reduced") or {})
        rows.append(
            {
                "Method": m,
                "Family": recs[0].family,
                "Task": ", ".join(sorted({record_task(r) for r in recs})),
                "Seeds": ", ".join(str(s) for s in sorted({r.seed for r in recs})),
                "Records": str(len(recs)),
                "config_hash": ", ".join(sorted({r.config_hash or "(none)" for r in recs})),
                "Features reduced": "; ".join(f"{d}: {why}" for d, why in sorted(reduced.items())),
            }
        )
    columns = ["Method", "Family", "Task", "Seeds", "Records", "config_hash"]
    if any(row["Features reduced"] for row in rows):
        columns.append("Features reduced")
    return pd.DataFrame(rows, columns=columns)


def render_info(info: Mapping, methods: pd.DataFrame) -> str:
    """The section body from :func:`collect_info`'s dict and :func:`methods_table`."""
    rev = info.get("git_revision") or ("not recorded in the run's records (an archive older than that field; the "
                                       "code hash below is the run's)" if info.get("rendered_at")
                                       else "unknown (not a git checkout)")
    dirty = info.get("git_dirty")
    if dirty is True:
        rev += " (dirty: uncommitted changes to tracked files)"
    elif dirty is False:
        rev += " (clean)"
    if info.get("rendered_at"):
        rev += f"; this page rendered from the run's committed records at {info['rendered_at']}"
    kv = pd.DataFrame(
        [
            ("git revision", rev),
            (
                "code hash",
                f"{info.get('code_hash') or 'unknown'} (AST hashes of every stage's code, from `data/inputs`)",
            ),
            (
                "params hash",
                f"{info.get('params_hash')} (config.stable_hash of the resolved params the report stage read, "
                f"`data/inputs/stages/report.json`)",
            ),
            ("profile", info.get("profile")),
            ("suite", info.get("suite")),
            ("CPU", f"{info.get('cpu_model')}, {info.get('cpu_count')} cores, vector extensions: "
                    f"{info.get('vector_extensions', 'unknown')}"),
            ("torch", info.get("torch_build", "unknown")),
            ("Python", info.get("python")),
            ("Fast Downward limits", info.get("planner_limits", "unknown")),
            *(tuple(row) for row in info.get("method_settings") or ()),
        ],
        columns=["Item", "Value"],
    )
    pkgs = pd.DataFrame(
        sorted((info.get("packages") or {}).items()), columns=["Package", "Version"]
    )
    parts = [md_table(kv), "", "Package versions:", "", md_table(pkgs), ""]
    parts.append("Methods with results:")
    parts.append("")
    parts.append(md_table(methods) if not methods.empty else "No result records yet.")
    return "\n".join(parts)


def render(info: Mapping, methods: pd.DataFrame) -> list[str]:
    """Markdown lines of the section."""
    return ["## Info", "", render_info(info, methods)]


def method_lines(records: Iterable[ResultRecord], traits: Mapping[str, ReportTraits] | None = None) -> list[str]:
    """The front page's one line per method (headline order,
    :func:`planarena.report.traits.row_order`): family, tasks (with the ``inputs`` its ranking
    records declare), seeds, and cost from the records: evaluation wall time per seed (the sum of
    ``wall_time`` over its records, divided by its seeds), the time per problem of the ``plan``
    task (geometric mean over its own solved-and-validated problems, per problem the mean over
    seeds) and its largest model (``extra.parameters`` / ``extra.tree_nodes``)."""
    traits = traits or {}
    latest = latest_records(records)
    by_method: dict[str, list[ResultRecord]] = {}
    for r in latest:
        by_method.setdefault(r.method, []).append(r)
    family = {m: recs[0].family for m, recs in by_method.items()}
    lines = []
    for m in row_order(by_method, family, traits):
        recs = by_method[m]
        tasks = sorted({record_task(r) for r in recs})
        inputs = sorted({str((r.extra or {}).get("inputs")) for r in recs if (r.extra or {}).get("inputs")})
        task_text = ", ".join(tasks) + (f" (inputs: {'; '.join(inputs)})" if inputs else "")
        seeds = sorted({r.seed for r in recs})
        parts = [f"`{family[m]}`", task_text, f"seeds {', '.join(map(str, seeds))}"]
        wall = sum(r.wall_time for r in recs) / len(seeds)
        parts.append(f"evaluation {WALL_TIME.format_value(wall)} s per seed over {len(recs)} records")
        solved: dict[tuple, list[float]] = {}
        for r in recs:
            if record_task(r) == "plan" and r.counts_as_solved:
                solved.setdefault((r.domain, r.split, r.problem), []).append(r.wall_time)
        if solved:
            t = geometric_mean([sum(v) / len(v) for _, v in sorted(solved.items())])
            parts.append(f"{TIME.format_value(t)} s per solved problem (geo-mean)")
        for metric in (PARAMETERS, TREE_NODES):
            values = [float(v) for r in recs for v in [(r.extra or {}).get(metric.name)]
                      if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if values:
                parts.append(f"largest model {metric.format_value(max(values))} {metric.title}")
        lines.append(f"- {method_label(traits, m)}: " + "; ".join(parts))
    return lines
