"""Text templates of the ACPBench domains (fast, offline).

For each of the nine ACPBench domains (blocksworld, depot, ferry, floortile, goldminer, grid,
logistics, rovers, satellite) and each domain file the project may meet -- the pypddl-datasets IPC
domain files it generates with, and the ACPBench domain files when the ACPBench folder beside the
checkout (:data:`ACP`; docs/params.md#third-party-folders) is present -- every predicate and action
schema must have a template (no generic fallback), and the atoms and ground actions met in a real
problem must render to pairwise distinct sentences: the text is the state representation, so two
atoms may never read the same.
"""

from __future__ import annotations

import importlib
import os
from collections import deque
from pathlib import Path

import pypddl_datasets
import pytest

from planarena.core.pddl import goal_atoms, load_domain, load_problem, static_atoms
from planarena.features.text.templates import (
    Renderer,
    object_kinds,
    render_action,
    render_atom,
    render_state,
    template_set,
)

IPC = Path(pypddl_datasets.__file__).parent / "generators" / "classical" / "ipc"
GEN_ROOT = "pypddl_datasets.generators.classical.ipc"
ACP = Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks" / "acpbench" / "pddl"

#: Predicates pymimir adds to every domain (root type, numbers); never rendered in a state.
BUILTIN_PREDICATES = {"object", "number"}

#: template set -> (pypddl-datasets folder, {domain file: small problem generator}, ACPBench folder)
DOMAINS = {
    "blocksworld": ("blocks_4", {"domain.pddl": lambda m: m.make_problem(5, seed=3)}, "blocksworld"),
    "depot": ("depots", {"domain.pddl": lambda m: m.make_problem(1, 1, 2, 2, 2, 4, seed=3)}, "depot"),
    "ferry": ("ferry", {"domain.pddl": lambda m: m.make_problem(3, 3, seed=3)}, "ferry"),
    "floortile": ("floortile", {"domain.pddl": lambda m: m.make_problem(2, 3, 2, seed=3)}, "floortile"),
    "goldminer": ("goldminer", {"domain.pddl": lambda m: m.make_problem(3, 4, seed=3)}, "goldminer"),
    "grid": ("grid", {"domain.pddl": lambda m: m.make_problem(3, 3, seed=3)}, "grid"),
    "logistics": (
        "logistics",
        {
            "domain.pddl": lambda m: m.make_problem(2, 2, 3, 1, seed=3, style="98"),
            "domain_logistics00.pddl": lambda m: m.make_problem(
                2, 2, 4, 1, seed=3, num_trucks=2, num_goals=3, style="00"
            ),
        },
        "logistics",
    ),
    "rovers": ("rovers", {"domain.pddl": lambda m: m.make_problem(2, 4, 2, 2, 3, seed=3)}, "rovers"),
    "satellite": ("satellite", {"domain.pddl": lambda m: m.make_problem(2, 2, 2, 3, 3, seed=3)}, "satellite"),
}

IPC_CASES = [
    pytest.param(name, IPC / folder / fname, gen, id=f"{name}-{folder}/{fname}")
    for name, (folder, files, _acp) in DOMAINS.items()
    for fname, gen in files.items()
]
ACP_CASES = [pytest.param(name, ACP / acp, id=f"{name}-acpbench/{acp}") for name, (_f, _g, acp) in DOMAINS.items()]


def _skip_without_acpbench(folder: Path) -> None:
    if not (folder / "domain.pddl").exists():
        pytest.skip(f"ACPBench domain file {folder / 'domain.pddl'} absent (the ACPBench folder, docs/params.md#third-party-folders, is not present)")


def _assert_all_schemas_have_templates(name: str, domain_file: Path) -> None:
    domain = load_domain(str(domain_file))
    tset = template_set(name)
    assert tset.name == name
    # the PDDL `(define (domain ...))` name and the folder names lead to the same set
    assert template_set(domain.get_name()).name == name, domain.get_name()
    assert template_set(domain_file.parent.name).name == name, domain_file.parent.name
    preds = [p for p in domain.get_predicates()
             if p.get_name() not in BUILTIN_PREDICATES and not p.get_name().startswith("=")]
    actions = list(domain.get_actions())
    assert preds and actions
    missing = [f"predicate {p.get_name()}/{p.get_arity()}" for p in preds
               if not tset.atom_template(p.get_name(), p.get_arity())]
    missing += [f"action {a.get_name()}/{a.get_arity()}" for a in actions
                if not tset.action_template(a.get_name(), a.get_arity())]
    assert not missing, f"{domain_file}: no template for {missing}"


