"""The unmodified PyPI `mcp` client against `toolprism-examples serve --mode
both` over stdio: lists the tools, calls `run_code` with a program that
globs and reads, and reports what it saw as one JSON object on stdout (the
Rust test judges it).

    python code_mode.py SERVER [ARG ...]
"""

import json
import sys

import anyio
from mcp import Client, StdioServerParameters


PROGRAM = """
const found = await tools.glob({ pattern: "*.txt" });
const first = await tools.read({ path: found.paths[0] });
console.log(`read ${first.path}`);
return { files: found.paths.length, lines: first.totalLines };
"""


async def main(argv):
    server = StdioServerParameters(command=argv[0], args=argv[1:])
    report = {}
    async with Client(server, mode="legacy") as client:
        tools = await client.list_tools()
        run_code = [t for t in tools.tools if t.name == "run_code"]
        report["tools"] = sorted(t.name for t in tools.tools)
        report["sdk"] = run_code[0].description if run_code else None
        result = await client.call_tool(
            "run_code", {"code": PROGRAM, "description": "read the first text file"}
        )
        report["isError"] = result.is_error
        report["structured"] = result.structured_content
        report["text"] = [c.text for c in result.content if c.type == "text"]
        bad = await client.call_tool("run_code", {"code": "while (true) {}", "description": "spin"})
        report["spin"] = {
            "isError": bad.is_error,
            "code": (bad.meta or {}).get("toolprism/errorCode"),
        }
    print(json.dumps(report))


anyio.run(main, sys.argv[1:])
