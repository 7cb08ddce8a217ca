"""The unmodified PyPI `mcp` client against a test server that requires a
bearer token, with the client's own way of carrying one: an `httpx2`
client whose headers hold it, given to `streamable_http_client`. Three
callers per protocol version: alice (ALICE_TOKEN), bob (BOB_TOKEN) and
nobody (no header). One JSON report on stdout; the Rust side judges it.
Tokens come from the environment, never from arguments (`ps` shows those).

    python auth.py --url URL [--canary]
"""

import argparse
import json
import os
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def describe(error):
    """An exception, or the first of a group, as one line."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}" or type(error).__name__


async def run(url, mode, token, canary):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    report = {}
    try:
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                report["protocol_version"] = client.protocol_version
                report["tools"] = len((await client.list_tools()).tools)
                report["echo"] = dump(await client.call_tool("echo", {"text": "hi"}))
                if canary:
                    report["canary"] = dump(await client.call_tool("canary", {}))
    except Exception as e:  # noqa: BLE001 - the report says what happened
        report["refused"] = describe(e)
    return report


async def main(args):
    report = {}
    for version in ["2025-11-25", "2026-07-28"]:
        mode = "legacy" if version == "2025-11-25" else version
        report[version] = {
            "alice": await run(args.url, mode, os.environ["ALICE_TOKEN"], args.canary),
            "bob": await run(args.url, mode, os.environ["BOB_TOKEN"], args.canary),
            "nobody": await run(args.url, mode, None, args.canary),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--canary", action="store_true")
    anyio.run(main, parser.parse_args(sys.argv[1:]))
