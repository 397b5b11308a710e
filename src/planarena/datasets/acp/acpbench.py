"""Problems of the ACP datasets taken from ACPBench's published PDDL (``acp.source: acpbench``).

EmbedPlan's transition datasets are "derived from ACPBench domains" (Section 3 "Data"; Appendix C,
Table 7: 5 to 10 problems per domain, 5,795 to 49,204 states per domain); its processed data were
not released. With ``acp.source: acpbench`` the ``acp_data`` stage reads the problems of ACPBench's
PDDL folder (``acp.acpbench.path``: one folder per domain holding ``domain.pddl`` and problem files
named ``<base problem>__<hash>.pddl``) instead of generating them. ACPBench publishes several
variants of each base problem (same objects, different initial states or goals, one per question it
asks), so:

* **Order.** :func:`candidates` lists a domain's problem files grouped by base problem (the file
  name before ``__``; base problems sorted by name, case-insensitively, files by name within one)
  and interleaves the groups round-robin: the first file of every base problem, then the second,
  and so on. The stage expands them in that order and keeps the first ``problems`` whose state space
  lies within ``[min_states, max_states]``, so the kept problems spread over as many base problems
  (object sets: what the Extrapolation split separates) as the bounds allow.
* **Bounds.** Variants of one base problem can differ widely in reachable states (Floortile:
  12 to more than 60,000), so every file is expanded (pymimir stops past ``max_states``, which keeps
  a too large one cheap) and judged on its own.

The domain's own ``domain.pddl`` is used as published. Nothing is copied into the repository: the
stage writes the kept problem files under ``data/acp/<domain>/problems/`` like generated ones.
"""

from __future__ import annotations

from pathlib import Path

from planarena.config import ConfigError, get

#: Param holding ACPBench's PDDL folder (relative paths are relative to the repository root).
PATH_PARAM = "acp.acpbench.path"


def base_problem(path: Path) -> str:
    """The base problem of an ACPBench problem file: its name before ``__`` (``BW-rand-5`` of
    ``BW-rand-5__1857e20a48.pddl``), or the whole stem when there is no ``__``."""
    return path.stem.split("__", 1)[0]


def acpbench_root(params: dict, repo_root: Path | None = None) -> Path:
    """ACPBench's PDDL folder from ``acp.acpbench.path``.

    Raises:
        ConfigError: the param is unset or the folder does not exist (one line naming both).
    """
    raw = get(params, PATH_PARAM, None)
    if not raw:
        raise ConfigError(f"params: acp.source is acpbench: set `{PATH_PARAM}` to ACPBench's pddl folder")
    root = Path(str(raw)).expanduser()
    if not root.is_absolute() and repo_root is not None:
        root = repo_root / root
    if not root.is_dir():
        raise ConfigError(f"params: {PATH_PARAM}: {root} is not a folder (ACPBench's pddl folder, one "
                          "sub-folder per domain)")
    return root


def domain_folder(root: Path, domain: str) -> Path:
    """``root/<domain>``, which must hold a ``domain.pddl``.

    Raises:
        ConfigError: no such domain folder (lists the folders that have a ``domain.pddl``).
    """
    folder = root / domain
    if not (folder / "domain.pddl").is_file():
        known = sorted(p.parent.name for p in root.glob("*/domain.pddl"))
        raise ConfigError(f"params: acp.domains: {domain!r} has no {folder / 'domain.pddl'}; "
                          f"ACPBench domains under {root}: {known}")
    return folder


def candidates(folder: Path) -> list[Path]:
    """A domain folder's problem files (every ``*.pddl`` but ``domain.pddl``) in the stage's order:
    base problems interleaved round-robin (see the module docstring).

    Raises:
        ConfigError: the folder has no problem file.
    """
    groups: dict[str, list[Path]] = {}
    for p in sorted(folder.glob("*.pddl")):
        if p.name != "domain.pddl":
            groups.setdefault(base_problem(p), []).append(p)
    if not groups:
        raise ConfigError(f"{folder}: no problem file (*.pddl besides domain.pddl)")
    order = sorted(groups, key=lambda b: (b.lower(), b))
    out: list[Path] = []
    for i in range(max(len(g) for g in groups.values())):
        out += [groups[b][i] for b in order if i < len(groups[b])]
    return out


__all__ = ["PATH_PARAM", "acpbench_root", "base_problem", "candidates", "domain_folder"]
