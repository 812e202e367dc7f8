#!/usr/bin/env python3
"""Lists the import circles among the modules of one crate, of any length.

Usage: scripts/import_circles.py — prints `crate: a -> b -> … -> a` for each group of modules
that reach one another through their uses (a strongly connected component of two or more,
shown by one cycle through all of it where there is one, else its members), and exits 1 when
there is any. A module is a file of `src/`; it uses another when it names it by a `crate::…` or
`super::…` path (in a `use` or inline). A crate's root and a module's own parent and children
do not count: a parent re-exports and a child reads its parent by design; nor do unit tests.
"""

import re
from pathlib import Path

from scan_report import report
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


def strongly_connected(edges):
    """The groups of two or more modules that reach one another (Tarjan's algorithm), each
    sorted, in sorted order."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(groups)


def cycle_through(group, edges):
    """A closed walk from the group's first module that shows how its modules use one another:
    the shortest way back to the start from each module in turn, joined."""
    members = set(group)

    def way(a, b):
        seen, frontier = {a: None}, [a]
        while frontier:
            nxt = []
            for v in frontier:
                for w in sorted(edges.get(v, ())):
                    if w in members and w not in seen:
                        seen[w] = v
                        nxt.append(w)
            frontier = nxt
        path, v = [], b
        while v is not None:
            path.append(v)
            v = seen.get(v)
        return path[::-1]

    walk, here = [group[0]], group[0]
    for target in group[1:] + [group[0]]:
        if target in walk[:-1] and target != group[0]:
            continue
        walk += way(here, target)[1:]
        here = target
    return walk


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
        for group in strongly_connected(edges):
            circles.append(f"{src.parent.name}: {' -> '.join('::'.join(m) for m in cycle_through(group, edges))}")
    report(circles, "import circles")


if __name__ == "__main__":
    main()
