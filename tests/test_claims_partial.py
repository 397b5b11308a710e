"""A claim run carried across machines: its finished training units packed beside its page
(reports/claims/<id>/partial/, one archive per unit, written once) and unpacked into a fresh
workspace, where training skips them."""

import json
import shutil
import tarfile

import pytest

from planarena.claims import partial
from planarena.methods.units import KEPT, train_units


def workspace(root, key="abc123"):
    units = root / "data" / "cache" / "transformers" / f"{key}.units"
    for seed in (13, 14):
        unit = units / "gripper" / f"seed{seed}"
        unit.mkdir(parents=True)
        (unit / "model.pt").write_bytes(bytes([seed]) * 100)
        (unit / KEPT).write_text(json.dumps({"status": "ok", "best_step": seed}))
    (units / "gripper" / "seed15.tmp").mkdir()                       # a unit being written
    (units / "gripper" / "seed15.tmp" / "model.pt").write_bytes(b"half")
    (root / "data" / "cache" / "text").mkdir(parents=True)           # sentence embeddings: left out
    (root / "data" / "cache" / "text" / "emb.sqlite").write_bytes(b"x" * 1000)
    return units


def test_save_packs_each_finished_unit_once_and_deterministically(tmp_path):
    work, page = tmp_path / "ws", tmp_path / "page"
    units = workspace(work)
    (work / "data" / "cache" / "rgnn_policies" / "k1").mkdir(parents=True)   # a per-unit cache
    (work / "data" / "cache" / "rgnn_policies" / "k1" / "facts.json").write_text("{}")
    assert [str(u.relative_to(work / "data" / "cache")) for u in partial.units(work)] == [
        "rgnn_policies/k1", "transformers/abc123.units/gripper/seed13", "transformers/abc123.units/gripper/seed14"]
    out = partial.save(work, page)
    assert (out["units"], out["new"]) == (3, 3)
    archives = sorted(p.name for p in (page / partial.PARTIAL).iterdir())
    assert archives == ["rgnn_policies~k1.tar.gz", "transformers~abc123.units~gripper~seed13.tar.gz",
                        "transformers~abc123.units~gripper~seed14.tar.gz"]
    with tarfile.open(page / partial.PARTIAL / archives[1]) as tar:
        assert tar.getnames() == ["data/cache/transformers/abc123.units/gripper/seed13/model.pt",
                                  "data/cache/transformers/abc123.units/gripper/seed13/unit.json"]
    first = (page / partial.PARTIAL / archives[1]).read_bytes()
    (units / "gripper" / "seed15").mkdir()                      # a third unit finishes
    (units / "gripper" / "seed15" / KEPT).write_text("{}")
    out = partial.save(work, page)
    assert (out["units"], out["new"]) == (4, 1)                  # the others are not written again
    assert (page / partial.PARTIAL / archives[1]).read_bytes() == first
    assert "4 finished training units" in partial.describe(page)
    # the stage finishes: its cache (facts.json on top, the units inside) replaces the units' archives
    import shutil
    finished = work / "data" / "cache" / "transformers" / "abc123"
    shutil.copytree(units, finished)
    shutil.rmtree(units)
    (finished / "facts.json").write_text("{}")
    out = partial.save(work, page)
    assert (out["units"], out["new"]) == (2, 1)
    assert sorted(p.name for p in (page / partial.PARTIAL).iterdir()) == ["rgnn_policies~k1.tar.gz",
                                                                         "transformers~abc123.tar.gz"]
    assert partial.save(tmp_path / "empty", tmp_path / "page2")["units"] == 0
    assert not (tmp_path / "page2").exists()


