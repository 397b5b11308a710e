"""EmbedPlan end to end on a tiny ACP dataset: acp_data -> embed_acp (fake encoder) -> train ->
evaluate (six protocols) -> report section; bad encoder path; cache makes re-embedding free."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
import yaml

pytest.importorskip("torch")

from conftest import ROOT, smoke_profile_params  # noqa: E402

from planarena.config import ConfigError, Layout, resolve_profile  # noqa: E402
from planarena.core.io import read_jsonl  # noqa: E402
from planarena.core.records import ResultRecord
from planarena.datasets import acp
from planarena.features.text import acp as embed_acp  # noqa: E402
from planarena.protocols.pool import PROTOCOLS  # noqa: E402
from planarena.report.hitk import gap_notes, pool_summary, pool_table, render_pool_md  # noqa: E402
from planarena.runner.stages import run_evaluate_stage, run_train_stage  # noqa: E402


class BagOfSentencesEncoder:
    """Deterministic stand-in for a sentence encoder: the normalised sum of one hashed random
    vector per sentence, so states sharing sentences are close (like a real encoder)."""

    slug = "bag-encoder"
    encoder_id = "bag@1"
    batch_size = 64
    max_seq_length = None

    def __init__(self, dim: int = 32):
        self.dim = dim
        self.texts = 0

    def _vec(self, sentence: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(sentence.encode()).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(self.dim)

    def encode(self, texts):
        self.texts += len(texts)
        out = []
        for t in texts:
            v = sum(self._vec(s.strip()) for s in t.split(".") if s.strip())
            out.append(v / (np.linalg.norm(v) + 1e-9))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def token_counts(self, texts):
        return [len(t.split()) for t in texts]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ep")
    params = smoke_profile_params()
    params["evaluation"]["seeds"] = [13]
    params["acp"]["encoders"] = ["bag-encoder"]  # the slug the fake encoder writes under
    params["embedplan"]["model"] = {"max_epochs": 8, "warmup_epochs": 1, "patience": 8, "max_actions": 4,
                                    "proj_hidden": 32, "proj_layers": 2, "hidden": 64, "layers": 2}
    params["methods"] = {k: v for k, v in params["methods"].items() if k.startswith("embedplan")}
    layout = Layout(tmp / "data")
    acp.run_stage(params, layout)
    enc = BagOfSentencesEncoder()
    embed_acp.run_stage(params, layout, encoder_override=enc)
    for m in ("embedplan_mlp", "embedplan_untrained", "embedplan_identity"):
        run_train_stage(params, layout, m)
        run_evaluate_stage(params, layout, m)
    return params, layout, enc


def _records(layout, method):
    return [ResultRecord.from_dict(r) for r in read_jsonl(layout.results / f"{method}.jsonl")]


def test_every_protocol_has_records_with_metrics(workspace):
    params, layout, _ = workspace
    recs = _records(layout, "embedplan_mlp")
    assert {r.extra["protocol"] for r in recs} == set(PROTOCOLS)
    for r in recs:
        assert r.outcome == "solved" and r.extra["task"] == "rank_successors"
        assert r.extra["inputs"] == "state, action"
        for k in ("hit@1", "hit@5", "hit@10", "acc@1", "acc@5", "acc@10"):
            assert 0.0 <= r.extra[k] <= 1.0
        assert r.extra["hit@1"] <= r.extra["hit@5"] <= r.extra["hit@10"]
        if r.extra["protocol"] != "interpolation":
            assert "plan_mean_hit@5" in r.extra and r.extra["distractors"] == "problem"
    cross = [r for r in recs if r.extra["protocol"] == "cross_domain"]
    assert {(r.extra["train_on"], r.domain) for r in cross} == {("blocksworld", "ferry"), ("ferry", "blocksworld")}


def test_training_beats_the_untrained_floor_on_interpolation(workspace):
    _, layout, _ = workspace
    def hit5(method):
        return np.mean([r.extra["hit@5"] for r in _records(layout, method)
                        if r.extra["protocol"] == "interpolation"])
    assert hit5("embedplan_mlp") > hit5("embedplan_untrained") + 0.2


def test_evaluate_is_resumable(workspace):
    params, layout, _ = workspace
    before = (layout.results / "embedplan_mlp.jsonl").read_text()
    run_evaluate_stage(params, layout, "embedplan_mlp")
    assert (layout.results / "embedplan_mlp.jsonl").read_text() == before


def test_second_embedding_run_encodes_nothing_new(workspace, capsys):
    """The domains are executor units (workers encode; the stage process prints their cache
    counters): a second run finds every text in the cache and writes the same arrays."""
    import re

    params, layout, enc = workspace
    npz = sorted((layout.embeddings / "acp" / "bag-encoder").glob("*.npz"))
    before = {p.name: p.read_bytes() for p in npz}
    capsys.readouterr()
    embed_acp.run_stage(params, layout, encoder_override=enc)
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("embed_acp bag-encoder: cache")][0]
    counts = {k: float(v) for k, v in re.findall(r"'(\w+)': ([0-9.]+)", line)}
    assert counts["misses"] == 0 and counts["hits"] == counts["unique"] > 0
    assert {p.name: p.read_bytes() for p in npz} == before


def test_embedding_on_cluster_workers_writes_the_same_arrays(workspace, tmp_path, monkeypatch):
    """On a cluster (here: a local 2-worker cluster standing in for one) each domain is a unit on
    a worker; with an empty cache the arrays are byte-identical to the stage process's."""
    import shutil

    from planarena.core import executor

    params, layout, enc = workspace
    out = layout.embeddings / "acp" / "bag-encoder"
    before = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    ws = Layout(tmp_path / "data")
    shutil.copytree(layout.acp, ws.acp)
    monkeypatch.setattr(executor, "remote", lambda: True)
    executor.configure(executor.ExecutorConfig(jobs=2, root=str(ws.root), min_units=1))  # a cluster even for 2 domains
    embed_acp.run_stage(params, ws, encoder_override=BagOfSentencesEncoder())
    after = {p.name: p.read_bytes() for p in sorted((ws.embeddings / "acp" / "bag-encoder").iterdir())}
    assert after == before and len(before) > 2


