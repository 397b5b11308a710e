#!/usr/bin/env python
"""Scaling of the width-based policies' lookaheads and encodings
(docs/cost.md#lookaheads-and-encodings-of-the-width-based-policies), on real instances of the IPC
2023 Learning Track benchmarks (a folder outside the repository, passed by path with ``--suite``:
docs/params.md#third-party-folders; never copied).

Part 1, IW(1) vs AIW(1): from the initial state of problems of growing size (training/easy, then
testing/easy, medium, hard), one lookahead each: objects, fluent atoms true initially, nodes
expanded, successors generated, candidates (jumps), novelty-table size and seconds. The paper's
claim (Section 3): IW(1) is linear in the number of atoms, which grows polynomially with the
objects; AIW(1)'s novelty table is bounded by O(t^(m-1) |O|), linear in the objects.
A lookahead past ``--time-limit`` CPU seconds is recorded as a timeout.

Part 2, AD vs External for the same tree: for an AIW(1) tree per problem, one R-GNN forward (and
backward) pass of an untrained Q-function (``--embedding`` / ``--layers``) under each encoding:
seconds (median of ``--repeats``) and peak memory. Memory is measured in a fresh child process per
(problem, encoding) as the growth of the peak resident set size over the process's size after
building the inputs (``resource.getrusage``), so that one measurement cannot hide another. The
paper (Section 5): AD needs one graph for the whole tree, External one per candidate; their IW
models went from more than 24 GB to at most 4 GB of GPU memory.

Example::

    python benchmarks/bench_lookahead.py --json /tmp/lookahead.json --markdown /tmp/lookahead.md
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = ROOT.parent / "shared" / "benchmarks" / "ipc2023-learning"
FOLDERS = ("training/easy", "testing/easy", "testing/medium", "testing/hard")


def problem_ladder(suite: Path, domain: str, per_domain: int) -> list[Path]:
    """``per_domain`` problem files of ``domain`` spread over the size range (by object count)."""
    from planarena.core.pddl import count_objects, read_pddl_file

    files = [f for folder in FOLDERS for f in sorted((suite / domain / folder).glob("*.pddl"))]
    sized = sorted(((count_objects(read_pddl_file(f, "problem")), str(f)) for f in files))
    from planarena.methods.rgnn_policies.measure import spread

    return [Path(f) for _, f in spread(sized, per_domain)]


def lookahead_row(domain_file: Path, problem_file: Path, kind: str, time_limit: float) -> dict:
    """One lookahead from the initial state (:func:`planarena.methods.rgnn_policies.measure.lookahead_row`),
    in this script's row format (``timeout``, ``seconds``: CPU seconds)."""
    from planarena.methods.rgnn_policies.measure import lookahead_row as measure

    row = measure(domain_file, problem_file, kind, time_limit)
    out = {"domain": problem_file.parents[2].name,
           "problem": f"{problem_file.parent.parent.name}/{problem_file.parent.name}/{problem_file.stem}",
           "kind": kind, "objects": row["objects"], "atoms": row["atoms"], "parse_s": row["parse_s"],
           "timeout": not row["completed"], "seconds": row["cpu_s"]}
    if row["completed"]:
        out.update({k: row[k] for k in ("expanded", "generated", "novelty_features", "max_depth")},
                   jumps=row["jumps"])
    return out