def test_restore_fills_a_fresh_workspace_and_training_skips_the_restored_units(tmp_path):
    work, page, fresh = tmp_path / "ws", tmp_path / "page", tmp_path / "fresh"
    workspace(work)
    partial.save(work, page)
    (fresh / "data" / "cache" / "transformers" / "abc123.units" / "gripper" / "seed13").mkdir(parents=True)
    mine = fresh / "data" / "cache" / "transformers" / "abc123.units" / "gripper" / "seed13" / "model.pt"
    mine.write_bytes(b"already here")
    assert partial.restore(fresh, page) == 3                         # the file already there is kept
    assert mine.read_bytes() == b"already here"
    assert partial.restore(fresh, tmp_path / "no-archive") == 0
    # the training of a restored workspace runs only the unit that was not finished
    keep = fresh / "data" / "cache" / "transformers" / "abc123.units"
    (keep / "gripper" / "seed13" / "model.pt").write_bytes(bytes([13]) * 100)
    calls = []

    def fit(unit):
        calls.append(unit)
        out = tmp_path / "models" / unit[0] / f"seed{unit[1]}"
        out.mkdir(parents=True)
        (out / "model.pt").write_bytes(b"new")
        return {"status": "ok", "best_step": 0}

    facts, _ = train_units(fit, ["gripper"], [13, 14, 15], jobs=1, desc="", model_dir=tmp_path / "models", keep=keep)
    assert calls == [("gripper", 15)]
    assert facts["domains"]["gripper"]["seed14"]["best_step"] == 14
    assert (tmp_path / "models" / "gripper" / "seed14" / "model.pt").read_bytes() == bytes([14]) * 100
    partial.discard(page)
    assert not (page / partial.PARTIAL).exists() and partial.describe(page) is None


def test_a_foreign_archive_is_refused_with_its_name(tmp_path):
    page = tmp_path / "page"
    (page / partial.PARTIAL).mkdir(parents=True)
    (page / partial.PARTIAL / "u.tar.gz").write_bytes(b"not a tar")
    with pytest.raises(ValueError, match="u.tar.gz: not a unit of a claim's partial run"):
        partial.restore(tmp_path / "ws", page)
    with tarfile.open(page / partial.PARTIAL / "u.tar.gz", "w:gz") as tar:
        f = tmp_path / "evil"
        f.write_text("x")
        tar.add(f, arcname="src/planarena/cli.py")
    with pytest.raises(ValueError, match="unexpected member 'src/planarena/cli.py'"):
        partial.restore(tmp_path / "ws", page)