def _explore(problem, max_states: int = 150):
    """Breadth-first: fluent atoms and ground actions met in the first ``max_states`` states."""
    start = problem.get_initial_state()
    seen, queue = {start}, deque([start])
    atoms, actions = set(), set()
    while queue:
        state = queue.popleft()
        atoms.update(str(a) for a in state.get_atoms(ignore_static=True))
        for ga in state.generate_applicable_actions():
            actions.add(str(ga))
            nxt = ga.apply(state)
            if nxt not in seen and len(seen) < max_states:
                seen.add(nxt)
                queue.append(nxt)
    return atoms, actions


def _assert_distinct_sentences(name: str, domain_file: Path, problem_file: Path) -> str:
    """Render every atom (fluent, static, goal) and ground action met; return the initial state text."""
    problem = load_problem(str(domain_file), str(problem_file))
    static = static_atoms(problem)
    fluent, actions = _explore(problem)
    atoms = fluent | set(goal_atoms(problem)) | {
        a for a in static if a[1:].split()[0].rstrip(")") not in BUILTIN_PREDICATES
    }
    renderer = Renderer(name, static=static)

    sentences: dict[str, str] = {}
    for atom in sorted(atoms):
        text = renderer.atom(atom)
        assert not text.startswith("The predicate "), f"{problem_file}: generic sentence for {atom}"
        assert text not in sentences, f"{problem_file}: {atom} and {sentences[text]} both read {text!r}"
        sentences[text] = atom
    said: dict[str, str] = {}
    for action in sorted(actions):
        text = renderer.action(action)
        assert not text.startswith("Apply the action "), f"{problem_file}: generic sentence for {action}"
        assert text not in said, f"{problem_file}: {action} and {said[text]} both read {text!r}"
        said[text] = action
    assert len(fluent) > 1 and actions
    return renderer.state(str(a) for a in problem.get_initial_state().get_atoms(ignore_static=True))


@pytest.mark.parametrize("name, domain_file, gen", IPC_CASES)
def test_pypddl_domain_has_templates(name, domain_file, gen):
    _assert_all_schemas_have_templates(name, domain_file)


@pytest.mark.parametrize("name, folder", ACP_CASES)
def test_acpbench_domain_has_templates(name, folder):
    _skip_without_acpbench(folder)
    _assert_all_schemas_have_templates(name, folder / "domain.pddl")


@pytest.mark.parametrize("name, domain_file, gen", IPC_CASES)
def test_generated_problem_renders_distinct_sentences(name, domain_file, gen, tmp_path):
    folder = domain_file.parent.name
    text = gen(importlib.import_module(f"{GEN_ROOT}.{folder}.generator"))
    assert text, f"{folder}: generator returned no problem"
    problem_file = tmp_path / "p.pddl"
    problem_file.write_text(text)
    state = _assert_distinct_sentences(name, domain_file, problem_file)
    assert "The predicate" not in state


@pytest.mark.parametrize("name, folder", ACP_CASES)
def test_acpbench_problem_renders_distinct_sentences(name, folder):
    _skip_without_acpbench(folder)
    problems = sorted(
        (p for p in folder.glob("*.pddl") if p.name != "domain.pddl" and not p.name.startswith("domain")),
        key=lambda p: (os.path.getsize(p), p.name),
    )
    if not problems:
        pytest.skip(f"{folder}: no ACPBench problem file")
    _assert_distinct_sentences(name, folder / "domain.pddl", problems[0])


