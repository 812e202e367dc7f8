#!/usr/bin/env python3
"""Lists the functions of the workspace's non-test Rust code longer than a limit (150 lines).

Usage: scripts/long_functions.py [LIMIT] — prints `LINES path:line name` for each, longest
first, and exits 1 when there is any. Test code (`tests/`, `benches/`, `#[cfg(test)]` modules)
is left out. Braces are counted outside strings, characters and comments, which is all a
function's extent needs; a `fn` inside another is counted in its parent too.
"""

import re
import sys
from pathlib import Path

from scan_report import report
FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)")


def code_only(text):
    """The text with strings, character literals and comments blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif re.match(r'r#*"', text[i:i + 8]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = len(re.match(r"r(#*)", text[i:]).group(1))
            end = '"' + "#" * hashes
            j = text.find(end, i + 2 + hashes)
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", text[i:i + 12]):
            m = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", text[i:i + 12])
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    lines = code_only(path.read_text(encoding="utf-8")).split("\n")
    test_depth = None
    depth = 0
    open_fns = []  # (name, start line, depth at which its body opened)
    pending = None
    cfg_test = False
    for number, line in enumerate(lines, 1):
        if re.match(r"\s*#\[cfg\(test\)\]", line):
            cfg_test = True
        m = FN.match(line)
        if m and test_depth is None:
            pending = (m.group(1), number)
        for c in line:
            if c == "{":
                depth += 1
                if cfg_test and test_depth is None:
                    test_depth, cfg_test = depth, False
                elif pending:
                    open_fns.append((pending[0], pending[1], depth))
                    pending = None
            elif c == "}":
                if open_fns and open_fns[-1][2] == depth:
                    name, start, _ = open_fns.pop()
                    yield name, start, number - start + 1
                if test_depth == depth:
                    test_depth = None
                depth -= 1
            elif c == ";" and pending:
                pending = None  # a declaration without a body
        if cfg_test and line.strip() and not line.strip().startswith("#") and "{" not in line:
            cfg_test = False if line.strip().endswith(";") else cfg_test


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    root = Path(__file__).resolve().parent.parent
    found = []
    for path in sorted(root.glob("crates/*/*/src/**/*.rs")):
        for name, start, length in functions(path):
            if length > limit:
                found.append((length, f"{path.relative_to(root)}:{start}", name))
    lines = [f"{length:5} {where} {name}" for length, where, name in sorted(found, reverse=True)]
    report(lines, f"functions over {limit} lines outside tests")


if __name__ == "__main__":
    main()
