"""Rewrite docs/claims.md's verdict table and power-check outputs from what is committed.

The table reads each claim's ``reports/claims/<id>/verdict.json`` (or says "pre-registered, not
run"); the power checks are ``planarena claims check --out DIR`` JSON files plus the printed tables,
run here. Everything between the markers ``<!-- verdicts:begin -->`` / ``<!-- verdicts:end -->`` and
``<!-- checks:begin -->`` / ``<!-- checks:end -->`` is replaced; the prose around them is not.

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=200)
    args = ap.parse_args()
    from planarena.claims.spec import load_claims

    claims = load_claims(ROOT / "claims")
    with tempfile.TemporaryDirectory() as tmp:
        cli = str(Path(sys.executable).parent / "planarena")
        proc = subprocess.run([cli, "claims", "check", "--draws", str(args.draws), "--out", tmp], cwd=ROOT,
                              capture_output=True, text=True)
        printed = proc.stdout
        checks = {p.stem: json.loads(p.read_text()) for p in Path(tmp).glob("*.json")}
    rows = ["| claim | paper | verdict | power: paper / floor | check |", "|---|---|---|---|---|"]
    for c in claims:
        f = ROOT / "reports" / "claims" / c.id / "verdict.json"
        v = json.loads(f.read_text()) if f.exists() else {}
        chk = checks.get(c.id) or {}
        out = chk.get("outcome") or {}
        power = (f"{out['paper']['confirmed']:.2f} / {out['floor']['confirmed']:.2f}" if chk.get("simulated")
                 else "not simulated")
        check = "passes" if chk.get("passes") else "fails: " + "; ".join(chk.get("problems") or ["?"])
        check = check.replace("|", "\\|")
        rows.append(f"| `{c.id}` | {c.paper} | {_verdict_cell(v)} | {power} | {check} |")
    sections = ("\n" + printed).replace("\n## ", "\n### ")
    sections = sections[sections.index("### "):] if "### " in sections else sections
    sections = "\n".join(ln for ln in sections.splitlines() if not ln.endswith("pass the power check")).strip()
    text = DOC.read_text()
    for tag, body in (("verdicts", "\n".join(rows)), ("checks", sections)):
        begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
        if begin not in text or end not in text:
            print(f"error: {DOC}: markers {begin} / {end} missing", file=sys.stderr)
            return 1
        head, rest = text.split(begin, 1)
        text = head + begin + "\n" + body + "\n" + end + rest.split(end, 1)[1]
    DOC.write_text(text)
    print(f"{DOC}: {len(claims)} claims, {len(checks)} checks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
