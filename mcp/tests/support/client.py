"""One run of the unmodified PyPI `mcp` client against toolprism's MCP test
server: every check the Rust test asserts on, in one process, reported as
one JSON object on stdout (the Rust side decides pass or fail).

    python client.py --version 2025-11-25|2026-07-28 \
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


async def call(client, name, arguments, **kwargs):
    """A call's result as JSON, or the protocol error, or the client's
    refusal (a `RuntimeError` when the structured content breaks the
    schema)."""
    try:
        return {"result": dump(await client.call_tool(name, arguments, **kwargs))}
    except MCPError as e:
        return {"error": {"code": e.code, "message": e.message, "data": e.data}}
    except RuntimeError as e:
        return {"refused": str(e)}


async def main(args):
    if args.stdio:
        server = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
    else:
        server = args.url
    mode = "legacy" if args.version == "2025-11-25" else args.version
    report = {}
    # Every server notification the session surfaces (progress included,
    # whether or not a callback claimed it), to see what arrives unasked.
    seen_progress = []

    async def on_message(message):
        if isinstance(message, types.ProgressNotification):
            seen_progress.append(dump(message.params))

    async with Client(server, mode=mode, read_timeout_seconds=30, message_handler=on_message) as client:
        report["protocol_version"] = client.protocol_version
        report["tools"] = [dump(t) for t in (await client.list_tools()).tools]

        # Cards are sent to clients that ask: this one asks per call.
        report["echo"] = await call(
            client, "echo", {"text": "héllo"}, meta={"toolprism/cards": True}
        )
        report["echo_unasked"] = await call(client, "echo", {"text": "héllo"})
        report["fail"] = await call(
            client, "fail", {"message": "no luck"}, meta={"toolprism/cards": True}
        )
        report["bad_args"] = await call(client, "echo", {"text": 5})
        report["unknown"] = await call(client, "no_such_tool", {})
        report["numbers"] = await call(client, "numbers", {"count": 3})
        report["word"] = await call(client, "word", {})
        report["picture"] = await call(client, "picture", {})

        # The client validates structured content against the advertised
        # schema; a tampered copy of a good result must be refused, or the
        # acceptance above proves nothing.
        good = await client.call_tool("numbers", {"count": 2})
        tampered = good.model_copy(
            update={"structured_content": {"value": ["not", "numbers"]}
                    if args.version == "2025-11-25" else ["not", "numbers"]}
        )
        try:
            await client.session.validate_tool_result("numbers", tampered)
            report["tampered"] = "accepted"
        except RuntimeError as e:
            report["tampered"] = "refused: " + str(e)

        # Cancellation: abandon a long call; the client sends
        # notifications/cancelled (or, at 2026-07-28 over HTTP, closes the
        # request's stream). Then the server must still serve.
        progress = []

        async def on_progress(done, total, message):
            progress.append({"done": done, "total": total, "message": message})

        started = time.monotonic()
        with anyio.move_on_after(1.0) as scope:
            await client.call_tool("slow", {"ms": 60000}, progress_callback=on_progress)
        report["cancel"] = {
            "cancelled": scope.cancelled_caught,
            "seconds": round(time.monotonic() - started, 3),
        }
        report["after_cancel"] = await call(client, "echo", {"text": "still here"})
        report["progress"] = progress

        # Progress asked for: the callback gets every report, in order.
        steps = []

        async def on_step(done, total, message):
            steps.append({"done": done, "total": total, "message": message})

        seen_progress.clear()
        result = await call(client, "steps", {"count": 4}, progress_callback=on_step)
        at_return = len(steps)
        await anyio.sleep(0.3)  # the client runs each callback in a task of its own
        report["steps"] = {
            "result": result,
            "progress": steps,
            "at_return": at_return,
            "seen": list(seen_progress),
        }
        # Not asked for: no progress notification arrives at all.
        seen_progress.clear()
        result = await call(client, "steps", {"count": 4})
        await anyio.sleep(0.3)
        report["steps_unasked"] = {"result": result, "seen": list(seen_progress)}
    print(json.dumps(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", required=True, choices=["2025-11-25", "2026-07-28"])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--stdio", nargs=argparse.REMAINDER, metavar="ARG")
    target.add_argument("--url")
    anyio.run(main, parser.parse_args(sys.argv[1:]))
