//! The card app in a real MCP Apps host: headless Chromium (Debian's),
//! a host page built on the official host side
//! (`@modelcontextprotocol/ext-apps/app-bridge`, pinned, installed from npm
//! under `target/` and bundled with a pinned esbuild), connected over
//! Streamable HTTP to an `McpServer` served from the same loopback origin.
//! Each call's `ui://toolprism/card` resource is drawn in a sandboxed
//! iframe; the test reads what each iframe drew, checks that a hostile
//! result ran nothing and loaded nothing, and that a client without the
//! extension is offered nothing new.

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::process::Command;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolprism::card::{
    CallCard, DiffCall, DiffResult, ExitStatus, FileDiff, NumberedLine, ReadResult, ResultCard,
    SearchResult, TerminalCall, TerminalResult, WebFetch, WebResult,
};
use toolprism::mcp::{McpServer, StreamableHttpServerConfig};
use toolprism::{
    ContentBlock, NoMeta, Registry, Tool, ToolContext, ToolError, ToolInfo, ToolResult,
};
use toolprism_testkit::browser::{Open, Step, browser};

/// The host side, its peers, and the bundler, pinned.
const PACKAGES: &[&str] = &[
    "@modelcontextprotocol/ext-apps@2.0.4",
    "@modelcontextprotocol/client@2.4.0",
    "@modelcontextprotocol/core@2.4.0",
    "zod@4.6.7",
    "esbuild@0.28.2",
];

/// Arguments of `card`: the cards to present (as their wire JSON), the
/// text content, and an error code to fail with.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
struct CardArgs {
    call: Option<Value>,
    result: Option<Value>,
    text: String,
    code: Option<String>,
    /// Anything else the model sent (shown in the call card).
    #[allow(dead_code)]
    note: Option<String>,
}

/// Presents the cards it is given: one tool for every card kind.
struct CardTool;

impl Tool for CardTool {
    type Args = CardArgs;
    type Value = String;
    type Meta = NoMeta;
    const INFO: ToolInfo = ToolInfo::new("card", "Presents the cards it is given.");

    async fn execute(&self, args: CardArgs, _cx: &ToolContext<'_>) -> Result<String, ToolError> {
        match args.code {
            Some(code) => Err(ToolError::new(args.text).with_code(code)),
            None => Ok(args.text),
        }
    }

    fn render(_args: &CardArgs, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.clone())]
    }

    fn present_call(args: &CardArgs) -> Option<CallCard> {
        args.call
            .clone()
            .and_then(|c| serde_json::from_value(c).ok())
    }

    fn present_result(args: &CardArgs, _result: &ToolResult<NoMeta>) -> Option<ResultCard> {
        args.result
            .clone()
            .and_then(|c| serde_json::from_value(c).ok())
    }
}

/// Installs the host side and bundles the host page's script; returns the
/// page and the bundle.
fn host_files() -> (String, Vec<u8>) {
    let dir = toolprism_testkit::npm_packages("mcp-app", PACKAGES);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/app_host");
    std::fs::copy(source.join("host.js"), dir.join("host.js")).expect("copy host.js");
    let bundle = dir.join("host.bundle.js");
    let esbuild: PathBuf = dir.join("node_modules/.bin/esbuild");
    let out = Command::new(&esbuild)
        .current_dir(&dir)
        .args([
            "host.js",
            "--bundle",
            "--format=iife",
            "--platform=browser",
            "--log-level=error",
        ])
        .arg(format!("--outfile={}", bundle.display()))
        .output()
        .expect("run esbuild");
    assert!(
        out.status.success(),
        "esbuild failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(source.join("host.html")).expect("host.html");
    (page, std::fs::read(&bundle).expect("the bundle"))
}

/// Serves the host page, its script and the MCP server on one loopback
/// origin, so the page's requests to `/mcp` are same-origin.
fn serve(rt: &tokio::runtime::Runtime, page: String, script: Vec<u8>) -> String {
    let registry = Registry::builder().tool(CardTool).build().unwrap();
    let mcp = McpServer::new(registry).http_service(StreamableHttpServerConfig::default());
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let page = Bytes::from(page);
    let script = Bytes::from(script);
    rt.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (mcp, page, script) = (mcp.clone(), page.clone(), script.clone());
            tokio::spawn(async move {
                let route = service_fn(move |request: Request<Incoming>| {
                    let (mut mcp, page, script) = (mcp.clone(), page.clone(), script.clone());
                    async move {
                        let file = |body: Bytes, kind: &str| {
                            Ok::<_, Infallible>(
                                Response::builder()
                                    .header("content-type", kind)
                                    .body(Full::new(body).map_err(|e| match e {}).boxed())
                                    .unwrap(),
                            )
                        };
                        match request.uri().path() {
                            "/" => file(page, "text/html; charset=utf-8"),
                            "/host.js" => file(script, "text/javascript"),
                            _ => tower_service::Service::call(&mut mcp, request).await,
                        }
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), route)
                    .await;
            });
        }
    });
    format!("http://{addr}/")
}

