"""The unmodified PyPI `mcp` client against `toolprism-examples serve
--approvals` over stdio: bash confined, then one command escalated to
full access and approved by the user (the elicitation callback), one
declined, then a plain command confined again. One JSON object on stdout;
the Rust test judges it and what landed on disk.

    python escalate.py SERVER [ARG ...]
"""

import json
import sys

import anyio
from mcp import Client, StdioServerParameters, types


# What the user answers next, and every question they were asked.
plan = {"answer": True}
asked = []


async def elicitation(context, params):
    asked.append(params.message)
    return types.ElicitResult(action="accept", content={"approve": plan["answer"]})


def text(result):
    return "\n".join(c.text for c in result.content if c.type == "text")


def code(result):
    return (result.meta or {}).get("toolprism/errorCode")


async def main(argv):
    server = StdioServerParameters(command=argv[0], args=argv[1:])
    report = {}
    async with Client(
        server, mode="legacy", read_timeout_seconds=60, elicitation_callback=elicitation
    ) as client:
        tools = await client.list_tools()
        bash = [t for t in tools.tools if t.name == "bash"][0]
        report["offered"] = "escalate" in bash.input_schema.get("properties", {})

        confined = await client.call_tool("bash", {"command": "touch ~/confined"})
        report["confined"] = {
            "denied": (confined.structured_content or {}).get("sandbox", {}).get("denied"),
            "text": text(confined),
        }

        escalate = {"mode": "full-access", "justification": "the user asked for it"}
        asked.clear()
        approved = await client.call_tool(
            "bash", {"command": "touch ~/approved", "escalate": escalate}
        )
        report["approved"] = {
            "asked": "\n".join(asked),
            "isError": approved.is_error,
            "sandbox": (approved.structured_content or {}).get("sandbox"),
        }

        plan["answer"] = False
        declined = await client.call_tool(
            "bash", {"command": "touch ~/declined", "escalate": escalate}
        )
        report["declined"] = {"isError": declined.is_error, "code": code(declined)}

        plan["answer"] = True
        after = await client.call_tool("bash", {"command": "touch ~/after"})
        report["after"] = {"text": text(after)}
    print(json.dumps(report))


anyio.run(main, sys.argv[1:])
