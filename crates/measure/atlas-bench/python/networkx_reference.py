"""The reference for `atlas bench query`: NetworkX's shortest_path on the same graph and page pairs.

Usage: networkx_reference.py EDGES.tsv PAIRS.tsv
EDGES.tsv has `from<TAB>to<TAB>cost` lines (Atlas's own edge costs), PAIRS.tsv `from<TAB>to` lines.
Prints a JSON report with the latency percentiles in microseconds.
"""
import json
import sys
import time

import networkx as nx


def percentiles(samples_ns):
    samples = sorted(samples_ns)
    at = lambda q: samples[round((len(samples) - 1) * q)] / 1000.0
    return {"p50_us": at(0.5), "p99_us": at(0.99), "mean_us": sum(samples) / len(samples) / 1000.0}


def main():
    graph = nx.DiGraph()
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            source, target, cost = line.rstrip("\n").split("\t")
            cost = float(cost)
            # Parallel actions between the same pages: the cheaper one is the one a planner takes.
            if not graph.has_edge(source, target) or graph[source][target]["cost"] > cost:
                graph.add_edge(source, target, cost=cost)
    with open(sys.argv[2], encoding="utf-8") as f:
        pairs = [tuple(line.rstrip("\n").split("\t")) for line in f if line.strip()]
    for source, target in pairs[:50]:
        nx.shortest_path(graph, source, target)
    unweighted, weighted = [], []
    for source, target in pairs:
        started = time.perf_counter_ns()
        nx.shortest_path(graph, source, target)
        unweighted.append(time.perf_counter_ns() - started)
        started = time.perf_counter_ns()
        nx.shortest_path(graph, source, target, weight="cost")
        weighted.append(time.perf_counter_ns() - started)
    json.dump({"version": nx.__version__, "unweighted": percentiles(unweighted), "weighted": percentiles(weighted)}, sys.stdout)


if __name__ == "__main__":
    main()
