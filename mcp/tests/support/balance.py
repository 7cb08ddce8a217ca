"""Several stateless server processes behind a round-robin balancer: every
HTTP request of one client goes to the next process in turn (the balancer is
an httpx transport rewriting each request's port, so it spreads requests,
not connections). One client per protocol version makes CALLS calls; each
answer is checked, and `whoami` tells which process answered. One JSON
report on stdout.

    python balance.py --calls 40 URL URL [URL ...]
"""

import argparse
import itertools
import json
import sys
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


class RoundRobin(httpx2.AsyncBaseTransport):
    def __init__(self, ports):
        self.ports = itertools.cycle(ports)
        self.inner = httpx2.AsyncHTTPTransport()
        self.sent = []

    async def handle_async_request(self, request):
        port = next(self.ports)
        request.url = request.url.copy_with(port=port)
        request.headers["Host"] = f"{request.url.host}:{port}"
        self.sent.append(port)
        return await self.inner.handle_async_request(request)

    async def aclose(self):
        await self.inner.aclose()


async def client_run(urls, version, calls):
    ports = [urlsplit(u).port for u in urls]
    balancer = RoundRobin(ports)
    http = httpx2.AsyncClient(transport=balancer, timeout=httpx2.Timeout(30.0, read=120.0))
    mode = "legacy" if version == "2025-11-25" else version
    report = {"pids": {}, "wrong": [], "calls": 0}
    async with http:
        async with Client(streamable_http_client(urls[0], http_client=http), mode=mode) as client:
            report["protocol_version"] = client.protocol_version
            report["tools"] = len((await client.list_tools()).tools)
            for i in range(calls):
                who = await client.call_tool("whoami", {})
                pid = str(who.structured_content["pid"])
                report["pids"][pid] = report["pids"].get(pid, 0) + 1
                report["calls"] += 1
                # Three requests every two rounds, so `whoami` lands on
                # every process in turn.
                if i % 2 == 0:
                    text = f"{version}-{i}"
                    echo = await client.call_tool("echo", {"text": text})
                    if echo.structured_content != {"text": text, "len": len(text)}:
                        report["wrong"].append(text)
                    report["calls"] += 1
    report["requests_per_port"] = {str(p): balancer.sent.count(p) for p in ports}
    return report


async def main(args):
    report = {}
    for version in ("2025-11-25", "2026-07-28"):
        report[version] = await client_run(args.urls, version, args.calls)
    print(json.dumps(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("urls", nargs="+")
    anyio.run(main, parser.parse_args(sys.argv[1:]))
