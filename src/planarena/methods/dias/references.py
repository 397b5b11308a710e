"""Reference rows of the schema-learning leaderboard: the true domain (a ceiling, and a check of
the protocol: it must score precision and recall 1 and plan like Fast Downward on the true domain)
and the true domain with every precondition removed (the floor: recall 1 by construction, precision
what effects alone give; its plans show the validator rejecting what an unsound domain allows).

Both run through exactly the code that measures DIAS (:mod:`planarena.protocols.schema`); nothing is
learned, so they are deterministic (one run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, ClassVar

from planarena.core.pddl import parse_domain
from planarena.core.strips import StripsDomain, normal_form
from planarena.datasets.schema import configured_domains
from planarena.methods.base import LearnedDomain, Method, ReportTraits

FAMILY = "dias-action-schemas"


class _Reference(Method):
    family = FAMILY
    tasks = frozenset({"learn_schema"})
    stochastic = False
    data_deps = ("schema",)
    role: ClassVar[str] = "model"
    what: ClassVar[str] = ""
    #: the reference domain made from the true one (normal form)
    transform: ClassVar[Callable[[StripsDomain], StripsDomain]] = staticmethod(lambda d: d)

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        # both plan with LAMA on their domain (schema-test): search rows; the floor bounds the
        # learned domains' LAMA rows
        return ReportTraits(role=cls.role, variant=cls.what, kind="search",
                            floor_kinds=("search",) if cls.role == "floor" else ())

    def train(self, model_dir: Path) -> dict:
        """Write ``<model_dir>/<domain>/domain.pddl`` for every configured schema domain."""
        from planarena.core.problemset import ProblemSet

        ps = ProblemSet(self.layout.schema)
        domains = configured_domains(self.params, self.config, ps.domains)
        for d in domains:
            (model_dir / d).mkdir(parents=True, exist_ok=True)
            source = ps.domain_file(d)
            self.transform(normal_form(parse_domain(source), str(source))).write(model_dir / d / "domain.pddl")
        return {"trained": False, "reason": "reference domain, nothing learned", "domains": domains}

    def load(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)

    def learned_domain(self, domain: str, seed: int) -> LearnedDomain:
        path = self.model_dir / domain / "domain.pddl"
        if not path.exists():
            return LearnedDomain("error", failure_reason=f"{path}: missing; run the train stage")
        return LearnedDomain("solved", path=path)


class TrueDomain(_Reference):
    """The true domain (normal form): the ceiling of every schema-learning column."""

    role = "ceiling"
    what = "true domain"


class NoPreconditions(_Reference):
    """The true domain with every precondition dropped: the precision floor."""

    role = "floor"
    what = "no preconditions"
    transform = staticmethod(StripsDomain.without_preconditions)
