(function () {
  "use strict";
  // The card app: MCP Apps (io.modelcontextprotocol/ui) over postMessage.
  // Everything the host sends is data: the drawn cards are built element
  // by element from the few tags the renderer writes, text as text nodes.
  var doc = document, root = doc.getElementById("app"), host = window.parent;
  var TAGS = { b: 1, code: 1, dd: 1, details: 1, div: 1, dl: 1, dt: 1, i: 1, li: 1, ol: 1, p: 1, pre: 1, section: 1, span: 1, summary: 1, ul: 1 };
  var BAR = /^(--[a-z]:[0-9.]+%;?)+$/;
  var own = Object.prototype.hasOwnProperty;
  var state = { args: null, tool: null, result: null, cancelled: null };
  var nextId = 1, pending = {}, lastHeight = -1;

  function send(message) {
    message.jsonrpc = "2.0";
    host.postMessage(message, "*");
  }
  function request(method, params, then) {
    var id = nextId++;
    pending[id] = then;
    send({ id: id, method: method, params: params });
  }
  function notify(method, params) {
    send({ method: method, params: params || {} });
  }

  function build(node, depth) {
    if (typeof node === "string") return doc.createTextNode(node);
    if (depth > 64 || !Array.isArray(node) || typeof node[0] !== "string" || !own.call(TAGS, node[0])) {
      return doc.createTextNode("");
    }
    var el = doc.createElement(node[0]), attrs = node[1];
    if (attrs && typeof attrs === "object") {
      for (var name in attrs) {
        if (!own.call(attrs, name) || typeof attrs[name] !== "string") continue;
        var value = attrs[name];
        if (name === "class" || name === "data-tag" || name === "open") el.setAttribute(name, value);
        else if (name === "style" && BAR.test(value)) el.setAttribute(name, value);
      }
    }
    for (var i = 2; i < node.length; i++) el.appendChild(build(node[i], depth + 1));
    return el;
  }
  function el(tag, className, text) {
    var e = doc.createElement(tag);
    if (className) e.className = className;
    if (text != null) e.textContent = text;
    return e;
  }
  function card(side, tag, title, error) {
    var section = el("section", "tp card " + side + " t-" + tag + (error ? " err" : ""));
    var head = el("div", "hd");
    head.setAttribute("data-tag", tag);
    if (error) head.appendChild(el("span", "chip bad code", error));
    if (title != null) head.appendChild(el("span", "ttl" + (side === "call" ? " ic i-other" : ""), title));
    section.appendChild(head);
    return section;
  }
  function body(section) {
    var b = el("div", "bd");
    section.appendChild(b);
    return b;
  }

  // A call without drawn cards: the tool's name and its arguments, as text.
  function genericCall() {
    var section = card("call", "generic", state.tool || "tool call");
    if (state.args && typeof state.args === "object") {
      var keys = Object.keys(state.args);
      if (keys.length) body(section).appendChild(el("pre", "raw", JSON.stringify(state.args, null, 2)));
    }
    return section;
  }
  // A result without drawn cards: its content, as text.
  function genericResult(result) {
    var meta = result._meta && typeof result._meta === "object" ? result._meta : {};
    var code = typeof meta["toolprism/errorCode"] === "string" ? meta["toolprism/errorCode"] : null;
    var failed = result.isError === true;
    var section = card("result", "generic", null, failed ? code || "error" : null);
    var b = body(section), content = Array.isArray(result.content) ? result.content : [];
    for (var i = 0; i < content.length; i++) {
      var block = content[i] || {};
      if (block.type === "text" && typeof block.text === "string") b.appendChild(el("pre", "txt", block.text));
      else b.appendChild(el("p", "img", String(block.type || "content") + " block" +
        (typeof block.mimeType === "string" ? " (" + block.mimeType + ")" : "")));
    }
    if (!content.length) b.appendChild(el("p", "none", "No content."));
    return section;
  }

  function draw() {
    var parts = [], result = state.result;
    var view = result && result._meta && typeof result._meta === "object" ? result._meta["toolprism/view"] : null;
    if (view && typeof view === "object" && Array.isArray(view.call)) {
      var lists = [view.call, Array.isArray(view.result) ? view.result : []];
      for (var l = 0; l < lists.length; l++) {
        for (var i = 0; i < lists[l].length; i++) parts.push(build(lists[l][i], 0));
      }
    } else {
      parts.push(genericCall());
      if (result) parts.push(genericResult(result));
      else if (state.cancelled != null) parts.push(el("p", "none", "Cancelled" + (state.cancelled ? ": " + state.cancelled : ".")));
      else parts.push(el("p", "none", "Running…"));
    }
    root.replaceChildren.apply(root, parts);
    report();
  }

  function report() {
    var height = Math.ceil(root.getBoundingClientRect().bottom);
    if (height !== lastHeight) {
      lastHeight = height;
      notify("ui/notifications/size-changed", { height: height });
    }
  }

  function context(ctx) {
    if (!ctx || typeof ctx !== "object") return;
    if (ctx.theme === "light" || ctx.theme === "dark") doc.documentElement.setAttribute("data-theme", ctx.theme);
    var info = ctx.toolInfo;
    if (info && info.tool && typeof info.tool.name === "string") {
      state.tool = info.tool.name;
      if (!state.result && state.args) draw();
    }
  }

  window.addEventListener("message", function (event) {
    if (event.source !== host) return;
    var m = event.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (m.method === undefined) {
      var then = own.call(pending, m.id) ? pending[m.id] : null;
      delete pending[m.id];
      if (then) then(m.result, m.error);
      return;
    }
    var params = m.params && typeof m.params === "object" ? m.params : {};
    if (m.id !== undefined) {
      // Requests from the host: teardown and ping are answered; the app
      // offers nothing else.
      if (m.method === "ui/resource-teardown" || m.method === "ping") send({ id: m.id, result: {} });
      else send({ id: m.id, error: { code: -32601, message: "method not found" } });
      return;
    }
    if (m.method === "ui/notifications/tool-input") {
      state.args = params.arguments || {};
      if (!state.result) draw();
    } else if (m.method === "ui/notifications/tool-result") {
      state.result = params;
      draw();
    } else if (m.method === "ui/notifications/tool-cancelled") {
      state.cancelled = typeof params.reason === "string" ? params.reason : "";
      if (!state.result) draw();
    } else if (m.method === "ui/notifications/host-context-changed") {
      context(params);
    }
  });

  if (window.ResizeObserver) new ResizeObserver(report).observe(root);
  request("ui/initialize", {
    appInfo: { name: "toolprism-card", version: "1" },
    appCapabilities: {},
    protocolVersion: "2026-01-26"
  }, function (result) {
    if (result) context(result.hostContext);
    notify("ui/notifications/initialized");
    report();
  });
})();
