#!/usr/bin/env python3
"""Tabulates `atlas eval agent --json FILE` reports, one or several (several update seeds, say):
per condition and per app, on the tasks the model alone completes, the model calls against the
model alone's, the judged fast-path precision (judged steps), the wrong steps of the condition
beside the model alone's on as many runs, the tasks lost, and the runs that looped ([`loops`]). With several files each figure is
given as its mean and its spread (lowest–highest), so one seed cannot hide what another shows.

    scripts/agent_figures.py A.json [B.json ...] [--per-app]
"""

import json
import sys

CONDITIONS = [
    "graph_new_app", "graph_new_task", "graph_repeat", "graph_repeat_later",
    "after_update", "after_update_repeat", "fleet_first_half", "fleet_second_half",
]


def alone_of(condition):
    return "model_only_updated" if condition.startswith("after_update") else "model_only"


def alone_wrong(report, condition, app=None):
    """The model alone's wrong steps on the runs of `condition` (of `app`, when given): each run
    of a task it completes counts its own run's wrong steps on that task and version."""
    alone = alone_of(condition)
    wrong = {(r["app"], r["task"]): r["mistaken_steps"]
             for r in report["runs"] if r["condition"] == alone and r["succeeded"]}
    return sum(wrong[(r["app"], r["task"])] for r in report["runs"]
               if r["condition"] == condition and (r["app"], r["task"]) in wrong
               and (app is None or r["app"] == app))


def loops(report, condition, app=None):
    """Runs of tasks the model alone completes where the graph took one action on one recorded
    screen a third time (a way may tap twice — a counter, a row chosen then confirmed — but not
    go round), or that ran out of steps with the graph's steps in them."""
    alone = alone_of(condition)
    completed = {(r["app"], r["task"]) for r in report["runs"]
                 if r["condition"] == alone and r["succeeded"]}
    count = 0
    for run in report["runs"]:
        if run["condition"] != condition or (app is not None and run["app"] != app):
            continue
        if (run["app"], run["task"]) not in completed:
            continue
        taken = {}
        for step in run["trail"]:
            screen, chooser, action = step.split(" ", 3)[:3]
            if chooser == "Graph":
                taken[(screen, action)] = taken.get((screen, action), 0) + 1
        out_of_steps = run["ending"] == "max_steps" and run["fast_path_steps"] > 0
        count += int(out_of_steps or any(n >= 3 for n in taken.values()))
    return count


def figures(report, condition, app=None):
    """The figures of one condition (of one app), on the tasks the model alone completes."""
    totals = (report["per_app"].get(app, {}) if app else report["solvable"]).get(condition)
    if not totals or not totals.get("tasks"):
        return None
    judged = totals["judged"]
    return {
        "calls": totals["model_calls"] / max(totals["model_only_calls"], 1),
        "judged": judged["judged"],
        "precision": 1 - judged["judged_wrong"] / judged["judged"] if judged["judged"] else None,
        "wrong": totals["mistaken_steps"],
        "alone_wrong": alone_wrong(report, condition, app),
        "lost": totals["lost"],
        "loops": loops(report, condition, app),
    }


def spread(values, fmt):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    mean = sum(values) / len(values)
    if len(values) == 1 or min(values) == max(values):
        return fmt(mean)
    return f"{fmt(mean)} ({fmt(min(values))}–{fmt(max(values))})"


def row(name, per_file):
    pct = lambda v: f"{100 * v:.1f}%"
    three = lambda v: f"{v:.3f}"
    whole = lambda v: f"{v:.0f}" if v == int(v) else f"{v:.1f}"
    got = [f for f in per_file if f]
    if not got:
        return None
    return (f"| {name} | {spread([f['calls'] for f in got], pct)} "
            f"| {spread([f['precision'] for f in got], three)} "
            f"| {spread([f['judged'] for f in got], whole)} "
            f"| {spread([f['wrong'] for f in got], whole)} "
            f"| {spread([f['alone_wrong'] for f in got], whole)} "
            f"| {spread([f['lost'] for f in got], whole)} "
            f"| {spread([f['loops'] for f in got], whole)} |")


def main(args):
    per_app = "--per-app" in args
    paths = [a for a in args if not a.startswith("--")]
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    reports = [json.load(open(p, encoding="utf-8")) for p in paths]
    head = ("| condition | calls | judged precision | judged steps | wrong steps | model alone's "
            "| lost | runs looping |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    print(f"{len(reports)} report(s): {', '.join(paths)}\n")
    print(head)
    for condition in CONDITIONS:
        line = row(condition, [figures(r, condition) for r in reports])
        if line:
            print(line)
    if per_app:
        apps = sorted({app for r in reports for app in r["per_app"]})
        for app in apps:
            print(f"\n{app}\n\n{head}")
            for condition in CONDITIONS:
                line = row(condition, [figures(r, condition, app) for r in reports])
                if line:
                    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
