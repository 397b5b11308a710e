"""Training budgets and ablation pairs that the families declare through ``report_traits``
(docs/concepts.md#budgets, docs/concepts.md#comparing-two-methods): every learned row of the default
profile states its budget beside its paper's, the paper's numbers are quoted from the paper text (so
neither can drift), and the ablation pairs each family declares are there, once each."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from planarena.config import resolve_profile
from planarena.methods import method_class, resolve
from planarena.methods.base import Budget
from planarena.report.traits import method_traits

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT.parent / "shared" / "papers"

#: family -> the paper's budget (steps, batch, samples) as the families declare it, the source they
#: cite, and the lines of the paper text it comes from (verbatim, with the text extraction's doubled
#: digits: "3232" is "32")
PAPER_BUDGETS = {
    "aiw-ad-rgnn-policies": {
        "steps": 1000 * 32, "batch": 32, "samples": 1000 * 32 * 32, "source": "Section 7, Training",
        "lines": ("Each episode consisted of 3232 optimization steps with a batch size of 3232.",
                  "the Boltzmann temperature decayed linearly from 1.01.0 to 0.10.1 over 10001000 episodes",
                  "with a time limit of 1212 hours")},
    "symmetry-aware-transformers": {
        "steps": 70 * 100_000 // 64, "batch": 64, "samples": 70 * 100_000, "source": "Appendix E2",
        "lines": ("E2 Main Experiments",
                  "each epoch consisted of 100000 sampled states and plans and a batch size of 64 was used. "
                  "The maximum number of epochs was set to 70")},
    "state-centric-transition-models": {  # LSTM epochs and batch; XGBoost rounds (below)
        "steps": 250, "batch": 32, "samples": None, "source": "Appendix G.2, Table 6",
        "lines": ("Batch size 32", "Max epochs / rounds 250 1000", "Early stopping patience 25 10",
                  "We train with the Adam optimizer at a learning rate of 10210^{-2} for 250 epochs")},
    "embedplan-latent-transitions": {  # max epochs; the batch row lists the values explored only
        "steps": 400, "batch": None, "samples": None, "source": "Appendix B.2.3, Table 6",
        "lines": ("B.2.3 Hyperparameter Configuration", "| Max Epochs | 400 |", "| Batch Size | 64, 128 |")},
    "dias-action-schemas": {
        "steps": 10_000, "batch": 200, "samples": 2_000_000, "source": "Appendix A.2.2",
        "lines": ("A.2.2 Shared model and training hyperparameters",
                  "batch size 200, and 10 000 gradient steps with stratified action-balanced batches")},
}
#: the exceptions within a family: XGBoost's boosting rounds (no batch); DIAS's noise runs (batch 50)
XGB = {"steps": 1000, "batch": None, "samples": None, "source": "Appendix G.2, Table 6",
       "lines": ("Training proceeds for up to 1000 boosting rounds with early stopping if validation loss does "
                 "not improve for 10 consecutive rounds",)}
DIAS_NOISE = {"steps": 10_000, "batch": 50, "samples": 500_000, "source": "Appendix A.4.2",
              "lines": ("A.4.2 Noise model and training adjustments", "reduce the batch size to 50")}
#: learned rows whose paper states no budget (WL-GOOSE: a closed-form ridge fit; its paper is not
#: one of the five)
NO_PAPER_BUDGET = {"wl_goose"}


def _paper_text(family: str) -> str:
    path = PAPERS / f"{family}.txt"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    return path.read_text()


@pytest.fixture(scope="module")
def default_params() -> dict:
    doc = yaml.safe_load((ROOT / "params.yaml").read_text())
    doc["profile"] = "default"
    return copy.deepcopy(resolve_profile(doc))


@pytest.fixture(scope="module")
def traits(default_params):
    return method_traits(default_params)


def _learned(params: dict, traits: dict) -> dict[str, tuple[str, dict]]:
    """name -> (family, config) of every configured learned row of a paper family (a model, not a
    classical planner, not an outside planner: those run under the IPC contract's own limits)."""
    out = {}
    for name in params["methods"]:
        cls, config = resolve(name, params)
        if traits[name].role == "model" and cls.family not in ("classical", "outside-planner"):
            out[name] = (cls.family, config)
    return out


def _expected(family: str, config: dict) -> dict:
    if family == "state-centric-transition-models" and config.get("model") == "xgb":
        return XGB
    if family == "dias-action-schemas" and config.get("noise"):
        return DIAS_NOISE
    return PAPER_BUDGETS[family]


@pytest.mark.parametrize("table", [*PAPER_BUDGETS.items(), ("state-centric-transition-models", XGB),
                                   ("dias-action-schemas", DIAS_NOISE)],
                         ids=[*PAPER_BUDGETS, "state-centric-xgb", "dias-noise"])
def test_the_paper_values_are_quoted_from_the_paper(table):
    family, expected = table
    text = _paper_text(family)
    for line in expected["lines"]:
        assert line in text, f"{family}: {line!r} not in the paper text"


def test_every_learned_row_states_its_budget_and_its_papers(default_params, traits):
    learned = _learned(default_params, traits)
    # every paper family has learned rows (WL-GOOSE, the baseline of no paper here, has its own family)
    assert {f for n, (f, _) in learned.items() if n not in NO_PAPER_BUDGET} == set(PAPER_BUDGETS)
    for name, (family, config) in learned.items():
        budget = traits[name].budget
        assert isinstance(budget, Budget), name
        assert budget.unit, name
        if name in NO_PAPER_BUDGET:
            assert (budget.paper_steps, budget.paper_batch, budget.paper_samples) == (None, None, None)
            assert budget.fraction() is None
            continue
        want = _expected(family, config)
        assert (budget.paper_steps, budget.paper_batch, budget.paper_samples) == \
            (want["steps"], want["batch"], want["samples"]), name
        assert budget.source == want["source"], name
        assert budget.fraction() is not None and budget.fraction() > 0, name
        if budget.samples is not None:
            assert budget.samples == budget.steps * budget.batch, name
    # rows that learn nothing declare no budget
    for name in default_params["methods"]:
        if name not in learned:
            assert traits[name].budget is None, name


def test_the_default_profile_budgets_are_the_params(default_params, traits):
    """What the default profile declares: R-GNN 3 episodes x 4 updates x batch 8, DIAS names-only
    1/400 of its samples, EmbedPlan 40 of 400 epochs; the state-centric models at Table 6's; the
    SATr encoder's steps x batch from `transformers.train`, the plan generators' from `by_arch`,
    shared by the three decoding rows of one model."""
    rgnn = traits["aiw_ad"].budget
    assert (rgnn.steps, rgnn.batch, rgnn.samples) == (3 * 4, 8, 3 * 4 * 8)
    assert traits["dias_names"].budget.fraction() == pytest.approx(1 / 400)
    assert traits["dias_strips"].budget.fraction() == pytest.approx(2000 * 100 / 2_000_000)
    assert traits["embedplan_mlp"].budget.fraction() == pytest.approx(40 / 400)
    assert traits["embedplan_mlp"].budget.samples is None  # transitions per epoch depend on the protocol
    for name in ("wl_lstm_delta", "fsf_xgb_state"):
        assert traits[name].budget.fraction() == 1.0
    enc = traits["satr_encoder_cl"].budget
    assert (enc.steps, enc.batch) == (160, 16)
    shared = {traits[f"satr_encdec_cl_{d}"].budget for d in ("greedy", "applicable", "regrounding")}
    assert len(shared) == 1 and (next(iter(shared)).steps, next(iter(shared)).batch) == (30, 8)
    # a profile's params change the budget
    params = copy.deepcopy(default_params)
    params["rgnn_policies"]["train"].update(episodes=1000, train_steps=32, batch=32)
    assert method_traits(params)["aiw_ad"].budget.fraction() == 1.0


def test_budget_defaults_are_the_training_code_defaults():
    """Where the params set nothing, the declared budget is what the training code runs."""
    pytest.importorskip("torch")
    from planarena.methods.dias.train import DiasConfig
    from planarena.methods.rgnn_policies.method import PAPER_TRAIN
    from planarena.methods.rgnn_policies.train import TrainConfig as RGNNTrain
    from planarena.methods.transformers.method import TRAIN_DEFAULTS
    from planarena.methods.transformers.train import TrainConfig as SATrTrain

    assert {k: getattr(RGNNTrain(), k) for k in PAPER_TRAIN} == PAPER_TRAIN
    assert {k: getattr(SATrTrain(), k) for k in TRAIN_DEFAULTS} == TRAIN_DEFAULTS
    assert (DiasConfig().steps, DiasConfig().batch) == (10_000, 200)
    bare = {"methods": {"r": {"method": "rgnn_policy"}, "d": {"method": "dias", "observation": "strips"}}}
    traits = method_traits(bare)
    assert traits["r"].budget.fraction() == 1.0 and traits["d"].budget.fraction() == 1.0


# -- ablations ---------------------------------------------------------------------------------

def _pairs(traits) -> list[tuple[str, str, str]]:
    return [(name, other, what) for name, t in traits.items() for other, what in t.ablations]


def test_default_profile_ablation_pairs(default_params, traits):
    pairs = _pairs(traits)
    unordered = [frozenset((a, b)) for a, b, _ in pairs]
    assert len(unordered) == len(set(unordered)), "a pair is declared twice"
    assert all(a != b for a, b, _ in pairs)
    configured = set(default_params["methods"])
    assert all(a in configured and b in configured for a, b, _ in pairs)
    got = {(a, b) for a, b, _ in pairs}
    # Table 1's four axes, declared from the paper's main variant
    assert ("wl_xgb_delta", "wl_xgb_state") in got and ("wl_lstm_delta", "fsf_lstm_delta") in got
    assert {("satr_encoder_cl", "satr_encoder_nocl"), ("satr_encdec_cl_greedy", "satr_encdec_nocl_greedy"),
            ("satr_encdec_cl_regrounding", "satr_encdec_nocl_regrounding"),
            ("plangpt_cl_applicable", "plangpt_nocl_applicable")} <= got
    assert ("aiw_ad", "aiw_ext") in got and ("iw_ad", "iw_ext") in got
    what = {(a, b): w for a, b, w in pairs}
    assert what[("wl_xgb_delta", "wl_xgb_state")] == "mode: delta vs state"
    assert what[("aiw_ad", "aiw_ext")] == "encoding: AD vs Ext"
    assert what[("satr_encoder_cl", "satr_encoder_nocl")].startswith("contrastive loss")
    assert what[("wl_xgb_delta", "fsf_xgb_delta")] == "encoding: WL vs FSF"
    # every contrastive-loss pair keeps architecture and decoding; all 7 (arch, decoding) pairs
    cl = [(a, b) for a, b, w in pairs if w.startswith("contrastive loss")]
    assert len(cl) == 7 and all(a.replace("_cl", "_nocl") == b for a, b in cl)
    # state-centric: 4 mode pairs, 4 encoding pairs, the histogram ablation; floors pair with nothing
    assert sum(w == "mode: delta vs state" for *_, w in pairs) == 4
    assert sum(w == "encoding: WL vs FSF" for *_, w in pairs) == 4
    assert ("wl_xgb_delta", "wl_xgb_delta_l1") in got
    for floor in ("wl_identity", "fsf_identity", "embedplan_untrained", "embedplan_identity", "random_walk"):
        assert not any(floor in (a, b) for a, b in got), floor
    # a block's pairs are found by configuration, not by name
    renamed = copy.deepcopy(default_params)
    renamed["methods"]["delta_row"] = renamed["methods"].pop("wl_xgb_delta")
    again = {(a, b) for a, b, _ in _pairs(method_traits(renamed))}
    assert ("delta_row", "wl_xgb_state") in again and ("wl_xgb_delta", "wl_xgb_state") not in again


def test_ablation_needs_exactly_one_differing_setting():
    params = {"methods": {
        "a_cl": {"method": "satr", "arch": "encdec", "contrastive": True, "decoding": "greedy"},
        "a_nocl_other": {"method": "satr", "arch": "encdec", "contrastive": False, "decoding": "applicable"},
        "a_nocl_seeds": {"method": "satr", "arch": "encdec", "contrastive": False, "decoding": "greedy",
                         "seeds": [1]},
        "enc": {"method": "satr"},  # defaults: encoder, with the loss
        "enc_nocl": {"method": "satr", "arch": "encoder", "contrastive": False, "decoding": "beam"},
    }}
    traits = method_traits(params)
    assert traits["a_cl"].ablations == ()  # decoding or seeds differ too
    # the encoder ignores `decoding` (Algorithm 4 only); defaults count as set
    assert traits["enc"].ablations == (("enc_nocl", "contrastive loss: with vs without"),)
    assert traits["enc_nocl"].ablations == ()
    assert method_class("satr").report_traits({"arch": "encoder"}, {}).ablations == ()
