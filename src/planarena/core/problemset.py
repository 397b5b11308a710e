"""The problem-set contract (docs/concepts.md#problems-suites-and-splits).

On disk (written by the ``generate`` stage)::

    data/problems/<domain>/domain.pddl
    data/problems/<domain>/<split>/<problem>.pddl
    data/problems/manifest.jsonl        one ProblemEntry per line

``split`` is one of :data:`planarena.config.SPLITS` for the generated and SATr suites; the IPC 2023
Learning Track maps ``training/easy`` to ``train`` and ``testing/{easy,medium,hard}`` to
``test-easy``, ``test-medium``, ``test-hard``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from planarena.core.io import read_jsonl


@dataclass(frozen=True)
class ProblemEntry:
    """One problem of a suite.

    ``path`` is relative to the problem root (``data/problems``); ``size`` is the split's size
    parameter (blocks, balls, goals, cells, ...) named by ``size_param``; ``objects`` is the number of
    PDDL objects; ``seed`` is the generator seed (``None`` for external suites); ``origin`` says
    where the file came from (generator module or source path). ``reference_cost`` is the best
    known plan cost the suite ships for the problem (IPC 2023 Learning Track: the minimum of its
    ``upper_bounds.json`` and ``upper_bounds_from_ipc_planners.json``; the C* of the IPC quality
    score), ``None`` where the suite ships none.
    """

    domain: str
    split: str
    problem: str
    path: str
    size_param: str
    size: int | None
    objects: int
    seed: int | None
    origin: str
    reference_cost: float | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.domain, self.split, self.problem)

    def to_dict(self) -> dict:
        """The manifest row; ``reference_cost`` only where the suite ships one (so the manifests
        of suites without reference costs stay as they were)."""
        d = asdict(self)
        if d["reference_cost"] is None:
            del d["reference_cost"]
        return d


class ProblemSet:
    """A loaded ``data/problems`` directory: manifest entries plus domain files.

    Raises (on construction):
        FileNotFoundError: the manifest is missing (names the path and the stage that writes it).
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)
        manifest = self.root / "manifest.jsonl"
        if not manifest.exists():
            raise FileNotFoundError(f"{manifest}: no problem manifest; run `dvc repro generate` first")
        self.entries = [ProblemEntry(**row) for row in read_jsonl(manifest)]

    @property
    def domains(self) -> list[str]:
        return sorted({e.domain for e in self.entries})

    def splits(self, domain: str) -> list[str]:
        seen: dict[str, None] = {}
        for e in self.entries:
            if e.domain == domain:
                seen.setdefault(e.split, None)
        return list(seen)

    def domain_file(self, domain: str) -> Path:
        return self.root / domain / "domain.pddl"

    def problem_file(self, entry: ProblemEntry) -> Path:
        return self.root / entry.path

    def select(self, domain: str | None = None, split: str | None = None) -> list[ProblemEntry]:
        return [
            e
            for e in self.entries
            if (domain is None or e.domain == domain) and (split is None or e.split == split)
        ]

    def without_domains(self, domains) -> "ProblemSet":
        """A copy of this problem set without the entries of ``domains`` (same root and files)."""
        drop = set(domains)
        if not drop:
            return self
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.entries = [e for e in self.entries if e.domain not in drop]
        return out

    def by_domain_split(self) -> dict[tuple[str, str], list[ProblemEntry]]:
        out: dict[tuple[str, str], list[ProblemEntry]] = defaultdict(list)
        for e in self.entries:
            out[(e.domain, e.split)].append(e)
        return dict(out)
