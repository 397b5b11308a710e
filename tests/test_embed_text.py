"""Tests of the text templates, the embedding cache and the ``embed_text`` stage (fast, offline)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from planarena.config import ConfigError, Layout
from planarena.features.text.cache import CACHE_ENV, EmbeddingCache, text_key
from planarena.features.text.encoder import (
    DEFAULT_ENCODER,
    TextEncoder,
    embed_text_params,
    encoder_slug,
    resolve_encoder_path,
    run_stage,
)
from planarena.features.text.splits import embeddings_file, load_split_embeddings
from planarena.features.text.templates import (
    EMPTY_STATE,
    GENERIC,
    load_templates,
    object_kinds,
    parse_atom,
    render_action,
    render_atom,
    render_goal,
    render_state,
    template_set,
)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks"


# ----------------------------------------------------------------------------------------------
# Templates
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "domain, atom, sentence",
    [
        ("blocksworld", "(on a b)", "Block a is on block b."),
        ("blocksworld", "(ontable b1)", "Block b1 is on the table."),
        ("blocksworld", "(clear c)", "Block c is clear."),
        ("blocksworld", "(handempty)", "The robotic arm is empty."),
        ("blocksworld", "(holding a)", "The robotic arm is holding block a."),
        ("blocksworld", "(on-table a)", "Block a is on the table."),  # IPC 2023 variant
        ("blocksworld", "(arm-empty)", "The robotic arm is empty."),
        ("gripper", "(at-robby rooma)", "The robot is in room rooma."),
        ("gripper", "(at ball1 roomb)", "Ball ball1 is in room roomb."),
        ("gripper", "(free left)", "Gripper left is free."),
        ("gripper", "(carry ball1 right)", "Gripper right is carrying ball ball1."),
        ("gripper", "(room rooma)", "rooma is a room."),
        ("gripper", "(carry r1 b1 g1)", "Robot r1 is carrying ball b1 in gripper g1."),  # ACPBench
        ("visitall", "(at-robot loc-x0-y1)", "The robot is at place loc-x0-y1."),
        ("visitall", "(visited loc-x1-y1)", "Place loc-x1-y1 has been visited."),
        ("visitall", "(connected p1 p2)", "Place p1 is connected to place p2."),
        ("logistics", "(at p0 l1-0)", "p0 is at l1-0."),  # no kinds known
        ("logistics", "(in-city l0-0 c0)", "l0-0 is in city c0."),
    ],
)
def test_atom_sentences(domain, atom, sentence):
    assert render_atom(domain, atom) == sentence


@pytest.mark.parametrize(
    "domain, action, sentence",
    [
        ("blocksworld", "(pick-up a)", "Pick up block a from the table."),
        ("blocksworld", "(put-down a)", "Put down block a on the table."),
        ("blocksworld", "(stack a b)", "Stack block a on block b."),
        ("blocksworld", "(unstack a b)", "Unstack block a from block b."),
        ("blocksworld", "(pickup a)", "Pick up block a from the table."),
        ("gripper", "(move rooma roomb)", "Move the robot from room rooma to room roomb."),
        ("gripper", "(pick ball1 rooma left)", "Pick up ball ball1 in room rooma with gripper left."),
        ("gripper", "(drop ball1 roomb left)", "Drop ball ball1 in room roomb from gripper left."),
        ("logistics", "(load-truck p0 t0 l0-0)", "Load package p0 into truck t0 at location l0-0."),
        ("logistics", "(unload-airplane p0 a0 l1-0)", "Unload package p0 from airplane a0 at location l1-0."),
        ("logistics", "(drive-truck t0 l0-0 l0-1 c0)", "Drive truck t0 from location l0-0 to location l0-1 in city c0."),
        ("logistics", "(fly-airplane a0 l0-0 l1-0)", "Fly airplane a0 from airport l0-0 to airport l1-0."),
        ("logistics", "(LOAD-TRUCK p0 t0 l0-0)", "Load package p0 into truck t0 at location l0-0."),
        ("visitall", "(move p1 p2)", "Move the robot from place p1 to place p2."),
    ],
)
def test_action_sentences(domain, action, sentence):
    assert render_action(domain, action) == sentence


LOGISTICS_STATIC_SATR = ["(airplane a0)", "(airport l0-0)", "(city c0)", "(in-city l0-0 c0)",
                         "(in-city l0-1 c0)", "(location l0-0)", "(location l0-1)", "(package p0)",
                         "(truck t0)"]
LOGISTICS_STATIC_IPC = [a.replace("(package", "(obj") for a in LOGISTICS_STATIC_SATR]


@pytest.mark.parametrize("static", [LOGISTICS_STATIC_SATR, LOGISTICS_STATIC_IPC])
def test_logistics_kinds_from_static_atoms(static):
    kinds = object_kinds("logistics", static)
    assert kinds == {"a0": "airplane", "l0-0": "airport", "l0-1": "location", "c0": "city",
                     "p0": "package", "t0": "truck"}
    state = ["(at t0 l0-0)", "(in p0 t0)", "(at a0 l0-0)"]
    assert render_state("logistics", state, static=static) == (
        "Airplane a0 is at airport l0-0. Truck t0 is at airport l0-0. Package p0 is in truck t0."
    )
    assert render_atom("logistics", "(at p0 l0-1)", kinds=kinds) == "Package p0 is at location l0-1."
    assert render_goal("logistics", ["(at p0 l0-1)"], kinds=kinds) == "Goal: Package p0 is at location l0-1."


def test_generic_fallback():
    assert render_atom("some-ipc-domain", "(lifted r1 c3)") == "The predicate lifted holds for r1 and c3."
    assert render_atom("some-ipc-domain", "(alarm)") == "The predicate alarm holds."
    assert render_atom("some-ipc-domain", "(road a b c)") == "The predicate road holds for a, b and c."
    assert render_atom("some-ipc-domain", "(painted t1)") == "The predicate painted holds for t1."
    assert render_action("some-ipc-domain", "(go r1 a b)") == "Apply the action go to r1, a and b."
    assert render_action("some-ipc-domain", "(noop)") == "Apply the action noop."
    # unknown predicate in a known domain, and a template whose arity does not fit
    assert render_atom("blocksworld", "(heavy a)") == "The predicate heavy holds for a."
    assert render_atom("blocksworld", "(on a)") == "The predicate on holds for a."
    assert render_action("gripper", "(pick ball1)") == "Apply the action pick to ball1."
    assert template_set("some-ipc-domain") is GENERIC


def test_negated_atom():
    assert render_atom("blocksworld", "(not (on a b))") == "It is not the case that block a is on block b."


def test_state_sorted_deduplicated_and_goal():
    atoms = ["(on a b)", "(handempty)", "(clear a)", "(ontable b)", "(clear a)"]
    text = "Block a is clear. The robotic arm is empty. Block a is on block b. Block b is on the table."
    assert render_state("blocksworld", atoms) == text
    assert render_state("blocksworld", list(reversed(atoms))) == text
    assert render_goal("blocksworld", ["(on a b)"]) == "Goal: Block a is on block b."
    assert render_state("blocksworld", []) == EMPTY_STATE
    assert render_goal("blocksworld", []) == "Goal: " + EMPTY_STATE


def test_renderer_matches_functions_and_memoises():
    from planarena.features.text.templates import Renderer

    r = Renderer("logistics", static=LOGISTICS_STATIC_SATR)
    state = ["(in p0 t0)", "(at t0 l0-0)"]
    assert r.state(state) == render_state("logistics", state, static=LOGISTICS_STATIC_SATR)
    assert r.state(state) == r.state(list(reversed(state)))
    assert r.goal(["(at p0 l0-1)"]) == "Goal: Package p0 is at location l0-1."
    assert r.action("(fly-airplane a0 l0-0 l1-0)") == "Fly airplane a0 from airport l0-0 to airport l1-0."
    assert len(r._atoms) == 3


def test_domain_aliases():
    assert template_set("blocks").name == "blocksworld"
    assert template_set("Blocksworld-4ops").name == "blocksworld"
    assert template_set("blocks_4").name == "blocksworld"
    assert template_set("satr/visitall").name == "visitall"
    assert template_set("my-suite-name", "logistics-strips").name == "logistics"
    assert template_set("grid-visit-all").name == "visitall"


def test_parse_atom_forms():
    assert parse_atom("(on a b)") == ("on", ("a", "b"), False)
    assert parse_atom("  ( handempty )") == ("handempty", (), False)
    assert parse_atom("(not (on a b))") == ("on", ("a", "b"), True)
    assert parse_atom("stack(a, b)") == ("stack", ("a", "b"), False)
    assert parse_atom("on a b") == ("on", ("a", "b"), False)
    with pytest.raises(ValueError, match="cannot parse"):
        parse_atom("()")


def test_yaml_boolean_key_is_rejected(tmp_path):
    bad = tmp_path / "t.yaml"
    bad.write_text("domains:\n  bw:\n    atoms:\n      on: 'Block {0} is on block {1}.'\n")
    with pytest.raises(ValueError, match="quote it"):
        load_templates(bad)
    bad.write_text("domains:\n  bw:\n    atoms:\n      p/1: 'X {1}.'\n")
    with pytest.raises(ValueError, match="arity-1"):
        load_templates(bad)
    bad.write_text("domains:\n  bw:\n    atoms:\n      p: 'X {0!r}.'\n")
    with pytest.raises(ValueError, match=re.escape(str(bad))):
        load_templates(bad)


def _pddl_signatures(text: str) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(predicate, arity) and (action, arity) pairs of a PDDL domain, by regex (test helper)."""
    text = re.sub(r";[^\n]*", "", text.lower())
    start = text.index("(:predicates")
    depth, i = 0, start
    while True:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            break
    preds = set()
    for m in re.finditer(r"\(([^()\s:]+)([^()]*)\)", text[start + len("(:predicates"): i - 1]):
        preds.add((m.group(1), len(re.findall(r"\?", m.group(2)))))
    actions = set()
    for m in re.finditer(r"\(:action\s+(\S+)\s+:parameters\s*\(([^)]*)\)", text):
        actions.add((m.group(1), len(re.findall(r"\?", m.group(2)))))
    return preds, actions


