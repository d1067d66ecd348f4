#!/usr/bin/env python3
"""Every shipped search space (examples/*.space.json) is valid under the JSON Schema in
scheduler/schema/, and the syntactically wrong files of tests/bad-input/tuning/ that the schema
can see are rejected by it. Exits 77 (skipped) without python3-jsonschema."""
import glob
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)

schema = json.load(open("scheduler/schema/search-space.schema.json"))
jsonschema.Draft202012Validator.check_schema(schema)
spaces = sorted(glob.glob("examples/*.space.json"))
assert spaces, "no examples/*.space.json"
for path in spaces:
    jsonschema.validate(json.load(open(path)), schema)
    print("valid:", path)
# Mistakes of form, which the schema must catch as the loader does.
for name in ["no-parameters", "dollar-in-name", "two-domains", "no-domain", "empty-values",
             "duplicate-value", "value-not-integer", "zero-step", "range-unknown-field",
             "unknown-field", "wrong-version", "constraint-not-string", "constraint-empty",
             "root-array"]:
    path = "tests/bad-input/tuning/%s.json" % name
    try:
        jsonschema.validate(json.load(open(path)), schema)
    except jsonschema.ValidationError:
        print("rejected:", path)
        continue
    print("the schema accepts", path)
    sys.exit(1)
print("schema: all checks passed")