/// A hostile string: markup, a script, a handler, a `javascript:` URL and
/// an image from an address that would show up as a request.
const HOSTILE: &str = "<script>alert('script')</script><img src=\"http://127.0.0.1:9/x.png\" onerror=\"alert('img')\"><a href=\"javascript:alert('link')\">javascript:alert('url')</a>";

fn specs() -> Vec<Value> {
    let terminal_call = CallCard::Terminal(
        TerminalCall::new("cargo test --workspace")
            .with_description("Run the tests")
            .with_cwd("/work/toolprism"),
    );
    let terminal = ResultCard::Terminal(TerminalResult::new(
        None,
        Some("running 3 tests\ntest a ... ok\ntest b ... FAILED\n".into()),
        Some(ExitStatus::Code(101)),
    ));
    let paths = (0..40).map(|i| format!("src/module_{i}.rs")).collect();
    let search = ResultCard::Search(SearchResult::paths(paths, 243).unwrap());
    let mut diff = FileDiff::new(
        "src/lib.rs",
        Some("fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n".into()),
        "fn main() {\n    let x = 2;\n    println!(\"{x}\");\n}\n",
    );
    diff.old_start = Some(17);
    diff.new_start = Some(17);
    let diff_call = CallCard::Diff(DiffCall::new("Edit src/lib.rs", vec![diff.clone()]));
    let diff = ResultCard::Diff(DiffResult::new(vec![diff]).with_title("Edit src/lib.rs"));
    let read = ResultCard::Read(ReadResult::new(
        "src/notes.txt",
        11,
        (11..=14)
            .map(|n| NumberedLine::new(n, format!("line {n} of the notes")))
            .collect(),
        44,
    ));
    let web = ResultCard::Web(WebResult::Fetch(
        WebFetch::new("https://example.com/missing", 404, true).with_title("Not here"),
    ));
    let hostile_call = CallCard::generic(
        HOSTILE,
        None,
        Some(json!({ "path": HOSTILE, "url": "javascript:alert('arg')" })),
    );
    let hostile_result = ResultCard::generic(
        Some(HOSTILE.into()),
        vec![ContentBlock::text(format!("output: {HOSTILE}"))],
    );
    let hostile_read = ResultCard::Read(
        ReadResult::new(
            "javascript:alert('path')",
            1,
            vec![NumberedLine::new(1, HOSTILE)],
            1,
        )
        .with_title(HOSTILE)
        .with_lang(HOSTILE),
    );
    vec![
        json!({"id": "terminal", "tool": "card", "label": "bash · cargo test",
            "arguments": {"text": "exit 101", "call": terminal_call, "result": terminal}}),
        json!({"id": "diff", "tool": "card", "label": "edit · src/lib.rs",
            "arguments": {"text": "edited", "call": diff_call, "result": diff}}),
        json!({"id": "search", "tool": "card", "label": "glob",
            "arguments": {"text": "40 of 243", "result": search}}),
        json!({"id": "read", "tool": "card", "label": "read",
            "arguments": {"text": "4 lines", "result": read}}),
        json!({"id": "web", "tool": "card", "label": "web_fetch",
            "arguments": {"text": "404", "result": web}}),
        json!({"id": "error", "tool": "card", "label": "a failing call",
            "arguments": {"text": "no such file: a.txt", "code": "NOT_FOUND"}}),
        json!({"id": "hostile", "tool": "card", "label": "hostile", "theme": "dark",
            "arguments": {"text": HOSTILE, "note": HOSTILE, "call": hostile_call, "result": hostile_result}}),
        json!({"id": "hostile_read", "tool": "card", "label": "hostile read",
            "arguments": {"text": HOSTILE, "result": hostile_read}}),
        json!({"id": "plain", "tool": "card", "label": "a result without cards",
            "arguments": {"text": "plain", "note": HOSTILE},
            "result": {"content": [{"type": "text", "text": format!("plain text {HOSTILE}")}], "isError": true,
                        "_meta": {"toolprism/errorCode": "TOOL_FAILED"}}}),
    ]
}

