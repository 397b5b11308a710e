"""scripts/claims_docs.py takes each claim's power check from its committed page only when the page
was written for the same claim file at the same number of draws (otherwise it simulates it anew)."""

from __future__ import annotations

import importlib.util
import json
from types import SimpleNamespace

from conftest import ROOT

from planarena.claims.power import power_table
from planarena.claims.spec import load_claims


def _script():
    spec = importlib.util.spec_from_file_location("claims_docs", ROOT / "scripts" / "claims_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_power_check_is_used_only_for_the_same_claim_file_and_draws():
    docs = _script()
    claim = SimpleNamespace(digest="abc")
    power = {"draws": 200, "passes": True, "simulated": True}
    assert docs._committed_check(claim, {"claim_sha256": "abc", "power": power}, 200) == power
    assert docs._committed_check(claim, {"claim_sha256": "abd", "power": power}, 200) is None   # file changed
    assert docs._committed_check(claim, {"claim_sha256": "abc", "power": power}, 100) is None   # other draws
    assert docs._committed_check(claim, {"claim_sha256": "abc"}, 200) is None                   # no check kept
    assert docs._committed_check(claim, {}, 200) is None                                        # never run


def test_every_committed_power_check_of_a_current_claim_renders():
    """The checks the script reuses render as tables (the same function writes the claim pages)."""
    docs = _script()
    used = 0
    for claim in load_claims(ROOT / "claims"):
        f = ROOT / "reports" / "claims" / claim.id / "verdict.json"
        if not f.exists():
            continue
        check = docs._committed_check(claim, json.loads(f.read_text()), 200)
        if check:
            table = "\n".join(power_table(check))
            assert ("paper's rates" in table or "no published number to simulate" in table) and "P(confirmed)" in table, claim.id
            used += 1
    assert used >= 5
