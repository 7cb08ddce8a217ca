"""The providers' own Python SDKs as judges of toolprism-provider (pinned by
tests/it/sdk_judges.rs, run with that virtualenv's python).

Reads one JSON request on stdin, writes one JSON answer on stdout:

- {"op": "build"}: model responses built with the SDKs' own response
  classes, dumped as their API sends them (`model_dump_json(exclude_none=
  True)`, `by_alias=True` for Gemini): {"anthropic": [turn 0, turn 1],
  "openai-chat": [...], "openai-responses": [...], "gemini": [...]}, each
  body a string. Turn 0 calls the test's tools (lookup, snapshot,
  recording, report, fail, nope) and carries what a real turn carries
  around the calls (Anthropic thinking and server-tool blocks, a Chat call
  with arguments that are not JSON, a Responses reasoning item, a Gemini
  thought part, a thought signature and a call without id); turn 1
  answers.

- {"op": "validate", "items": [{"provider": P, "message": TEXT}, ...]}:
  each message, as the JSON text toolprism sends, validated as one
  element of the provider's request conversation:
    anthropic         TypeAdapter(anthropic.types.MessageParam), and its
                      content blocks as anthropic.types.ContentBlockParam
    openai-chat       TypeAdapter(openai.types.chat.ChatCompletionMessageParam)
    openai-responses  TypeAdapter(openai.types.responses.ResponseInputItemParam)
    gemini            google.genai.types.Content.model_validate_json
  (the TypedDicts validated from `json.loads` of the text, see `adapter`)
  with unknown fields refused (`extra="forbid"`: the APIs refuse them too).
  Answer: {"results": [{"ok": bool, "shallow_ok": bool, "error": str}]}.

  TRAP: pydantic validates a TypedDict field typed `Iterable[...]` lazily,
  as a ValidatorIterator that raises only when it is iterated, so most of
  a message (Anthropic's `content` blocks, a tool_result's own content,
  Chat's content parts, Responses' output parts) is not checked by
  validate_json alone. `walk` iterates every list, dict and iterator of
  the validated value, recursively, so a wrong field type deep inside
  raises. `shallow_ok` says what validate_json alone said, for the test to
  prove the walk is what catches those.
"""
import json
import sys
from collections.abc import Iterable, Mapping
from typing import List

import pydantic
from pydantic import ConfigDict, TypeAdapter

TINY_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


# ------------------------------------------------------------------ build


def anthropic_turns():
    import anthropic.types as a

    usage = a.Usage(input_tokens=412, output_tokens=96)
    calls = a.Message(
        id="msg_01A",
        type="message",
        role="assistant",
        model="claude-sonnet-5-5",
        stop_reason="tool_use",
        usage=usage,
        content=[
            a.ThinkingBlock(
                type="thinking",
                thinking="The user wants the value, a picture, a recording and the report.",
                signature="EqQBCkYIBxgCKkDm2Rk1",
            ),
            a.ServerToolUseBlock(
                type="server_tool_use",
                id="srvtoolu_01",
                name="web_search",
                input={"query": "toolprism"},
            ),
            a.WebSearchToolResultBlock(
                type="web_search_tool_result",
                tool_use_id="srvtoolu_01",
                content=[
                    a.WebSearchResultBlock(
                        type="web_search_result",
                        url="https://example.com/toolprism",
                        title="toolprism",
                        encrypted_content="Eo8BCioIBxgC",
                        page_age="2 days ago",
                    )
                ],
            ),
            a.TextBlock(type="text", text="Let me look."),
            a.ToolUseBlock(type="tool_use", id="toolu_01", name="lookup", input={"key": "alpha"}),
            a.ToolUseBlock(type="tool_use", id="toolu_02", name="snapshot", input={}),
            a.ToolUseBlock(type="tool_use", id="toolu_03", name="recording", input={}),
            a.ToolUseBlock(type="tool_use", id="toolu_04", name="report", input={"pages": 1}),
            a.ToolUseBlock(type="tool_use", id="toolu_05", name="fail", input={}),
            a.ToolUseBlock(type="tool_use", id="toolu_06", name="nope", input={"x": [1, 2]}),
        ],
    )
    answer = a.Message(
        id="msg_01B",
        type="message",
        role="assistant",
        model="claude-sonnet-5-5",
        stop_reason="end_turn",
        usage=usage,
        content=[a.TextBlock(type="text", text="alpha is 1; the disk is full.")],
    )
    return [m.model_dump_json(exclude_none=True) for m in (calls, answer)]


