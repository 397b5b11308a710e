"""Classical baselines: Fast Downward configurations as rows of the coverage leaderboard.

``methods.<row>: {method: fast_downward, planner: <name>}`` runs the configuration of the params
block ``planners.<name>`` (a search string or an alias, options and limits:
:func:`planarena.datasets.planning.fd_arguments`), so a classical baseline is added without code;
``fd_astar_lmcut`` and ``fd_lama`` are the two built-in rows. All reuse
:mod:`planarena.datasets.planning` and its run cache, so a configuration already run by the ``plan``
stage on the same problem, with the same limits, is not run again.
"""

from __future__ import annotations

from typing import ClassVar

from planarena.datasets.planning import PlannerCache, plan_cached
from planarena.methods.base import Attempt, Method, PlanningTask


#: Fast Downward heuristics that refuse conditional effects (its documentation's "supported: no")
NO_CONDITIONAL_EFFECTS = ("lmcut(", "cegar(", "operatorcounting(", "ipdb(", "cpdbs(")


class FastDownward(Method):
    """Fast Downward with the configuration ``planners.<planner>`` (the row's ``planner`` key):
    one deterministic attempt per problem, limited by the block's ``time_limit`` (CPU s) and
    ``memory_limit_mb``.

    Raises (on construction):
        ConfigError: the row names no ``planner``, or one without a ``planners`` block, or a
            block Fast Downward cannot be given (:func:`planarena.datasets.planning.fd_arguments`).
    """

    family = "classical"
    tasks = frozenset({"plan"})
    stochastic = False
    parallel = True
    config_name: ClassVar[str] = ""

    def __init__(self, name: str, config: dict, params: dict, layout):
        super().__init__(name, config, params, layout)
        from planarena.config import ConfigError
        from planarena.datasets.planning import fd_arguments

        self.planner = str(config.get("planner") or self.config_name)
        if not self.planner:
            raise ConfigError(f"params: methods.{name}.planner: name a `planners` block (e.g. lama_first)")
        block = (params.get("planners") or {}).get(self.planner)
        if not isinstance(block, dict) or "time_limit" not in block or "memory_limit_mb" not in block:
            raise ConfigError(f"params: methods.{name} runs planners.{self.planner}, which needs a block with "
                              f"time_limit and memory_limit_mb (and search or alias)")
        fd_arguments(self.planner, block)

    @property
    def uses_params(self) -> tuple[str, ...]:  # type: ignore[override]
        return (f"planners.{self.planner}",)

    def not_applicable(self, domain: str, domain_file) -> str | None:
        """A configuration whose heuristic Fast Downward runs without conditional effects
        (:data:`NO_CONDITIONAL_EFFECTS`, e.g. ``astar(lmcut())``) is not applicable on a domain that
        declares them: Fast Downward stops with "This configuration does not support conditional
        effects" on every problem (``benchmarks/results/requirements-matrix-2026-11-28.md``: the
        only error of any row on the six requirement domains)."""
        from pathlib import Path

        from planarena.core.pddl import domain_requirements

        search = str((self.params.get("planners") or {}).get(self.planner, {}).get("search") or "")
        heuristics = [h for h in NO_CONDITIONAL_EFFECTS if h in search.replace(" ", "")]
        if heuristics and ":conditional-effects" in domain_requirements(Path(domain_file).read_text()):
            return (f"{domain} declares :conditional-effects, which Fast Downward's {heuristics[0]}) does not "
                    f"support (planners.{self.planner}: {search})")
        return None

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """Run the configuration with ``planners.<planner>.time_limit`` (s) and ``memory_limit_mb``."""
        cfg = self.params["planners"][self.planner]
        res = plan_cached(
            self.planner,
            task.domain_file,
            task.problem_file,
            float(cfg["time_limit"]),
            int(cfg["memory_limit_mb"]),
            PlannerCache(self.layout.cache / "fd"),
            block=cfg,
        )
        return Attempt(
            outcome=res.outcome,
            plan=res.plan if res.outcome == "solved" else None,
            failure_reason=res.failure_reason,
            wall_time=res.wall_time,
            peak_memory_mb=res.peak_memory_kb / 1024 if res.peak_memory_kb else None,
            extra={"expansions": res.expansions, "cost": res.cost, "cached": res.cached},
        )


class FastDownwardAStarLMCut(FastDownward):
    """A* with the LM-cut heuristic (Helmert & Domshlak 2009): the FD column of the state-centric
    paper's Table 1 (60 s limit there)."""

    config_name = "astar_lmcut"


class FastDownwardLAMA(FastDownward):
    """LAMA 2011, first solution only (Richter & Westphal 2010; ``--alias lama-first``)."""

    config_name = "lama_first"
