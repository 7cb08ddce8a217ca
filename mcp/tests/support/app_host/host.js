// A minimal MCP Apps host for the card app's browser test, built on the
// official host side (`@modelcontextprotocol/ext-apps/app-bridge`) and the
// official client: it connects to the server that served this page,
// lists the tools, reads each call's `ui://` resource, draws it in a
// sandboxed iframe (`allow-scripts` only: an opaque origin) and feeds it
// the call's input and result over postMessage.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const HOST = { name: "toolprism-test-host", version: "1.0.0" };
const EXTENSION = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };

async function connect(extension) {
  const client = new Client(HOST, { capabilities: extension ? { extensions: EXTENSION } : {} });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  return client;
}

let client = null;
let tools = [];

// Connects as a host that declares the extension; says what it was offered.
window.tpConnect = async function () {
  client = await connect(true);
  tools = (await client.listTools()).tools;
  const resources = (await client.listResources()).resources;
  return {
    capabilities: client.getServerCapabilities(),
    tools: tools.map((t) => ({ name: t.name, ui: (t._meta && t._meta.ui) || null })),
    resources,
  };
};

// Connects as a client without the extension and calls one tool.
window.tpPlain = async function (name, args) {
  const plain = await connect(false);
  const listed = (await plain.listTools()).tools;
  let resources;
  try {
    resources = (await plain.listResources()).resources;
  } catch (e) {
    resources = "refused: " + e.message;
  }
  const result = await plain.callTool({ name, arguments: args });
  await plain.close();
  return {
    capabilities: plain.getServerCapabilities(),
    uiMeta: listed.filter((t) => t._meta && t._meta.ui).length,
    resources,
    metaKeys: Object.keys(result._meta || {}),
    content: result.content,
  };
};

// Shows one call: `{id, tool, arguments, label?, theme?, result?}`; a given
// `result` is sent instead of calling the tool.
window.tpShow = async function (spec) {
  const tool = tools.find((t) => t.name === spec.tool);
  const uri = tool && tool._meta && tool._meta.ui && tool._meta.ui.resourceUri;
  const read = await client.readResource({ uri });
  const html = read.contents[0].text;

  const turn = document.createElement("section");
  turn.className = "turn";
  const label = document.createElement("h2");
  label.textContent = spec.label || spec.tool;
  const iframe = document.createElement("iframe");
  iframe.name = spec.id;
  iframe.title = spec.tool;
  iframe.setAttribute("sandbox", "allow-scripts");
  turn.append(label, iframe);
  document.getElementById("turns").append(turn);

  const bridge = new AppBridge(client, HOST, { openLinks: {}, serverTools: {}, logging: {} }, {
    hostContext: { theme: spec.theme || "light", displayMode: "inline", toolInfo: { tool } },
  });
  const sizes = [];
  let lastSize = 0;
  bridge.onsizechange = ({ height }) => {
    if (typeof height !== "number") return;
    iframe.style.height = height + "px";
    sizes.push(height);
    lastSize = performance.now();
  };
  const initialized = new Promise((resolve) => (bridge.oninitialized = resolve));
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;
  await bridge.sendToolInput({ arguments: spec.arguments });
  const result = spec.result || (await client.callTool({ name: spec.tool, arguments: spec.arguments }));
  const sentAt = performance.now();
  await bridge.sendToolResult(result);
  // Drawn once the app has reported a size since the result and then
  // stayed quiet a while (at most 3 s).
  while (performance.now() - sentAt < 3000) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (lastSize > sentAt && performance.now() - lastSize > 250) break;
  }
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return {
    uri,
    mimeType: read.contents[0].mimeType,
    sizes,
    height: iframe.getBoundingClientRect().height,
    view: !!(result._meta && result._meta["toolprism/view"]),
  };
};

