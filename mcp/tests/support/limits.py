"""The unmodified PyPI `mcp` client past a session's cap on calls in
flight: CALLS concurrent `slow` calls in one legacy session, each ending as
a result or as the error the client raised for it. One JSON report on
stdout; the Rust side judges it.

    python limits.py --url URL [--calls 30]
"""

import argparse
import json
import sys

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError


async def main(args):
    report = {"results": 0, "errors": [], "other": []}

    async def one(client, i):
        try:
            result = await client.call_tool("slow", {"ms": 300})
            if result.structured_content == {"slept_ms": 300}:
                report["results"] += 1
            else:
                report["other"].append(f"call {i}: {result}")
        except MCPError as e:
            report["errors"].append({"code": e.code, "message": e.message})
        except Exception as e:  # noqa: BLE001 - the report says what happened
            report["other"].append(f"call {i}: {type(e).__name__}: {e}")

    async with Client(args.url, mode="legacy", read_timeout_seconds=60) as client:
        async with anyio.create_task_group() as group:
            for i in range(args.calls):
                group.start_soon(one, client, i)
    print(json.dumps(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--calls", type=int, default=30)
    anyio.run(main, parser.parse_args(sys.argv[1:]))
