"""A claim's workspace: its own git + DVC repository under ``~/.cache/planarena/claims/<id>``, with a
copy of the pipeline, the claim's params, and the code it runs pinned for the whole run.

:func:`prepare` makes the workspace: a copy of the pipeline (``dvc.yaml``, ``stages/``, ``src/``,
``.dvcignore``) with a ``params.yaml`` that is the project's params with the claim's overlay
deep-merged in (:func:`claim_params`), only the claim's methods configured, and the claim's suite,
domains and seeds.

**The code is pinned.** A claim takes hours and is resumed across sessions and machines while the
project's code moves on. Each training stage caches its units under a key that includes a hash of
the code it imports, so re-copying the code on every resume retrained everything whenever any module
in that closure changed, even one the training never calls (measured: the Gripper claim's three
finished SATr units changed their key between two commits of which the second only added a
function to ``core/io.py``). So the first :func:`prepare` records the commit
it copied in ``code.json``, and a resumed run keeps the workspace's code and params as they are; a
run begun on another machine (a committed partial run, :mod:`planarena.claims.partial`, carries
``code.json``) takes the pipeline and params from that commit out of git. One claim run is thus one
code version end to end, which its page names. ``fresh_code=True`` (``claims run --fresh-code``)
copies the working tree's code again (finished units whose key changes are trained again).
"""

from __future__ import annotations

import copy
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import yaml

from planarena.claims.spec import Claim
from planarena.config import ConfigError, deep_merge
from planarena.core.io import atomic_write_text

REPO = Path(__file__).resolve().parents[3]
#: What the workspace copies from the repository.
PIPELINE = ("dvc.yaml", "stages", "src", ".dvcignore")
#: Where the claims' pages live (``reports/claims/<id>/``), a partial run's archive among them.
PAGES = REPO / "reports" / "claims"
#: Where workspaces live unless ``--work`` says otherwise (kept between sessions: a rerun resumes).
DEFAULT_WORK = Path(os.environ.get("PLANARENA_CLAIMS_WORK", Path.home() / ".cache" / "planarena" / "claims"))
#: The workspace's record of the code it runs: ``{"commit", "copied"}``.
CODE = "code.json"


def claim_params(claim: Claim, params_text: str, check_methods: bool = True) -> dict:
    """The workspace's params: the project's raw params (``params_text``, profiles included) with
    ``experiment.params`` deep-merged in, then ``methods`` cut to the claim's methods,
    ``suite`` / ``suites.<suite>.domains`` / ``suites.<suite>.path`` and ``evaluation.seeds`` from the
    experiment (when given).

    A measurement claim (``check_methods=False``) keeps the methods as they are: its "methods" are
    the sides its measurement compares, not configured methods.

    Raises:
        ConfigError: a method of the claim is not configured in the params, or its overlay sets a
            key no code declares (names the claim file and the key).
    """
    from planarena.methods.keys import unknown_in
    from planarena.paramkeys import describe

    raw = yaml.safe_load(params_text)
    exp = claim.experiment
    overlay = copy.deepcopy(exp.get("params") or {})
    found = unknown_in(overlay) if isinstance(overlay, dict) else []
    if found:
        raise ConfigError(f"{claim.source}: experiment.params: {describe(found)}")
    merged = deep_merge(raw, overlay)
    profile = merged.get("profile", "default")
    if profile != "default" and profile in (merged.get("profiles") or {}):
        # the active profile is applied over the top level when the stages load params: the claim's
        # values go into the profile too, so that they win (and the override check has nothing to say)
        keep = {k: v for k, v in overlay.items() if k not in ("profile", "profiles")}
        merged["profiles"][profile] = deep_merge(merged["profiles"][profile] or {}, keep)
    methods = merged.get("methods") or {}
    missing = [m for m in claim.methods if m not in methods]
    if missing and check_methods:
        raise ConfigError(f"{claim.source}: experiment.methods {', '.join(missing)} not configured under "
                          "methods: in params.yaml (nor in experiment.params.methods)")
    if check_methods:   # the claim's rows run whatever the profile turns off
        merged["methods"] = {m: ({**methods[m], "run": True} if (methods[m] or {}).get("run") is False else methods[m])
                             for m in claim.methods}
        merged["methods"] = _with_twin_blocks(merged)
    if exp.get("suite"):
        merged["suite"] = exp["suite"]
        suite = merged.setdefault("suites", {}).setdefault(exp["suite"], {})
        if exp.get("domains"):
            have = suite.get("domains")
            if isinstance(have, dict):   # the generated suite: a block per domain, kept for the named ones
                missing = [d for d in exp["domains"] if d not in have]
                if missing:
                    raise ConfigError(f"{claim.source}: experiment.domains {', '.join(missing)} not configured "
                                      f"under suites.{exp['suite']}.domains")
                suite["domains"] = {d: have[d] for d in exp["domains"]}
            else:
                suite["domains"] = list(exp["domains"])
        if exp.get("path"):
            suite["path"] = str(Path(exp["path"]).expanduser().resolve())
    for holder, key in external_paths(merged):
        if not Path(holder[key]).expanduser().is_absolute():
            holder[key] = str((REPO / holder[key]).resolve())  # the workspace is elsewhere
    if exp.get("seeds"):
        merged.setdefault("evaluation", {})["seeds"] = list(exp["seeds"])
    if exp.get("splits"):
        merged.setdefault("evaluation", {})["splits"] = list(exp["splits"])
    merged["report"] = {"paper_runs": [], "description": f"claim `{claim.id}` ({claim.paper}, {claim.where})"}
    return merged