# ----------------------------------------------------------------------------------------------
# A few exact sentences (they define the text, hence the embeddings)
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "domain, atom, sentence",
    [
        ("depots", "(available hoist0)", "Hoist hoist0 is available."),
        ("depot", "(lifting hoist1 crate0)", "Hoist hoist1 is lifting crate crate0."),
        ("depot", "(in crate1 truck1)", "Crate crate1 is in truck truck1."),
        ("depot", "(on crate1 pallet3)", "crate1 is on pallet3."),  # no kinds known
        ("ferry", "(at c1 l0)", "Car c1 is at location l0."),
        ("ferry", "(on c0)", "Car c0 is on the ferry."),
        ("ferry", "(empty-ferry)", "The ferry is empty."),
        ("floor-tile", "(up tile_4 tile_1)", "Tile tile_4 is above tile tile_1."),
        ("floortile", "(painted tile_9 black)", "Tile tile_9 is painted with color black."),
        ("floortile", "(robot-has robot1 white)", "Robot robot1 is holding color white."),
        ("gold-miner-typed", "(soft-rock-at f1-2f)", "There is soft rock at location f1-2f."),
        ("goldminer", "(holds-bomb)", "The robot is holding a bomb."),
        ("grid", "(key-shape key0 shape0)", "Key key0 has shape shape0."),
        ("grid", "(lock-shape f3-4f shape0)", "The lock at place f3-4f has shape shape0."),
        ("grid", "(at key0-0 f1-0f)", "Key key0-0 is at place f1-0f."),
        ("rover", "(have_image rover0 objective1 high_res)",
         "Rover rover0 has an image of objective objective1 in mode high_res."),
        ("rovers", "(visible waypoint0 waypoint1)", "Waypoint waypoint1 is visible from waypoint waypoint0."),
        ("satellite", "(pointing satellite0 star10)", "Satellite satellite0 is pointing to direction star10."),
        ("satellite", "(have_image star10 infrared1)",
         "An image of direction star10 in mode infrared1 has been taken."),
    ],
)
def test_atom_sentences(domain, atom, sentence):
    assert render_atom(domain, atom) == sentence


@pytest.mark.parametrize(
    "domain, action, sentence",
    [
        ("depot", "(unload hoist5 crate1 truck1 depot5)",
         "Use hoist hoist5 to unload crate crate1 from truck truck1 at depot5."),
        ("ferry", "(sail l1 l0)", "Sail the ferry from location l1 to location l0."),
        ("floortile", "(paint-up robot1 tile_8 tile_5 black)",
         "Use robot robot1 at tile tile_5 to paint tile tile_8 above it with color black."),
        ("floortile", "(right robot2 tile_11 tile_12)", "Move robot robot2 right from tile tile_11 to tile tile_12."),
        ("goldminer", "(detonate-bomb f0-2f f1-2f)", "Detonate the bomb from location f0-2f at location f1-2f."),
        ("grid", "(unlock f2-4f f3-4f key0-0 shape0)",
         "Unlock place f3-4f from place f2-4f with key key0-0 of shape shape0."),
        ("rovers", "(communicate_image_data rover0 general objective1 high_res waypoint2 waypoint1)",
         "Send image data of objective objective1 in mode high_res from rover rover0 at waypoint waypoint2 "
         "to lander general at waypoint waypoint1."),
        ("satellite", "(turn_to satellite0 star1 star10)", "Turn satellite satellite0 from direction star10 to direction star1."),
    ],
)
def test_action_sentences(domain, action, sentence):
    assert render_action(domain, action) == sentence


def test_depot_kinds_from_static_atoms():
    static = ["(crate crate0)", "(surface crate0)", "(pallet pallet0)", "(surface pallet0)", "(hoist hoist0)",
              "(truck truck0)", "(depot depot0)", "(place depot0)", "(distributor distributor0)",
              "(place distributor0)"]
    assert object_kinds("depots", static) == {
        "crate0": "crate", "pallet0": "pallet", "hoist0": "hoist", "truck0": "truck",
        "depot0": "depot", "distributor0": "distributor",
    }
    state = ["(on crate0 pallet0)", "(at truck0 distributor0)", "(clear crate0)", "(at hoist0 depot0)"]
    assert render_state("depot", state, static=static) == (
        "Hoist hoist0 is at depot depot0. Truck truck0 is at distributor distributor0. "
        "Crate crate0 is clear. Crate crate0 is on pallet pallet0."
    )
    assert render_action("depot", "(drive truck0 depot0 distributor0)",
                         kinds=object_kinds("depot", static)) == (
        "Drive truck truck0 from depot depot0 to distributor distributor0."
    )


def test_grid_is_not_visitall():
    assert template_set("grid").name == "grid"
    assert template_set("grid-visit-all").name == "visitall"
