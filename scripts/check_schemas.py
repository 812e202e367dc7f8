"""Checks every JSON file Atlas wrote in a data folder against seed 001's JSON Schemas (schemas/).

Usage: check_schemas.py DATA_DIR
Prints how many files of each kind were checked; exits 1 on the first kind with a violation.
"""
import json
import pathlib
import sys

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parent.parent


def schema(name):
    return json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))


def main():
    data = pathlib.Path(sys.argv[1])
    apps = sorted(p for p in (data / "apps").iterdir() if p.is_dir())
    if not apps:
        print(f"no apps in {data}", file=sys.stderr)
        return 1
    kinds = {"index": [], "meta": [], "task": [], "test_idea": []}
    for app in apps:
        kinds["index"].append(app / "index.json")
        for node in app.iterdir():
            if node.is_dir() and not node.name.startswith("."):
                kinds["meta"].append(node / "meta.json")
                kinds["task"].extend(sorted((node / "todos").glob("*.json")))
                kinds["test_idea"].extend(sorted((node / "test_ideas").glob("*.json")))
    failures = 0
    for kind, files in kinds.items():
        validator = jsonschema.Draft7Validator(schema(kind))
        for path in files:
            try:
                document = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                print(f"{path}: unreadable: {e}", file=sys.stderr)
                failures += 1
                continue
            for error in validator.iter_errors(document):
                print(f"{path}: {error.message} at {list(error.absolute_path)}", file=sys.stderr)
                failures += 1
        print(f"{kind}: {len(files)} files checked")
    if not kinds["meta"]:
        print("no page folders found", file=sys.stderr)
        return 1
    if failures:
        return 1
    # One check: the whole folder against seed 001's schemas.
    print("1 schema checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