def _with_twin_blocks(params: dict) -> dict:
    """The claim's ``methods`` with a compact block ``<twin>: {twin_of: <row>[, untrained: v]}`` for
    every untrained twin of its learned rows (:func:`planarena.methods.with_twins`), so that the
    workspace's params name every row it runs, and a learned row is read against its twin. A
    workspace whose code is pinned to a commit before 2026-11-29 needs the blocks: its DVC stages
    were a ``foreach`` over the file's ``methods``."""
    from planarena.methods import with_twins

    blocks = dict(params.get("methods") or {})
    resolved = with_twins({**params, "methods": blocks}).get("methods") or {}
    out = {}
    for name, block in resolved.items():
        if name in blocks:
            out[name] = blocks[name]
        elif (block or {}).get("twin_of"):
            compact = {"twin_of": block["twin_of"]}
            if block.get("untrained") is not True:
                compact["untrained"] = block["untrained"]
            out[name] = compact
    return out


def external_paths(params: dict) -> list[tuple[dict, str]]:
    """``(holder, key)`` of every param naming a folder outside the pipeline: ``suites.<name>.path``
    and ``acp.acpbench.path`` (at the top level and in each profile)."""
    out = []
    for scope in [params, *((params.get("profiles") or {}).values())]:
        if not isinstance(scope, dict):
            continue
        for suite in (scope.get("suites") or {}).values():
            if isinstance(suite, dict) and isinstance(suite.get("path"), str):
                out.append((suite, "path"))
        bench = (scope.get("acp") or {}).get("acpbench") if isinstance(scope.get("acp"), dict) else None
        if isinstance(bench, dict) and isinstance(bench.get("path"), str):
            out.append((bench, "path"))
    return out