def forward_child(domain_file: str, problem_file: str, encoding: str, embedding: int, layers: int, repeats: int) -> dict:
    """Run in a fresh process: one AIW(1) tree, one Q-network, forward + backward timings and the
    peak-RSS growth (MiB) over the process after the inputs were built."""
    import torch

    from planarena.core.pddl import load_problem
    from planarena.methods.rgnn_policies.encodings import PolicyNetwork
    from planarena.methods.rgnn_policies.policy import LookaheadCache
    from planarena.methods.rgnn_policies.lookahead import object_types

    torch.set_num_threads(1)
    problem = load_problem(domain_file, problem_file)
    cache = LookaheadCache("aiw", with_deltas=encoding == "ad")
    cache.add(problem, object_types(problem_file))
    state, goal = problem.get_initial_state(), problem.get_goal_condition()
    tree, deltas = cache.get(state)
    torch.manual_seed(0)
    net = PolicyNetwork(problem.get_domain(), encoding, embedding, layers)
    item = [(state, goal, tree, deltas)]
    with torch.no_grad():
        net.q_values(item)  # warm-up (lazy initialisation)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fwd, bwd = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        q = net.q_values(item)[0]
        t1 = time.perf_counter()
        q.sum().backward()
        t2 = time.perf_counter()
        net.zero_grad()
        fwd.append(t1 - t0)
        bwd.append(t2 - t1)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"jumps": len(tree.jumps), "forward_s": round(statistics.median(fwd), 4),
            "backward_s": round(statistics.median(bwd), 4), "peak_growth_mib": round((peak - base) / 1024, 1),
            "graphs": 1 if encoding == "ad" else 1 + len(tree.jumps)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", type=Path, default=DEFAULT_SUITE)
    ap.add_argument("--domains", nargs="+", default=["blocksworld", "miconic", "spanner"])
    ap.add_argument("--per-domain", type=int, default=6)
    ap.add_argument("--time-limit", type=float, default=60.0, help="CPU seconds per lookahead")
    ap.add_argument("--forward-max-jumps", type=int, default=400,
                    help="part 2 only for trees of at most this many candidates (External = one graph each)")
    ap.add_argument("--embedding", type=int, default=32)
    ap.add_argument("--layers", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--_child", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child:
        d, p, enc, k, layers, reps = args._child
        print(json.dumps(forward_child(d, p, enc, int(k), int(layers), int(reps))))
        return 0
    if not args.suite.is_dir():
        print(f"bench_lookahead: {args.suite} not found (the IPC 2023 Learning Track benchmarks, "
              "passed by path with --suite: docs/params.md#third-party-folders)", file=sys.stderr)
        return 2
    lookaheads, forwards = [], []
    for domain in args.domains:
        dom_file = args.suite / domain / "domain.pddl"
        for f in problem_ladder(args.suite, domain, args.per_domain):
            for kind in ("iw", "aiw"):
                row = lookahead_row(dom_file, f, kind, args.time_limit)
                lookaheads.append(row)
                print(json.dumps(row), flush=True)
            aiw = lookaheads[-1]
            if aiw.get("timeout") or aiw["jumps"] > args.forward_max_jumps or aiw["jumps"] == 0:
                continue
            for enc in ("ad", "ext"):
                cmd = [sys.executable, __file__, "--_child", str(dom_file), str(f), enc, str(args.embedding),
                       str(args.layers), str(args.repeats)]
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
                if out.returncode != 0:
                    row = {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
                else:
                    row = json.loads(out.stdout.strip().splitlines()[-1])
                row = {"domain": domain, "problem": aiw["problem"], "objects": aiw["objects"], "encoding": enc, **row}
                forwards.append(row)
                print(json.dumps(row), flush=True)
    result = {"settings": {"embedding": args.embedding, "layers": args.layers, "repeats": args.repeats,
                           "time_limit": args.time_limit}, "lookahead": lookaheads, "forward": forwards}
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    if args.markdown:
        args.markdown.write_text(markdown(result))
    return 0


def markdown(result: dict) -> str:
    """The two tables of docs/cost.md#lookaheads-and-encodings-of-the-width-based-policies (IW vs
    AIW per problem; AD vs Ext per tree)."""
    out = ["| domain | problem | objects | atoms in s0 | IW(1) expanded | IW(1) novelty | IW(1) s | AIW(1) expanded | "
           "AIW(1) novelty | AIW(1) s |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows = result["lookahead"]
    for iw, aiw in zip(rows[0::2], rows[1::2]):
        def cells(r):
            return ["timeout", "–", f">{r['seconds']}"] if r.get("timeout") else [
                f"{r['expanded']:,}", f"{r['novelty_features']:,}", f"{r['seconds']:.3f}"]
        out.append("| " + " | ".join([iw["domain"], iw["problem"], str(iw["objects"]), str(iw["atoms"]), *cells(iw),
                                      *cells(aiw)]) + " |")
    out += ["", "| domain | problem | objects | candidates | AD forward s | AD backward s | AD peak MiB | "
            "Ext graphs | Ext forward s | Ext backward s | Ext peak MiB |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    fw = result["forward"]
    for ad, ext in zip(fw[0::2], fw[1::2]):
        if "error" in ad or "error" in ext:
            out.append(f"| {ad['domain']} | {ad['problem']} | {ad['objects']} | error: {ad.get('error') or ext.get('error')} |")
            continue
        out.append("| " + " | ".join(str(x) for x in [ad["domain"], ad["problem"], ad["objects"], ad["jumps"],
                                                      ad["forward_s"], ad["backward_s"], ad["peak_growth_mib"],
                                                      ext["graphs"], ext["forward_s"], ext["backward_s"],
                                                      ext["peak_growth_mib"]]) + " |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
