"""Outside check with OpenAI's own Python SDK (pinned by tests/dialect_sdks.rs).

Reads the projections written by the test and prints one JSON line:
{"checked": N, "failures": [...]}.

- Both request shapes validate against the SDK's param types
  (ChatCompletionFunctionToolParam, responses FunctionToolParam).
- Every strict view is a fixed point of the SDK's strict converter
  (openai.lib._pydantic._ensure_strict_json_schema, what
  openai.pydantic_function_tool applies): the SDK would send it unchanged.
"""
import copy
import json
import sys

from pydantic import TypeAdapter
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam

tools = json.load(open(sys.argv[1]))
chat = TypeAdapter(ChatCompletionFunctionToolParam)
responses = TypeAdapter(FunctionToolParam)
failures = []
strict = 0
for t in tools:
    name = t["name"]
    try:
        chat.validate_python(t["chat"])
        responses.validate_python(t["responses"])
    except Exception as e:  # noqa: BLE001 - report every failure
        failures.append(f"{name}: shape: {e}")
    fn = t["chat"]["function"]
    if fn["strict"]:
        strict += 1
        view = fn["parameters"]
        mine = copy.deepcopy(view)
        try:
            out = _ensure_strict_json_schema(mine, path=(), root=mine)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{name}: the strict converter failed: {e}")
            continue
        if out != view:
            failures.append(
                f"{name}: the SDK's strict converter changed the strict view:\n"
                f"  ours: {json.dumps(view, sort_keys=True)}\n  sdk:  {json.dumps(out, sort_keys=True)}"
            )
print(json.dumps({"checked": len(tools), "strict": strict, "failures": failures}))
