"""The front page (docs/concepts.md#the-pages): headline tables with every method and its floor, the
problems box, its length; problem checks that know pool records; the pool page's pivots and training
overlap; the plots' data files."""

from __future__ import annotations

from test_report import front, manifest_3, rec, render_pages, section, subsection, table_rows

from planarena.methods.base import ReportTraits
from planarena.report import leaderboard as report
from planarena.report.plots import ROW_FLOOR, coverage_by_size, coverage_plot_data, hit5_plot_data
from planarena.report.records import ReportInputs
from planarena.report.sections.pool import pool_summary, summary_pivot, training_overlap

FAM = "state-centric-transition-models"
TRAITS = {
    "walk": ReportTraits(role="floor", horizon=100),
    "ident": ReportTraits(role="floor", floor_group="WL encoding"),
    "model": ReportTraits(floor_group="WL encoding"),
}


def plan(method, problem, seed, solved, family=FAM, split="validation"):
    return rec(method, "blocksworld", split, problem, seed, "solved" if solved else "unsolved", family=family)


def successor(method, problem, seed, hit1, hit5, family=FAM):
    return rec(method, "blocksworld", "validation", problem, seed, "solved", validated=False, validated_by=None,
               family=family, extra={"task": "rank_successors", "protocol": "successor_set", "hit@1": hit1,
                                     "hit@5": hit5, "hit_chance@1": 0.25, "hit_chance@5": 1.0,
                                     "inputs": "state, goal"})  # fmt: skip


def pool_rec(method, protocol, domain, seed, hit1, hit5, family=FAM, **extra):
    return rec(method, domain, "same domain", "wl", seed, family=family,
               extra={"task": "rank_successors", "protocol": protocol, "hit@1": hit1, "hit@5": hit5,
                      "hit_chance@1": 1 / 128, "hit_chance@5": 5 / 128, "inputs": "state, goal",
                      "queries": 10, **extra})  # fmt: skip


def small_run() -> list:
    """A floor walk, a classical planner, an identity floor and its model, on plan, successor-set
    and pool records."""
    records = [plan("walk", p, s, p == "p1", family="classical") for p in ("p1", "p2", "p3") for s in (0, 1)]
    records += [plan("fd", p, 0, True, family="classical") for p in ("p1", "p2", "p3")]
    records += [plan("ident", p, 0, p == "p1") for p in ("p1", "p2", "p3")]
    records += [plan("model", p, 0, p != "p3") for p in ("p1", "p2", "p3")]
    records += [successor("ident", p, 0, 0.25, 1.0) for p in ("p1", "p2")]
    records += [successor("model", p, 0, 0.5, 1.0) for p in ("p1", "p2")]
    for d, (hi, hm) in {"blocksworld": (0.4, 0.6), "ferry": (0.2, 0.5)}.items():
        records += [pool_rec("ident", "extrapolation", d, 0, hi / 2, hi), pool_rec("model", "extrapolation", d, 0, hm / 2, hm)]
    return records


