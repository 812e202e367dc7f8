#!/usr/bin/env python3
"""Lists functions and types outside tests whose error is a bare `String`
(`Result<_, String>`): errors should be types that keep their cause. Exits 1 when any.

Run from the repository: `python3 scripts/string_errors.py`."""
import os
import re
import sys



def string_errors(line):
    """Whether a `Result<T, E>` on the line has `String` as its error (its last argument at
    the top level of the brackets)."""
    for start in (m.end() for m in re.finditer(r"\bResult<", line)):
        depth, argument, arguments = 1, "", []
        for ch in line[start:]:
            if ch in "<([":
                depth += 1
            elif ch in ">)]":
                depth -= 1
                if depth == 0:
                    arguments.append(argument.strip())
                    break
            if ch == "," and depth == 1:
                arguments.append(argument.strip())
                argument = ""
                continue
            argument += ch
        if len(arguments) == 2 and arguments[1] in ("String", "std::string::String"):
            return True
    return False

found = []
for root, dirs, files in os.walk("crates"):
    dirs[:] = [d for d in dirs if d not in ("tests", "target")]
    for name in files:
        if not name.endswith(".rs"):
            continue
        path = os.path.join(root, name)
        text = open(path, encoding="utf-8").read()
        cut = text.find("#[cfg(test)]")
        if cut >= 0:
            text = text[:cut]
        for number, line in enumerate(text.splitlines(), 1):
            if string_errors(line) and not line.lstrip().startswith("//"):
                found.append(f"{path}:{number}: {line.strip()}")
print("\n".join(found))
print(f"{len(found)} errors of type String outside tests")
sys.exit(1 if found else 0)
