"""The unmodified PyPI `mcp` client answering what toolprism's tools ask of
it (W8, W9): sampling and elicitation callbacks that answer, decline,
cancel and never answer; logging at the level set; approvals granted,
denied and left unanswered; a client that cannot be asked; content blocks
of every kind. One JSON object on stdout; the Rust side judges it.

    python asks.py --version 2025-11-25|2026-07-28 \
        (--url URL | --stdio SERVER [ARG ...])  # --stdio comes last
"""

import argparse
import json
import sys
import time

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


# What the callbacks do next: "accept", "decline", "cancel", "error" or
# "hang" (never answer).
plan = {"sampling": "accept", "elicitation": "accept", "approve": True}
asked = {"sampling": [], "elicitation": []}
logs = []


async def sampling(context, params):
    asked["sampling"].append(dump(params))
    if plan["sampling"] == "hang":
        await anyio.sleep_forever()
    if plan["sampling"] == "error":
        return types.ErrorData(code=-1, message="the user refused to sample")
    prompt = params.messages[0].content.text
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"you said {prompt}"),
        model="py-model",
        stop_reason="endTurn",
    )


async def elicitation(context, params):
    asked["elicitation"].append(dump(params))
    action = plan["elicitation"]
    if action == "hang":
        await anyio.sleep_forever()
    if action != "accept":
        return types.ElicitResult(action=action)
    if "approve" in params.requested_schema.get("properties", {}):
        return types.ElicitResult(action="accept", content={"approve": plan["approve"]})
    return types.ElicitResult(action="accept", content={"name": "Grace", "color": "blue", "sure": False})


async def on_log(params):
    logs.append({"level": params.level, "logger": params.logger, "data": params.data})


async def call(client, name, arguments, limit=20):
    """A call's result as JSON, the protocol error, or `stuck` when no
    answer came within `limit` seconds."""
    started = time.monotonic()
    out = {"stuck": True}
    with anyio.move_on_after(limit):
        try:
            out = {"result": dump(await client.call_tool(name, arguments))}
        except MCPError as e:
            out = {"error": {"code": e.code, "message": e.message}}
    out["seconds"] = round(time.monotonic() - started, 3)
    return out


def target(args):
    if args.stdio:
        return StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
    return args.url


async def main(args):
    mode = "legacy" if args.version == "2025-11-25" else args.version
    legacy = mode == "legacy"
    report = {}
    extra = {} if legacy else {"log_level": "warning"}
    async with Client(
        target(args),
        mode=mode,
        read_timeout_seconds=30,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        logging_callback=on_log,
        **extra,
    ) as client:
        report["protocol_version"] = client.protocol_version
        report["capabilities"] = dump(client.server_capabilities) if hasattr(client, "server_capabilities") else None

        # Logging: none before a level is set (legacy), then warning and up.
        if legacy:
            await call(client, "chatty", {})
            await anyio.sleep(0.3)
            report["logs_unasked"] = list(logs)
            logs.clear()
            await client.set_logging_level("warning")
        report["chatty"] = await call(client, "chatty", {})
        await anyio.sleep(0.3)
        report["logs"] = list(logs)
        logs.clear()

        # Sampling: answered, from an async and from a blocking tool; refused.
        report["sampled"] = await call(client, "ask_model", {"prompt": "hello"})
        report["sampled_blocking"] = await call(client, "ask_model_blocking", {"prompt": "hi there"})
        plan["sampling"] = "error"
        report["sampling_refused"] = await call(client, "ask_model", {"prompt": "no"})
        plan["sampling"] = "accept"

        # Elicitation: accept, decline, cancel.
        for action in ["accept", "decline", "cancel"]:
            plan["elicitation"] = action
            report[f"elicit_{action}"] = await call(client, "ask_user", {"message": f"please {action}"})
        plan["elicitation"] = "accept"

        # Approvals: granted, denied.
        plan["approve"] = True
        report["approved"] = await call(client, "guarded", {})
        plan["approve"] = False
        report["denied"] = await call(client, "guarded", {})
        plan["approve"] = True

        # Content blocks of every kind.
        report["media"] = await call(client, "media", {})

        # Never answered: bounded by the server's timeouts (legacy: the
        # answer says so; 2026-07-28: the client never retries, so it gives
        # up here and the server's session log says what happened).
        plan["sampling"] = "hang"
        report["sampling_hang"] = await call(client, "ask_model", {"prompt": "hang"}, limit=6)
        plan["sampling"] = "accept"
        plan["elicitation"] = "hang"
        report["approval_hang"] = await call(client, "guarded", {}, limit=6)
        plan["elicitation"] = "accept"
        report["asked"] = asked

    # A client that declared neither sampling nor elicitation (nor a log
    # level): refused at once, never a hang.
    async with Client(target(args), mode=mode, read_timeout_seconds=30, logging_callback=on_log) as bare:
        logs.clear()
        report["bare_sampled"] = await call(bare, "ask_model", {"prompt": "hello"})
        report["bare_approval"] = await call(bare, "guarded", {})
        report["bare_chatty"] = await call(bare, "chatty", {})
        await anyio.sleep(0.3)
        report["bare_logs"] = list(logs)
    print(json.dumps(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", required=True, choices=["2025-11-25", "2026-07-28"])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", nargs=argparse.REMAINDER, metavar="ARG")
    where.add_argument("--url")
    anyio.run(main, parser.parse_args(sys.argv[1:]))