def test_headline_tables_have_every_method_and_its_floor():
    md = front(small_run(), manifest_3(), traits=TRAITS)
    cov = table_rows(section(md, "Plan coverage"))
    # one problem set: the cells some method ran on (gripper/validation: nobody did)
    assert cov[0] == ["kind", "method", "validation (n=3)", "held-out (n=3)", "above floor", "vs untrained twin",
                      "budget"]
    # grouped by kind (search first), then floors
    assert [r[:2] for r in cov[1:]] == [["search", "fd"], ["search", "model"], ["floor", "ident"], ["floor", "walk"]]
    # Wilson for 3/3; 1 discordant problem between fd and model: neither is significantly best, so
    # nothing is bold (bold: significantly better than every other row of its kind)
    assert cov[1][2] == "1.00 [0.44, 1.00] 3/3"
    assert cov[2][2] == "0.67 [0.21, 0.94] 2/3"
    assert cov[4][2].endswith(" 2/6")  # two seeds: solved attempts of problems x seeds
    assert cov[2][4] == "at floor at this budget: `ident` p=1.00"  # one discordant problem against its floor
    rank = section(md, "Successor ranking")
    hit5 = table_rows(rank[rank.index("Hit@5 (%):"):rank.index("Hit@1 (%):")])
    assert hit5[0] == ["method", "Successor set (held-out)", "Extrapolation", "above floor", "vs untrained twin"]
    assert hit5[1] == ["*uniform random ranker*", "100.0", "3.9", "–", "–"]  # chance from the records
    assert hit5[2][:3] == ["ident *(floor)*", "**100.0 [34.2, 100.0] (n=2, 1 run)**", "30.0 (1 run)"]
    # pool records without per-query ranks: no interval; mean over domains
    assert hit5[3] == ["model", "**100.0 [34.2, 100.0] (n=2, 1 run)**", "**55.0 (1 run)**",
                       "at floor at this budget: `ident` p=1.00", "–"]
    hit1 = table_rows(rank[rank.index("Hit@1 (%):"):])
    assert hit1[1] == ["*uniform random ranker*", "25.0", "0.8"]
    # every trajectory at 0.5: the bootstrap degenerates, Wilson on the 2 units (never zero width)
    assert hit1[3] == ["model", "**50.0 [9.5, 90.5] (n=2, 1 run)**", "**27.5 (1 run)**"]
    assert "Horizon ceiling" in section(md, "Plan coverage")
    methods = section(md, "Methods")
    assert "- walk *(floor)*: `classical`; plan; seeds 0, 1;" in methods
    assert "- model: `state-centric-transition-models`; plan, rank_successors (inputs: state, goal)" in methods
    # the same numbers as metrics.json: one per method, fractions
    m = report.build_metrics(report.analyse(ReportInputs(small_run(), [], manifest_3(), traits=TRAITS)))
    assert m == {"coverage": {"validation": {"fd": 1.0, "model": 0.6667, "ident": 0.3333, "walk": 0.3333}}}



def test_glance_box_names_the_best_row_of_each_kind_and_the_claims():
    """"At a glance" opens the page: the best row of each kind on the held-out problems and whether
    it is significantly best (the table's bold tier), then the claims by verdict."""
    from planarena.report.sections.glance import claims_line

    md = front(small_run(), manifest_3(), traits=TRAITS)
    assert md.index("## At a glance") < md.index("## Plan coverage")
    box = section(md, "At a glance")
    # fd 3/3 and model 2/3 differ on one problem: not significantly
    assert "**search**: `fd` 1.00 [0.44, 1.00] (not significantly better than `model`)" in box
    verdicts = [{"claim": "a", "verdict": "confirmed"}, {"claim": "b", "verdict": "not run"},
                {"claim": "c", "verdict": "confirmed"}]
    assert claims_line(verdicts) == "Claims ([table](#claims)): **confirmed** 2 (`a`, `c`); **not run** 1 (`b`)."
    # a verdict that changed after its first committed page says which it was, here and in the table
    verdicts[2]["first_report"] = {"verdict": "inconclusive", "commit": "abc1234", "date": "2026-11-25"}
    assert claims_line(verdicts) == ("Claims ([table](#claims)): **confirmed** 2 (`a`, `c` (first reported "
                                     "inconclusive)); **not run** 1 (`b`).")
    from planarena.report.sections.claims import verdict_line

    assert "first reported inconclusive (commit `abc1234`): changed after its data were seen" in verdict_line(verdicts[2])
    verdicts[0]["first_report"] = {"verdict": "confirmed", "commit": "abc1234", "date": "2026-11-25"}
    assert verdict_line(verdicts[0]) == "**confirmed**"   # the same verdict as first reported: nothing to say
    # each paper claim counts once, by its latest attempt: a superseded page is listed apart, uncounted
    verdicts.append({"claim": "c2", "verdict": "refuted", "supersedes": "c"})
    verdicts[2]["superseded_by"] = "c2"
    assert claims_line(verdicts) == ("Claims ([table](#claims)): **confirmed** 1 (`a`); **refuted** 1 (`c2`); "
                                     "**not run** 1 (`b`); superseded by a later claim file, not counted: 1 "
                                     "(`c` by `c2`).")
    assert verdict_line(verdicts[2]).endswith("changed after its data were seen*; *superseded by `c2`*")
    assert "superseded" not in verdict_line(verdicts[3])
    gone = {"claim": "d", "verdict": "not recomputable", "previous": {"verdict": "confirmed", "commit": "abc"},
            "superseded_by": "d2"}
    assert verdict_line(gone) == ("**not recomputable: records not kept** (its page said confirmed, commit `abc`); "
                                  "*superseded by `d2`*")

