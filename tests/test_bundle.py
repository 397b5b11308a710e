"""The run's records committed beside the front page (planarena.report.bundle) and `check-repro`
(planarena.report.repro): a deterministic archive that restores to a data/-like folder, and a
per-number comparison that tells identical from within- and outside-interval differences."""

from __future__ import annotations

import json

from test_report import rec

from planarena.config import Layout
from planarena.core.records import iter_records
from planarena.report import bundle, repro
from planarena.stats import wilson


def _layout(root, outcomes):
    layout = Layout(root)
    layout.results.mkdir(parents=True)
    for m, solved in outcomes.items():
        lines = [json.dumps(rec(m, "d", "extrapolation", f"p{i}", 13, "solved" if s else "unsolved").to_dict())
                 for i, s in enumerate(solved)]
        (layout.results / f"{m}.jsonl").write_text("\n".join(lines) + "\n")
    (layout.plans).mkdir(parents=True)
    (layout.plans / "records.jsonl").write_text("")
    (layout.problems / "d").mkdir(parents=True)
    (layout.problems / "d" / "domain.pddl").write_text("(define (domain d))\n")
    return layout


def test_archive_is_deterministic_and_restores_what_the_report_reads(tmp_path):
    layout = _layout(tmp_path / "data", {"a": [1, 1, 0], "off": [1]})
    first = bundle.write(layout, ["a"], tmp_path / "one.tar.gz")
    bundle.write(layout, ["a"], tmp_path / "two.tar.gz")
    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "two.tar.gz").read_bytes()
    assert first["files"] == 4   # environment, results/a, problems/d/domain.pddl, plans/records
    back = bundle.restore(tmp_path / "one.tar.gz", tmp_path / "back")
    assert sorted(p.name for p in back.results.glob("*.jsonl")) == ["a.jsonl"]   # the reported rows only
    assert (back.results / "a.jsonl").read_text() == (layout.results / "a.jsonl").read_text()
    assert (back.problems / "d" / "domain.pddl").exists()
    env = bundle.committed_environment(tmp_path / "one.tar.gz")
    assert env["cpu_count"] and "torch" in env and "vector_extensions" in env


def test_check_repro_tells_identical_within_and_outside(tmp_path):
    committed = _layout(tmp_path / "c", {"a": [1] * 10 + [0] * 10, "b": [1] * 10 + [0] * 10})
    local = _layout(tmp_path / "l", {"a": [1] * 10 + [0] * 10, "b": [1] * 12 + [0] * 8})
    read = lambda layout: list(iter_records(sorted(layout.results.glob("*.jsonl"))))  # noqa: E731
    ivs = {"a": wilson(10, 20), "b": wilson(10, 20), "gone": wilson(5, 20)}
    rows = {r.number: r for r in repro.coverage_agreement(read(committed), read(local), ivs)}
    assert rows["coverage a"].status == repro.IDENTICAL and rows["coverage a"].discordant == 0
    assert rows["coverage b"].status == repro.WITHIN and rows["coverage b"].discordant == 2
    assert rows["coverage b"].local == 0.6
    assert rows["coverage gone"].status == repro.MISSING
    far = _layout(tmp_path / "f", {"a": [1] * 20, "b": [0] * 20})
    rows = {r.number: r for r in repro.coverage_agreement(read(committed), read(far), ivs)}
    assert rows["coverage a"].status == rows["coverage b"].status == repro.OUTSIDE
    text = repro.render(list(rows.values()), ["torch: 2.13.0+cpu (CPU build) -> 2.13.0+cu130 (CUDA 13.0 build)"])
    assert "2 outside interval, 1 missing of 3 headline numbers." in text
    assert "Machine differences (committed -> this run): torch: 2.13.0+cpu (CPU build) -> 2.13.0+cu130" in text


def test_environment_differences_name_each_field():
    a = {"cpu_model": "AMD EPYC", "vector_extensions": "avx2 (no AVX-512)", "torch": "2.13.0+cpu (CPU build)",
         "packages": {"torch": "2.13.0", "wlplan": "2.1.0"}}
    b = {**a, "vector_extensions": "avx2 avx512f", "packages": {"torch": "2.13.0", "wlplan": "2.2.0"}}
    assert repro.environment_differences(a, b) == ["vector_extensions: avx2 (no AVX-512) -> avx2 avx512f",
                                                   "wlplan: 2.1.0 -> 2.2.0"]


