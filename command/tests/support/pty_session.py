"""Runs a program with a pseudo-terminal as its stdin and stderr, and answers it.

Reads a JSON spec on stdin:

    {"argv": [...], "env": {...}, "timeout": 20,
     "steps": [{"expect": "text"}, {"send": "y\\n"}, ...]}

Each `expect` waits until the text appears on the terminal (its \r\n line
ends read as \n) after what the previous `expect` matched; each `send` types its text. stdout is a pipe,
kept apart from the terminal. Prints one JSON object:

    {"error": null | "why", "terminal": "...", "stdout": "...", "code": N}

Standard library only (pty, select, subprocess).
"""

import json
import os
import pty
import select
import subprocess
import sys
import threading
import time


def main():
    spec = json.load(sys.stdin)
    deadline = time.monotonic() + spec.get("timeout", 20)
    master, slave = pty.openpty()
    env = dict(os.environ)
    env.update(spec.get("env", {}))
    child = subprocess.Popen(
        spec["argv"],
        stdin=slave,
        stderr=slave,
        stdout=subprocess.PIPE,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    out = []
    reader = threading.Thread(target=lambda: out.append(child.stdout.read()))
    reader.start()

    terminal = bytearray()
    seen = 0
    error = None

    def pump(wait):
        """Reads what the terminal shows; False once the child side is closed."""
        ready, _, _ = select.select([master], [], [], wait)
        if not ready:
            return True
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every copy of the slave side is closed
            return False
        if not chunk:
            return False
        terminal.extend(chunk)
        return True

    for step in spec["steps"]:
        if "send" in step:
            os.write(master, step["send"].encode())
            continue
        want = step["expect"].encode()
        while True:
            # Matched as the tests write it: the terminal's line ends are \r\n.
            shown = terminal.replace(b"\r\n", b"\n")
            at = shown.find(want, seen)
            if at >= 0:
                seen = at + len(want)
                break
            if time.monotonic() > deadline:
                error = "timed out waiting for %r" % step["expect"]
                break
            if not pump(0.05):
                at = terminal.replace(b"\r\n", b"\n").find(want, seen)
                if at >= 0:
                    seen = at + len(want)
                else:
                    error = "the terminal closed before %r" % step["expect"]
                break
        if error:
            break

    if error:
        child.kill()
    while pump(0.05) and time.monotonic() < deadline:
        if child.poll() is not None:
            # Drain what is left, then stop.
            while pump(0.05):
                pass
            break
    try:
        code = child.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        child.kill()
        code = child.wait()
        error = error or "the program did not exit in time"
    reader.join()
    os.close(master)
    json.dump(
        {
            "error": error,
            "terminal": terminal.decode("utf-8", "replace").replace("\r\n", "\n"),
            "stdout": (out[0] if out else b"").decode("utf-8", "replace"),
            "code": code,
        },
        sys.stdout,
    )


main()
