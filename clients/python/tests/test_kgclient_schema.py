"""KGClient against the schema the server serves: each method's parameters are exactly the
fields its interface takes (no more, none missing), the required ones without defaults, so the
hand-written client cannot drift from the server's types."""

import inspect

from agent_interface import KGClient


def _methods():
    return {name: member for name, member in inspect.getmembers(KGClient, inspect.isfunction)
            if not name.startswith("_") and name != "call"}


def test_every_method_takes_what_its_interface_takes(atlas_url, http):
    status, document = http("GET", f"{atlas_url}/api/v1/openapi.json")
    assert status == 200
    schemas = document["components"]["schemas"]

    def resolved(schema):
        while "$ref" in schema:
            schema = schemas[schema["$ref"].rsplit("/", 1)[1]]
        return schema

    methods = _methods()
    assert methods, "KGClient has no methods"
    problems = []
    for name, method in methods.items():
        path = document["paths"].get(f"/api/v1/{name}")
        if path is None:
            problems.append(f"{name}: the server has no such interface")
            continue
        body = resolved(path["post"]["requestBody"]["content"]["application/json"]["schema"])
        fields = set(body.get("properties", {}))
        required = set(body.get("required", []))
        parameters = {p.name: p for p in inspect.signature(method).parameters.values() if p.name != "self"}
        for missing in sorted(fields - set(parameters)):
            problems.append(f"{name}: no parameter for the field {missing!r}")
        for extra in sorted(set(parameters) - fields):
            problems.append(f"{name}: the parameter {extra!r} is no field of the interface")
        for field in sorted(required & set(parameters)):
            if parameters[field].default is not inspect.Parameter.empty:
                problems.append(f"{name}: the required field {field!r} has a default")
        for field in sorted((fields - required) & set(parameters)):
            if parameters[field].default is inspect.Parameter.empty:
                problems.append(f"{name}: the optional field {field!r} has no default")
    assert not problems, "\n".join(problems)