def chat_turns():
    from openai.types.chat import ChatCompletion, ChatCompletionMessage
    from openai.types.chat.chat_completion import Choice
    from openai.types.chat.chat_completion_message_function_tool_call import (
        ChatCompletionMessageFunctionToolCall as Call,
        Function,
    )
    from openai.types.completion_usage import CompletionUsage

    def call(i, name, arguments):
        return Call(id=f"call_{i}", type="function", function=Function(name=name, arguments=arguments))

    usage = CompletionUsage(prompt_tokens=412, completion_tokens=96, total_tokens=508)
    calls = ChatCompletion(
        id="chatcmpl-1",
        object="chat.completion",
        created=1767225600,
        model="gpt-6.1-sol",
        usage=usage,
        choices=[
            Choice(
                index=0,
                finish_reason="tool_calls",
                message=ChatCompletionMessage(
                    role="assistant",
                    content="Let me look.",
                    annotations=[],
                    tool_calls=[
                        call(1, "lookup", '{"key":"alpha"}'),
                        # A model's arguments that are not JSON: INVALID_ARGS, the turn goes on.
                        call(2, "lookup", '{"key": "beta"'),
                        call(3, "snapshot", "{}"),
                        call(4, "recording", "{}"),
                        call(5, "report", '{"pages": 1}'),
                        call(6, "fail", "{}"),
                        call(7, "nope", '{"x": [1, 2]}'),
                    ],
                ),
            )
        ],
    )
    answer = ChatCompletion(
        id="chatcmpl-2",
        object="chat.completion",
        created=1767225601,
        model="gpt-6.1-sol",
        usage=usage,
        choices=[
            Choice(
                index=0,
                finish_reason="stop",
                message=ChatCompletionMessage(
                    role="assistant", content="alpha is 1; the disk is full.", annotations=[]
                ),
            )
        ],
    )
    return [m.model_dump_json(exclude_none=True) for m in (calls, answer)]


def responses_turns():
    from openai.types.responses import (
        FunctionTool,
        Response,
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
        ResponseReasoningItem,
    )
    from openai.types.responses.response_reasoning_item import Summary

    tools = [
        FunctionTool(
            type="function",
            name="lookup",
            parameters={"type": "object", "properties": {"key": {"type": "string"}}},
            strict=False,
        )
    ]

    def response(i, output):
        return Response(
            id=f"resp_{i}",
            object="response",
            created_at=1767225600 + i,
            model="gpt-6.1-sol",
            status="completed",
            output=output,
            parallel_tool_calls=True,
            tool_choice="auto",
            tools=tools,
        )

    def call(i, name, arguments):
        # `id` is the item's own id; `call_id` is what the output answers.
        return ResponseFunctionToolCall(
            type="function_call",
            id=f"fc_{i}",
            call_id=f"call_{i}",
            name=name,
            arguments=arguments,
            status="completed",
        )

    calls = response(
        1,
        [
            ResponseReasoningItem(
                type="reasoning",
                id="rs_1",
                summary=[Summary(type="summary_text", text="Look the key up, then the rest.")],
                encrypted_content="gAAAAABpQ1x2",
            ),
            call(1, "lookup", '{"key":"alpha"}'),
            call(2, "snapshot", "{}"),
            call(3, "recording", "{}"),
            call(4, "report", '{"pages": 1}'),
            call(5, "fail", "{}"),
            call(6, "nope", '{"x": [1, 2]}'),
        ],
    )
    answer = response(
        2,
        [
            ResponseOutputMessage(
                type="message",
                id="msg_2",
                role="assistant",
                status="completed",
                content=[
                    ResponseOutputText(
                        type="output_text", text="alpha is 1; the disk is full.", annotations=[]
                    )
                ],
            )
        ],
    )
    return [m.model_dump_json(exclude_none=True) for m in (calls, answer)]


def gemini_turns():
    from google.genai import types as g

    def response(parts):
        return g.GenerateContentResponse(
            candidates=[
                g.Candidate(
                    index=0,
                    finish_reason=g.FinishReason.STOP,
                    content=g.Content(role="model", parts=parts),
                )
            ],
            model_version="gemini-3-pro",
            response_id="resp-gemini-1",
            usage_metadata=g.GenerateContentResponseUsageMetadata(
                prompt_token_count=412, candidates_token_count=96, total_token_count=508
            ),
        )

    def call(name, args, id=None, signature=None):
        return g.Part(
            function_call=g.FunctionCall(id=id, name=name, args=args),
            thought_signature=signature,
        )

    calls = response(
        [
            g.Part(text="Looking the key up first.", thought=True),
            # The first call of a thinking model's turn carries its signature.
            call("lookup", {"key": "alpha"}, id="fc-1", signature=b"\x0a\x24sig\xff\x00-gemini"),
            call("snapshot", {}, id="fc-2"),
            # No id: answered by name and order.
            call("recording", {}),
            call("report", {"pages": 1}, id="fc-4"),
            call("fail", {}, id="fc-5"),
            call("nope", {"x": [1, 2]}, id="fc-6"),
        ]
    )
    answer = response([g.Part(text="alpha is 1; the disk is full.")])
    return [m.model_dump_json(exclude_none=True, by_alias=True) for m in (calls, answer)]


