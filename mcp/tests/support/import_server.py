"""A tiny MCP server over stdio, written against the JSON-RPC wire by hand
so that the import tests control every byte it answers: values that break
the schema it declares, every content block kind, calls that hang, report
fractional progress or kill the process, and a record of every message it
received (so a test can prove what was, and was not, sent).

    python import_server.py --events PATH

Each message received is appended to PATH as one JSON line
{"method", "id", "params"} before it is handled.
"""

import argparse
import json
import os
import sys
import threading
import time

write_lock = threading.Lock()
cancelled = {}
events_path = None

NUMBER = {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}
TOOLS = [
    {"name": "add", "description": "Adds a and b.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                     "required": ["a", "b"], "additionalProperties": False},
     "outputSchema": NUMBER, "annotations": {"readOnlyHint": True, "openWorldHint": False}},
    {"name": "broken", "description": "Declares a number, sends a string.",
     "inputSchema": {"type": "object"}, "outputSchema": NUMBER},
    {"name": "missing", "description": "Declares an output schema, sends no structuredContent.",
     "inputSchema": {"type": "object"}, "outputSchema": NUMBER},
    {"name": "fail", "description": "Always an error result.", "inputSchema": {"type": "object"}},
    {"name": "wait", "description": "Waits ms milliseconds, reporting progress as fractions of 1.",
     "inputSchema": {"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}, "required": ["ms"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "blocks", "description": "One block of every kind.", "inputSchema": {"type": "object"},
     "_meta": {"example.com/ui": {"resourceUri": "ui://blocks"}}},
    {"name": "secret", "description": "Makes a secret value; the content does not show it.",
     "inputSchema": {"type": "object", "properties": {"canary": {"type": "string"}}, "required": ["canary"]},
     "outputSchema": {"type": "object", "properties": {"token": {"type": "string"}}, "required": ["token"]}},
    {"name": "die", "description": "Exits the process while the call runs.", "inputSchema": {"type": "object"}},
    {"name": "pid", "description": "The server's process id.", "inputSchema": {"type": "object"},
     "outputSchema": {"type": "object", "properties": {"pid": {"type": "integer"}}, "required": ["pid"]}},
    {"name": "bad.name", "description": "A name MCP allows and toolprism does not.",
     "inputSchema": {"type": "object"}},
]


def send(message):
    with write_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def record(message):
    if events_path:
        with write_lock, open(events_path, "a") as f:
            f.write(json.dumps({"method": message.get("method"), "id": message.get("id"),
                                "params": message.get("params")}) + "\n")


def result(id, value):
    send({"jsonrpc": "2.0", "id": id, "result": value})


def text(t):
    return {"type": "text", "text": t}


def call(id, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    token = (params.get("_meta") or {}).get("progressToken")
    if name == "add":
        s = args["a"] + args["b"]
        result(id, {"content": [text(f"{s}")], "structuredContent": {"sum": s}})
    elif name == "broken":
        result(id, {"content": [text("a string")], "structuredContent": {"sum": "not a number"}})
    elif name == "missing":
        result(id, {"content": [text("no structured content")]})
    elif name == "fail":
        result(id, {"content": [text("it failed on purpose")], "isError": True})
    elif name == "wait":
        ms = args["ms"]
        steps = 4
        for i in range(1, steps + 1):
            deadline = time.monotonic() + ms / 1000 / steps
            while time.monotonic() < deadline:
                if cancelled.get(id):
                    return
                time.sleep(0.005)
            if token is not None:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": i / steps, "total": 1.0,
                                 "message": f"quarter {i}"}})
        result(id, {"content": [text(f"waited {ms} ms")]})
    elif name == "blocks":
        result(id, {"content": [
            text("t"),
            {"type": "image", "data": "iVBO", "mimeType": "image/png", "annotations": {"priority": 1}},
            {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "test://t", "mimeType": "text/plain", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "test://b", "blob": "AAEC"}},
            {"type": "resource_link", "uri": "file:///x.rs", "name": "x.rs", "mimeType": "text/x-rust", "size": 12},
        ]})
    elif name == "secret":
        result(id, {"content": [text("a secret was made")], "structuredContent": {"token": args["canary"]}})
    elif name == "die":
        os._exit(3)
    elif name == "pid":
        result(id, {"content": [text(str(os.getpid()))], "structuredContent": {"pid": os.getpid()}})
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": f"unknown tool {name}"}})


def main():
    global events_path
    parser = argparse.ArgumentParser()
    parser.add_argument("--events")
    events_path = parser.parse_args().events
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        record(message)
        method = message.get("method")
        id = message.get("id")
        if method == "initialize":
            result(id, {"protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "tiny", "version": "0.0.0"}})
        elif method == "tools/list":
            result(id, {"tools": TOOLS})
        elif method == "tools/call":
            threading.Thread(target=call, args=(id, message["params"]), daemon=True).start()
        elif method == "notifications/cancelled":
            cancelled[message["params"].get("requestId")] = True
        elif method == "ping":
            result(id, {})
        elif id is not None and method is not None:
            send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}})


if __name__ == "__main__":
    main()
