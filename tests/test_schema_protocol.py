"""The schema-learning data and protocol (task ``learn_schema``): the normal form, the walk and test
data, successor-set soundness / completeness of a learned domain against the true one on a tiny
domain, and planning with a learned domain (an unsound one's plans rejected by the validator)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import smoke_profile_params
from planarena.config import SCHEMA_SPLIT, Layout
from planarena.core.io import JsonlWriter, read_jsonl
from planarena.core.pddl import parse_domain, parse_problem_of, state_from_atoms
from planarena.core.strips import Literal, normal_form, normal_problem_text
from planarena.datasets import schema as schema_data
from planarena.methods.base import LearnedDomain, Method
from planarena.protocols import schema as protocol
from planarena.protocols.context import EvalContext


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Layout:
    """Smoke-profile schema data (Blocks-3: a 4-block walk instance, 5/6/7-block test problems)."""
    layout = Layout(root=tmp_path_factory.mktemp("schema") / "data")
    schema_data.run_stage(smoke_profile_params(), layout)
    return layout


def test_noise_rows_train_on_a_walk_with_n_min_200(data):
    """DIAS Appendix A.4.2 (line 512 of the paper's text; docs/papers/dias.md): the noise rows'
    training walk has at least N_min = 200 transitions per action name (the smoke profile's Blocks-3
    walk has N_min 30 / N_max 100, so it gets its own file, bounds (200, 200)); it continues the
    training walk (same seed: the training rows are a subsequence of it); the noise rows read it,
    the others not."""
    from planarena.methods.dias.data import load_domain

    folder = data.schema / "blocks3"
    info = json.loads((folder / "info.json").read_text())
    assert info["noise_train"] == {"file": "transitions.train-noise.jsonl", "n_min": 200, "n_max": 200}
    walk = info["walk"]["train_noise"]
    assert walk["complete"] and set(walk["samples"].values()) == {200}
    train, noisy = read_jsonl(folder / "transitions.train.jsonl"), read_jsonl(folder / "transitions.train-noise.jsonl")
    it = iter(noisy)
    assert len(noisy) == 600 and all(row in it for row in train)
    assert len(load_domain(data.schema, "blocks3", noise=True).train) == 600
    plain = load_domain(data.schema, "blocks3")
    assert len(plain.train) == len(train) and plain.train_file == "transitions.train.jsonl"
    assert schema_data.noise_bounds({"schema": {"noise_n_min": 200}}, (2000, 3000)) is None   # Driverlog: kept
    assert schema_data.noise_bounds({"schema": {"noise_n_min": None}}, (100, 1000)) is None
    assert schema_data.noise_bounds({"schema": {"noise_n_min": 200}}, (100, 1000)) == (200, 1000)


def _true(layout: Layout):
    path = layout.schema / "blocks3" / "domain.pddl"
    return path, normal_form(parse_domain(path), str(path))


def test_walk_and_test_data(data):
    info = json.loads((data.schema / "blocks3" / "info.json").read_text())
    walk = info["walk"]
    # every action name has N_min (30 / 10 in the smoke profile) transitions, at most N_max (100 / 50)
    assert walk["train"]["complete"] and walk["validation"]["complete"]
    assert all(30 <= n <= 100 for n in walk["train"]["samples"].values())
    assert set(walk["train"]["samples"]) == {"move-b-to-b", "move-b-to-t", "move-t-to-b"}
    # STRIPS+ keeps the arguments not determined by a precondition: move(?bm ?bt), the paper's example
    plus = {a["name"]: a["strips_plus"] for a in info["actions"]}
    assert plus == {"move-b-to-b": [0, 2], "move-b-to-t": [0], "move-t-to-b": [0, 1]}
    rows = read_jsonl(data.schema / "blocks3" / "test_states.jsonl")
    assert len(rows) == 60 and {r["problem"] for r in rows} == set(info["test_problems"])
    manifest = read_jsonl(data.schema / "manifest.jsonl")
    assert [e["objects"] for e in manifest if e["split"] == SCHEMA_SPLIT] == [5, 6, 7]
    # a walk transition is a real transition of the true domain
    path, _ = _true(data)
    atoms = json.loads((data.schema / "blocks3" / "atoms.json").read_text())[info["train_problem"]]
    problem = parse_problem_of(parse_domain(path), data.schema / "blocks3" / "train" / f"{info['train_problem']}.pddl")
    row = read_jsonl(data.schema / "blocks3" / "transitions.train.jsonl")[0]
    state = state_from_atoms(problem, [atoms["atoms"][i] for i in row["s"]])
    nexts = {str(a): a.apply(state) for a in state.generate_applicable_actions()}
    assert row["a"] in nexts
    after = {str(a) for a in nexts[row["a"]].get_atoms(ignore_static=True)}
    assert after == {atoms["atoms"][i] for i in row["t"]}


def test_normal_form_has_the_same_successors(tmp_path):
    """Types become unary atoms (Visitall's `place`) and `=` the static `eq` (Blocks-3): the normal
    form's initial state has the same applicable actions as the original files."""
    for domain, kwargs in (("visitall", {"width": 3}), ("blocks3", {"num_blocks": 4})):
        pkg, fname = schema_data.DOMAINS[domain]
        src = Path(schema_data.generator_module(pkg).__file__).parent / fname
        original = parse_domain(src)
        (tmp_path / "p.pddl").write_text(schema_data.generate_text(domain, kwargs, 3))
        problem = parse_problem_of(original, tmp_path / "p.pddl")
        nf = normal_form(original, str(src))
        nf.write(tmp_path / f"{domain}-d.pddl")
        (tmp_path / f"{domain}-p.pddl").write_text(normal_problem_text(problem, nf))
        normal = parse_problem_of(parse_domain(tmp_path / f"{domain}-d.pddl"), tmp_path / f"{domain}-p.pddl")
        names = lambda p: sorted(str(a) for a in p.get_initial_state().generate_applicable_actions())  # noqa: E731
        assert names(normal) == names(problem) and names(problem)
    assert ("eq", 2) in nf.predicates and any(not lit.positive and lit.predicate == "eq"
                                              for s in nf.schemas for lit in s.precondition)


def test_normal_form_rejects_ternary_predicates(tmp_path):
    (tmp_path / "d.pddl").write_text("(define (domain t) (:requirements :strips) (:predicates (r ?a ?b ?c))"
                                     " (:action x :parameters (?a ?b ?c) :precondition (r ?a ?b ?c) :effect (not (r ?a ?b ?c))))")
    with pytest.raises(ValueError, match=r"d.pddl: predicate r/3"):
        normal_form(parse_domain(tmp_path / "d.pddl"), str(tmp_path / "d.pddl"))


def _counts(data, domain_obj, tmp_path, name):
    path, _ = _true(data)
    learned = domain_obj.write(tmp_path / f"{name}.pddl")
    sd = protocol.SchemaData(data.schema)
    return protocol.successor_counts(path, learned, sd.test_problems("blocks3"), sd.test_states("blocks3"), 60)


def test_soundness_and_completeness_of_learned_domains(data, tmp_path):
    path, true = _true(data)
    c = _counts(data, true, tmp_path, "true")
    assert (c.fp, c.fn, c.states) == (0, 0, 60) and c.tp > 100 and c.sound and c.complete
    assert (c.precision, c.recall) == (1.0, 1.0)
    # no preconditions: every true successor still generated (complete), many false ones (unsound)
    c = _counts(data, true.without_preconditions(), tmp_path, "nopre")
    assert c.complete and c.recall == 1.0 and not c.sound and 0 < c.precision < 0.5
    # an extra precondition (move-t-to-b only onto a block that is on the table): sound, incomplete
    extra = replace(true, schemas=tuple(
        replace(s, precondition=s.precondition + (Literal("on-table", ("?bt",)),)) if s.name == "move-t-to-b" else s
        for s in true.schemas))
    c = _counts(data, extra, tmp_path, "extra")
    assert c.sound and c.precision == 1.0 and not c.complete and 0 < c.recall < 1
    # a missing delete effect: every such successor differs from the true one (FP and FN at once)
    nodel = replace(true, schemas=tuple(replace(s, delete=()) if s.name == "move-b-to-t" else s for s in true.schemas))
    c = _counts(data, nodel, tmp_path, "nodel")
    assert c.fp > 0 and c.fn > 0 and c.fp == c.fn and not c.sound and not c.complete


def test_all_fluent_keeps_successors_and_reads_the_state(data, tmp_path):
    """The evaluation copy makes every predicate fluent: a learned domain without effects on `clear`
    must still see the test state's `clear` atoms, not the initial state's."""
    path, true = _true(data)
    text = protocol.all_fluent(path.read_text())
    assert "(planarena-never)" in text and text.count("(:action") == 4
    # a domain whose schemas never change `clear`: `clear` would be static for pymimir
    frozen = replace(true, schemas=tuple(replace(s, add=tuple(a for a in s.add if a.predicate != "clear"),
                                                 delete=tuple(d for d in s.delete if d.predicate != "clear"))
                                         for s in true.schemas))
    c = _counts(data, frozen, tmp_path, "frozen")
    # its applicability (clear preconditions) is judged on each state: each true successor is matched by
    # one learned successor that misses only the clear changes, so FP == FN == TP + FN of the truth
    c_true = _counts(data, true, tmp_path, "true2")
    assert c.fp == c.fn == c_true.tp and c.tp == 0


class _Fixed(Method):
    """A learn_schema method that 'learns' a given domain file."""

    family = "test"
    tasks = frozenset({"learn_schema"})
    stochastic = False
    data_deps = ("schema",)

    def learned_domain(self, domain, seed):
        return LearnedDomain("solved", path=Path(self.config["file"]), extra={"observation": "test"})


def _run_protocol(data, tmp_path, file: Path, name: str) -> list[dict]:
    params = smoke_profile_params()
    params["methods"] = {name: {"file": str(file), "max_test_problems": 2}}
    method = _Fixed(name, params["methods"][name], params, Layout(root=data.root))
    out = tmp_path / f"{name}.jsonl"
    with JsonlWriter(out) as w:
        ctx = EvalContext(method=method, settings=params["evaluation"], seeds=[13], problems=None,
                          fingerprint="x", train_info={}, train_facts={}, kept=[], writer=w)
        n = protocol.run(ctx)
    rows = read_jsonl(out)
    assert n == len(rows) == 3  # one learn_schema record + two plan records
    return rows


def test_planning_with_a_learned_domain(data, tmp_path):
    path, true = _true(data)
    rows = _run_protocol(data, tmp_path, path, "true_domain")
    schema_row, *plans = rows
    assert schema_row["extra"]["task"] == "learn_schema" and schema_row["extra"]["precision"] == 1.0
    assert schema_row["extra"]["test_states"] == 40   # 2 test problems x 20 states
    assert [r["split"] for r in plans] == [SCHEMA_SPLIT] * 2
    assert all(r["extra"]["task"] == "plan" and r["outcome"] == "solved" and r["validated"] for r in plans)


def test_an_unsound_learned_domain_plans_are_rejected(data, tmp_path):
    """The precondition-free domain lets Fast Downward 'solve' each problem in a few steps; the
    harness's validator, reading the TRUE domain, rejects every such plan: listed, never counted."""
    _, true = _true(data)
    file = true.without_preconditions().write(tmp_path / "nopre.pddl")
    schema_row, *plans = _run_protocol(data, tmp_path, file, "nopre_domain")
    assert not schema_row["extra"]["sound"] and schema_row["extra"]["complete"]
    assert all(r["outcome"] == "solved" and r["plan"] and not r["validated"] for r in plans)
    assert all(r["validated_by"] and r["validator_reason"].startswith("step ") for r in plans)


def test_an_unreadable_learned_domain_is_an_outcome(data, tmp_path):
    """A learned file the parser rejects gives `error` records (schema and plans), never a crash."""
    bad = tmp_path / "bad.pddl"
    bad.write_text("(define (domain blocksworld-3ops) (:predicates (on ?a ?b)) (:action broken")
    schema_row, *plans = _run_protocol(data, tmp_path, bad, "bad_domain")
    assert schema_row["outcome"] == "error" and "bad.pddl" in schema_row["failure_reason"]
    assert all(r["outcome"] == "error" for r in plans)


def test_mlp_effects_row_is_measured_on_the_same_states_and_plans_nothing(data, tmp_path):
    """DIAS's MLP-effects ablation (Table 3) yields no PDDL domain: the protocol compares the
    successors its learned preconditions and MLP predict with the true domain's on the same test
    states as a learned domain's, and writes no plan record."""
    from planarena.methods.dias.method import Dias

    params = smoke_profile_params()
    config = {"observation": "strips", "effects": "mlp", "seeds": [13], "max_test_problems": 2,
              "overrides": {"steps": 60, "batch": 32, "eval_every": 60, "mlp_hidden": 32}}
    params["methods"] = {"dias_mlp": config}
    method = Dias("dias_mlp", config, params, Layout(root=data.root))
    assert not method.plans_with_learned_domain
    method.train(tmp_path / "model")
    unit = tmp_path / "model" / "blocks3" / "seed13"
    assert (unit / "preconditions.pddl").exists() and not (unit / "domain.pddl").exists()
    method.load(tmp_path / "model")
    assert method.learned_domain("blocks3", 13).successors is not None
    out = tmp_path / "mlp.jsonl"
    with JsonlWriter(out) as w:
        ctx = EvalContext(method=method, settings=params["evaluation"], seeds=[13], problems=None,
                          fingerprint="x", train_info={}, train_facts={}, kept=[], writer=w)
        assert protocol.run(ctx) == 1
    (row,) = read_jsonl(out)
    assert row["extra"]["task"] == "learn_schema" and row["outcome"] == "solved"
    assert row["extra"]["test_states"] == 40 and row["extra"]["effects"] == "mlp"   # the states of the test above
    assert row["extra"]["precision"] is not None and row["extra"]["tp"] + row["extra"]["fn"] > 0


@pytest.mark.parametrize("domain,predicates,actions,train,test", [
    # DIAS Table 9 (Hanoi) and Table 11 (Miconic in the paper's own encoding), signatures verbatim
    ("hanoi", {("clear", 1), ("on", 2), ("smaller", 2)}, {("move", 3)}, {"num_discs": 3},
     [{"num_discs": 4}, {"num_discs": 5}, {"num_discs": 6}]),
    ("miconic_lift", {("person", 1), ("floor", 1), ("lift_pos", 1), ("in_lift", 1), ("in_floor", 2), ("above", 2)},
     {("unboard", 2), ("board", 2), ("move_up", 2), ("move_down", 2)}, {"num_floors": 3, "num_persons": 2},
     [{"num_floors": 3, "num_persons": 3}, {"num_floors": 4, "num_persons": 4}, {"num_floors": 5, "num_persons": 5}]),
    # Tables 5, 13 and 14 (N-Puzzle; Sokoban in the paper's binary encoding, without and with pull_box)
    ("npuzzle", {("tile", 1), ("cell", 1), ("at", 2), ("blank", 1), ("above", 2), ("right", 2)},
     {("move-up", 3), ("move-down", 3), ("move-left", 3), ("move-right", 3)}, {"size": 2}, [{"size": 3}] * 3),
    ("sokoban", {("has_player", 1), ("has_box", 1), ("adjacent", 2), ("adjacent_2", 2)},
     {("move_player", 2), ("push_box", 3)}, {"width": 3, "boxes": 1}, [{"width": 4, "boxes": 1}] * 3),
    ("sokoban_pull", {("has_player", 1), ("has_box", 1), ("adjacent", 2), ("adjacent_2", 2)},
     {("move_player", 2), ("push_box", 3), ("pull_box", 3)}, {"width": 3, "boxes": 1}, [{"width": 4, "boxes": 1}] * 3),
])
def test_planarena_generated_schema_domains_have_the_papers_signatures(tmp_path, domain, predicates, actions,
                                                                       train, test):
    """The domains pypddl-datasets lacks (or has in another encoding) come from planarena's
    generators: their walk and test data build, their signature is the paper's, and the true domain
    is sound and complete on them while dropping its preconditions is caught."""
    params = smoke_profile_params()
    params["schema"]["domains"] = [domain]
    params["schema"]["generators"] = {domain: {"train": train, "test": test, "n_train": [20, 50],
                                               "n_validation": [10, 20], "restart_every": 50}}
    layout = Layout(root=tmp_path / "data")
    schema_data.run_stage(params, layout)
    info = json.loads((layout.schema / domain / "info.json").read_text())
    assert {(p, a) for p, a in info["predicates"]} == predicates
    assert {(a["name"], a["arity"]) for a in info["actions"]} == actions
    data = protocol.SchemaData(layout.schema)
    true = layout.schema / domain / "domain.pddl"
    states = data.test_states(domain)
    assert len(states) == params["schema"]["test_states"]
    c = protocol.successor_counts(true, true, data.test_problems(domain), states, time_limit=60)
    assert c.sound and c.complete and c.tp > 0
    nopre = normal_form(parse_domain(true), str(true)).without_preconditions().write(tmp_path / "nopre.pddl")
    # one state suffices to catch it (without preconditions, 3-ary actions ground every object triple)
    assert not protocol.successor_counts(true, nopre, data.test_problems(domain), states[:1], time_limit=60).sound


def test_common_positions_take_the_first_states_of_the_first_problems():
    states = [("a", frozenset({str(i)})) for i in range(3)] + [("b", frozenset({"x"}))] + [("c", frozenset())]
    assert protocol.common_positions(states, 1, 2) == {0, 1}
    assert protocol.common_positions(states, 2, 1) == {0, 3}
    assert protocol.common_positions(states, 5, 50) == set(range(5))


def test_the_floor_and_a_learned_row_are_compared_on_the_same_states(data, tmp_path):
    """Every row is measured on the common states too; the floor (`states: common`) on those only,
    so its precision and a learned row's on the same states sit side by side."""
    path, true = _true(data)
    nopre = true.without_preconditions().write(tmp_path / "nopre.pddl")
    params = smoke_profile_params()
    params["schema"]["common_states"] = {"problems": 1, "per_problem": 7}
    params["methods"] = {"floor": {"file": str(nopre), "states": "common"},
                         "true_domain": {"file": str(path), "max_test_problems": 2}}
    rows, planned = {}, {}
    for name, config in params["methods"].items():
        out = tmp_path / f"{name}.jsonl"
        with JsonlWriter(out) as w:
            ctx = EvalContext(method=_Fixed(name, config, params, Layout(root=data.root)), settings=params["evaluation"],
                              seeds=[13], problems=None, fingerprint="x", train_info={},
                              train_facts={"train_time_s": 99.0}, kept=[], writer=w,
                              unit_times={"blocks3/seed13": 1.5})
            protocol.run(ctx)
        rows[name] = next(r for r in read_jsonl(out) if r["extra"]["task"] == "learn_schema")["extra"]
        planned[name] = {r["problem"] for r in read_jsonl(out) if r["extra"].get("task") != "learn_schema"}
        # every record of (domain, seed) carries that unit's training time, not the stage's total
        # (the budget column sums the first one per domain and seed)
        assert {r["extra"]["train_time_s"] for r in read_jsonl(out)} == {1.5}
    floor, learned = rows["floor"], rows["true_domain"]
    # measured on the common states only, the floor still plans every test problem (the coverage
    # table's paired floor test needs them all), more than the learned row capped at 2
    assert len(planned["floor"]) == len(protocol.SchemaData(data.schema).problems.select("blocks3", protocol.SPLIT)) > 2
    assert len(planned["true_domain"]) == 2
    assert floor["test_states"] == 7 and floor["common_states"]["test_states"] == 7
    assert floor["common_states"]["precision"] == floor["precision"] < 1
    assert learned["test_states"] == 40 and learned["common_states"]["test_states"] == 7
    assert learned["common_states"]["precision"] == 1.0


class _TrueOfEachDomain(_Fixed):
    """'Learns' each domain's own true domain (the schema data's ``<domain>/domain.pddl``)."""

    def learned_domain(self, domain, seed):
        return LearnedDomain("solved", path=self.layout.schema / domain / "domain.pddl")


def test_domains_run_side_by_side_and_write_what_one_process_writes(tmp_path):
    """Each domain is one unit of the executor: on a 2-worker cluster the records file holds what
    one process writes, in the same order (wall times aside); the limits are CPU time, so running
    side by side changes no outcome."""
    params = smoke_profile_params()
    params["schema"]["domains"] = ["blocks3", "gripper"]
    params["schema"]["test_states"] = 30
    params["schema"]["generators"]["gripper"] = {"train": {"num_balls": 2}, "test": [{"num_balls": 3}, {"num_balls": 4}],
                                                 "n_train": [10, 40], "n_validation": [5, 20]}
    layout = Layout(root=tmp_path / "data")
    schema_data.run_stage(params, layout)
    params["methods"] = {"truth": {"max_test_problems": 1}}
    got = {}
    for jobs in (1, 2):
        shutil.rmtree(layout.cache / "fd", ignore_errors=True)   # each run plans (no cached plans)
        out = tmp_path / f"jobs{jobs}.jsonl"
        with JsonlWriter(out) as w:
            ctx = EvalContext(method=_TrueOfEachDomain("truth", params["methods"]["truth"], params, layout),
                              settings=params["evaluation"], seeds=[13, 14], problems=None, fingerprint="x",
                              train_info={}, train_facts={}, kept=[], writer=w, jobs=jobs)
            assert protocol.run(ctx) == 2 * 2 * 2   # domains x seeds x (learn_schema + one plan)
        got[jobs] = [{k: v for k, v in r.items() if k != "wall_time"} for r in read_jsonl(out)]
    assert got[1] == got[2]
    assert [(r["domain"], r["seed"], r["extra"]["task"]) for r in got[2]] == [
        (d, s, t) for d in ("blocks3", "gripper") for s in (13, 14) for t in ("learn_schema", "plan")]
    assert all(r["outcome"] == "solved" for r in got[2])
    assert {r["extra"]["precision"] for r in got[2] if r["extra"]["task"] == "learn_schema"} == {1.0}


def test_a_domain_lost_to_dying_workers_gets_an_error_record_only_for_seeds_without_one(tmp_path, monkeypatch):
    """A resumed run whose domain keeps killing its worker (executor retries exhausted): each seed
    with no learn_schema record yet gets an `error` one with the reason; a seed whose record was
    kept (only its plans were left) gets no second record."""
    from planarena.core import executor

    params = smoke_profile_params()
    params["schema"]["domains"] = ["blocks3"]
    params["schema"]["test_states"] = 30
    layout = Layout(root=tmp_path / "data")
    schema_data.run_stage(params, layout)
    params["methods"] = {"truth": {"max_test_problems": 1}}
    kept = [{"domain": "blocks3", "split": protocol.SPLIT, "problem": "blocks3", "seed": 13, "outcome": "solved",
             "extra": {"task": protocol.TASK}}]

    def dying(fn, units, on_failure=None, **kw):   # every unit's worker died past its retries
        return [on_failure(u, "worker died 3 time(s) (executor.retries = 2)") for u in units]

    monkeypatch.setattr(executor, "run_units", dying)
    out = tmp_path / "lost.jsonl"
    with JsonlWriter(out) as w:
        ctx = EvalContext(method=_TrueOfEachDomain("truth", params["methods"]["truth"], params, layout),
                          settings=params["evaluation"], seeds=[13, 14], problems=None, fingerprint="x",
                          train_info={}, train_facts={}, kept=kept, writer=w, jobs=1,
                          done={(protocol.TASK, "blocks3", protocol.SPLIT, "blocks3", 13)})
        assert protocol.run(ctx) == 1
    got = read_jsonl(out)
    assert [(r["seed"], r["outcome"], r["extra"]["task"]) for r in got] == [(14, "error", protocol.TASK)]
    assert "worker died 3 time(s)" in got[0]["failure_reason"]
