"""Problems of the ACP datasets: the nine domains, generator settings, per-problem seeds and names.

Problems come from the ``pypddl-datasets`` generators (IPC generators ported to Python; the same
ones :mod:`planarena.datasets.suites` calls, through its :func:`~planarena.datasets.suites.generator_module`)
with the keyword arguments of ``acp.generators.<domain>.configs`` and a seed derived from the
top-level ``seed`` (:func:`problem_seed`).
"""

from __future__ import annotations

from planarena.config import ConfigError, get
from planarena.core.io import derive_seed
from planarena.datasets.suites import GEN_ROOT, _domain_text, generator_module

#: ACPBench domain name -> (pypddl-datasets generator package, domain file next to the generator).
#: Logistics uses the IPC-1998 encoding (``domain.pddl``, generator ``style="98"``): ACPBench's
#: ``logistics-c<cities>-s<city size>-p<packages>-a<airplanes>`` tasks have that structure.
DOMAINS: dict[str, tuple[str, str]] = {
    "blocksworld": ("blocks_4", "domain.pddl"),
    "depot": ("depots", "domain.pddl"),
    "ferry": ("ferry", "domain.pddl"),
    "floortile": ("floortile", "domain.pddl"),
    "goldminer": ("goldminer", "domain.pddl"),
    "grid": ("grid", "domain.pddl"),
    "logistics": ("logistics", "domain.pddl"),
    "rovers": ("rovers", "domain.pddl"),
    "satellite": ("satellite", "domain.pddl"),
}


def problem_seed(base_seed: int, domain: str, index: int) -> int:
    """Seed of the ``index``-th problem drawn for ``domain`` (independent of the order of work)."""
    return derive_seed(base_seed, "acp", domain, index)


def problem_name(domain: str, kwargs: dict, index: int) -> str:
    """``<domain>-<integer generator args joined by '-'>-<index:03d>``, e.g. ``blocksworld-5-002``
    (unique per domain through the index)."""
    sizes = [str(v) for v in kwargs.values() if isinstance(v, int) and not isinstance(v, bool)]
    return "-".join([domain, *sizes, f"{index:03d}"])


def domain_text(domain: str) -> str:
    """Text of the domain file of ``domain`` shipped with its pypddl-datasets generator.

    Raises:
        ConfigError: unknown domain (lists the known ones).
    """
    if domain not in DOMAINS:
        raise ConfigError(f"params: acp.domains: unknown domain {domain!r}; known: {sorted(DOMAINS)}")
    pkg, fname = DOMAINS[domain]
    return _domain_text(f"{pkg}/{fname}")


def generate_problem_text(domain: str, kwargs: dict, seed: int) -> str | None:
    """PDDL text of one generated problem (``make_problem(**kwargs, seed=seed)``), or None when the
    generator rejects the arguments.

    Raises:
        ConfigError: unknown domain, or keyword arguments the generator does not accept.
    """
    if domain not in DOMAINS:
        raise ConfigError(f"params: acp.domains: unknown domain {domain!r}; known: {sorted(DOMAINS)}")
    if domain == "logistics" and kwargs.get("style", "98") != "98":
        raise ConfigError("params: acp.generators.logistics: only style '98' (domain.pddl, as ACPBench)")
    gen = generator_module(DOMAINS[domain][0])
    try:
        return gen.make_problem(**kwargs, seed=seed)
    except TypeError as exc:
        raise ConfigError(f"params: acp.generators.{domain}: bad generator arguments {kwargs}: {exc}") from exc


def domain_settings(params: dict, domain: str, need_configs: bool = True) -> dict:
    """Resolved settings of one domain: ``problems`` (kept target), ``max_attempts`` (problems drawn
    at most), ``configs`` (list of generator kwargs, problem ``i`` uses ``configs[i % len]``) and
    the state-space bounds ``min_states`` / ``max_states``.

    ``acp.generators.<domain>`` is ``{problems?: int, max_attempts?: int, min_states?: int,
    max_states?: int, configs: [kwargs, ...]}``; the optional keys default to ``acp.problems``,
    ``acp.max_attempts`` (default: 3 x problems), ``acp.min_states`` (default 0) and
    ``acp.max_states``. Configs with different sizes give problems with different object sets,
    which Extrapolation needs (:mod:`planarena.protocols.pool`: it splits object sets).

    With ``need_configs`` False (``acp.source: acpbench``: problems are read, not generated) the
    configs may be absent and ``max_attempts`` defaults to no limit (every file of the domain).

    Raises:
        ConfigError: the domain has no ``configs`` (when needed) or a bad value (names the param).
    """
    cfg = get(params, f"acp.generators.{domain}", None)
    if not need_configs:
        cfg = {"configs": [], **(cfg if isinstance(cfg, dict) else {})}
        cfg.setdefault("max_attempts", 10**9)
    elif not isinstance(cfg, dict) or not cfg.get("configs"):
        raise ConfigError(f"params: set `acp.generators.{domain}.configs` (a list of generator kwargs)")
    configs = cfg["configs"] or []
    if isinstance(configs, dict):
        configs = [configs]
    if not all(isinstance(c, dict) for c in configs):
        raise ConfigError(f"params: acp.generators.{domain}.configs must be a list of mappings")
    problems = int(cfg.get("problems", get(params, "acp.problems")))
    attempts = int(cfg.get("max_attempts", get(params, "acp.max_attempts", 3 * problems)))
    if problems < 0 or attempts < problems:
        raise ConfigError(f"params: acp: need 0 <= problems ({problems}) <= max_attempts ({attempts}) for {domain}")
    min_states = int(cfg.get("min_states", get(params, "acp.min_states", 0)))
    max_states = int(cfg.get("max_states", get(params, "acp.max_states")))
    if not 0 <= min_states <= max_states:
        raise ConfigError(f"params: acp: need 0 <= min_states ({min_states}) <= max_states ({max_states}) "
                          f"for {domain}")
    return {"problems": problems, "max_attempts": attempts, "configs": [dict(c) for c in configs],
            "min_states": min_states, "max_states": max_states}


__all__ = ["DOMAINS", "GEN_ROOT", "domain_settings", "domain_text", "generate_problem_text", "problem_name",
           "problem_seed"]