def test_front_page_stays_short_with_many_methods_and_domains():
    manifest = []
    from test_report import entry

    for d in ("blocksworld", "gripper", "logistics", "visitall", "ferry", "grid"):
        for split in ("train", "validation", "interpolation", "extrapolation"):
            manifest += [entry(d, split, f"{split[0]}{i}", i) for i in range(4)]
    records = []
    for i in range(30):
        m, fam = f"method_{i:02d}", f"family_{i % 6}"
        for e in manifest:
            records.append(rec(m, e.domain, e.split, e.problem, 0, "solved" if (i + e.size) % 3 else "unsolved", family=fam))
        for proto in ("interpolation", "plan_variant", "extrapolation"):
            records += [pool_rec(m, proto, d, 0, 0.1, 0.3, family=fam) for d in ("blocksworld", "ferry")]
    pages = render_pages(records, manifest)
    assert len(pages["leaderboard.md"].splitlines()) < 200
    # every method is in the headline tables
    for i in range(30):
        assert f"| method_{i:02d} " in section(pages["leaderboard.md"], "Plan coverage")
        assert f"| method_{i:02d} " in section(pages["leaderboard.md"], "Successor ranking")


def test_problem_checks_ignore_pool_records_and_protocols_not_run():
    """Pool records name their protocol's split (``same domain``) and the encoder: no empty
    splits, no records of unknown problems; a method without a protocol is no problem."""
    records = small_run() + [pool_rec("model", "cross_domain", "grid", 0, 0.1, 0.2, train_on="ferry")]
    pages = render_pages(records, manifest_3(), traits=TRAITS)
    problems = section(pages["detail/problems.md"], "Problems")
    assert "same domain" not in problems and "grid" not in problems and "ferry" not in problems
    assert "(ignored)" not in problems
    # gripper/extrapolation is a real empty split of the manifest; nothing else is listed
    assert subsection(problems, "Empty splits").count("no instances") == 1
    # an empty split is an expected outcome: on the detail page, not in the box
    box = section(pages["leaderboard.md"], "Problems")
    assert box.strip().splitlines()[-1] == "None."


def test_real_problems_are_listed_first_in_the_box():
    records = small_run() + [
        rec("model", "blocksworld", "extrapolation", "q1", 0, "error", failure_reason="boom", family=FAM),
        rec("model", "blocksworld", "validation", "zz", 0, family=FAM),  # a problem of no manifest
        rec("fd", "blocksworld", "validation", "p2", 0, "solved", validated=False, family="classical",
            validator_reason="goal not reached"),  # a rerun: supersedes the solved line
    ]
    box = [line for line in section(front(records, manifest_3(), traits=TRAITS), "Problems").splitlines()
           if line.startswith("- ")]
    assert box[0] == "- 1 `error` attempt(s) of `model` in `blocksworld/extrapolation`: boom"
    assert box[1].startswith("- 1 plan(s) of `fd` in `blocksworld/validation` rejected by the validator: goal")
    assert box[2].startswith("- `model` has 1 record(s) in `blocksworld/validation` for problems not in the manifest")
    # a superseded line is an expected outcome of a rerun: detail page only
    assert not any("superseded" in line for line in box)
    detail = section(render_pages(records, manifest_3(), traits=TRAITS)["detail/problems.md"], "Problems")
    assert "superseded" in subsection(detail, "Expected outcomes (not problems)")


