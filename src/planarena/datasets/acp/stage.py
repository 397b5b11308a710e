"""The ``acp_data`` stage: generate, expand and write the ACP datasets of ``acp.domains``.

:func:`run_stage` builds every domain with :func:`build_domain` (problems from :mod:`.generators`,
records from :mod:`.space`, files in the format of :mod:`.records`) and writes
``data/acp/manifest.json``. Resumable: records and skips made with the same settings are reused.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from planarena.config import ConfigError, Layout, get
from planarena.core.io import atomic_write_bytes, derive_seed
from planarena.datasets.acp.acpbench import acpbench_root, candidates, domain_folder
from planarena.datasets.acp.generators import (
    DOMAINS,
    GEN_ROOT,
    domain_settings,
    domain_text,
    generate_problem_text,
    problem_name,
    problem_seed,
)
from planarena.datasets.acp.records import cached_record, write_problem_record
from planarena.datasets.acp.space import (
    SkipProblem,
    build_problem_record,
    parse_domain,
    parse_problem,
)


def _write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=1) + "\n").encode())


def _skip_key(seed: int, kwargs: dict, limits: dict) -> str:
    return json.dumps([seed, kwargs, limits], sort_keys=True)


def _previous_skips(summary_path: Path) -> dict[str, dict]:
    """Skips recorded by a previous run (problem -> record), to resume without re-expanding."""
    try:
        old = json.loads(summary_path.read_text())
        return {s["problem"]: s for s in old.get("skipped", []) if "key" in s}
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        return {}


SOURCES = ("generated", "acpbench")


def acp_source(params: dict) -> str:
    """``acp.source``: ``generated`` (pypddl-datasets generators, the default) or ``acpbench``
    (ACPBench's published problems, :mod:`.acpbench`).

    Raises:
        ConfigError: another value.
    """
    source = get(params, "acp.source", "generated") or "generated"
    if source not in SOURCES:
        raise ConfigError(f"params: acp.source must be one of {', '.join(SOURCES)}, got {source!r}")
    return source


def _generated_draws(settings: dict, base_seed: int, domain: str):
    """``(name, seed, generator kwargs, text thunk)`` of the problems drawn from the generator."""
    for index in range(settings["max_attempts"]):
        kwargs = settings["configs"][index % len(settings["configs"])]
        seed = problem_seed(base_seed, domain, index)
        yield (problem_name(domain, kwargs, index), seed, kwargs,
               lambda kwargs=kwargs, seed=seed: generate_problem_text(domain, kwargs, seed))


def _acpbench_draws(folder: Path, base_seed: int, domain: str):
    """``(name, seed, provenance, text thunk)`` of ACPBench's problem files in the
    order of :func:`.acpbench.candidates`; the provenance (the record's ``generator`` field) names
    the file and a hash of its bytes, so an edited file is recomputed; the seed (plan sampling)
    derives from the file name."""
    for path in candidates(folder):
        data = path.read_bytes()
        prov = {"acpbench": f"{domain}/{path.name}", "sha256": hashlib.sha256(data).hexdigest()[:16]}
        yield (path.stem, derive_seed(base_seed, "acpbench", domain, path.stem), prov,
               lambda data=data: data.decode())


def build_domain(params: dict, domain: str, out_dir: Path) -> dict:
    """Generate, expand and write one domain's problems under ``out_dir`` (``data/acp/<domain>``);
    return its summary (also written to ``summary.json``).

    Summary keys (Table 7 columns of EmbedPlan Appendix C): ``problems`` (kept), ``states`` (sum of
    state-space sizes), ``transitions`` (unique (s, a, s') over stored plans, summed over problems),
    ``transitions_space`` (edges of the state spaces, summed), ``actions`` (action schemas of the
    domain), ``plans`` (stored plans), and ``skipped`` (``[{problem, reason, seed, generator}]``),
    ``per_problem``.

    Raises:
        ConfigError: bad ``acp`` params for this domain.
        PDDLError: a generated or ACPBench file does not parse (names the file).
    """
    start = time.perf_counter()
    base_seed = int(get(params, "seed"))
    source = acp_source(params)
    settings = domain_settings(params, domain, need_configs=source == "generated")
    max_states, min_states = settings["max_states"], settings["min_states"]
    max_plans = int(get(params, "acp.max_plans", 100))
    space_k = int(get(params, "acp.space_transitions", 0) or 0)
    timeout_s = get(params, "acp.timeout_s", None)
    timeout_s = float(timeout_s) if timeout_s else None
    limits = {"max_states": max_states, "max_plans": max_plans, "min_states": min_states, "timeout_s": timeout_s,
              "space_transitions": space_k}

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "problems").mkdir(exist_ok=True)
    domain_file = out_dir / "domain.pddl"
    if source == "acpbench":
        folder = domain_folder(acpbench_root(params), domain)
        text = (folder / "domain.pddl").read_text()
        draws = _acpbench_draws(folder, base_seed, domain)
        origin = {"source": "acpbench", "domain_file": f"{domain}/domain.pddl"}
    else:
        text = domain_text(domain)
        draws = _generated_draws(settings, base_seed, domain)
        origin = {"source": "generated", "generator": f"{GEN_ROOT}.{DOMAINS[domain][0]}.generator",
                  "domain_file": f"{DOMAINS[domain][0]}/{DOMAINS[domain][1]}"}
    if not domain_file.exists() or domain_file.read_text() != text:
        atomic_write_bytes(domain_file, text.encode())
    pddl_domain = parse_domain(domain_file)
    old_skips = _previous_skips(out_dir / "summary.json")

    kept: list[dict] = []
    skipped: list[dict] = []
    keep_names: set[str] = set()
    bar = tqdm(total=settings["problems"], desc=f"acp {domain}", unit="problem")
    for index, (name, seed, kwargs, make_text) in enumerate(draws):
        if len(kept) >= settings["problems"] or index >= settings["max_attempts"]:
            break
        key = _skip_key(seed, kwargs, limits)
        skip = {"problem": name, "seed": seed, "generator": kwargs, "key": key}
        text = make_text()
        if text is None:
            skipped.append({**skip, "reason": f"generator returned no problem for {kwargs}"})
            bar.set_postfix(skipped=len(skipped))
            continue
        pddl_path = out_dir / "problems" / f"{name}.pddl"
        if not pddl_path.exists() or pddl_path.read_text() != text:
            atomic_write_bytes(pddl_path, text.encode())
        json_path = out_dir / f"{name}.json.gz"
        rec = cached_record(json_path, seed, kwargs, max_states, max_plans, space_k)
        reason = None
        if rec is None and name in old_skips and old_skips[name].get("key") == key:
            reason = old_skips[name]["reason"]
        if rec is not None and rec["n_states_space"] < min_states:
            rec = None  # min_states was raised since; recompute gives the skip reason
        if rec is None and reason is None:
            try:
                problem = parse_problem(pddl_domain, pddl_path)
                rec = build_problem_record(problem, domain=domain, name=name, seed=seed, generator=kwargs,
                                           max_states=max_states, max_plans=max_plans,
                                           min_states=min_states, timeout_s=timeout_s,
                                           space_transitions=space_k)
            except SkipProblem as exc:
                reason = str(exc)
            else:
                write_problem_record(json_path, rec)
        if reason is not None:
            skipped.append({**skip, "reason": reason})
            bar.set_postfix(skipped=len(skipped))
            if json_path.exists():
                json_path.unlink()
            pddl_path.unlink(missing_ok=True)
            continue
        keep_names.add(name)
        kept.append(_problem_stats(rec))
        bar.update(1)
        bar.set_postfix(skipped=len(skipped))
    bar.close()

    # Files of problems not kept by this run (other params, earlier runs) would leak into loaders.
    for p in out_dir.glob("*.json.gz"):
        if p.name[: -len(".json.gz")] not in keep_names:
            p.unlink()
    for p in (out_dir / "problems").glob("*.pddl"):
        if p.stem not in keep_names:
            p.unlink()

    summary = {
        "domain": domain,
        "problems": len(kept),
        "states": sum(k["states"] for k in kept),
        "transitions": sum(k["transitions"] for k in kept),
        "transitions_space": sum(k["transitions_space"] for k in kept),
        "actions": len(pddl_domain.get_actions()),
        "plans": sum(k["plans"] for k in kept),
        "attempted": len(kept) + len(skipped),
        "skipped": skipped,
        "per_problem": kept,
        **origin,
        "limits": limits,
        "target_problems": settings["problems"],
    }
    _write_json(out_dir / "summary.json", summary)  # a DVC output: no wall times (they are printed)
    print(f"acp_data {domain}: {len(kept)} problems kept, {len(skipped)} skipped, "
          f"{time.perf_counter() - start:.1f} s")
    return summary


def _problem_stats(rec: dict) -> dict:
    """Per-problem row of summary.json."""
    # the dataset's transitions: unique (s, a, s') on the stored plans plus the sampled state-space edges
    transitions = {tuple(t) for plan in rec["plans"] for t in plan} | {tuple(t) for t in rec.get("space_transitions", [])}
    return {
        "problem": rec["problem"],
        "seed": rec["seed"],
        "generator": rec["generator"],
        "states": rec["n_states_space"],
        "transitions": len(transitions),
        "transitions_space": rec["n_transitions_space"],
        "plans": len(rec["plans"]),
        "n_optimal_plans": rec["n_optimal_plans"],
        "optimal_cost": rec["optimal_cost"],
    }


def run_stage(params: dict, layout: Layout) -> Path:
    """The ``acp`` stage: build the transition datasets of ``acp.domains`` under ``layout.acp``.

    Params (``acp:``): ``domains`` (list of names of :data:`DOMAINS`), ``problems`` (kept per
    domain), ``max_attempts`` (problems drawn per domain at most; default 3 x problems),
    ``max_states`` (largest state space kept; expansion stops beyond it), ``min_states`` (smallest
    kept; default 0), ``max_plans`` (optimal plans stored per problem; default 100), ``timeout_s``
    (per expansion; default none), ``generators.<domain>`` (see :func:`domain_settings`); and the
    top-level ``seed``. Resumable: a problem whose file was made with the same seed, generator
    kwargs, ``max_states`` and ``max_plans`` is not recomputed, nor is a recorded skip with the same
    settings. Domain folders not in ``acp.domains`` are removed.

    Returns:
        The path of ``data/acp/manifest.json`` (``{"domains": [...], "problems": {domain: [names]},
        "seed": int}``).

    Raises:
        ConfigError: missing or bad ``acp`` params (names the param).
        PDDLError: a generated file does not parse (names the file).
    """
    start = time.perf_counter()
    domains = list(get(params, "acp.domains"))
    if acp_source(params) == "acpbench":
        root = acpbench_root(params)
        for d in domains:
            domain_folder(root, d)  # one line naming the missing folder
        unknown = []
    else:
        unknown = [d for d in domains if d not in DOMAINS]
    if unknown:
        raise ConfigError(f"params: acp.domains: unknown {unknown}; known: {sorted(DOMAINS)}")
    for key in ("acp.max_states", "acp.problems"):
        get(params, key)
    out = layout.acp
    out.mkdir(parents=True, exist_ok=True)
    for d in out.iterdir():
        if d.is_dir() and d.name not in domains and ((d / "summary.json").exists() or (d / "domain.pddl").exists()):
            shutil.rmtree(d)
    problems: dict[str, list[str]] = {}
    for domain in domains:
        summary = build_domain(params, domain, out / domain)
        problems[domain] = [p["problem"] for p in summary["per_problem"]]
    manifest = {
        "domains": domains,
        "problems": problems,
        "seed": int(get(params, "seed")),
    }
    print(f"acp_data: {len(domains)} domains in {time.perf_counter() - start:.1f} s")
    path = out / "manifest.json"
    _write_json(path, manifest)
    return path


__all__ = ["build_domain", "run_stage"]
