#!/usr/bin/env python3
"""Lists pairs of modules of one crate that use each other (a two-file import circle).

Usage: scripts/import_circles.py — prints `crate: a <-> b` for each, and exits 1 when there is
any. A module is a file of `src/`; it uses another when it names it by a `crate::…` or
`super::…` path (in a `use` or inline). A crate's root and a module's own parent and children
do not count: a parent re-exports and a child reads its parent by design; nor do unit tests.
"""

import re
import sys
from pathlib import Path

PATH = re.compile(r"\b(crate|super)((?:::\w+)+)")


def module_of(src, path):
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("lib", "main", "mod"):
        parts.pop()
    return tuple(parts)


def strip_comments(text):
    """The code without comments and without its unit tests (`#[cfg(test)] mod tests`, at the
    end of a file by convention): a test may reach across modules."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.split(r"#\[cfg\(test\)\]\s*mod tests\b", text)[0]


def uses(src, modules, path):
    me = module_of(src, path)
    own = me if path.stem in ("lib", "main", "mod") else me[:-1]  # where `super` starts from
    text = strip_comments(path.read_text(encoding="utf-8"))
    # `use crate::{a, b::c}` groups: each name in the braces is a path of its own.
    for m in re.finditer(r"\b(crate|super)::\{([^}]*)\}", text):
        for name in re.findall(r"\b(\w+)", m.group(2)):
            yield resolve(m.group(1), (name,), own, modules)
    for m in PATH.finditer(text):
        yield resolve(m.group(1), tuple(m.group(2).split("::")[1:]), own, modules)


def resolve(start, names, own, modules):
    base = () if start == "crate" else own[:-1]
    while names and names[0] == "super":
        base, names = base[:-1], names[1:]
    found = None
    for i in range(1, len(names) + 1):
        if base + names[:i] in modules:
            found = base + names[:i]
    return found


def main():
    root = Path(__file__).resolve().parent.parent
    circles = []
    for src in sorted(root.glob("crates/*/*/src")):
        files = {module_of(src, p): p for p in src.rglob("*.rs")}
        modules = set(files)
        edges = {}
        for module, path in files.items():
            edges[module] = {
                u for u in uses(src, modules, path)
                if u and u != module and u[: len(module)] != module and module[: len(u)] != u
            }
        for a in sorted(edges):
            for b in sorted(edges[a]):
                if a < b and a in edges.get(b, ()):
                    circles.append(f"{src.parent.name}: {'::'.join(a)} <-> {'::'.join(b)}")
    for circle in circles:
        print(circle)
    print(f"{len(circles)} import circles between two modules", file=sys.stderr)
    sys.exit(1 if circles else 0)


if __name__ == "__main__":
    main()