def git_head() -> str:
    """The short commit of the repository's HEAD, with ``-dirty`` when a file the workspace copies
    (:data:`PIPELINE`) differs from it: the code a run uses is then not that commit's."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", *PIPELINE], cwd=REPO, capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}-dirty" if dirty else head


def pinned_commit(work: Path) -> str | None:
    """The commit whose code the workspace ``work`` runs (its :data:`CODE`), or None before its
    first :func:`prepare`."""
    try:
        return json.loads((Path(work) / CODE).read_text())["commit"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _clean(commit: str | None) -> bool:
    """Whether ``commit`` names code git can give back (not ``unknown``, not ``-dirty``)."""
    return bool(commit) and commit != "unknown" and not commit.endswith("-dirty")


def _from_git(commit: str, work: Path) -> str:
    """Write the pipeline files of ``commit`` (:data:`PIPELINE`) into ``work``; return that commit's
    ``params.yaml`` text.

    Raises:
        ValueError: git does not have the commit (one line naming it).
    """
    try:
        archive = subprocess.run(["git", "archive", "--format=tar", commit, "--", *PIPELINE], cwd=REPO,
                                 capture_output=True, check=True).stdout
        params = subprocess.run(["git", "show", f"{commit}:params.yaml"], cwd=REPO, capture_output=True,
                                text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ValueError(f"commit {commit} of the partial run is not in this repository's history ({exc})") from None
    for item in PIPELINE:
        dst = Path(work) / item
        if dst.is_dir():
            shutil.rmtree(dst)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(work, filter="data")
    return params


def prepare(claim: Claim, work: Path, fresh_code: bool = False, carried: str | None = None, echo=print) -> str:
    """Create the workspace ``work`` (a git + DVC repository) or resume it; return the commit whose
    code it runs (the page names it). Data already computed there is kept.

    - A workspace that has run before (:data:`CODE`) keeps its code and ``params.yaml`` (module
      docstring), unless ``fresh_code``.
    - A new workspace of a run begun elsewhere (``carried``: the commit of a committed partial run)
      takes the pipeline and the params of that commit out of git, the claim's overlay on them.
    - Otherwise the working tree's pipeline is copied (its commit from :func:`git_head`, ``-dirty``
      when a copied file differs from it).

    Raises:
        ConfigError: the claim's overlay or methods do not fit the params (names the claim file).
    """
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    commit = pinned_commit(work)
    have_code = all((work / item).exists() for item in PIPELINE if item != ".dvcignore")
    if commit and have_code and not fresh_code:
        echo(f"[{claim.id}] resuming with the code of commit {commit} (copied when this run began; "
             "--fresh-code copies the working tree's)")
    else:
        params_text = None
        if carried and _clean(carried) and not fresh_code and not have_code:
            try:
                params_text = _from_git(carried, work)
                commit = carried
                echo(f"[{claim.id}] the partial run began at commit {commit}: its code and params are used")
            except ValueError as exc:
                echo(f"[{claim.id}] warning: {exc}; the working tree's code is used (units trained again)")
        if params_text is None:
            commit = git_head()
            for item in PIPELINE:
                src, dst = REPO / item, work / item
                if dst.is_dir():
                    shutil.rmtree(dst)
                (shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
                 if src.is_dir() else shutil.copy(src, dst))
            params_text = (REPO / "params.yaml").read_text()
        params = claim_params(claim, params_text)
        atomic_write_text(work / "params.yaml", yaml.safe_dump(params, sort_keys=False, width=120))
        atomic_write_text(work / CODE, json.dumps({"commit": commit, "copied": time.strftime("%Y-%m-%dT%H:%M:%S")})
                          + "\n")
    (work / ".gitignore").write_text("/data/\n__pycache__/\n/run.log\n")
    (work / "reports" / "claims").mkdir(parents=True, exist_ok=True)  # a dependency of the report stage
    e = env(work)
    if not (work / ".git").is_dir():
        subprocess.run(["git", "init", "-q"], cwd=work, env=e, check=True)
    if not (work / ".dvc").is_dir():
        subprocess.run(["dvc", "init", "-q"], cwd=work, env=e, check=True)
        subprocess.run(["dvc", "config", "core.analytics", "false"], cwd=work, env=e, check=True)
    return commit


def env(work: Path) -> dict:
    """The environment of the workspace's ``dvc repro``: this interpreter's folder first on PATH, the
    workspace's own ``src`` (which its stages fingerprint) on PYTHONPATH, Hugging Face offline."""
    e = dict(os.environ)
    e["PATH"] = str(Path(sys.executable).parent) + os.pathsep + e.get("PATH", "")
    e["PYTHONPATH"] = str(work / "src")
    e.setdefault("HF_HUB_OFFLINE", "1")
    e.setdefault("TRANSFORMERS_OFFLINE", "1")
    return e


__all__ = ["CODE", "DEFAULT_WORK", "PAGES", "PIPELINE", "REPO", "claim_params", "env", "external_paths", "git_head",
           "pinned_commit", "prepare"]
