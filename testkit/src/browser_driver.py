"""Drives Debian's Chromium for toolprism's HTML tests (one browser per test binary).

Reads one JSON request per line on stdin, answers one JSON line on stdout.
A request loads a page in a fresh browser context, records everything the
page does (console messages, page errors, requests, dialogs, CSP
violations), runs its steps and closes the context. EOF on stdin ends the
browser and the driver.

Request: {"url", "javascript": bool, "bypass_csp": bool, "steps": [...]}
Steps:   {"eval": "<js expression>"}
         {"frame": "<frame name>", "frame_eval": "<js expression>"}
         {"click": "<selector>", "until": "<js expression>"}   -> {"ms": elapsed}
           (a mouse click at the element's centre; elapsed until `until`
           holds and the next frame is drawn)
         {"screenshot": "<path>", "full_page": bool}
"""

import json
import os
import sys
import time

from playwright.sync_api import sync_playwright

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

NEXT_FRAME = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())))"

# Runs before any page script: keeps every CSP violation for the test.
RECORD_CSP = """
window.__tpCsp = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__tpCsp.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


def handle(browser, request):
    context = browser.new_context(
        java_script_enabled=request.get("javascript", True),
        bypass_csp=request.get("bypass_csp", False),
        viewport=request.get("viewport", {"width": 1280, "height": 900}),
        color_scheme=request.get("color_scheme", "light"),
        device_scale_factor=request.get("scale", 1),
    )
    context.set_default_timeout(request.get("timeout_ms", 120000))
    context.add_init_script(RECORD_CSP)
    page = context.new_page()
    seen = {"console": [], "page_errors": [], "requests": [], "dialogs": []}

    def on_dialog(dialog):
        seen["dialogs"].append({"type": dialog.type, "message": dialog.message})
        dialog.dismiss()

    page.on("console", lambda m: seen["console"].append({"type": m.type, "text": m.text}))
    page.on("pageerror", lambda e: seen["page_errors"].append(str(e)))
    page.on("dialog", on_dialog)
    context.on(
        "request",
        lambda r: seen["requests"].append(
            {"url": r.url, "method": r.method, "resource_type": r.resource_type}
        ),
    )
    try:
        start = time.perf_counter()
        page.goto(request["url"], wait_until="load")
        load_ms = (time.perf_counter() - start) * 1000
        results = []
        for step in request.get("steps", []):
            if "eval" in step:
                results.append(page.evaluate(step["eval"]))
            elif "frame_eval" in step:
                # In the child frame of that name (an app in a sandboxed iframe).
                frame = page.frame(name=step["frame"])
                if frame is None:
                    raise ValueError("no frame named %r" % (step["frame"],))
                results.append(frame.evaluate(step["frame_eval"]))
            elif "click" in step:
                # A real mouse click at the element's centre, timed from the
                # click to the state it should reach and the frame after it.
                target = page.locator(step["click"]).first
                target.scroll_into_view_if_needed()
                page.evaluate(NEXT_FRAME)
                box = target.bounding_box()
                start = time.perf_counter()
                page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                if step.get("until"):
                    page.wait_for_function(step["until"], polling="raf")
                page.evaluate(NEXT_FRAME)
                results.append({"ms": (time.perf_counter() - start) * 1000})
            elif "screenshot" in step:
                full = step.get("full_page", False)
                # A whole page is drawn as for print: calls off screen are
                # skipped by `content-visibility: auto` otherwise.
                page.emulate_media(media="print" if full else "screen")
                page.screenshot(path=step["screenshot"], full_page=full)
                page.emulate_media(media="screen")
                results.append(step["screenshot"])
            else:
                raise ValueError("unknown step: %r" % (step,))
        csp = page.evaluate("window.__tpCsp || []") if request.get("javascript", True) else []
        return dict(ok=True, load_ms=load_ms, results=results, csp_violations=csp, **seen)
    finally:
        context.close()


def main():
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=os.environ["TOOLPRISM_CHROMIUM"], headless=True, args=FLAGS
        )
        print(json.dumps({"ok": True, "version": browser.version}), flush=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                answer = handle(browser, json.loads(line))
            except Exception as e:  # the test reads the error and fails with it
                answer = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
            print(json.dumps(answer), flush=True)
        browser.close()


if __name__ == "__main__":
    main()
