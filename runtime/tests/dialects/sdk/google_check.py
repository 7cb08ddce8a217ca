"""Outside check with Google's own Python SDK, google-genai (pinned by
tests/dialect_sdks.rs).

Every `gemini` and `gemini-openapi` declaration validates as
types.FunctionDeclaration, whose models forbid unknown fields: for the
OpenAPI fallback that is the `Schema` model (single `type`, `nullable`,
string `enum`s, no `$ref`, no `additionalProperties`, no `const`).
"""
import json
import sys
import warnings

from google.genai import types

decls = json.load(open(sys.argv[1]))
failures = []
for d in decls:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            parsed = types.FunctionDeclaration.model_validate(d)
        if "parameters" in d and parsed.parameters is None:
            failures.append(f"{d['name']}: parameters dropped")
    except Exception as e:  # noqa: BLE001
        failures.append(f"{d['name']}: {e}")
print(json.dumps({"checked": len(decls), "failures": failures}))
