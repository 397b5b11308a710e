"""What a training run is about to cost, said before it is spent.

A training loop of any family announces what it will fit (rows, features, outputs, units of work)
before it starts, and after its first unit (a boosting round, an epoch) the CPU seconds that unit
took and the projected total for the most units it may run. A user who points a profile at a domain
of their own then learns within one unit, not after half an hour, that a run will take hours, and
which key caps it. The projection is an upper bound: early stopping usually ends sooner.

CPU seconds of this process (``time.process_time``, all its threads), as every limit that decides
an outcome here (:mod:`planarena.core.clock`); a 2-core machine spends about half of them in wall time
when the library uses both cores.
"""

from __future__ import annotations

import sys
import time

#: a projection above this many CPU seconds without a budget prints a warning naming the budget key
WARN_OVER_S = 1800.0


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} CPU s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} CPU min"
    return f"{seconds / 3600:.1f} CPU h"


class CostProjection:
    """Announce a training run, then project its cost from its first unit.

    Args:
        what: who trains (e.g. ``"xgb delta blocksworld seed 13"``).
        sizes: what it fits, in words (e.g. ``"12,040 rows x 1,508 features -> 754 outputs"``).
        units: the most units the run may take (``rounds``, ``max_epochs``).
        unit: the unit's name, singular (``"round"``, ``"epoch"``).
        budget_s: the run's CPU-second budget (``time_budget_s``), or None.
        budget_key: the params key of that budget, named in the warning.
        stream: where to print (default stdout; the train stage's log).

    Prints on construction, and once from :meth:`unit_done` (the first call).
    """

    def __init__(self, what: str, sizes: str, units: int, unit: str, budget_s: float | None = None,
                 budget_key: str = "time_budget_s", stream=None):
        self.what, self.units, self.unit = what, int(units), unit
        self.budget_s = float(budget_s) if budget_s else None
        self.budget_key = budget_key
        self.stream = stream or sys.stdout
        self.projected_s: float | None = None
        cap = f", CPU budget {self.budget_s:g} s ({budget_key})" if self.budget_s else ""
        self._print(f"{what}: {sizes}; up to {self.units:,} {unit}s{cap}")
        self.t0 = time.process_time()

    def _print(self, line: str) -> None:
        from tqdm import tqdm

        # tqdm.write: on its own line, not inside a progress bar the stage is drawing
        tqdm.write(f"[cost] {line}", file=self.stream)

    def unit_done(self) -> None:
        """Call after every unit; the first call prints the projection (later calls do nothing)."""
        if self.projected_s is not None:
            return
        first = time.process_time() - self.t0
        self.projected_s = first * self.units
        line = (f"{self.what}: first {self.unit} {first:.2f} CPU s -> at most {_duration(self.projected_s)} "
                f"for {self.units:,} {self.unit}s")
        if self.budget_s is not None and self.projected_s > self.budget_s:
            line += f", cut at the budget of {_duration(self.budget_s)}"
        elif self.budget_s is None and self.projected_s > WARN_OVER_S:
            line += f"; WARNING: no budget: set {self.budget_key} (CPU s) to cap it"
        self._print(line)


__all__ = ["WARN_OVER_S", "CostProjection"]
