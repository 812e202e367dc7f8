#!/usr/bin/env python3
"""Lists the dependencies a workspace crate declares and its code never names.

Usage: scripts/unused_deps.py — prints `crate: dependency (section)` for each, and exits 1 when
there is any. A dependency is used when the crate's code of that section names it as a path
(`dep::…`, `use dep`, `extern crate dep`, `dep!` is a path too): `[dependencies]` in `src/`
and the build script, `[dev-dependencies]` in `src/`, `tests/`, `benches/` and `examples/`
(dev code may also use what `[dependencies]` gives), `[build-dependencies]` in `build.rs`. A
renamed dependency (`package = …`) is looked for by its key, as the code names it; `-` becomes
`_`. Read with Python's tomllib: no cargo, no network, no build.
"""

import re
import tomllib
from pathlib import Path

from scan_report import report

def code_of(crate, places):
    text = []
    for place in places:
        path = crate / place
        files = [path] if path.is_file() else sorted(path.rglob("*.rs")) if path.is_dir() else []
        for f in files:
            # Comments name crates too (in doc links, in prose): they do not use them.
            code = re.sub(r"//[^\n]*", "", f.read_text(encoding="utf-8"))
            text.append(re.sub(r"/\*.*?\*/", "", code, flags=re.S))
    return "\n".join(text)


def names(code, dep):
    ident = dep.replace("-", "_")
    return re.search(rf"(?<![\w:]){re.escape(ident)}(::|\s*;|\s+as\b|!)", code) is not None \
        or re.search(rf"\bextern\s+crate\s+{re.escape(ident)}\b", code) is not None \
        or re.search(rf"\buse\s+{re.escape(ident)}\b", code) is not None


def main():
    root = Path(__file__).resolve().parent.parent
    found = []
    for manifest in sorted(root.glob("crates/*/*/Cargo.toml")):
        crate = manifest.parent
        toml = tomllib.loads(manifest.read_text(encoding="utf-8"))
        sections = {
            "dependencies": ["src", "build.rs"],
            "dev-dependencies": ["src", "tests", "benches", "examples"],
            "build-dependencies": ["build.rs"],
        }
        for section, places in sections.items():
            code = code_of(crate, places)
            for dep in toml.get(section, {}):
                if not names(code, dep):
                    found.append(f"{toml['package']['name']}: {dep} ({section})")
    report(found, "declared dependencies no code names")


if __name__ == "__main__":
    main()
