"""Tallies the pre-trust runs re-judged with today's judge (issue 62)."""
import json, sys
from collections import defaultdict

def same(a, b):
    if a is None or b is None:
        return False
    ka, kb = a.get("action", a.get("_metadata")), b.get("action", b.get("_metadata"))
    if a.get("_metadata") == "finish" or b.get("_metadata") == "finish":
        return a.get("_metadata") == b.get("_metadata")
    if ka != kb:
        return False
    if "element" in a and "element" in b:
        return all(abs(x - y) <= 3 for x, y in zip(a["element"], b["element"]))
    if "text" in a or "text" in b:
        return a.get("text") == b.get("text")
    return True

runs = json.load(open(sys.argv[1]))["runs"]
alone = {(r["app"], r["task"]): r for r in runs if r["condition"] == "model_only"}
done = {k for k, r in alone.items() if r["succeeded"]}
totals = defaultdict(lambda: defaultdict(int))
per_app = defaultdict(lambda: defaultdict(int))
for r in runs:
    key = (r["app"], r["task"])
    if r["condition"] == "model_only" or key not in done:
        continue
    t = totals[r["condition"]]
    a = per_app[(r["condition"], r["app"])]
    t["runs"] += 1; t["lost"] += not r["succeeded"]
    t["calls"] += r["model_calls"]; t["alone_calls"] += alone[key]["model_calls"]
    model_steps = [(s["screen"], s["action"]) for s in alone[key]["rejudge"]]
    for s in r["rejudge"]:
        if not s["graph"]:
            continue
        t["fast"] += 1
        if s["judged"] is not None:
            t["judged"] += 1; a["judged"] += 1
            t["wrong"] += not s["judged"]; a["wrong"] += not s["judged"]
        else:
            t["unjudged"] += 1
            there = [act for sc, act in model_steps if sc == s["screen"]]
            if there:
                t["compared"] += 1
                t["agreeing"] += any(same(act, s["action"]) for act in there)
    t["old_wrong"] += r["wrong_fast_path_steps"]
for c, t in sorted(totals.items()):
    prec = 1 - t["wrong"] / t["judged"] if t["judged"] else float("nan")
    print(f"{c}: runs {t['runs']} lost {t['lost']} calls {t['calls']}/{t['alone_calls']} = {100*t['calls']/t['alone_calls']:.1f}% "
          f"fast {t['fast']} judged {t['judged']} wrong {t['wrong']} precision {prec:.3f} "
          f"unjudged {t['unjudged']} compared {t['compared']} agreeing {t['agreeing']} (old count wrong {t['old_wrong']})")
for (c, app), a in sorted(per_app.items()):
    if a["judged"]:
        print(f"  {c} {app}: judged {a['judged']} precision {1 - a['wrong']/a['judged']:.3f}")
