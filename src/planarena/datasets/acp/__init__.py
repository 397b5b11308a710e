"""ACPBench transition datasets for EmbedPlan (the ``acp`` stage).

EmbedPlan ("Textual Planning with Explicit Latent Transitions", docs/papers/embedplan.md) learns
next-state prediction from (state, ground action, successor) triples extracted from up to 100
optimal plans per problem, over nine ACPBench domains (Section 3 "Data"; Appendix C, Table 7). Its
Hit@k protocol ranks the true successor against a pool of states *of the same problem*, and its
Plan-Variant protocol (Appendix A.2) needs several distinct optimal plans per problem. This package
builds such datasets offline:

1. **Problems.** Per domain, problems come from the ``pypddl-datasets`` generators (IPC generators
   ported to Python; the same ones :mod:`planarena.datasets.suites` calls) with the generator keyword
   arguments of ``acp.generators.<domain>.configs`` (cycled over problems) and a per-problem seed
   derived from the top-level ``seed``. Written to ``data/acp/<domain>/domain.pddl`` and
   ``data/acp/<domain>/problems/<problem>.pddl``.
2. **State space.** pymimir expands the full reachable state space (breadth first, stopping as soon
   as ``acp.max_states`` is exceeded) and labels every state with its unit-cost goal distance. A
   problem whose state space is too large (or smaller than ``acp.min_states``), which has no
   reachable goal, whose initial state already is a goal, or whose expansion times out is *skipped*
   with its reason in ``summary.json``; the stage never stops for one problem. Problems are drawn
   until ``problems`` are kept or ``max_attempts`` were drawn.
3. **Optimal plans.** An optimal plan follows edges ``s -a-> s'`` with ``d(s') = d(s) - 1`` from the
   initial state to a goal state. Their number is counted exactly by dynamic programming over this
   DAG; up to ``acp.max_plans`` distinct ones are kept (all of them when there are few enough, else
   distinct plan ranks drawn uniformly at random with a seeded RNG and unranked through the path
   counts), in rank order.
4. **Files.** One gzipped JSON per kept problem (format: :mod:`.records`), ``summary.json`` per domain (the
   columns of Table 7 plus skipped problems) and ``data/acp/manifest.json``.

Modules: :mod:`.generators` (domains, generator settings, seeds and names: step 1),
:mod:`.space` (state space, optimal plans and one problem's record with pymimir: steps 2-3),
:mod:`.records` (the file format, writing and the loaders for model code: step 4),
:mod:`.stage` (the ``acp_data`` stage, :func:`run_stage`). Every public name is re-exported here.

Loaders for model code: :class:`ProblemTransitions`, :func:`load_problem`,
:func:`load_domain_dataset`, :func:`domains_available`.
"""

from planarena.datasets.acp.generators import (
    DOMAINS,
    GEN_ROOT,
    domain_settings,
    domain_text,
    generate_problem_text,
    problem_name,
    problem_seed,
)
from planarena.datasets.acp.records import (
    FILE_KEYS,
    ProblemTransitions,
    cached_record,
    domains_available,
    load_domain_dataset,
    load_problem,
    write_problem_record,
)
from planarena.datasets.acp.space import (
    SkipProblem,
    StateSpace,
    build_problem_record,
    count_optimal_plans,
    expand_state_space,
    optimal_plan_dag,
    parse_domain,
    parse_problem,
    select_plan_ranks,
    unrank_plan,
)
from planarena.datasets.acp.stage import build_domain, run_stage

__all__ = [
    "DOMAINS",
    "FILE_KEYS",
    "GEN_ROOT",
    "ProblemTransitions",
    "SkipProblem",
    "StateSpace",
    "build_domain",
    "build_problem_record",
    "cached_record",
    "count_optimal_plans",
    "domain_settings",
    "domain_text",
    "domains_available",
    "expand_state_space",
    "generate_problem_text",
    "load_domain_dataset",
    "load_problem",
    "optimal_plan_dag",
    "parse_domain",
    "parse_problem",
    "problem_name",
    "problem_seed",
    "run_stage",
    "select_plan_ranks",
    "unrank_plan",
    "write_problem_record",
]