def test_pool_page_pivots_and_training_overlap():
    records = small_run() + [
        pool_rec("model", "plan_variant", "blocksworld", 0, 0.3, 0.7, test_transitions=40, seen_in_training=30),
        pool_rec("ident", "plan_variant", "blocksworld", 0, 0.1, 0.4, test_transitions=40, seen_in_training=30),
        pool_rec("model", "plan_variant", "ferry", 0, 0.3, 0.7, test_transitions=20, seen_in_training=0),
        pool_rec("ident", "plan_variant", "ferry", 1, 0.1, 0.4, test_transitions=22, seen_in_training=1),
    ]
    summary = pool_summary(records, TRAITS)
    pivot = summary_pivot(summary, "Hit@5", ["ident", "model"])
    assert list(pivot.columns) == ["method", "Plan-Variant", "Extrapolation"]
    assert pivot.set_index("method").loc["model", "Extrapolation"] == "55.0 (1 run)"
    overlap = training_overlap(records).set_index("domain")
    assert overlap.loc["blocksworld", "Plan-Variant"] == "30 of 40 (75.0 %)"
    assert overlap.loc["ferry", "Plan-Variant"] == "0–1 of 20–22"  # the records disagree: a range
    assert list(overlap.columns) == ["Plan-Variant"]  # protocols whose records report the counts
    assert training_overlap(small_run()) is None  # records without the counts: no table
    pool_page = render_pages(records, manifest_3(), traits=TRAITS)["detail/pool.md"]
    assert "Test transitions seen in training (excluded)" in pool_page
    lift = pool_page[pool_page.index("Lift over the floor"):]
    assert ["model", "+30.0 vs `ident`", "+25.0 vs `ident`"] in table_rows(lift[:lift.index("###")])


def test_plot_data_has_a_row_per_family_and_floors_as_references():
    records = small_run()
    data = coverage_plot_data(coverage_by_size(records, manifest_3(), TRAITS), TRAITS)
    rows = {(r["row"], r["method"], r["kind"]) for r in data}
    assert rows == {(f"{FAM} · WL encoding", "model", "model"), (f"{FAM} · WL encoding", "ident", ROW_FLOOR),
                    (f"{FAM} · WL encoding", "walk", "floor"), (f"{FAM} · WL encoding", "fd", "classical")}
    assert data == sorted(data, key=lambda r: (r["row"], r["domain"], r["kind"], r["method"], r["x"]))
    summary = pool_summary(records, TRAITS)
    hit = hit5_plot_data(summary, {"model": FAM, "ident": FAM}, TRAITS)
    assert [(r["method"], r["kind"], r["hit5"]) for r in hit] == [("ident", "floor", 30.0), ("model", "model", 55.0)]
    assert {r["row"] for r in hit} == {f"{FAM} · WL encoding"}


def test_published_side_by_side_keeps_each_rows_floor():
    """EmbedPlan rows with a published column keep the identity floor they are measured against
    (no published value of its own) and their lift over it; an unrelated row stays out."""
    from planarena.report.sections.pool import Pool, published_summary

    fam = "embedplan-latent-transitions"
    traits = {"embedplan_identity": ReportTraits(role="floor", floor_group="MPNet"),
              "embedplan_mlp": ReportTraits(floor_group="MPNet"), "other": ReportTraits()}
    records = [pool_rec(m, "extrapolation", d, 0, 0.1, h, family=f)
               for m, h, f in (("embedplan_mlp", 0.7, fam), ("embedplan_identity", 0.5, fam), ("other", 0.2, FAM))
               for d in ("blocksworld", "ferry")]
    summary = pool_summary(records, traits)
    side = published_summary(Pool(table=None, summary=summary, inputs_notes=[], summary_notes=[], reading=[],
                                  matrices=[], counts=None))
    rows = side.set_index("method")
    assert set(rows.index) == {"embedplan_mlp", "embedplan_identity"}
    assert rows.loc["embedplan_mlp", "measured lift over floor (Hit@5, points)"] == "+20.0 vs `embedplan_identity`"
    assert rows.loc["embedplan_identity", "measured Hit@5"].startswith("50.0")
    assert rows.loc["embedplan_mlp", "published MPNet (Tables 1, 20)"] == "26.8"
    assert rows.loc["embedplan_identity", "published MPNet (Tables 1, 20)"] == "–"
