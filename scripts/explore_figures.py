#!/usr/bin/env python3
"""The explorer's figures for one site, read off its folder and a baseline crawl's report.

    scripts/explore_figures.py APP_FOLDER EXPLORE_REPORT CRAWL_REPORT [NAME]

APP_FOLDER is the explored app's folder (`DATA/apps/APP`), EXPLORE_REPORT the `--json` of `atlas
explore`, CRAWL_REPORT the `--json` of `atlas crawl` given the explorer's page loads. Prints one
Markdown row and a JSON line (for the README's table):

- templates: a template for the figures is an address's path with its numeric and hash-like
  segments abstracted (`/orders/7` -> `/orders/{id}`; a hash: eight or more hexadecimal digits,
  dashes allowed, a digit among them), HTML pages only. The explorer's are those of its states'
  and their examples' addresses (the folder's `.atlas/explore.json`), the crawl's those of the
  HTML pages it loaded on the start's origin. Coverage: the share of the crawl's templates the
  explorer has.
- own input: states whose address differs from another state's only in values the explorer typed
  (its test values, or a value that begins or ends with one: an editor's text typed into), in a
  repeated parameter, or in a volatile one (a date, an epoch, a UUID, a long token; a session,
  tracker or cache-buster name). Goal 0. Checked over the folder, not the run's report.
- states a template: the most state folders one template has (goal at most 10), and how many
  templates have more than 10.
This measure was fixed before the runs it reports, and names no site.
"""

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

TYPED = {
    "test", "测试", "a", "1", "0", "explorer", "explorer@example.com", "13800000000",
    "https://example.com/", "#336699", "2026-01-31", "12:00", "2026-01-31T12:00", "2026-01",
    "2026-W05", "Explorer#2026",
}
VOLATILE_NAMES = {
    "sid", "session", "sessionid", "session_id", "jsessionid", "phpsessid", "token", "csrf",
    "csrftoken", "_csrf", "_", "ts", "timestamp", "time", "nocache", "cachebuster", "cb", "rnd",
    "random", "nonce", "fbclid", "gclid", "msclkid",
}
HEX = re.compile(r"^[0-9a-fA-F-]{8,}$")


def is_id(segment):
    if segment.isdigit():
        return True
    hexdigits = sum(c in "0123456789abcdefABCDEF" for c in segment)
    return hexdigits >= 8 and any(c.isdigit() for c in segment) and bool(HEX.match(segment))


def template(url):
    return "/".join("{id}" if is_id(s) else s for s in urlsplit(url).path.split("/"))


def volatile(name, value):
    name = name.lower()
    if name in VOLATILE_NAMES or name.startswith("utm_"):
        return True
    if re.match(r"^\d{4}[-/]\d{2}[-/]\d{2}", value) or (value.isdigit() and 9 <= len(value) <= 13):
        return True
    if len(value) >= 16 and HEX.match(value):
        return True
    return len(value) >= 20 and any(c.isdigit() for c in value) and re.match(r"^[\w.=-]+$", value) is not None


def typed(value):
    return value in TYPED or any(value.startswith(t) or value.endswith(t) for t in ("test", "测试"))


def own_input_key(url):
    parts = urlsplit(url)
    pairs = set()
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if volatile(name, value):
            continue
        pairs.add((name, "{typed}" if typed(value) else value))
    return (parts.path, tuple(sorted(pairs)))


def main():
    folder, explore_report, crawl_report = (Path(a) for a in sys.argv[1:4])
    name = sys.argv[4] if len(sys.argv) > 4 else folder.name
    saved = json.loads((folder / ".atlas" / "explore.json").read_text())
    states = [s for s in saved["states"] if not s.get("gone")]
    explored = json.loads(explore_report.read_text())
    crawled = json.loads(crawl_report.read_text())
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(saved["start"]))

    mine = set()
    for s in states:
        mine.add(template(s["url"]))
        mine.update(template(e["url"]) for e in s.get("examples", []))
    theirs = {
        template(p["url"])
        for p in crawled["pages"]
        if "html" in p["content_type"] and p["url"].startswith(origin)
    }
    coverage = len(mine & theirs) / max(len(theirs), 1)

    groups = defaultdict(list)
    for s in states:
        groups[own_input_key(s["url"])].append(s["url"])
    own_input = sum(len(v) - 1 for v in groups.values())
    per_template = Counter(template(s["url"]) for s in states)
    most = max(per_template.values(), default=0)
    over = [t for t, n in per_template.items() if n > 10]

    figures = {
        "site": name,
        "loads": explored.get("loads"),
        "states": len(states),
        "examples": sum(len(s.get("examples", [])) for s in states),
        "explorer_templates": len(mine),
        "crawl_templates": len(theirs),
        "crawl_templates_found": len(mine & theirs),
        "coverage": round(coverage, 3),
        "explorer_only_templates": len(mine - theirs),
        "own_input_states": own_input,
        "most_states_a_template": most,
        "templates_over_10": len(over),
        "explore_seconds": round(explored.get("seconds", 0.0), 1),
        "crawl_seconds": round(crawled.get("seconds", 0.0), 1),
        "stopped_by": explored.get("stopped_by"),
        "missed": sorted(theirs - mine)[:10],
        "own_input": [v for v in groups.values() if len(v) > 1][:5],
    }
    print(
        f"| {name} | {figures['loads']} | {figures['states']} ({figures['examples']} examples) | "
        f"{figures['crawl_templates_found']} of {figures['crawl_templates']} ({coverage:.3f}); "
        f"{figures['explorer_only_templates']} more | {own_input} | {most} | "
        f"{figures['explore_seconds']} s / {figures['crawl_seconds']} s |"
    )
    print(json.dumps(figures, ensure_ascii=False))


if __name__ == "__main__":
    main()