def build():
    return {
        "anthropic": anthropic_turns(),
        "openai-chat": chat_turns(),
        "openai-responses": responses_turns(),
        "gemini": gemini_turns(),
    }


# --------------------------------------------------------------- validate

STRICT = ConfigDict(extra="forbid")
_validators = {}


def sdk_type(provider):
    """The provider's request message type as a validator of one message
    (the JSON text, parsed), unknown fields refused: a one-element list of
    it, as a TypedDict takes no `config` of its own in a TypeAdapter and
    the list's config reaches every TypedDict inside that has none.

    validate_python, not validate_json: in JSON mode pydantic takes a
    string for `Union[str, Iterable[...]]` as an iterable of characters
    (`"content": "hi"` would fail character by character)."""
    if provider not in _validators:
        if provider == "anthropic":
            from anthropic.types import MessageParam as T
        elif provider == "openai-chat":
            from openai.types.chat import ChatCompletionMessageParam as T
        elif provider == "openai-responses":
            from openai.types.responses import ResponseInputItemParam as T
        elif provider == "gemini":
            from google.genai import types as g

            _validators[provider] = lambda value: g.Content.model_validate_json(json.dumps(value))
            return _validators[provider]
        else:
            raise ValueError(f"unknown provider {provider}")
        ta = TypeAdapter(List[T], config=STRICT)
        _validators[provider] = lambda value: ta.validate_python([value])[0]
    return _validators[provider]


def anthropic_blocks(value):
    """MessageParam's blocks may also be the SDK's response models, which
    take any extra field: the blocks are validated as ContentBlockParam
    alone too, the request type the API reads."""
    from anthropic.types import ContentBlockParam

    if "anthropic-blocks" not in _validators:
        _validators["anthropic-blocks"] = TypeAdapter(List[ContentBlockParam], config=STRICT)
    content = value.get("content") if isinstance(value, dict) else None
    if isinstance(content, list):
        walk(_validators["anthropic-blocks"].validate_python(content))


def walk(value, depth=0):
    """Iterates every part of a validated value, so that each lazy
    `Iterable[...]` validator runs and raises on what it holds."""
    if depth > 200:
        raise ValueError("nested deeper than 200")
    if isinstance(value, (str, bytes, bytearray, int, float, bool)) or value is None:
        return
    if isinstance(value, pydantic.BaseModel):
        for field in type(value).model_fields:
            walk(getattr(value, field), depth + 1)
        return
    if isinstance(value, Mapping):
        for v in value.values():
            walk(v, depth + 1)
        return
    if isinstance(value, Iterable):
        # Lists, tuples, ValidatorIterators and generators alike: iterating
        # a ValidatorIterator validates each item as it comes.
        for v in value:
            walk(v, depth + 1)
        return


def short(e):
    """The errors of the union branches the message's own `type` or `role`
    names (a branch whose tag differs is no news), deepest first."""
    if isinstance(e, pydantic.ValidationError):
        errors = e.errors(include_url=False)
        other = {
            tuple(err["loc"][:-1])
            for err in errors
            if err["type"] == "literal_error" and err["loc"] and err["loc"][-1] in ("type", "role")
        }
        own = [err for err in errors if not any(tuple(err["loc"][: len(o)]) == o for o in other)]
        shown = sorted(own or errors, key=lambda err: -len(err["loc"]))[:3]
        lines = [f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in shown]
        return f"{len(errors)} errors, among them: " + "; ".join(lines)
    return f"{type(e).__name__}: {e}"


def judge(provider, text):
    value = json.loads(text)
    validate = sdk_type(provider)
    try:
        # What validation alone says, without the walk.
        validate(value)
        shallow_ok = True
    except Exception:  # noqa: BLE001
        shallow_ok = False
    try:
        walk(validate(value))
        if provider == "anthropic":
            anthropic_blocks(value)
        return {"ok": True, "shallow_ok": shallow_ok, "error": ""}
    except Exception as e:  # noqa: BLE001 - every failure is the answer
        return {"ok": False, "shallow_ok": shallow_ok, "error": short(e)}


def main():
    request = json.load(sys.stdin)
    op = request["op"]
    if op == "build":
        answer = build()
    elif op == "validate":
        answer = {"results": [judge(i["provider"], i["message"]) for i in request["items"]]}
    else:
        raise SystemExit(f"unknown op {op}")
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
