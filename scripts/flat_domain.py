#!/usr/bin/env python
"""Write a domain folder the way the field publishes one: ``domain.pddl`` beside ``pfile1.pddl``
... ``pfileN.pddl`` (growing in size), from a pypddl-datasets generator. It is the input of the
"your own domain" run (``dvc exp run -S suite=/abs/path/to/folder``), regenerable from this script:

    python scripts/flat_domain.py zenotravel /tmp/zenotravel --count 20

Zenotravel (IPC 2002) is used by no suite of planarena. Problem i has 2 + i // 6 cities,
1 + i // 10 planes and 2 + i // 2 people (generator seed i). Hanoi is the classic IPC-style flat
folder: problem i has i discs on 3 pegs (``--count 30``: 1-30 discs; optimal plans of 2**i - 1
steps, so only the small ones get reference plans); the smoke-profile cost check of
``benchmarks/own_domain_smoke.sh`` runs on it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from planarena.datasets.suites import _domain_text, generator_module

#: domain -> (domain file of the generator package, problem i -> generator keyword arguments)
DOMAINS = {
    "zenotravel": ("zenotravel/domain.pddl",
                   lambda i: {"num_cities": 2 + i // 6, "num_planes": 1 + i // 10, "num_people": 2 + i // 2, "seed": i}),
    "hanoi": ("planarena.datasets.generators.hanoi/domain.pddl", lambda i: {"num_discs": i}),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("domain", choices=sorted(DOMAINS))
    ap.add_argument("out", type=Path)
    ap.add_argument("--count", type=int, default=20)
    args = ap.parse_args()
    resource, kwargs = DOMAINS[args.domain]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "domain.pddl").write_text(_domain_text(resource))
    gen = generator_module(resource.split("/")[0])
    for i in range(1, args.count + 1):
        (args.out / f"pfile{i}.pddl").write_text(gen.make_problem(**kwargs(i)))
    print(f"{args.out}: domain.pddl and pfile1..pfile{args.count}.pddl")


if __name__ == "__main__":
    main()