def _domain_files():
    import pypddl_datasets

    base = Path(pypddl_datasets.__file__).parent / "generators" / "classical" / "ipc"
    files = [(name, base / name / "domain.pddl") for name in ("gripper", "logistics", "visitall")]
    files.append(("blocksworld", base / "blocks_4" / "domain.pddl"))
    for name in ("blocksworld", "gripper", "logistics", "visitall"):
        files.append((name, SHARED / "satr" / name / "domain.pddl"))
    files.append(("blocksworld", SHARED / "ipc2023-learning" / "blocksworld" / "domain.pddl"))
    return files


@pytest.mark.parametrize("domain, path", _domain_files(), ids=lambda x: str(x)[-40:])
def test_every_predicate_and_action_of_the_known_domains_has_a_template(domain, path):
    if not path.exists():
        pytest.skip(f"{path} not present")
    preds, actions = _pddl_signatures(path.read_text())
    tset = template_set(domain)
    assert preds and actions
    for name, arity in preds:
        assert tset.atom_template(name, arity), f"{path}: no template for predicate {name}/{arity}"
    for name, arity in actions:
        assert tset.action_template(name, arity), f"{path}: no template for action {name}/{arity}"


# ----------------------------------------------------------------------------------------------
# Cache
# ----------------------------------------------------------------------------------------------


