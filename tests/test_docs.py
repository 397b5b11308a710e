"""The documentation: README.md and docs/ (offline, under a second).

* every relative link resolves to a file or folder of the repository, and a ``file.md#anchor`` link
  to a heading of that file (GitHub's slugs: lower case, punctuation other than ``-`` and ``_``
  removed, spaces to hyphens, ``-1``, ``-2`` for repeated headings);
* README.md stays at most 250 lines;
* no issue numbers, commit hashes, ``DESIGN.md`` (not in the repository) or paths outside the
  repository (the parent folder's ``shared``, or this machine's absolute folders) in the text;
* CITATION.cff parses as YAML with the keys CFF 1.2.0 requires; LICENSE exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_LINES = 250

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
# [text](target) and ![alt](target); the target ends at whitespace or ')' (titles are not used here)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)

FORBIDDEN = {
    "an issue number": re.compile(r"\bissues? \d+|\(issue|(?<![\w&])#\d+\b", re.I),
    "a commit hash": re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"),
    "DESIGN.md (not in the repository)": re.compile(r"DESIGN\.md"),
    "a path outside the repository": re.compile(r"\.\./shared|(?<![\w.])/(?:work|tmp)/"),
}


def doc_files() -> list[Path]:
    """README.md and every markdown page under docs/."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def without_code(text: str) -> str:
    """``text`` with fenced code blocks and inline code spans blanked (newlines kept, so line
    numbers stay right)."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: markdown links reduced to their text, lower case, every
    character but letters, digits, ``_``, ``-`` and spaces removed, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a link may name in ``path``: heading slugs (repeats numbered) and HTML anchors."""
    text = path.read_text(encoding="utf-8")
    seen: dict[str, int] = {}
    out = set(HTML_ANCHOR.findall(text))
    for _, title in HEADING.findall(FENCE.sub("", text)):
        base = slug(title)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(path: Path) -> list[str]:
    """The relative links of ``path`` that do not resolve, one line each."""
    out = []
    text = without_code(path.read_text(encoding="utf-8"))
    for lineno, line in enumerate(text.splitlines(), 1):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):   # http:, https:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{lineno}: {target}"
            if not dest.exists():
                out.append(f"{where}: no such file")
            elif not dest.is_relative_to(ROOT):
                out.append(f"{where}: outside the repository")
            elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
                out.append(f"{where}: no heading with anchor #{anchor}")
    return out


def test_docs_exist():
    assert README.exists()
    assert (DOCS / "README.md").exists()


def test_every_relative_link_resolves():
    broken = [b for f in doc_files() for b in broken_links(f)]
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_docs_index_links_every_page():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    linked = {(DOCS / t.partition("#")[0]).resolve() for t in LINK.findall(without_code(index))}
    missing = [str(p.relative_to(ROOT)) for p in DOCS.rglob("*.md") if p != DOCS / "README.md" and p not in linked]
    assert not missing, f"docs/README.md does not link: {missing}"


def test_readme_is_short():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_README_LINES, f"README.md has {n} lines (at most {MAX_README_LINES}: the rest belongs in docs/)"


@pytest.mark.parametrize("what", sorted(FORBIDDEN))
def test_no_forbidden_text(what):
    found = []
    for f in doc_files():
        for lineno, line in enumerate(without_code(f.read_text(encoding="utf-8")).splitlines(), 1):
            for m in FORBIDDEN[what].finditer(line):
                found.append(f"{f.relative_to(ROOT)}:{lineno}: {m.group(0)!r}")
    for f in doc_files():   # paths outside the repository are wrong in code too
        if what.startswith("a path") or what.startswith("DESIGN"):
            for lineno, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                for m in FORBIDDEN[what].finditer(line):
                    hit = f"{f.relative_to(ROOT)}:{lineno}: {m.group(0)!r}"
                    if hit not in found:
                        found.append(hit)
    assert not found, f"{what} in the docs:\n" + "\n".join(found)


def test_citation_cff():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    missing = {"cff-version", "message", "title", "authors"} - set(cff)
    assert not missing, f"CITATION.cff lacks {missing}"
    assert str(cff["cff-version"]) == "1.2.0"
    assert cff["authors"] and all(isinstance(a, dict) and (a.get("name") or a.get("family-names"))
                                  for a in cff["authors"])
    version = re.search(r'^version\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert str(cff.get("version")) == version, "CITATION.cff's version differs from pyproject.toml's"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(cff.get("date-released", ""))), "date-released: YYYY-MM-DD"


def test_license_exists_and_matches_the_citation():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff.get("license") == "MIT"
