"""Declared params keys: a misspelled key stops a run with one line naming the file, the key path
and the nearest declared key, instead of being read as a default.

A declaration is a **key tree**: a dict whose keys are the allowed names and whose values say what
lies below each one:

* :data:`ANY`: a leaf, any value (a scalar, a list, or a mapping whose keys are not checked);
* a dict: a mapping whose keys are declared in turn;
* :class:`Open` ``(tree)``: a mapping whose keys the user chooses (domain names), each value
  following ``tree``; a dict with an :data:`OTHER` entry mixes declared names with chosen ones.

Each module that reads a params section declares it (``SECTION_KEYS`` beside the code that reads
it; the method families in their ``keys`` modules, gathered by :func:`planarena.methods.declared_keys`),
so the declaration moves with the code. :func:`unknown_keys` compares a params tree with a key
tree; :func:`planarena.methods.check_params` applies it to a whole params file (top level, profiles,
method rows) and :func:`planarena.config.load_params` calls that, so every stage and command that
reads params refuses an unknown key.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

#: A leaf of a key tree: any value is accepted below it.
ANY = None
#: In a key tree's dict: every key not declared beside it is a user-chosen name whose value
#: follows this entry's tree (``planners``: ``primary``, ``fallback``, ``splits``, then planner names).
OTHER = "*"


@dataclass(frozen=True)
class Open:
    """A mapping whose keys are user-chosen names (``planners.<name>``, ``schema.generators.<domain>``),
    each value following ``tree`` (a key tree, :data:`ANY` or another :class:`Open`)."""

    tree: Any = ANY


def merge_trees(*trees: Mapping) -> dict:
    """One key tree from several declarations of the same sections (dicts merge recursively; where
    one declares a subtree and another :data:`ANY`, :data:`ANY` wins: the looser declaration)."""
    out: dict = {}
    for tree in trees:
        for key, sub in (tree or {}).items():
            if key in out and isinstance(out[key], dict) and isinstance(sub, dict):
                out[key] = merge_trees(out[key], sub)
            elif key in out and isinstance(out[key], Open) and isinstance(sub, Open) \
                    and isinstance(out[key].tree, dict) and isinstance(sub.tree, dict):
                out[key] = Open(merge_trees(out[key].tree, sub.tree))
            elif key in out and (out[key] is ANY or sub is ANY):
                out[key] = ANY
            else:
                out[key] = sub
    return out


def _distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
    adjacent characters each cost 1 (``modle`` -> ``model`` is 1, as is ``modle`` -> ``mode``)."""
    d = [[max(i, j) if min(i, j) == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def suggestion(key: str, known: Iterable[str]) -> str | None:
    """The declared names nearest to ``key``: those at the smallest edit distance (at most 2, and
    below the key's length), joined by " or " when two tie (``modle``: ``mode`` or ``model``); else
    difflib's nearest (ratio >= 0.6); None when nothing is near."""
    key = str(key)
    names = sorted({str(k) for k in known})
    norm = key.lower().replace("-", "_")
    scored = sorted((_distance(norm, n.lower()), n) for n in names)
    if scored and scored[0][0] <= min(2, max(1, len(key) - 2)):
        best = [n for dist, n in scored if dist == scored[0][0]][:2]
        return "` or `".join(best)
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_keys(node: Any, tree: Any, prefix: tuple = ()) -> list[tuple[tuple, str | None]]:
    """``[(key path, nearest declared name or None), ...]`` of every key of ``node`` that ``tree``
    does not declare, in the order of ``node``. A value that is not a mapping where the tree
    declares one is left to the code that reads it (its type is not this module's concern)."""
    if tree is ANY or not isinstance(node, Mapping):
        return []
    if isinstance(tree, Open):
        out: list = []
        for key, value in node.items():
            out += unknown_keys(value, tree.tree, prefix + (key,))
        return out
    out = []
    for key, value in node.items():
        if key in tree and key != OTHER:
            out += unknown_keys(value, tree[key], prefix + (key,))
        elif OTHER in tree and (isinstance(value, Mapping) or tree[OTHER] is ANY):
            # reserved names, then user-chosen ones (planners.<name>), whose value is a mapping:
            # planners.spilts: [train] is a misspelled reserved name, not a planner
            out += unknown_keys(value, tree[OTHER], prefix + (key,))
        else:
            out.append((prefix + (key,), suggestion(key, [k for k in tree if k != OTHER])))
    return out


def describe(found: list[tuple[tuple, str | None]], limit: int = 4) -> str:
    """``"unknown key `a.b` (did you mean `a.c`?), unknown key `x`"``: one line for up to ``limit``
    keys, then how many more."""
    parts = []
    for path, near in found[:limit]:
        dotted = ".".join(map(str, path))
        stem = ".".join(map(str, path[:-1] + ("",)))
        hint = " (did you mean " + " or ".join(f"`{stem}{n}`" for n in near.split("` or `")) + "?)" if near else ""
        parts.append(f"unknown key `{dotted}`{hint}")
    more = f", and {len(found) - limit} more" if len(found) > limit else ""
    return ", ".join(parts) + more




# ------------------------------------------------------------------------------------------------
# The sections shared by every family (each comment names the code that reads the section; tests
# check the lists that code keeps itself against these: embed_wl / embed_text DEFAULTS, the
# executor's keys, Fast Downward's CONFIG_KEYS, suites.dir.split's SPLIT_DEFAULTS)
# ------------------------------------------------------------------------------------------------

#: Keys of every ``methods.<row>`` block (:mod:`planarena.methods`, :class:`planarena.methods.base.Method`).
ROW_COMMON = frozenset({"method", "run", "untrained", "twin_of", "seeds"})
#: Keys of a row that plans (:mod:`planarena.protocols.coverage`: its splits and CPU-s limit).
ROW_PLAN = frozenset({"splits", "time_limit"})

_SPLIT_COUNTS = {"train": ANY, "validation": ANY, "interpolation": ANY, "extrapolation": ANY}
_GENERATE = {"seed": ANY, "domains": Open({"sizes": ANY, "count": ANY})}
_IMPORTED_SUITE = {"path": ANY, "domains": ANY, "max_per_split": ANY, "generate": _GENERATE}

#: The shared sections: top-level scalars and the sections no family owns.
CORE_KEYS: dict = {
    "profile": ANY, "run_all": ANY, "run_twins": ANY, "seed": ANY, "jobs": ANY, "suite": ANY,
    # planarena.core.executor (EXECUTOR_KEYS, SLURM_KEYS)
    "executor": {"address": ANY, "retries": ANY, "connect_timeout": ANY, "memory_limit": ANY, "min_units": ANY,
                 "slurm": {"queue": ANY, "account": ANY, "cores": ANY, "processes": ANY, "memory": ANY,
                           "walltime": ANY, "jobs": ANY, "gpus": ANY, "job_extra_directives": ANY,
                           "job_script_prologue": ANY, "local_directory": ANY, "python": ANY, "interface": ANY}},
    # planarena.datasets.suites (generated, satr, ipc2023) and planarena.datasets.folders (dir)
    "suites": {
        "generated": {"domains": Open({"sizes": _SPLIT_COUNTS, "count": _SPLIT_COUNTS})},
        "satr": _IMPORTED_SUITE,
        "ipc2023": _IMPORTED_SUITE,
        "dir": {"path": ANY, "domains": ANY, "max_per_split": ANY, "max_train": ANY,
                "split": {"train_range": ANY, "interpolation_every": ANY, "validation": ANY}},
    },
    # planarena.datasets.planning (planners.<name>: CONFIG_KEYS)
    "planners": {"primary": ANY, "fallback": ANY, "splits": ANY,
                 "*": {"search": ANY, "alias": ANY, "options": ANY, "driver_options": ANY, "time_limit": ANY,
                       "memory_limit_mb": ANY}},
    # planarena.features.wl (DEFAULTS)
    "embed_wl": {"graph": ANY, "iterations": ANY, "feature_algorithm": ANY, "multiset_hash": ANY, "pruning": ANY,
                 "collect_goals": ANY, "batch_states": ANY, "max_features": ANY},
    # planarena.features.text.encoder (DEFAULTS)
    "embed_text": {"encoder": ANY, "batch_size": ANY, "device": ANY, "max_seq_length": ANY, "splits": ANY},
    # planarena.protocols.coverage, planarena.runner
    "evaluation": {"splits": ANY, "seeds": ANY, "time_limit": ANY, "lockstep_batch": ANY},
    # planarena.datasets.acp (generators.<domain>: configs are generator kwargs)
    "acp": {"source": ANY, "acpbench": {"path": ANY}, "domains": ANY, "encoders": ANY, "problems": ANY,
            "max_attempts": ANY, "min_states": ANY, "max_states": ANY, "max_plans": ANY, "space_transitions": ANY,
            "timeout_s": ANY,
            "generators": Open({"configs": ANY, "problems": ANY, "max_attempts": ANY, "min_states": ANY,
                                "max_states": ANY})},
    # planarena.datasets.schema, planarena.protocols.schema (generators.<domain>: train / test are kwargs)
    "schema": {"domains": ANY, "test_states": ANY, "eval_time_limit": ANY, "plan_time_limit": ANY,
               "max_free_groundings": ANY, "common_states": {"problems": ANY, "per_problem": ANY},
               "max_walk_steps": ANY, "noise_n_min": ANY,
               "generators": Open({"train": ANY, "test": ANY, "n_train": ANY, "n_validation": ANY,
                                   "restart_every": ANY})},
    # planarena.report
    "report": {"paper_runs": ANY, "description": ANY},
}


__all__ = ["ANY", "CORE_KEYS", "OTHER", "Open", "ROW_COMMON", "ROW_PLAN", "describe", "merge_trees", "suggestion", "unknown_keys"]
