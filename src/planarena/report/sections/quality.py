"""Section "Plan quality": QS and QS_S of the symmetry-aware-transformers paper (Appendix E,
Eq. 1 and 2), per method and held-out split, summed over domains.

For a set P of problems and a method's plan pi(p) (|pi(p)| = infinity when unsolved or rejected by
the validator), with pi*(p) the shortest known plan:

* QS = 1/|P| sum_p |pi*(p)| / |pi(p)|: coverage weighted by plan quality (1.00: every problem
  solved optimally);
* QS_S = the same sum over the problems the method solved only (1.00: every solved problem solved
  optimally; "–" when it solved none).

pi*(p) is the shortest validated plan known for p: the planning stage's (A*+LM-cut: optimal; LAMA
where A* failed: an upper bound, as the paper's LAMA fallback) or any method's, whichever is
shorter. Per seed the value over the split's problems, then mean ± population std over seeds;
problems without any known plan are left out of P (nothing to compare with).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.config import is_held_out
from planarena.core.records import ResultRecord
from planarena.report.markdown import DASH, md_table
from planarena.report.metrics import QS, QS_S
from planarena.report.records import method_order, plan_records_of, split_sort_key

DESCRIPTION = (
    "QS and QS_S (symmetry-aware-transformers paper, Appendix E, Eq. 1-2): per problem "
    "|pi*| / |pi| with |pi| = infinity when unsolved; QS averages over every problem of the split "
    "(coverage weighted by plan quality), QS_S over the problems the method solved. pi*: the "
    "shortest validated plan known (planning stage: A*+LM-cut, LAMA where A* failed; or any "
    "method's). Held-out splits, all domains together; n = problems with a known plan; mean ± "
    "population std over seeds."
)


def best_lengths(records: Iterable[ResultRecord], plan_records: Iterable[Mapping]) -> dict[tuple, int]:
    """(domain, split, problem) -> length of the shortest validated plan known (planning stage or
    any method's solved-and-validated record)."""
    best: dict[tuple, int] = {}

    def offer(key: tuple, length) -> None:
        if isinstance(length, int) and length >= 0 and (key not in best or length < best[key]):
            best[key] = length

    for r in plan_records:
        if r.get("outcome") == "solved" and r.get("validated", True):
            offer((r.get("domain"), r.get("split"), r.get("problem")), r.get("plan_length"))
    for r in plan_records_of(records):
        if r.counts_as_solved:
            offer((r.domain, r.split, r.problem), r.plan_length)
    return best


def quality_table(
    records: Iterable[ResultRecord],
    plan_records: Iterable[Mapping],
    index: Mapping[tuple[str, str], Iterable[str]],
) -> pd.DataFrame:
    """Rows (method, split) over the held-out splits of ``index`` where the method has plan
    records, with columns ``method``, ``split``, ``n`` (problems with a known plan), ``seeds``,
    ``QS``, ``QS_S`` (formatted cells). Empty without plan records."""
    records = list(records)
    latest = plan_records_of(records)
    best = best_lengths(records, plan_records)
    problems: dict[str, list[tuple]] = defaultdict(list)
    for (domain, split), probs in index.items():
        if is_held_out(split):
            problems[split] += [(domain, split, p) for p in sorted(probs) if (domain, split, p) in best]
    solved: dict[tuple, int] = {}
    seeds: dict[str, set[int]] = defaultdict(set)
    ran: set[tuple[str, str]] = set()
    for r in latest:
        seeds[r.method].add(r.seed)
        ran.add((r.method, r.split))
        if r.counts_as_solved and isinstance(r.plan_length, int):
            solved[(r.method, r.seed, r.domain, r.split, r.problem)] = r.plan_length
    rows = []
    for m in method_order(latest):
        for split in sorted(problems, key=split_sort_key):
            probs = problems[split]
            if (m, split) not in ran or not probs:
                continue
            qs, qs_s = [], []
            for s in sorted(seeds[m]):
                ratios = {p: best[p] / max(solved[(m, s, *p)], 1) if best[p] else 1.0
                          for p in probs if (m, s, *p) in solved}
                qs.append(sum(ratios.values()) / len(probs))
                if ratios:
                    qs_s.append(float(np.mean(list(ratios.values()))))
            rows.append(dict(method=m, split=split, n=len(probs), seeds=len(qs),
                             QS=QS.format(*QS.aggregate(qs), runs=len(qs)),
                             QS_S=QS_S.format(*QS_S.aggregate(qs_s), runs=len(qs_s)) if qs_s else DASH))
    return pd.DataFrame(rows, columns=["method", "split", "n", "seeds", "QS", "QS_S"])


def render(table: pd.DataFrame) -> list[str]:
    """Markdown lines of the section: methods as rows, one QS and one QS_S column per split."""
    out = ["## Plan quality", ""]
    if table.empty:
        out.append("No validated plans of plan methods on held-out splits yet.")
        return out
    splits = list(dict.fromkeys(table["split"]))
    wide = []
    for m in dict.fromkeys(table["method"]):
        row: dict[str, str] = {"method": m}
        for s in splits:
            hit = table[(table["method"] == m) & (table["split"] == s)]
            row[f"{s} QS"] = hit.iloc[0]["QS"] if len(hit) else DASH
            row[f"{s} QS_S"] = hit.iloc[0]["QS_S"] if len(hit) else DASH
        wide.append(row)
    n = {s: int(table[table["split"] == s]["n"].iloc[0]) for s in splits}
    out += [DESCRIPTION + " " + ", ".join(f"n({s}) = {n[s]}" for s in splits) + ".", "",
            md_table(pd.DataFrame(wide))]
    return out


__all__: Sequence[str] = ["best_lengths", "quality_table", "render"]