def test_report_section_has_protocols_matrix_and_counts(workspace):
    _, layout, _ = workspace
    recs = _records(layout, "embedplan_mlp") + _records(layout, "embedplan_untrained")
    table = pool_table(recs)
    assert set(table["method"]) == {"embedplan_mlp", "embedplan_untrained", "*uniform random ranker*"}
    # the floor row of each (protocol, domain): Hit@k chance is k / pool; Acc@k chance from the
    # applicable actions, never above 100%, and at least the chance of ranking 1 of them first
    floor = table[table["method"] == "*uniform random ranker*"]
    assert len(floor) == len(table[["protocol", "domain"]].drop_duplicates())
    for r in recs:
        x = r.extra
        if r.outcome != "solved":
            continue
        assert min(1.0, 5 / x["pool_size"]) - 1e-6 <= x["hit_chance@5"] <= 1.0  # pools may be smaller
        assert x["hit_chance@1"] <= x["hit_chance@5"] <= x["hit_chance@10"]
        assert 1 / x["actions"] - 1e-6 <= x["acc_chance@1"] <= x["acc_chance@5"] <= 1.0  # Jensen
    assert all(0 < float(a) <= 100 for a in floor["Acc@5"])
    summary = pool_summary(recs)
    assert "Leave-One-Out" in set(summary["protocol"])
    md = "\n".join(render_pool_md(recs, layout.acp))
    assert "Cross-Domain matrix" in md and "Transition datasets" in md


def test_missing_encoder_path_names_the_param(tmp_path):
    doc = yaml.safe_load((ROOT / "params.yaml").read_text())
    params = resolve_profile(doc)
    params["acp"]["encoders"] = ["/no/such/encoder-dir"]
    with pytest.raises(ConfigError, match=r"acp\.encoders\[0\]"):
        embed_acp.make_encoder(params, "/no/such/encoder-dir", 0)


def test_train_facts_record_table7_counts(workspace):
    _, layout, _ = workspace
    facts = json.loads((layout.models / "embedplan_mlp" / "facts.json").read_text())
    counts = facts["encoders"]["bag-encoder"]["counts"]
    assert set(counts) == {"blocksworld", "ferry"} and all(c["transitions"] > 0 for c in counts.values())


def test_gap_notes_read_the_run_against_the_paper(workspace):
    _, layout, _ = workspace
    recs = _records(layout, "embedplan_mlp") + _records(layout, "embedplan_untrained")
    notes = gap_notes(recs)
    assert notes and all(n.startswith("- ") for n in notes)
    assert any(n.startswith("- Interpolation") for n in notes)
    assert any("Untrained floor" in n and "3.9 %" in n for n in notes)
    assert gap_notes(_records(layout, "embedplan_untrained")) == []  # no trained EmbedPlan: nothing to read


def test_identity_floor_ranks_by_the_encoder_and_its_acc_is_chance(workspace):
    """z' = z_s (docs/concepts.md#floors-and-ceilings): no parameters, no weights file; the action
    is ignored, so every applicable action ties and Acc@k is the random ranker's on average."""
    _, layout, _ = workspace
    recs = [r for r in _records(layout, "embedplan_identity") if r.outcome == "solved"]
    assert recs and all(r.extra["parameters"] == 0 for r in recs)
    assert not list((layout.models / "embedplan_identity").rglob("*.pt"))
    acc = np.mean([r.extra["acc@1"] for r in recs])
    chance = np.mean([r.extra["acc_chance@1"] for r in recs])
    assert abs(acc - chance) < 0.1, (acc, chance)