def test_a_measurement_claims_rows_are_saved_and_restored_without_duplicates(tmp_path):
    work, page, fresh = tmp_path / "ws", tmp_path / "page", tmp_path / "fresh"
    work.mkdir()
    row = lambda seed, side: {"domain": "gripper", "split": "validation", "problem": f"seed{seed}",  # noqa: E731
                              "side": side, "completed": True, "values": {"val_loss": 1.0 / seed}}
    rows = [row(13, "cl"), row(13, "nocl")]
    (work / "measurements.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = partial.save(work, page)
    assert (out["units"], out["new"]) == (2, 2)                   # a row is a unit; no archive written
    assert "2 measurement rows" in partial.describe(page)
    with open(work / "measurements.jsonl", "a") as f:             # a third row is measured
        f.write(json.dumps(row(14, "cl")) + "\n")
    assert partial.save(work, page)["units"] == 3
    saved = [json.loads(line) for line in (page / partial.PARTIAL / "measurements.jsonl").read_text().splitlines()]
    assert saved == rows + [row(14, "cl")]
    fresh.mkdir()
    (fresh / "measurements.jsonl").write_text(json.dumps(row(13, "cl")) + "\n")   # already measured here
    assert partial.restore(fresh, page) == 2
    back = [json.loads(line) for line in (fresh / "measurements.jsonl").read_text().splitlines()]
    assert sorted((r["problem"], r["side"]) for r in back) == [("seed13", "cl"), ("seed13", "nocl"), ("seed14", "cl")]
    assert partial.restore(fresh, page) == 0                       # a second restore adds nothing


def test_a_restored_run_keeps_the_code_stamp_of_rows_measured_before_stamping(tmp_path):
    """A workspace row measured before rows named their code takes the ``code`` its committed copy
    carries (the verdict page names every commit that measured a row); a stamped row is kept as is."""
    work, page = tmp_path / "ws", tmp_path / "page"
    row = lambda seed, **kw: {"domain": "gripper", "split": "validation", "problem": f"seed{seed}",  # noqa: E731
                              "side": "cl", "completed": True, "values": {"val_loss": 1.0}, **kw}
    (page / partial.PARTIAL).mkdir(parents=True)
    (page / partial.PARTIAL / "measurements.jsonl").write_text(
        json.dumps(row(13, code="aaaaaaa")) + "\n" + json.dumps(row(14, code="bbbbbbb")) + "\n")
    work.mkdir()
    (work / "measurements.jsonl").write_text(json.dumps(row(13)) + "\n" + json.dumps(row(14, code="ccccccc")) + "\n")
    assert partial.restore(work, page) == 0                        # nothing missing, one stamp added
    back = [json.loads(line) for line in (work / "measurements.jsonl").read_text().splitlines()]
    assert [(r["problem"], r.get("code")) for r in back] == [("seed13", "aaaaaaa"), ("seed14", "ccccccc")]


def test_evaluation_records_and_cost_are_carried_to_another_machine(tmp_path):
    """A claim whose evaluation outlasts a session: the records written so far (complete lines
    only: the run may be appending) and the workspace's cost are saved; a fresh workspace gets
    them back and an older one gets only what it lacks, so its evaluate stage skips those attempts."""
    work, page, fresh = tmp_path / "ws", tmp_path / "page", tmp_path / "fresh"
    rec = lambda problem, seed, h="h1": {"domain": "spanner", "split": "test-easy", "problem": problem,  # noqa: E731
                                         "seed": seed, "config_hash": h, "solved": True}
    results = work / "data" / "results"
    results.mkdir(parents=True)
    (work / "code.json").write_text(json.dumps({"commit": "abc1234"}))
    (work / "cost.json").write_text(json.dumps({"wall_s": 600.0, "runs": 1, "machines": ["cpu A"]}))
    lines = [json.dumps(rec("p01", 13)), json.dumps(rec("p02", 13))]
    (results / "aiw_ad.jsonl").write_text("\n".join(lines) + "\n" + '{"domain": "spanner", "spl')   # being appended
    out = partial.save(work, page)
    assert out["records"] == 2 and out["units"] == 2
    saved = page / partial.PARTIAL / partial.RESULTS / "aiw_ad.jsonl"
    assert saved.read_text() == "\n".join(lines) + "\n"
    assert json.loads((page / partial.PARTIAL / partial.COST).read_text())["machines"] == ["cpu A"]
    assert "2 evaluation records of 1 rows" in partial.describe(page)
    assert partial.save(work, page)["bytes"] == 0                      # nothing new: nothing rewritten
    # another machine: a fresh workspace gets the records and the cost
    assert partial.restore(fresh, page) == 2
    assert (fresh / "data" / "results" / "aiw_ad.jsonl").read_text() == saved.read_text()
    assert json.loads((fresh / "cost.json").read_text())["wall_s"] == 600.0
    # the first machine again, its workspace behind the saved copy: only the missing record (a
    # record of another config fingerprint counts as missing) is appended, the later cost is taken
    older = tmp_path / "older"
    (older / "data" / "results").mkdir(parents=True)
    (older / "data" / "results" / "aiw_ad.jsonl").write_text(lines[0] + "\n" + json.dumps(rec("p02", 13, "h0")) + "\n")
    (older / "cost.json").write_text(json.dumps({"wall_s": 100.0, "runs": 1, "machines": ["cpu B"]}))
    assert partial.restore(older, page) == 1
    back = [json.loads(line) for line in (older / "data" / "results" / "aiw_ad.jsonl").read_text().splitlines()]
    assert [(r["problem"], r["config_hash"]) for r in back] == [("p01", "h1"), ("p02", "h0"), ("p02", "h1")]
    assert json.loads((older / "cost.json").read_text())["machines"] == ["cpu A"]
    assert partial.restore(older, page) == 0


def test_a_run_names_every_machine_it_ran_on(tmp_path):
    from planarena.claims import run as claim_run

    claim_run._add_cost(tmp_path, 10.0, "abc1234")
    (tmp_path / "cost.json").write_text(json.dumps({**json.loads((tmp_path / "cost.json").read_text()),
                                                     "machines": ["Other CPU (avx2)"]}))
    claim_run._add_cost(tmp_path, 5.0, "abc1234")
    cost = json.loads((tmp_path / "cost.json").read_text())
    assert (cost["wall_s"], cost["runs"]) == (15.0, 2)
    assert cost["machines"] == sorted(["Other CPU (avx2)", claim_run.machine()])
    assert claim_run.machine().endswith(")") and "(" in claim_run.machine()


def test_a_unit_still_training_is_carried_as_its_checkpoint(tmp_path):
    """A DIAS unit of an hour that a session's end would cut: its checkpoint is saved (rewritten as
    it advances), restored where the workspace has neither it nor the finished unit, and dropped
    from the saved run once the unit finished."""
    work, page, fresh = tmp_path / "ws", tmp_path / "page", tmp_path / "fresh"
    work.mkdir()
    (work / "code.json").write_text(json.dumps({"commit": "abc1234"}))   # the code, copied before training
    units = workspace(work)                                   # gripper seeds 13 and 14 finished
    ckpt = units / "gripper" / "seed15.ckpt"
    ckpt.write_bytes(b"step 500")
    partial.save(work, page)
    saved = page / partial.PARTIAL / partial.CHECKPOINTS / "transformers~abc123.units~gripper~seed15.ckpt"
    assert saved.read_bytes() == b"step 500"
    assert "1 units still training, carried as checkpoints" in partial.describe(page)
    ckpt.write_bytes(b"step 1000")                             # the unit advances
    assert partial.save(work, page)["bytes"] == len(b"step 1000")
    assert saved.read_bytes() == b"step 1000"
    # another machine resumes it from step 1000; a workspace that finished the unit takes nothing
    assert partial.restore(fresh, page) == 5                    # two units of two files, one checkpoint
    assert (fresh / "data" / "cache" / "transformers" / "abc123.units" / "gripper" / "seed15.ckpt").read_bytes() == b"step 1000"
    done = tmp_path / "done"
    (done / "data" / "cache" / "transformers" / "abc123.units" / "gripper" / "seed15").mkdir(parents=True)
    (done / "data" / "cache" / "transformers" / "abc123.units" / "gripper" / "seed15" / KEPT).write_text("{}")
    partial.restore(done, page)
    assert not (done / "data" / "cache" / "transformers" / "abc123.units" / "gripper" / "seed15.ckpt").exists()
    # the unit finishes: its checkpoint goes, and so does the saved copy
    ckpt.unlink()
    (units / "gripper" / "seed15").mkdir()
    (units / "gripper" / "seed15" / KEPT).write_text("{}")
    partial.save(work, page)
    assert not saved.exists()


def test_units_of_code_a_fresh_code_resume_replaced_are_not_saved(tmp_path):
    """`claims run --fresh-code` copies the code anew: units trained before that, under keys the
    new code no longer reads, stay in the workspace but are not packed (they would only bloat the
    repository)."""
    import os

    work, page = tmp_path / "ws", tmp_path / "page"
    units = workspace(work)                                   # seeds 13 and 14, finished "long ago"
    for seed in (13, 14):
        marker = units / "gripper" / f"seed{seed}" / KEPT
        os.utime(marker, (marker.stat().st_mtime - 3600,) * 2)
    (work / "code.json").write_text(json.dumps({"commit": "new1234"}))   # copied now
    (units / "gripper" / "seed15").mkdir()                    # trained with the new code
    (units / "gripper" / "seed15" / KEPT).write_text("{}")
    out = partial.save(work, page)
    assert out["new"] == 1
    assert sorted(p.name for p in (page / partial.PARTIAL).glob("*.tar.gz")) == [
        "transformers~abc123.units~gripper~seed15.tar.gz"]


def test_archives_saved_before_a_fresh_code_resume_are_removed(tmp_path):
    """Units saved beside the page with the old code, then the workspace given new code
    (`--fresh-code`): the next save removes their archives (keys nothing reads); a restored run on
    another machine (same commit beside the page and in the workspace) keeps them, whatever their
    files' times."""
    import os

    work, page = tmp_path / "ws", tmp_path / "page"
    units = workspace(work)
    (work / "code.json").write_text(json.dumps({"commit": "old1234"}))
    old = os.path.getmtime(work / "code.json") - 3600
    os.utime(work / "code.json", (old - 60,) * 2)                # copied before the two units finished
    for seed in (13, 14):
        marker = units / "gripper" / f"seed{seed}" / KEPT
        os.utime(marker, (old,) * 2)
    assert partial.save(work, page)["new"] == 2
    same = tmp_path / "same"
    shutil.copytree(page, same)
    (work / "code.json").write_text(json.dumps({"commit": "old1234"}))   # the same code, its time now
    partial.save(work, same)
    assert len(list((same / partial.PARTIAL).glob("*.tar.gz"))) == 2
    (work / "code.json").write_text(json.dumps({"commit": "new1234"}))   # --fresh-code: copied now
    (units / "gripper" / "seed15").mkdir()
    (units / "gripper" / "seed15" / KEPT).write_text("{}")
    partial.save(work, page)
    assert sorted(p.name for p in (page / partial.PARTIAL).glob("*.tar.gz")) == [
        "transformers~abc123.units~gripper~seed15.tar.gz"]


def test_claims_status_counts_attempts_against_the_design(tmp_path, monkeypatch):
    """`claims status`: the workspace's code, cost and machines, its units, and per row the attempts
    recorded (complete lines, each (domain, split, problem, seed) once) against what the design
    expects (problems of the evaluated splits x seeds); without a workspace, the saved partial run."""
    from types import SimpleNamespace

    from planarena.claims import power, progress

    work, page = tmp_path / "ws", tmp_path / "page"
    (work / "data" / "results").mkdir(parents=True)
    (work / "code.json").write_text(json.dumps({"commit": "abc1234"}))
    (work / "cost.json").write_text(json.dumps({"wall_s": 1200.0, "runs": 2, "machines": ["cpu A", "cpu B"]}))
    (work / "params.yaml").write_text("evaluation: {splits: [test-easy]}\n")
    rec = lambda problem, seed: json.dumps({"domain": "spanner", "split": "test-easy", "problem": problem,  # noqa: E731
                                            "seed": seed, "config_hash": "h"})
    (work / "data" / "results" / "aiw_ad.jsonl").write_text(
        "\n".join([rec("p1", 13), rec("p2", 13), rec("p2", 13)]) + "\n" + '{"dom')   # a repeat; a line being written
    design = power.Design(problems={("spanner", "train"): ["t1"] * 9, ("spanner", "test-easy"): ["p1", "p2", "p3"]},
                          seeds={"aiw_ad": [13, 14], "walk": [13, 14]})
    monkeypatch.setattr(power, "design_of", lambda claim, params: design)
    claim = SimpleNamespace(id="c", methods=["aiw_ad", "walk"])
    lines = progress.status(claim, work, page)
    assert "code of commit abc1234, 20 min wall in 2 ended run(s) on cpu A; cpu B" in lines[1]
    assert lines[-1].endswith("aiw_ad 2/6, walk 0/6; 2 of 12 in all")
    assert "from the workspace" in lines[-1]
    partial.save(work, page)
    lines = progress.status(claim, tmp_path / "elsewhere", page)   # another machine: the saved run
    assert "no workspace on this machine" in lines[1] and "3 evaluation records of 1 rows" in lines[2]
