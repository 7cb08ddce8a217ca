"""Load on the test server over Streamable HTTP: SESSIONS concurrent client
sessions (half negotiating 2025-11-25, half 2026-07-28) make CALLS calls in
all, successes, errors and cancellations mixed, each checked against its
own request. A warm-up round comes first; the server's resident memory
(/proc/PID/status) is read before the warm-up, after it, and after the load,
once every session has closed. One JSON report on stdout.

    python load.py --url URL --pid PID [--sessions 20] [--calls 1000] [--warmup 200]
"""

import argparse
import json
import sys
import time

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def session(url, index, calls, tally):
    version = "2025-11-25" if index % 2 == 0 else "2026-07-28"
    mode = "legacy" if version == "2025-11-25" else version
    async with Client(url, mode=mode, read_timeout_seconds=60) as client:
        assert client.protocol_version == version, client.protocol_version
        for i in range(calls):
            tag = f"s{index}-c{i}"
            kind = ("echo", "echo", "fail", "numbers", "bad", "echo", "slow", "numbers", "fail", "echo")[i % 10]
            try:
                if kind == "echo":
                    r = await client.call_tool("echo", {"text": tag})
                    ok = (not r.is_error and r.structured_content == {"text": tag, "len": len(tag)}
                          and r.content[0].text == f"echo: {tag}")
                elif kind == "fail":
                    r = await client.call_tool("fail", {"message": tag})
                    ok = (r.is_error and r.structured_content is None
                          and r.content[0].text == f"Error: {tag}"
                          and r.meta["toolprism/errorCode"] == "NOPE")
                elif kind == "numbers":
                    n = (index + i) % 40
                    r = await client.call_tool("numbers", {"count": n})
                    expected = list(range(1, n + 1))
                    if version == "2025-11-25":
                        expected = {"value": expected}
                    ok = not r.is_error and r.structured_content == expected
                elif kind == "bad":
                    r = await client.call_tool("echo", {"text": i})
                    ok = r.is_error and r.meta["toolprism/errorCode"] == "INVALID_ARGS"
                else:
                    with anyio.move_on_after(0.2) as scope:
                        await client.call_tool("slow", {"ms": 30000})
                    ok = scope.cancelled_caught
                    kind = "cancelled"
            except (MCPError, RuntimeError, OSError) as e:
                tally["failures"].append(f"{tag} {kind}: {type(e).__name__}: {e}")
                continue
            if ok:
                tally[kind] = tally.get(kind, 0) + 1
            else:
                tally["failures"].append(f"{tag} {kind}: wrong answer")


async def round_of(url, sessions, calls):
    tally = {"failures": []}
    per_session = calls // sessions
    started = time.monotonic()
    async with anyio.create_task_group() as group:
        for index in range(sessions):
            group.start_soon(session, url, index, per_session, tally)
    tally["seconds"] = round(time.monotonic() - started, 3)
    return tally


async def main(args):
    report = {"rss_start_kib": rss_kib(args.pid)}
    report["warmup"] = await round_of(args.url, args.sessions, args.warmup)
    await anyio.sleep(0.5)
    report["rss_warm_kib"] = rss_kib(args.pid)
    report["load"] = await round_of(args.url, args.sessions, args.calls)
    # Let the server reap the closed sessions and the cancelled calls.
    await anyio.sleep(1.0)
    report["rss_end_kib"] = rss_kib(args.pid)
    print(json.dumps(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=200)
    anyio.run(main, parser.parse_args(sys.argv[1:]))
