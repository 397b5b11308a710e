"""Classical baselines: Fast Downward A*+LM-cut and LAMA-first (rows of the coverage leaderboard).

Both reuse :mod:`planarena.datasets.planning` and its run cache, so a configuration already run by the
``plan`` stage on the same problem, with the same limits, is not run again.
"""

from __future__ import annotations

from typing import ClassVar

from planarena.datasets.planning import PlannerCache, plan_cached
from planarena.methods.base import Attempt, Method, PlanningTask


class _FastDownward(Method):
    family = "classical"
    tasks = frozenset({"plan"})
    stochastic = False
    parallel = True
    config_name: ClassVar[str] = ""

    @property
    def uses_params(self) -> tuple[str, ...]:  # type: ignore[override]
        return (f"planners.{self.config_name}",)

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """Run the configuration with ``planners.<config>.time_limit`` (s) and ``memory_limit_mb``."""
        cfg = self.params["planners"][self.config_name]
        res = plan_cached(
            self.config_name,
            task.domain_file,
            task.problem_file,
            float(cfg["time_limit"]),
            int(cfg["memory_limit_mb"]),
            PlannerCache(self.layout.cache / "fd"),
        )
        return Attempt(
            outcome=res.outcome,
            plan=res.plan if res.outcome == "solved" else None,
            failure_reason=res.failure_reason,
            wall_time=res.wall_time,
            peak_memory_mb=res.peak_memory_kb / 1024 if res.peak_memory_kb else None,
            extra={"expansions": res.expansions, "cost": res.cost, "cached": res.cached},
        )


class FastDownwardAStarLMCut(_FastDownward):
    """A* with the LM-cut heuristic (Helmert & Domshlak 2009): the FD column of the state-centric
    paper's Table 1 (60 s limit there)."""

    config_name = "astar_lmcut"


class FastDownwardLAMA(_FastDownward):
    """LAMA 2011, first solution only (Richter & Westphal 2010; ``--alias lama-first``)."""

    config_name = "lama_first"
