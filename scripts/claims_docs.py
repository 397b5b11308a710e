"""Rewrite docs/claims.md's verdict table and power-check outputs from what is committed.

The table reads each claim's ``reports/claims/<id>/verdict.json`` (or says "pre-registered, not
run"). The power checks are the ones committed with each page (``verdict.json``'s ``power``, written
when the page was, for the same claim file); only a claim without a page, or whose file changed since,
is checked here (``planarena claims check``). Everything between the markers
``<!-- verdicts:begin -->`` / ``<!-- verdicts:end -->`` and ``<!-- checks:begin -->`` /
``<!-- checks:end -->`` is replaced; the prose around them is not.

Usage (repository root): ``python scripts/claims_docs.py [--draws 200]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "claims.md"


def _verdict_cell(v: dict) -> str:
    """The front page's verdict cell (:func:`planarena.report.sections.claims.verdict_line`), or
    "pre-registered, not run" for a claim without a page."""
    from planarena.report.sections.claims import verdict_line

    return verdict_line(v) if v else "pre-registered, not run"


def _committed_check(claim, verdict: dict, draws: int) -> dict | None:
    """The power check committed with the claim's page (``verdict.json``'s ``power``) when the page
    was written for this very claim file (same sha256) at ``draws`` draws; else None."""
    power = verdict.get("power") or {}
    if verdict.get("claim_sha256") == claim.digest and power and power.get("draws", draws) == draws:
        return power
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=200)
    args = ap.parse_args()
    from planarena.claims.power import power_table
    from planarena.claims.spec import load_claims

    claims = load_claims(ROOT / "claims")
    verdicts = {}
    for c in claims:
        f = ROOT / "reports" / "claims" / c.id / "verdict.json"
        verdicts[c.id] = json.loads(f.read_text()) if f.exists() else {}
    checks = {c.id: chk for c in claims if (chk := _committed_check(c, verdicts[c.id], args.draws))}
    stale = [c.id for c in claims if c.id not in checks]
    printed: dict[str, str] = {}
    if stale:  # simulated here: a claim without a page, or whose file changed since its page
        with tempfile.TemporaryDirectory() as tmp:
            cli = str(Path(sys.executable).parent / "planarena")
            proc = subprocess.run([cli, "claims", "check", *stale, "--draws", str(args.draws), "--out", tmp],
                                  cwd=ROOT, capture_output=True, text=True)
            checks.update({p.stem: json.loads(p.read_text()) for p in Path(tmp).glob("*.json")})
        for block in ("\n" + proc.stdout).split("\n## ")[1:]:
            name, _, body = block.partition("\n")
            printed[name.strip()] = "\n".join(ln for ln in body.strip().splitlines()
                                              if not ln.endswith("pass the power check")).strip()
    rows = ["| claim | paper | verdict | power: paper / floor | check |", "|---|---|---|---|---|"]
    sections = []
    for c in claims:
        chk = checks.get(c.id) or {}
        out = chk.get("outcome") or {}
        power = (f"{out['paper']['confirmed']:.2f} / {out['floor']['confirmed']:.2f}" if chk.get("simulated")
                 else "not simulated")
        check = "passes" if chk.get("passes") else "fails: " + "; ".join(chk.get("problems") or ["?"])
        check = check.replace("|", "\\|")
        rows.append(f"| `{c.id}` | {c.paper} | {_verdict_cell(verdicts[c.id])} | {power} | {check} |")
        body = "\n".join(power_table(chk)) if chk else printed.get(c.id, "the power check printed nothing")
        sections.append(f"### {c.id}\n\n{body}")
    sections = "\n\n".join(sections)
    text = DOC.read_text()
    for tag, body in (("verdicts", "\n".join(rows)), ("checks", sections)):
        begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
        if begin not in text or end not in text:
            print(f"error: {DOC}: markers {begin} / {end} missing", file=sys.stderr)
            return 1
        head, rest = text.split(begin, 1)
        text = head + begin + "\n" + body + "\n" + end + rest.split(end, 1)[1]
    DOC.write_text(text)
    print(f"{DOC}: {len(claims)} claims, {len(checks)} checks ({len(stale)} simulated here)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
