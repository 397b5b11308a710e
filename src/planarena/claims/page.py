"""A claim's verdict page: rendering it, and writing it with its ``verdict.json``.

:func:`page_of` computes the verdict from records (a pipeline claim) or measurement rows (a
measurement claim) and renders ``claim.md``: the claim, the verdict per domain, the provenance and
power table, the registered conditions with each atom's interval and test, the published values
beside the measured ones, the largest problems solved, schema-learning runs and training per seed.
:func:`write_verdict` writes it; :func:`recompute_committed` redoes it from what a page committed;
:func:`mark_not_run` and :func:`mark_not_recomputable` write the pages of claims without a verdict.
Running a claim (its DVC workspace) is :mod:`planarena.claims.run`.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from planarena.claims import partial
from planarena.claims.spec import Claim
from planarena import stats
from planarena.claims.verdict import HitMeasurements, Measurements, Verdict, evaluate, schema_runs
from planarena.claims.workspace import REPO
from planarena.config import ConfigError
from planarena.core.io import atomic_write_text, read_jsonl


def published_check(claim: Claim, data: Measurements, seed: int = 0, hits: HitMeasurements | None = None) -> list[dict]:
    """Each published value beside the measured cell: for a claim whose ``published`` maps
    ``{domain: {method: percent}}`` and names ``published_split``, the method's coverage on that
    domain and split with its 95 % interval; for one with ``published_metric: hit@k`` and
    ``published`` of the shape ``{protocol: {method: percent}}``, the method's Hit@k under that
    protocol (all domains; needs ``hits``); and whether the published value lies inside."""
    metric = str(claim.extra.get("published_metric", "coverage")).lower()
    split = claim.extra.get("published_split")
    out = []
    if metric.startswith("hit@") and hits is not None:
        k = int(metric.partition("@")[2])
        for protocol, values in claim.published.items():
            for method, percent in (values.items() if isinstance(values, dict) else ()):
                units = hits.units(method, protocol, k, None)
                if not units:
                    continue
                iv = hits.interval(units, seed)
                out.append({"domain": "all domains", "method": method, "split": f"{protocol} (Hit@{k})",
                            "published": percent / 100, "measured": iv.value, "low": iv.low, "high": iv.high,
                            "inside": bool(iv.low <= percent / 100 <= iv.high)})
        return out
    if not split:
        return out
    for domain, values in claim.published.items():
        if not isinstance(values, dict):
            continue
        for method, percent in values.items():
            mat, _ = data.matrix(method, split, domain)
            if not mat.shape[1]:
                continue
            iv = stats.proportion_interval(mat, seed)
            out.append({"domain": domain, "method": method, "split": split, "published": percent / 100,
                        "measured": iv.value, "low": iv.low, "high": iv.high,
                        "inside": bool(iv.low <= percent / 100 <= iv.high),
                        # the best seed's coverage: the number a paper that reports its best run gives
                        "best_seed": float(mat.mean(axis=0).max()) if mat.shape[1] else None})
    return out


def largest_solved(claim: Claim, data: Measurements) -> list[dict]:
    """Per method of the claim and domain, on the claim's ``published_split`` (the split its claim is
    about): the largest problem solved in each seed, as its object count (None: nothing solved),
    and how many problems that split has. Empty without ``published_split``."""
    split = claim.extra.get("published_split")
    if not split:
        return []
    out = []
    domains = sorted({d for (d, s) in data.index if s == split})
    largest: dict[tuple, int] = {}  # (method, domain, seed) -> the largest size solved: one pass over the records
    for r in data.latest:
        # the problem's object count (from the manifest, carried by every record); a problem
        # number read from a file name (``size`` of an external suite) is not a size
        size = r.objects
        if r.split == split and r.counts_as_solved and size is not None:
            key = (r.method, r.domain, r.seed)
            largest[key] = max(largest.get(key, size), size)
    for method in claim.methods:
        for domain in domains:
            per_seed = {seed: largest.get((method, domain, seed)) for seed in data.seeds.get(method, [])}
            if per_seed and data.index.get((domain, split)):   # a domain without problems there: no row
                out.append({"method": method, "domain": domain, "split": split, "largest": per_seed,
                            "problems": len(data.index.get((domain, split), ()))})
    return out


def schema_run_summary(claim: Claim, records) -> list[dict]:
    """Per method of the claim and schema domain, its schema-learning runs (``learn_schema``
    records): ``runs``, ``sound`` / ``complete`` / ``sound_complete`` counts (the DIAS paper's N_s,
    N_c, N_sc), the mean precision and recall over the runs that were measured (with how many), and
    each run's learned arities (``{seed: {action: arity}}``). Empty when no method of the claim has
    such records."""
    out = []
    for method in claim.methods:
        runs = schema_runs(records, method, None)
        for domain in sorted({r.domain for r in runs}):
            rs = [r for r in runs if r.domain == domain]
            ex = [r.extra or {} for r in rs]
            measured = [e for e in ex if e.get("precision") is not None]
            mean = lambda key: (sum(e[key] for e in measured) / len(measured)) if measured else None  # noqa: E731
            out.append({"method": method, "domain": domain, "runs": len(rs),
                        "sound": sum(bool(e.get("sound")) for e in ex),
                        "complete": sum(bool(e.get("complete")) for e in ex),
                        "sound_complete": sum(bool(e.get("sound")) and bool(e.get("complete")) for e in ex),
                        "measured": len(measured), "precision": mean("precision"), "recall": mean("recall"),
                        "arities": {r.seed: (r.extra or {}).get("arities") for r in rs}})
    return out


def schema_lines(rows: list[dict]) -> list[str]:
    """The page's schema-learning table of :func:`schema_run_summary`'s rows ([] without rows)."""
    if not rows:
        return []
    def num(x):
        return "-" if x is None else f"{x:.3f}"

    def arities(a: dict) -> str:
        return "; ".join(f"{seed}: " + (", ".join(f"{k}/{v}" for k, v in sorted(ar.items())) if ar else "none")
                         for seed, ar in a.items())

    lines = ["## Schema-learning runs", "",
             "N_s / N_c / N_sc: runs whose learned domain is sound / complete / both on the test states "
             "(the DIAS paper's columns); precision and recall: means over the runs the comparison measured.", "",
             "| domain | method | runs | N_s | N_c | N_sc | precision | recall | measured | learned arities per seed |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['domain']} | `{r['method']}` | {r['runs']} | {r['sound']} | {r['complete']} | "
              f"{r['sound_complete']} | {num(r['precision'])} | {num(r['recall'])} | {r['measured']}/{r['runs']} | "
              f"{arities(r['arities'])} |" for r in rows]
    return lines + [""]


def training_rows(claim: Claim, facts: dict) -> list[dict]:
    """One row per trained unit of the claim's methods that selected a checkpoint (``facts``:
    ``training.json``'s ``{"<method>/<domain>/seed<s>": unit facts}``): steps run, best step, final
    training loss, and where the best score carries them the validation teacher-forced accuracy and
    loss at that step (the transformers' score tuple ends ``accuracy, -L_pred, step``); per decoding
    strategy when each kept its own checkpoint. A DQN unit (R-GNN policies) gives episodes for
    steps and names its selection rule as a string."""
    rows = []
    for key, info in sorted(facts.items()):
        parts = key.split("/")
        if len(parts) != 3 or parts[0] not in claim.methods or not isinstance(info, dict) or info.get("untrained"):
            continue
        selection = info.get("selection")
        best = info.get("best_step", info.get("best_episode"))   # a DQN unit counts episodes
        if isinstance(selection, dict) and selection:   # one checkpoint per decoding strategy
            chosen = dict(selection)
        else:
            label = info.get("selected_with") or (selection if isinstance(selection, str) else "")
            chosen = {label: {"best_step": best, "best_score": info.get("best_score")}} if best is not None else {}
        for strategy, sel in chosen.items():
            score = list(sel.get("best_score") or [])
            tf = (score[-3], -score[-2]) if len(score) >= 7 else (None, None)
            rows.append({"method": parts[0], "domain": parts[1], "seed": parts[2].removeprefix("seed"),
                         "strategy": strategy, "steps_run": info.get("steps_run", info.get("episodes_run")),
                         "best_step": sel.get("best_step"),
                         "final_loss": info.get("final_loss"), "accuracy": tf[0], "validation_loss": tf[1],
                         "diverged_at": info.get("diverged_at")})
    return rows


def training_lines(rows: list[dict]) -> list[str]:
    """The page's training-per-seed table of :func:`training_rows`'s rows ([] without rows)."""
    if not rows:
        return []
    f = lambda v: "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["## Training, per seed", "",
             "The checkpoint each unit kept (validation selection) and where training ended; teacher-forced "
             "accuracy and L_pred on the fixed validation batch at the kept step.", "",
             "| method | domain | seed | selected on | steps (episodes) run | best step (episode) | final training loss | "
             "teacher-forced accuracy | validation L_pred | diverged at |", "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| `{r['method']}` | {r['domain']} | {r['seed']} | {r['strategy'] or '-'} | {f(r['steps_run'])} | "
              f"{f(r['best_step'])} | {f(r['final_loss'])} | {f(r['accuracy'])} | {f(r['validation_loss'])} | "
              f"{f(r['diverged_at'])} |" for r in rows]
    return lines + [""]


def claim_link(claim_id: str) -> str:
    """A link from one claim page to another claim: its page when it has one, else its claim file
    (registered, not run)."""
    if (REPO / "reports" / "claims" / claim_id / "claim.md").exists():
        return f"[`{claim_id}`](../{claim_id}/claim.md)"
    return f"[`{claim_id}`](../../../claims/{claim_id}.yaml) (not run yet)"


def provenance_lines(claim: Claim, power=None, forced: bool = False, source: str = "") -> list[str]:
    """The page's provenance block: the registration commit, the post-hoc mark (from git history),
    the attempt number, the power check's table, whether the run was forced past a failed check,
    and where the verdict was recomputed from."""
    from planarena.claims import provenance as pv
    from planarena.claims.spec import load_claims

    reg = pv.registration(claim)
    lines = [f"Claim file `claims/{claim.source.name}` (sha256 `{claim.digest}`), {reg.line()}."]
    early = pv.posthoc(claim, reg)
    if early:
        lines.append(f"**Post-hoc**: a report committed before the registration already held a cell of the confirm "
                     f"condition ({', '.join(early)}); the conditions were not written blind to these data.")
    fresh = pv.fresh_data(claim)
    if fresh["splits"] or fresh["hit"]:
        what = ", ".join(f"{d}/{s}" for d, s in sorted(fresh["splits"])) + \
            ("; every Hit@k protocol's pool data" if fresh["hit"] else "")
        lines.append(f"Test instances generated for this claim (seed {', '.join(map(str, fresh['seeds']))}), which no "
                     f"earlier report used: {what.lstrip('; ')}.")
    try:
        k, n, chain = pv.attempts(claim, load_claims(claim.source.parent))
    except ConfigError:
        k, n, chain = 1, 1, [claim.id]
    if n > 1:
        links = ", ".join(claim_link(c) if c != claim.id else f"`{c}`" for c in chain)
        lines.append(f"Attempt {k} of {n} at this paper claim ({links}).")
    if claim.extra.get("supersedes"):
        lines.append(f"Supersedes {claim_link(str(claim.extra['supersedes']))}, whose page and verdict stay as they were.")
    if k < n:
        lines.append(f"**Superseded** by {claim_link(chain[k])} (a new claim file with changed conditions); this "
                     "page and its verdict stay as they were.")
    if forced:
        lines.append("**Run forced past a failed power check** (`claims run --force`): read the verdict with its table below.")
    if source:
        lines.append(f"Verdict recomputed from {source}.")
    out = ["## Provenance", "", *[f"- {ln}" for ln in lines], ""]
    if power is not None:
        out += power.table() + [""]
    return out


def render_page(claim: Claim, verdict: Verdict, cost: dict, commit: str, checks: list[dict] = (),
                largest: list[dict] = (), schema: list[dict] = (), provenance: list[str] = (),
                training: list[dict] = ()) -> str:
    """The claim's page (markdown): the claim, the verdict (per domain too), the provenance and power
    check, the pre-registered conditions with each measured atom's interval and test, the published
    values, the cost and the commit."""
    from planarena.claims import provenance as pv

    first = pv.first_report(claim.id)
    changed = first is not None and first.verdict != verdict.verdict
    lines = [f"# Claim `{claim.id}`: **{verdict.verdict}**"
             + (f" (first reported **{first.verdict}**)" if changed else ""), "",
             f"> {claim.claim}", "", f"Paper: `{claim.paper}`, {claim.where}. Claim file: "
             f"`claims/{claim.source.name}` (sha256 `{claim.digest}`); code at `{commit}`.", ""]
    if changed:
        lines += [f"**Not the verdict first reported.** This claim's first committed page (commit `{first.commit}`, "
                  f"{first.date[:10]}) said **{first.verdict}**; the verdict changed"
                  + (f" in commit `{first.changed_in}`" if first.changed_in else "") + ", after its data were "
                  "seen (new records, or verdict rules written later and applied to the same records), so "
                  f"**{verdict.verdict}** here is a post-hoc reading, not the pre-registered verdict. A new claim file "
                  "with those rules, run on new data, is the test.", ""]
    if verdict.domains:
        lines += ["Per domain: " + "; ".join(f"{d} **{v}**" for d, v in verdict.domains.items())
                  + (". The claim is a conjunction over its domains: one refuted domain refutes it."
                     if claim.confirm.op == "all" else "."), ""]
    lines += list(provenance)
    exp = claim.experiment
    lines += ["## Experiment", "",
              f"Suite `{exp.get('suite', 'generated')}`, domains {', '.join(exp.get('domains') or ['all'])}, "
              f"methods {', '.join(f'`{m}`' for m in claim.methods)}, seeds {exp.get('seeds', 'from params')}; "
              f"params overlay: `{json.dumps(exp.get('params') or {}, sort_keys=True)}`.", "",
              f"Expected cost {claim.cost.get('cpu_minutes', '?')} CPU minutes on 2 cores; measured "
              f"{cost.get('wall_s', 0) / 60:.0f} min wall in the {cost.get('runs', 0)} run(s) recorded in its "
              "workspace (a run killed outright, or on another machine before a partial run was carried "
              "over, is not counted)"
              + (f"; records from {len(cost['machines'])} machine kinds: " + "; ".join(cost["machines"])
                 + " (floats can differ between CPU types)" if len(cost.get("machines") or []) > 1
                 else f"; machine: {cost['machines'][0]}" if cost.get("machines") else "") + ".", ""]
    for block in ("gate", "confirm", "refute"):
        holds = verdict.blocks[block]
        cond = getattr(claim, block)
        how = (" An intersection-union test: every atom must hold, each tested at alpha."
               if cond.op == "all" and len(cond.parts) > 1 else "")
        lines += [f"## {block.capitalize()} ({cond.op} of): {'holds' if holds else 'does not hold'}", ""]
        if how:
            lines += [how.strip(), ""]
        lines += [f"- {r.describe()}" for r in verdict.results[block]] + [""]
    best = claim.extra.get("published_protocol")   # e.g. "best of 5 runs on the test split (Section 7)"
    if checks:
        lines += ["## Published values beside the measured ones", "",
                  "| domain | method | split | published | measured [95 % interval] | published inside? |"
                  + (" best seed |" if best else ""), "|---|---|---|---|---|---|" + ("---|" if best else "")]
        lines += [f"| {c['domain']} | `{c['method']}` | {c['split']} | {c['published']:.2f} | {c['measured']:.2f} "
                  f"[{c['low']:.2f}, {c['high']:.2f}] | {'yes' if c['inside'] else '**no**'} |"
                  + (f" {c['best_seed']:.2f} |" if best and c.get("best_seed") is not None else " - |" if best else "")
                  for c in checks]
        if best:
            lines += ["", f"*best seed*: the paper's own protocol ({' '.join(str(best).split())}): the coverage of "
                      "the best seed on this split, chosen after seeing it, so no condition reads it; shown only "
                      "to set the published number beside its like."]
        lines.append("")
    elif claim.published:
        lines += ["## Published values (the paper's, for reference)", ""]
        lines += [f"- {k}: {v}" for k, v in claim.published.items()] + [""]
    if largest:
        lines += ["## Largest problem solved, per seed", "",
                  "| domain | method | split | largest problem solved (objects), per seed | problems |", "|---|---|---|---|---|"]
        lines += [f"| {r['domain']} | `{r['method']}` | {r['split']} | "
                  + ", ".join(f"{s}: {'none' if v is None else v}" for s, v in r["largest"].items())
                  + f" | {r['problems']} |" for r in largest]
        lines.append("")
    lines += schema_lines(list(schema))
    lines += training_lines(list(training))
    if claim.notes:
        lines += ["## Notes", "", claim.notes, ""]
    lines += ["Verdict rule: the gate first (fails: inconclusive); then confirmed if the confirm condition "
              "holds and the refute condition does not, refuted in the opposite case, inconclusive "
              "otherwise; a claim over several domains also gets a verdict per domain, and a conjunctive "
              "claim is refuted when one of its domains is. The problem is the unit of every test, its seeds "
              "nested in it. Paired coverage atoms: McNemar's exact test (one run each) or the sign-flip "
              "permutation test (several seeds); paired Hit@k atoms: the Wilcoxon signed-rank test over "
              "the problems both sides have (each problem's mean Hit@k over its queries and seeds); "
              f"Holm's correction over the `better` atoms below an `any` of a block, alpha = {claim.alpha}. "
              "Margin atoms: the bootstrap interval of the mean paired difference (problems, then seeds; 95 %, "
              "90 % for the two one-sided tests of `equivalent`) against the margin."]
    return "\n".join(lines) + "\n"


def page_of(claim: Claim, records, index, rows, seed: int, cost: dict, commit: str, provenance: list[str],
          training_facts: dict | None = None):
    """``(verdict, page text, extra verdict.json fields)`` from records (a pipeline claim) or
    measurement rows (a measurement claim)."""
    from planarena.claims import measure

    if claim.is_measure:
        verdict = measure.evaluate(claim, rows, seed)
        page = render_page(claim, verdict, cost, commit, provenance=provenance).rstrip("\n").split("\n")
        page = "\n".join(page[:-1] + [measure.RULE, "", *measure.curve_lines(claim, rows),
                                      f"## Per {'unit' if claim.experiment.get('units') else 'problem'}", "",
                                      *measure.table(claim, rows), "", page[-1]]) + "\n"
        return verdict, page, {"measurements": len(rows)}
    verdict = evaluate(claim, records, index, seed)
    data = Measurements(records, index)
    checks = published_check(claim, data, seed, HitMeasurements(records))
    largest = largest_solved(claim, data)
    schema = schema_run_summary(claim, records)
    training = training_rows(claim, training_facts or {})
    extra = {"published_check": checks, "largest_solved": largest, **({"schema_runs": schema} if schema else {}),
             **({"training": training} if training else {})}
    return verdict, render_page(claim, verdict, cost, commit, checks, largest, schema, provenance, training), extra


def provenance_facts(claim: Claim) -> dict:
    """``verdict.json``'s provenance fields: the registration commit and date, the post-hoc reports
    (:func:`planarena.claims.provenance.posthoc`), the attempt ``[k, n]``, the claim it supersedes
    and the claim that supersedes it (``superseded_by``, the next attempt; None for the current one:
    the front page counts only current attempts, :func:`planarena.report.sections.glance.claims_line`)."""
    from planarena.claims import provenance as pv
    from planarena.claims.spec import load_claims

    reg = pv.registration(claim)
    try:
        k, n, chain = pv.attempts(claim, load_claims(claim.source.parent))
    except ConfigError:
        k, n, chain = 1, 1, [claim.id]
    first = pv.first_report(claim.id)
    return {"registration": {"commit": reg.commit, "date": reg.date}, "posthoc": pv.posthoc(claim, reg),
            **({"first_report": {"verdict": first.verdict, "commit": first.commit, "date": first.date}} if first else {}),
            "attempt": [k, n], **({"supersedes": claim.extra["supersedes"]} if claim.extra.get("supersedes") else {}),
            "superseded_by": chain[k] if k < n else None}


#: A reading of a decided claim written after its verdict (``reports/claims/<id>/reading.md``): what
#: the verdict covers and what it does not, found by reading the page against the paper. No condition
#: reads it; the page shows it under its own heading and the front page's Claims table its first
#: paragraph.
READING = "reading.md"


def with_reading(page: str, out: Path) -> tuple[str, str]:
    """``(page, summary)``: the page with ``out/reading.md`` inserted before its Provenance section
    (under "Read after the verdict", marked as written after the data), and the reading's first
    paragraph ("" when there is no reading)."""
    f = out / READING
    if not f.exists():
        return page, ""
    text = f.read_text().strip()
    summary = " ".join(text.split("\n\n")[0].split())
    block = ("## Read after the verdict\n\n*Written after the data were seen, by reading this page against the "
             "paper: it says what the verdict covers; it is not part of the registration and no condition reads "
             f"it ([`{READING}`]({READING})).*\n\n{text}\n\n")
    at = page.find("## Provenance")
    return (page[:at] + block + page[at:] if at >= 0 else page.rstrip("\n") + "\n\n" + block), summary


def write_verdict(claim: Claim, out: Path, verdict: Verdict, page: str, cost: dict, commit: str, extra: dict,
                  power=None, forced: bool = False) -> None:
    """Write ``out/verdict.json`` (the verdict, provenance facts, cost, commit, power and ``extra``)
    and ``out/claim.md`` (``page`` with the reading of :func:`with_reading`, if any)."""
    page, reading = with_reading(page, out)
    if reading:
        extra = {**extra, "reading": reading}
    data = {**verdict.to_json(), **provenance_facts(claim), "paper": claim.paper, "where": claim.where, "statement": claim.claim,
            "claim_sha256": claim.digest, "published": claim.published, "cost": cost,
            "expected_cpu_minutes": claim.cost.get("cpu_minutes"), "commit": commit, "forced": forced,
            **({"power": power.to_json()} if power is not None else {}), **extra}
    atomic_write_text(out / "verdict.json", json.dumps(data, indent=2, sort_keys=True, default=float) + "\n")
    atomic_write_text(out / "claim.md", page)


def training_facts(out: Path) -> dict:
    """The unit facts committed beside a claim page (``training.json``), ``{}`` when none."""
    from planarena.claims.provenance import TRAINING

    try:
        return json.loads((out / TRAINING).read_text()).get("facts") or {}
    except (OSError, ValueError):
        return {}


NOT_RECOMPUTABLE = "not recomputable"


def recompute_committed(claim: Claim, out_root: Path, power=None) -> Verdict | None:
    """Recompute the claim's page and ``verdict.json`` from what its folder ``out_root/<id>/``
    committed (records, index, params, measurement rows), under the current rules; None when it
    committed nothing to recompute from (see :func:`mark_not_recomputable`)."""
    from planarena.claims import measure, provenance as pv

    out = out_root / claim.id
    if claim.is_measure:
        if not (out / measure.ROWS).exists():
            return None
        rows, records, index = read_jsonl(out / measure.ROWS), [], {}
        measure.write_curves(claim, rows, out)
    elif pv.has_committed(out):
        rows = []
        records, index = pv.load_committed(out)
    else:
        return None
    old = json.loads((out / "verdict.json").read_text()) if (out / "verdict.json").exists() else {}
    params = yaml.safe_load((out / "params.yaml").read_text()) if (out / "params.yaml").exists() else {}
    seed = int((params or {}).get("seed", 0) or 0)
    cost, commit = old.get("cost") or {}, old.get("commit") or "unknown"
    forced = bool(old.get("forced"))
    prov = provenance_lines(claim, power, forced, f"the records committed beside this page (run at `{commit}`), "
                                                  "under the current verdict rules")
    verdict, page, extra = page_of(claim, records, index, rows, seed, cost, commit, prov, training_facts(out))
    write_verdict(claim, out, verdict, page, cost, commit, extra, power, forced)
    return verdict


def mark_not_recomputable(claim: Claim, out_root: Path, power=None) -> dict:
    """Replace a verdict that cannot be recomputed (its run kept no records) by a page saying so:
    the earlier verdict is named with the commit whose page holds it, not kept as a verdict.
    Returns the new ``verdict.json`` content."""
    from planarena.claims import provenance as pv

    out = out_root / claim.id
    out.mkdir(parents=True, exist_ok=True)
    old = json.loads((out / "verdict.json").read_text()) if (out / "verdict.json").exists() else {}
    previous = old.get("previous") or ({"verdict": old.get("verdict"), "commit": pv._git(
        "log", "-1", "--format=%h", "--", f"reports/claims/{claim.id}/claim.md").strip() or "unknown"}
        if old.get("verdict") else None)
    lines = [f"# Claim `{claim.id}`: **{NOT_RECOMPUTABLE}: records not kept**", "", f"> {claim.claim}", "",
             f"Paper: `{claim.paper}`, {claim.where}.", ""]
    if previous:
        lines += [f"The run's verdict page said **{previous['verdict']}** (kept in git history at commit "
                  f"`{previous['commit']}`). Its run did not commit the records that verdict was computed from, so "
                  "it cannot be recomputed under the current rules (problem units, per-domain verdicts, Holm over "
                  "the `better` atoms below an `any`, untrained twins) and is not shown as a verdict. A new claim "
                  "file, run with `planarena claims run`, commits its records.", ""]
    lines += provenance_lines(claim, power) + condition_lines(claim)
    data = {"claim": claim.id, "verdict": NOT_RECOMPUTABLE, "reason": "records not kept", "previous": previous,
            **provenance_facts(claim),
            "paper": claim.paper, "where": claim.where, "statement": claim.claim, "claim_sha256": claim.digest,
            "expected_cpu_minutes": claim.cost.get("cpu_minutes"), "blocks": {}, "atoms": {}, "domains": {},
            **({"power": power.to_json()} if power is not None else {})}
    atomic_write_text(out / "verdict.json", json.dumps(data, indent=2, sort_keys=True, default=float) + "\n")
    atomic_write_text(out / "claim.md", "\n".join(lines) + "\n")
    return data


NOT_RUN = "not run"


def condition_lines(claim: Claim) -> list[str]:
    """The registered gate, confirm and refute conditions as a list (pages without a verdict)."""
    lines = ["## Conditions (as registered)", ""]
    for block in ("gate", "confirm", "refute"):
        cond = getattr(claim, block)
        lines += [f"- {block} ({cond.op} of): " + "; ".join(a.label() for a in cond.atoms())]
    return lines


def superseded_by(claim: Claim) -> str | None:
    """The id of the claim file that supersedes ``claim`` (the next attempt at its paper claim,
    following ``supersedes:`` links among the claim files beside it), or None."""
    from planarena.claims import provenance as pv
    from planarena.claims.spec import load_claims

    try:
        k, n, chain = pv.attempts(claim, load_claims(claim.source.parent))
    except ConfigError:
        return None
    return chain[k] if k < n else None


def mark_not_run(claim: Claim, out_root: Path, power=None) -> dict:
    """The page of a registered claim that has not run: its statement, what it needs (the claim
    file's ``needs``: why it is not run here and the size a run that could pass its power check
    takes, e.g. GPU hours), its expected cost, its power table and its conditions, so the front
    page lists it with the reason; a claim superseded before it ran says by which claim
    (``superseded_by``). ``claims run`` replaces this page with the verdict's. Returns the new
    ``verdict.json`` content."""
    out = out_root / claim.id
    out.mkdir(parents=True, exist_ok=True)
    needs = " ".join(str(claim.extra.get("needs") or "").split())
    cpu = claim.cost.get("cpu_minutes", "?")
    facts = provenance_facts(claim)
    successor = facts["superseded_by"]
    lines = [f"# Claim `{claim.id}`: **{NOT_RUN}**", "", f"> {claim.claim}", "", f"Paper: `{claim.paper}`, {claim.where}.", ""]
    if successor:
        lines += [f"**Superseded before it ran** by {claim_link(successor)}, which re-decides this paper claim under "
                  f"changed conditions; `claims run --all` skips it (`planarena claims run {claim.id}` still runs it "
                  f"alone, expected ~{cpu} CPU minutes on 2 cores).", ""]
    elif needs:
        lines += [f"**Not run here: {needs}**", ""]
    else:
        lines += [f"Registered, not run yet: `planarena claims run {claim.id}` (expected ~{cpu} CPU minutes on 2 cores"
                  f"{'; a GPU helps' if claim.cost.get('gpu') else ''}).", ""]
    if partial.describe(out):
        lines += [partial.describe(out), ""]
    lines += provenance_lines(claim, power) + condition_lines(claim)
    if claim.notes:
        lines += ["", "## Notes", "", claim.notes]
    data = {"claim": claim.id, "verdict": NOT_RUN, "needs": needs or None, **facts,
            "paper": claim.paper, "where": claim.where, "statement": claim.claim, "claim_sha256": claim.digest,
            "expected_cpu_minutes": claim.cost.get("cpu_minutes"), "expected_gpu_hours": claim.cost.get("gpu_hours"),
            "blocks": {}, "atoms": {}, "domains": {}, **({"power": power.to_json()} if power is not None else {})}
    atomic_write_text(out / "verdict.json", json.dumps(data, indent=2, sort_keys=True, default=float) + "\n")
    atomic_write_text(out / "claim.md", "\n".join(lines) + "\n")
    return data
