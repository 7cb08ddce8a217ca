"""The unmodified PyPI `mcp` client against a toolprism hub over the MCP
project's `server-everything`: the server's log messages (during a call,
and on their own), its elicitation forwarded to this client and answered
here, and its `notifications/tools/list_changed` after it is restarted
(killed through its pid file, started again by the hub on the next call).
One JSON object on stdout; the Rust side judges it.

    python hub_everything.py --pidfile PATH --stdio HUB [ARG ...]   # --stdio comes last
"""

import argparse
import json
import os
import signal
import sys

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def call(client, name, arguments):
    try:
        return {"result": dump(await client.call_tool(name, arguments))}
    except MCPError as e:
        return {"error": {"code": e.code, "message": e.message}}


async def main(args):
    env = {k: v for k, v in os.environ.items() if k.startswith("TOOLPRISM_HUB_TEST_")}
    server = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:], env=env)
    report = {"logs": [], "list_changed": 0, "asked": []}
    changed = anyio.Event()
    logged = anyio.Event()

    async def on_log(params):
        report["logs"].append({"level": params.level, "logger": params.logger, "data": params.data})
        if len(report["logs"]) >= 2:
            logged.set()

    async def on_message(message):
        method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)
        if method == "notifications/tools/list_changed":
            report["list_changed"] += 1
            changed.set()

    async def on_elicit(context, params):
        report["asked"].append(dump(params))
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True, "integer": 7})

    async with Client(
        server,
        mode="legacy",
        read_timeout_seconds=60,
        logging_callback=on_log,
        message_handler=on_message,
        elicitation_callback=on_elicit,
    ) as client:
        report["tools"] = [t.name for t in (await client.list_tools()).tools]
        await client.set_logging_level("debug")

        # A log message during the call (the call's client), then one of
        # the server's own every 5 s (every session at its level).
        report["toggle"] = await call(client, "everything__toggle-simulated-logging", {})
        with anyio.move_on_after(8):
            await logged.wait()
        await call(client, "everything__toggle-simulated-logging", {})

        # The server asks this client, through the hub.
        report["elicited"] = await call(client, "everything__trigger-elicitation-request", {})

        # The server dies; the next call finds it gone, the one after starts
        # it again, and the tools are listed again.
        with open(args.pidfile) as f:
            os.kill(int(f.read().strip()), signal.SIGKILL)
        await anyio.sleep(0.3)
        report["after_kill"] = await call(client, "everything__echo", {"message": "gone?"})
        report["restarted"] = await call(client, "everything__echo", {"message": "back"})
        with anyio.move_on_after(10):
            await changed.wait()
        report["tools_after"] = [t.name for t in (await client.list_tools()).tools]
    print(json.dumps(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pidfile", required=True)
    parser.add_argument("--stdio", nargs=argparse.REMAINDER, metavar="ARG", required=True)
    anyio.run(main, parser.parse_args(sys.argv[1:]))