/// What an app drew: its text, and what a hostile result would have left.
const DRAWN: &str = "({
  text: document.getElementById('app').innerText,
  scripts: document.scripts.length,
  active: document.querySelectorAll('img,a,iframe,object,embed,form,[onerror],[onclick],[href],[src]').length,
  theme: document.documentElement.getAttribute('data-theme'),
  background: getComputedStyle(document.body).color,
  cards: Array.from(document.querySelectorAll('#app > section')).map((s) => s.className),
})";

#[test]
fn the_card_app_draws_each_card_inside_an_mcp_apps_host_and_runs_nothing_it_is_sent() {
    let (page, script) = host_files();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let url = serve(&rt, page, script);
    let specs = specs();
    let shows: Vec<String> = specs.iter().map(|spec| format!("tpShow({spec})")).collect();
    let ids: Vec<&str> = specs.iter().map(|s| s["id"].as_str().unwrap()).collect();
    let shot = toolprism_testkit::target_dir()
        .join("testkit")
        .join("mcp-app-host.png");
    let mut steps = vec![Step::Eval("tpConnect()")];
    steps.extend(shows.iter().map(|s| Step::Eval(s)));
    steps.extend(ids.iter().map(|id| Step::FrameEval(id, DRAWN)));
    steps.push(Step::Eval(
        "tpPlain('card', {text: 'plain', result: {card: 'generic', title: 'x'}})",
    ));
    steps.push(Step::Eval("window.scrollTo(0, 0), 0"));
    steps.push(Step::Screenshot(&shot, false));
    let run = browser().run(
        &url,
        Open {
            width: 860,
            height: 760,
            ..Open::default()
        },
        &steps,
    );
    let mut results = run.results.iter();
    let connected = results.next().unwrap();
    let shown: Vec<&Value> = results.by_ref().take(specs.len()).collect();
    let drawn: Vec<&Value> = results.by_ref().take(specs.len()).collect();
    let plain = results.next().unwrap();

    // Offered to a host that declares the extension.
    assert!(
        connected["capabilities"]["extensions"]["io.modelcontextprotocol/ui"].is_object(),
        "{connected}"
    );
    assert!(
        connected["capabilities"]["resources"].is_object(),
        "{connected}"
    );
    assert_eq!(
        connected["tools"],
        json!([{"name": "card", "ui": {"resourceUri": "ui://toolprism/card"}}])
    );
    assert_eq!(connected["resources"][0]["uri"], "ui://toolprism/card");
    assert_eq!(
        connected["resources"][0]["mimeType"],
        "text/html;profile=mcp-app"
    );
    for (spec, shown) in specs.iter().zip(&shown) {
        assert_eq!(shown["mimeType"], "text/html;profile=mcp-app", "{shown}");
        let from_server = spec.get("result").is_none();
        assert_eq!(shown["view"], from_server, "{}: {shown}", spec["id"]);
        assert!(
            shown["height"].as_f64().unwrap() > 40.0,
            "{}: the app reported its size: {shown}",
            spec["id"]
        );
    }
    let text = |id: &str| -> &str {
        let at = ids.iter().position(|i| *i == id).unwrap();
        drawn[at]["text"].as_str().unwrap()
    };
    let has = |id: &str, facts: &[&str]| {
        for fact in facts {
            assert!(
                text(id).contains(fact),
                "{id} draws {fact:?}:\n{}\nshown: {}",
                text(id),
                shown[ids.iter().position(|i| *i == id).unwrap()]
            );
        }
    };
    has(
        "terminal",
        &[
            "$ cargo test --workspace",
            "/work/toolprism",
            "test b ... FAILED",
            "exit code 101",
        ],
    );
    has(
        "diff",
        &["src/lib.rs", "let x = 1;", "let x = 2;", "17", "+1", "−1"],
    );
    has("search", &["40 shown of 243"]);
    has(
        "read",
        &["src/notes.txt", "lines 11–14 of 44", "line 12 of the notes"],
    );
    has(
        "web",
        &["https://example.com/missing", "HTTP 404", "truncated"],
    );
    has("error", &["NOT_FOUND", "no such file: a.txt"]);
    has("plain", &["TOOL_FAILED", "plain text <script>", "card"]);
    for id in ["hostile", "hostile_read"] {
        has(
            id,
            &["<script>alert('script')</script>", "javascript:alert("],
        );
    }
    has(
        "hostile",
        &["onerror=\"alert('img')\"", "javascript:alert('arg')"],
    );
    has("hostile_read", &["javascript:alert('path')"]);
    for (id, drawn) in ids.iter().zip(&drawn) {
        assert_eq!(
            drawn["scripts"], 1,
            "{id}: only the app's own script: {drawn}"
        );
        assert_eq!(
            drawn["active"], 0,
            "{id}: no link, image or handler: {drawn}"
        );
    }
    // The host's theme is followed.
    let hostile = &drawn[ids.iter().position(|i| *i == "hostile").unwrap()];
    assert_eq!(hostile["theme"], "dark");
    assert_eq!(drawn[0]["theme"], "light");
    assert_ne!(hostile["background"], drawn[0]["background"]);
    // The generic card for a result that carries none.
    let plain_cards = &drawn[ids.iter().position(|i| *i == "plain").unwrap()]["cards"];
    assert_eq!(
        plain_cards,
        &json!(["tp card call t-generic", "tp card result t-generic err"])
    );

    // Nothing ran, nothing left the iframes: the page, its script, and the
    // host's own requests to /mcp are all the requests there were.
    assert!(run.dialogs.is_empty(), "{:?}", run.dialogs);
    // Chromium logs the host's own `/mcp` answers that are not 2xx (the
    // client's optional GET stream, the DELETE that ends a session); every
    // request is checked below.
    let errors: Vec<String> = run
        .errors()
        .into_iter()
        .filter(|e| !e.contains("Failed to load resource: the server responded with a status of"))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let beyond: Vec<&Value> = run
        .requests
        .iter()
        .filter(|r| {
            let u = r["url"].as_str().unwrap_or("");
            !(u == url || u == format!("{url}host.js") || u == format!("{url}mcp"))
        })
        .collect();
    assert!(beyond.is_empty(), "requests beyond the host: {beyond:?}");

    // A client without the extension sees nothing new.
    assert_eq!(plain["uiMeta"], 0, "{plain}");
    assert!(plain["capabilities"].get("resources").is_none(), "{plain}");
    assert!(plain["capabilities"].get("extensions").is_none(), "{plain}");
    assert!(
        !plain["metaKeys"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k == "toolprism/view"),
        "{plain}"
    );
    assert_eq!(plain["content"][0]["text"], "plain");
    eprintln!("[mcp-app] screenshot: {}", shot.display());
}