class FakeEncoder:
    """Deterministic encoder: unit vectors seeded by the text's hash; counts calls and texts."""

    slug = "fake-encoder"
    batch_size = 4
    max_seq_length = 8

    def __init__(self, dim: int = 16, encoder_id: str = "fake@1"):
        self.dim = dim
        self.encoder_id = encoder_id
        self.calls = 0
        self.encoded: list[str] = []

    @staticmethod
    def vector(text: str, dim: int = 16) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def encode(self, texts):
        self.calls += 1
        self.encoded.extend(texts)
        return np.stack([self.vector(t, self.dim) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def token_counts(self, texts):
        return [len(t.split()) + 2 for t in texts]


def test_cache_encodes_each_text_once_and_preserves_order(tmp_path):
    enc = FakeEncoder()
    texts = ["b", "a", "c", "a", "b", "d"]
    with EmbeddingCache(tmp_path, enc, chunk_size=2) as cache:
        out = cache.encode(texts)
        assert out.dtype == np.float32 and out.shape == (6, 16)
        for row, t in zip(out, texts):
            np.testing.assert_array_equal(row, FakeEncoder.vector(t))
        assert sorted(enc.encoded) == ["a", "b", "c", "d"]  # duplicates encoded once
        assert enc.calls == 2  # chunks of 2
        assert (cache.last_stats.unique, cache.last_stats.hits, cache.last_stats.misses) == (4, 0, 4)

        calls = enc.calls
        again = cache.encode(list(reversed(texts)))
        assert enc.calls == calls  # second encode: nothing encoded
        np.testing.assert_array_equal(again, out[::-1])
        assert (cache.last_stats.hits, cache.last_stats.misses) == (4, 0)

        cache.encode(["a", "e"])  # only the new text is encoded
        assert enc.encoded[-1:] == ["e"] and enc.calls == calls + 1
        assert len(cache) == 5 and "e" in cache and "zzz" not in cache


def test_cache_persists_across_instances(tmp_path):
    enc = FakeEncoder()
    with EmbeddingCache(tmp_path, enc) as cache:
        first = cache.encode(["x", "y"])
    enc2 = FakeEncoder()
    with EmbeddingCache(tmp_path, enc2) as cache:
        np.testing.assert_array_equal(cache.encode(["y", "x"]), first[::-1])
        assert cache.dim == 16
    assert enc2.calls == 0


def test_cache_keys_separate_encoders(tmp_path):
    a, b = FakeEncoder(encoder_id="fake@1"), FakeEncoder(encoder_id="fake@2")
    EmbeddingCache(tmp_path, a).encode(["x"])
    EmbeddingCache(tmp_path, b).encode(["x"])
    assert a.calls == 1 and b.calls == 1
    assert text_key("fake@1", "x") != text_key("fake@2", "x")


def test_cache_empty_input_and_truncation_stats(tmp_path):
    enc = FakeEncoder()
    with EmbeddingCache(tmp_path, enc) as cache:
        assert cache.encode([]).shape == (0, 16)
        cache.encode(["short text", "a b c d e f g h i j"])  # 4 and 12 'tokens', limit 8
        assert cache.last_stats.truncated == 1 and cache.last_stats.max_tokens == 12
        cache.encode(["a b c d e f g h i j"])  # counts come from the store on a hit
        assert cache.last_stats.truncated == 1 and cache.last_stats.hits == 1


def test_cache_recovers_from_truncated_file(tmp_path):
    enc = FakeEncoder()
    texts = [f"sentence number {i}" for i in range(2000)]
    with EmbeddingCache(tmp_path, enc) as cache:
        ref = cache.encode(texts)
        path = cache.path
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with EmbeddingCache(tmp_path, FakeEncoder()) as cache:
            np.testing.assert_array_equal(cache.encode(texts), ref)
    assert any("moved aside" in str(w.message) for w in caught)
    assert list(tmp_path.glob("*.sqlite.corrupt-*"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with EmbeddingCache(tmp_path, FakeEncoder()) as cache:  # the rebuilt store is healthy
            np.testing.assert_array_equal(cache.encode(texts), ref)
            assert cache.last_stats.misses == 0


def test_cache_survives_a_killed_writer(tmp_path):
    """A process killed inside a transaction keeps earlier commits and leaves a usable store."""
    script = textwrap.dedent(
        f"""
        import os, sys, numpy as np
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_embed_text import FakeEncoder
        from planarena.features.text.cache import EmbeddingCache, text_key
        cache = EmbeddingCache({str(tmp_path)!r}, FakeEncoder())
        cache.encode(["kept-1", "kept-2"])
        conn = cache._conn
        conn.execute("BEGIN")
        conn.execute("INSERT INTO emb VALUES (?, ?, NULL)", (text_key("fake@1", "lost"), b"x" * 64))
        os._exit(1)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    enc = FakeEncoder()
    with EmbeddingCache(tmp_path, enc) as cache:
        out = cache.encode(["kept-1", "kept-2", "lost"])
    assert enc.encoded == ["lost"]
    np.testing.assert_array_equal(out[2], FakeEncoder.vector("lost"))


# ----------------------------------------------------------------------------------------------
# Encoder and params
# ----------------------------------------------------------------------------------------------


def test_missing_encoder_path_names_the_param(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ValueError, match=r"embed_text\.encoder") as info:
        TextEncoder(str(missing))
    assert str(missing) in str(info.value)
    assert isinstance(info.value, ConfigError)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"embed_text\.encoder.*not a sentence-transformers"):
        resolve_encoder_path(str(tmp_path / "empty"))


def test_params_are_checked():
    assert embed_text_params({}) == {"encoder": DEFAULT_ENCODER, "batch_size": 64, "device": "cpu",
                                     "max_seq_length": None, "splits": None}
    assert embed_text_params({"embed_text": {"batch_size": 8}})["batch_size"] == 8
    with pytest.raises(ConfigError, match=r"embed_text\.batch_size"):
        embed_text_params({"embed_text": {"batch_size": 0}})
    with pytest.raises(ConfigError, match=r"embed_text\.encoder"):
        embed_text_params({"embed_text": {"encoder": ""}})
    with pytest.raises(ConfigError, match=r"embed_text\.max_seq_length"):
        embed_text_params({"embed_text": {"max_seq_length": -1}})


def test_encoder_slug():
    assert encoder_slug(DEFAULT_ENCODER) == DEFAULT_ENCODER
    assert encoder_slug("/models/all-mpnet-base-v2") == "all-mpnet-base-v2"
    assert encoder_slug("/models/All MPNet/") == "all-mpnet"
    snap = "/hf/hub/models--sentence-transformers--all-mpnet-base-v2/snapshots/" + "a" * 40
    assert encoder_slug(snap) == "sentence-transformers--all-mpnet-base-v2"
    assert encoder_slug(str(resolve_encoder_path(DEFAULT_ENCODER))) == DEFAULT_ENCODER


def test_real_minilm_model(tmp_path):
    enc = TextEncoder(DEFAULT_ENCODER, batch_size=8)
    assert enc.slug == DEFAULT_ENCODER and enc.max_seq_length == 256 and enc.normalized
    texts = ["Block a is on block b.", "The robotic arm is empty.", "Block a is on block b.",
             "Ball ball1 is in room rooma.", "Goal: Block a is on block b."]
    out = enc.encode(texts)
    assert out.shape == (5, 384) and out.dtype == np.float32
    np.testing.assert_array_equal(out[0], out[2])
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(enc.encode(texts[:1])[0], out[0], atol=1e-5)
    assert out[0] @ out[4] > out[0] @ out[3]  # the goal sentence is closer to its own atom
    assert enc.token_counts(["Block a is on block b."]) == [9]
    with EmbeddingCache(tmp_path, enc) as cache:
        cached = cache.encode(texts)
        np.testing.assert_array_equal(cached[0], cached[2])
        np.testing.assert_allclose(cached, out, atol=1e-5)
    assert TextEncoder(DEFAULT_ENCODER).encoder_id == enc.encoder_id  # stable fingerprint


# ----------------------------------------------------------------------------------------------
# Stage end to end (fake encoder)
# ----------------------------------------------------------------------------------------------

BW_DOMAIN = "(define (domain blocks)\n (:requirements :strips)\n (:predicates (on ?x ?y) (ontable ?x) (clear ?x) (handempty) (holding ?x)))\n"


def _entry(domain, split, problem):
    return {"domain": domain, "split": split, "problem": problem,
            "path": f"{domain}/{split}/{problem}.pddl", "size_param": "blocks", "size": 2,
            "objects": 2, "seed": 0, "origin": "test"}


def _trajectory(domain, split, problem, actions, states, goal, static=()):
    return {"domain": domain, "split": split, "problem": problem,
            "problem_file": f"{domain}/{split}/{problem}.pddl", "plan_source": "astar_lmcut",
            "optimal": True, "actions": actions, "states": states, "static": list(static), "goal": goal}


@pytest.fixture
def layout(tmp_path):
    """A tiny problem set: blocksworld train (2 trajectories) + validation (no trajectory file),
    a domain named 'mylog' whose PDDL name is logistics-strips (1 trajectory)."""
    lay = Layout(tmp_path / "data")
    (lay.problems / "blocksworld").mkdir(parents=True)
    (lay.problems / "blocksworld" / "domain.pddl").write_text(BW_DOMAIN)
    (lay.problems / "mylog").mkdir(parents=True)
    (lay.problems / "mylog" / "domain.pddl").write_text("(define (domain logistics-strips))\n")
    entries = [_entry("blocksworld", "train", "p1"), _entry("blocksworld", "train", "p2"),
               _entry("blocksworld", "validation", "p3"), _entry("mylog", "train", "q1")]
    (lay.problems / "manifest.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    bw = [
        _trajectory("blocksworld", "train", "p1", ["(unstack a b)", "(put-down a)"],
                    [["(clear a)", "(handempty)", "(on a b)", "(ontable b)"],
                     ["(clear b)", "(holding a)", "(ontable b)"],
                     ["(clear a)", "(clear b)", "(handempty)", "(ontable a)", "(ontable b)"]],
                    ["(ontable a)"]),
        _trajectory("blocksworld", "train", "p2", [], [["(clear a)", "(handempty)", "(ontable a)"]],
                    ["(ontable a)"]),
    ]
    (lay.trajectories / "blocksworld").mkdir(parents=True)
    (lay.trajectories / "blocksworld" / "train.jsonl").write_text("".join(json.dumps(t) + "\n" for t in bw))
    log = [_trajectory("mylog", "train", "q1", ["(load-truck p0 t0 l0)"],
                       [["(at p0 l0)", "(at t0 l0)"], ["(at t0 l0)", "(in p0 t0)"]], ["(in p0 t0)"],
                       static=["(obj p0)", "(truck t0)", "(location l0)"])]
    (lay.trajectories / "mylog").mkdir(parents=True)
    (lay.trajectories / "mylog" / "train.jsonl").write_text(json.dumps(log[0]) + "\n")
    return lay


def test_run_stage_end_to_end(layout):
    enc = FakeEncoder()
    meta = run_stage({}, layout, encoder=enc, progress=False)
    out = layout.embeddings / "text" / "fake-encoder"
    bw = load_split_embeddings(embeddings_file(layout, "fake-encoder", "blocksworld", "train"))
    assert bw["states"].shape == (4, 16) and bw["states"].dtype == np.float32
    assert bw["traj_index"].tolist() == [0, 0, 0, 1] and bw["step"].tolist() == [0, 1, 2, 0]
    assert bw["actions"].shape == (2, 16)
    assert bw["action_traj_index"].tolist() == [0, 0] and bw["action_step"].tolist() == [0, 1]
    assert bw["goals"].shape == (2, 16) and bw["problems"].tolist() == ["p1", "p2"]
    assert bw["state_uid"].tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(
        bw["states"][0],
        FakeEncoder.vector("Block a is clear. The robotic arm is empty. Block a is on block b. Block b is on the table."),
    )
    np.testing.assert_array_equal(bw["actions"][0], FakeEncoder.vector("Unstack block a from block b."))
    np.testing.assert_array_equal(bw["goals"][1], FakeEncoder.vector("Goal: Block a is on the table."))
    np.testing.assert_array_equal(bw["goals"][0], bw["goals"][1])

    empty = load_split_embeddings(out / "blocksworld" / "validation.npz")
    assert empty["states"].shape == (0, 16) and empty["actions"].shape == (0, 16)
    assert empty["goals"].shape == (0, 16) and empty["problems"].shape == (0,)

    log = load_split_embeddings(out / "mylog" / "train.npz")  # templates found via the PDDL name
    np.testing.assert_array_equal(log["states"][1], FakeEncoder.vector("Truck t0 is at location l0. Package p0 is in truck t0."))
    np.testing.assert_array_equal(log["actions"][0], FakeEncoder.vector("Load package p0 into truck t0 at location l0."))

    on_disk = json.loads((out / "meta.json").read_text())
    assert on_disk == json.loads(json.dumps({k: v for k, v in meta.items() if k != "log"}))
    assert "seconds" not in json.dumps(on_disk) and "cache_hits" not in json.dumps(on_disk)
    assert meta["dim"] == 16 and meta["encoder_id"] == "fake@1"
    split = meta["splits"]["blocksworld"]["train"]
    assert (split["states"], split["actions"], split["goals"], split["trajectories"]) == (4, 2, 2, 2)
    stats = meta["log"]["splits"]["blocksworld/train"]
    assert stats["cache_misses"] == stats["cache_unique"] == 7 and stats["cache_hits"] == 0
    assert meta["splits"]["blocksworld"]["validation"]["states"] == 0
    assert meta["splits"]["mylog"]["train"]["templates"] == "logistics"
    assert (layout.cache / "text" / "fake-encoder").is_dir()

    # Rerun (as after `dvc repro` deleted the outputs): everything comes from the cache.
    calls = enc.calls
    enc2 = FakeEncoder()
    meta2 = run_stage({}, layout, encoder=enc2, progress=False)
    assert enc2.calls == 0 and enc.calls == calls
    assert meta2["log"]["totals"]["misses"] == 0 and meta2["log"]["totals"]["hits"] == meta["log"]["totals"]["misses"]
    again = load_split_embeddings(out / "blocksworld" / "train.npz")
    for key in bw:
        np.testing.assert_array_equal(again[key], bw[key])


def test_run_stage_missing_encoder_path(layout, tmp_path):
    params = {"embed_text": {"encoder": str(tmp_path / "models" / "nope")}}
    with pytest.raises(ConfigError, match=r"embed_text\.encoder.*nope"):
        run_stage(params, layout, progress=False)


def test_run_stage_without_manifest(tmp_path):
    with pytest.raises(FileNotFoundError, match="manifest"):
        run_stage({}, Layout(tmp_path / "data"), encoder=FakeEncoder(), progress=False)


def test_run_stage_outputs_are_byte_stable_and_cache_env(layout, tmp_path, monkeypatch):
    run_stage({}, layout, encoder=FakeEncoder(), progress=False)
    npz = sorted((layout.embeddings / "text" / "fake-encoder").rglob("*.npz")) + \
        [layout.embeddings / "text" / "fake-encoder" / "meta.json"]
    before = {p: p.read_bytes() for p in npz}
    shared = tmp_path / "shared-cache"
    monkeypatch.setenv(CACHE_ENV, str(shared))
    enc = FakeEncoder()
    meta = run_stage({}, layout, encoder=enc, progress=False)
    assert {p: p.read_bytes() for p in npz} == before  # same arrays -> same bytes -> same DVC hash
    assert enc.calls > 0 and Path(meta["log"]["cache"]).parent == shared / "fake-encoder"


def test_run_stage_embeds_only_the_selected_splits(layout):
    """`embed_text.splits: []` embeds nothing and never loads the model (the default profile: no
    method reads trajectory text embeddings); a list keeps those splits only."""
    meta = run_stage({"embed_text": {"splits": []}}, layout, progress=False)  # no encoder given: none loaded
    assert meta["splits"] == {} and "nothing embedded" in meta["note"]
    meta = run_stage({"embed_text": {"splits": ["train"]}}, layout, encoder=FakeEncoder(), progress=False)
    assert {s for d in meta["splits"].values() for s in d} == {"train"}
    with pytest.raises(ConfigError, match="embed_text.splits"):
        run_stage({"embed_text": {"splits": "train"}}, layout, progress=False)


def test_unavailable_cuda_device_names_the_param():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is available")
    with pytest.raises(ConfigError, match=r"embed_text\.device"):
        TextEncoder(DEFAULT_ENCODER, device="cuda").dim