def test_params_hash_is_the_runs_own_also_from_committed_records(tmp_path):
    """The Info section's params hash is of the params the run's report stage read
    (``inputs/stages/report.json``, which the records archive carries), not of whatever params.yaml
    holds when the page is rendered again from the committed records."""
    from planarena.core.io import stable_hash
    from planarena.report.sections.info import collect_info, report_params

    run = {"profile": "default", "seed": 0, "methods": {"a": {}}}
    layout = _layout(tmp_path / "data", {"a": [1, 0]})
    (layout.root / "inputs" / "stages").mkdir(parents=True)
    (layout.root / "inputs" / "stages" / "report.json").write_text(json.dumps({"stage": "report", "params": run}))
    bundle.write(layout, ["a"], tmp_path / "run.tar.gz")
    back = bundle.restore(tmp_path / "run.tar.gz", tmp_path / "back")
    assert report_params(back.root / "inputs") == run
    edited = {**run, "seed": 7}
    assert collect_info(edited, inputs_dir=back.root / "inputs")["params_hash"] == stable_hash(run)
    assert report_params(tmp_path / "nowhere") is None
    assert collect_info(edited, inputs_dir=tmp_path / "nowhere")["params_hash"] == stable_hash(edited)


def test_git_revision_is_the_runs_when_rendered_from_its_records(monkeypatch):
    """The archive's ``environment.json`` carries the run's git revision; a page rendered later from
    it names that commit and where it was rendered, not the renderer's checkout alone."""
    from planarena.report.sections import info

    monkeypatch.setattr(info, "git_state", lambda: ("bbbbbbb", False))
    assert bundle.environment()["git_revision"] == "bbbbbbb"
    rendered = info.collect_info({}, environment={"git_revision": "aaaaaaa", "git_dirty": False})
    assert (rendered["git_revision"], rendered["rendered_at"]) == ("aaaaaaa", "bbbbbbb")
    text = info.render_info(rendered, info.methods_table([]))
    assert "aaaaaaa (clean); this page rendered from the run's committed records at bbbbbbb" in text
    live = info.collect_info({})   # a run's own report stage: this checkout, nothing else said
    assert (live["git_revision"], live["rendered_at"]) == ("bbbbbbb", None)
    old = info.collect_info({}, environment={"cpu_model": "X"})   # an archive from before this field
    assert old["git_revision"] is None and old["rendered_at"] == "bbbbbbb"
    assert "not recorded in the run's records" in info.render_info(old, info.methods_table([]))


def test_check_repro_names_each_front_page_reading_that_changed(monkeypatch):
    """Beside the numbers, check-repro compares the front page's readings (a row above each floor,
    best of its kind per column): a p-value that crosses alpha between two runs is a changed reading
    even when both numbers lie within each other's intervals."""
    from types import SimpleNamespace

    from planarena.report.sections.headline import HELD_OUT

    def analysis(p_twin, bold):
        t = SimpleNamespace(diff=0.2, p=p_twin)         # a PairedTest's fields the reading uses
        table = SimpleNamespace(
            floor_tests={"learned": [("learned_untrained", t, p_twin), ("walk", SimpleNamespace(diff=-0.1), 0.001)]},
            columns=["extrapolation", HELD_OUT], methods=["learned", "other", "walk"],
            group={"learned": "policy", "other": "policy", "walk": "floor"},
            cells={(m, c): None for m in ("learned", "other", "walk") for c in ("extrapolation", HELD_OUT)},
            bold={HELD_OUT: set(bold)})
        return SimpleNamespace(traits={}, seed=0), SimpleNamespace(headline=[table], rank_records=[])

    runs = {"amd": analysis(0.047, ["learned"]), "xeon": analysis(0.055, [])}
    monkeypatch.setattr(repro, "_front_page", lambda layout, params: runs[layout])
    said, _ = repro.readings("amd", {})
    mine, _ = repro.readings("xeon", {})
    assert said["coverage: learned above learned_untrained"] is True
    assert said["coverage: learned above walk"] is False                    # below a floor is not above it
    assert "coverage held-out: walk best of its kind" not in said           # floors are no kind's best
    changed = repro.changed_readings(said, mine)
    assert changed == ["coverage held-out: learned best of its kind: yes -> no",
                       "coverage: learned above learned_untrained: yes -> no"]
    text = repro.render([], [], changed, len(set(said) & set(mine)))
    assert f"{len(said) - 2} of {len(said)} the same, changed:" in text
    assert "- coverage: learned above learned_untrained: yes -> no" in text
