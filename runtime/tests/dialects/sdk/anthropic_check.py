"""Outside check with Anthropic's own Python SDK (pinned by tests/dialect_sdks.rs).

- Both `anthropic` and `anthropic-strict` tools validate against the SDK's
  ToolParam type.
- Every strict view is a fixed point of anthropic.transform_schema, the
  transform the SDK applies for strict schemas: it would send it unchanged.
"""
import json
import sys

from pydantic import TypeAdapter
import anthropic
from anthropic.types import ToolParam

data = json.load(open(sys.argv[1]))
tool = TypeAdapter(ToolParam)
failures = []
for t in data["plain"] + data["strict"]:
    try:
        tool.validate_python(t)
    except Exception as e:  # noqa: BLE001
        failures.append(f"{t['name']}: shape: {e}")
for t in data["strict"]:
    view = t["input_schema"]
    try:
        out = anthropic.transform_schema(json.loads(json.dumps(view)))
    except Exception as e:  # noqa: BLE001
        failures.append(f"{t['name']}: transform_schema failed: {e}")
        continue
    if out != view:
        failures.append(
            f"{t['name']}: transform_schema changed the strict view:\n"
            f"  ours: {json.dumps(view, sort_keys=True)}\n  sdk:  {json.dumps(out, sort_keys=True)}"
        )
print(json.dumps({"checked": len(data["plain"]) + len(data["strict"]), "failures": failures}))
