"""The unmodified PyPI `mcp` client against a toolprism hub (`serve
--import … --mcp-config …`): every check the Rust test asserts on, in one
process, reported as one JSON object on stdout.

    python hub_client.py --stdio HUB [ARG ...]   # --stdio comes last
"""

import argparse
import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError

CARDS = {"toolprism/cards": True}


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def call(client, name, arguments, **kwargs):
    try:
        return {"result": dump(await client.call_tool(name, arguments, meta=CARDS, **kwargs))}
    except MCPError as e:
        return {"error": {"code": e.code, "message": e.message}}
    except RuntimeError as e:
        return {"refused": str(e)}


async def main(args):
    # The client starts the hub with a few safe variables only; the test's
    # own (TOOLPRISM_HUB_TEST_*, which make the test binary the hub) are
    # passed on by name.
    env = {k: v for k, v in os.environ.items() if k.startswith("TOOLPRISM_HUB_TEST_")}
    server = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:], env=env)
    report = {}
    async with Client(server, mode="legacy", read_timeout_seconds=60) as client:
        report["tools"] = [dump(t) for t in (await client.list_tools()).tools]
        report["echo"] = await call(client, "echo", {"text": "through the hub"})
        report["fail"] = await call(client, "fail", {"message": "no luck"})
        report["bad_args"] = await call(client, "echo", {"text": 5})
        report["numbers"] = await call(client, "numbers", {"count": 3})
        report["add"] = await call(client, "tiny__add", {"a": 2, "b": 3})
        report["broken"] = await call(client, "tiny__broken", {})
        report["blocks"] = await call(client, "tiny__blocks", {})
        report["native"] = await call(client, "shout", {"text": "hi"})

        steps = []

        async def on_step(done, total, message):
            steps.append({"done": done, "total": total, "message": message})

        report["steps"] = await call(client, "steps", {"count": 4}, progress_callback=on_step)
        await anyio.sleep(0.3)
        report["progress"] = steps

        with anyio.move_on_after(1.0) as scope:
            await client.call_tool("slow", {"ms": 60000})
        report["cancelled"] = scope.cancelled_caught
        report["after_cancel"] = await call(client, "echo", {"text": "still here"})

        program = """
            const sum = await tools.tiny__add({a: 20, b: 22});
            const echoed = await tools.echo({text: "from a program"});
            let refused = null;
            try { await tools.tiny__broken({}); } catch (e) { refused = e.code; }
            return {sum: sum.sum, len: echoed.len, refused};
        """
        report["run_code"] = await call(
            client, "run_code", {"code": program, "description": "adds, echoes, and sees a refusal"}
        )
    print(json.dumps(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stdio", nargs=argparse.REMAINDER, metavar="ARG", required=True)
    anyio.run(main, parser.parse_args(sys.argv[1:]))
