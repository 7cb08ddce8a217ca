//! `toolprism::html` pages in headless Chromium (Debian's, driven by
//! Playwright; see `toolprism_testkit::browser`): a hostile log renders as text and runs
//! nothing, every card variant and nesting draw right, and a 10,000-call
//! log loads and answers a click within a stated bound.

use crate::echo;

use std::time::Instant;

use serde_json::{Value, json};
use toolprism::html::{self, Session, SessionCall};
use toolprism::replay::ReplayedEntry;
use toolprism_testkit::browser::{Open, Step, browser, file_url};

/// Payloads that would run script, load something or leave the page if
/// any reached the DOM as markup. Each sets `window.__pwned` or opens a
/// dialog.
const PAYLOADS: [&str; 13] = [
    "<script>window.__pwned='script';alert('script')</script>",
    "<img src=x onerror=\"window.__pwned='img';alert('img')\">",
    "javascript:window.__pwned='js';alert('js')",
    "</textarea><script>window.__pwned='textarea'</script>",
    "</pre></div></details><svg onload=\"window.__pwned='svg'\"></svg>",
    "</title><script>window.__pwned='title'</script>",
    "</style><script>window.__pwned='style'</script>",
    "\" onmouseover=\"window.__pwned='attr'\" x=\"",
    "' autofocus onfocus='window.__pwned=\"attr2\"' x='",
    "<!-- --><script>window.__pwned='comment'</script>",
    "<iframe src=\"javascript:top.__pwned='iframe'\"></iframe>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:window.__pwned='meta'\">",
    "<base href=\"http://127.0.0.1:9/\"><a href=\"javascript:window.__pwned='a'\">x</a>",
];

fn all() -> String {
    PAYLOADS.join(" ")
}

/// A log where every field a page shows carries every payload.
fn hostile_log() -> String {
    let p = all();
    let text = json!({"type": "text", "text": p});
    let mut log = String::new();
    let mut add =
        |id: &str, call: Value, result: Value, content: Vec<Value>, code: Option<&str>| {
            log.push_str(&echo::call_lines(
                id,
                echo::ECHO,
                &call,
                &result,
                &content,
                code,
            ));
        };
    add(
        "generic",
        json!({"card": "generic", "title": p, "kind": "fetch", "rawInput": {p.as_str(): p, "n": [p]},
               "content": [text], "locations": [{"path": p, "line": 3}]}),
        json!({"card": "generic", "title": p, "content": [text, {"type": "image", "mimeType": p, "data": "AAAA"}]}),
        vec![text.clone()],
        None,
    );
    add(
        "terminal",
        json!({"card": "terminal", "title": p, "description": p, "cwd": p}),
        json!({"card": "terminal", "title": p, "output": p, "signal": p}),
        vec![text.clone()],
        None,
    );
    add(
        "diff",
        json!({"card": "diff", "title": p, "diffs": [{"path": p, "oldText": null, "newText": p}],
               "locations": [{"path": p}]}),
        json!({"card": "diff", "title": p, "diffs": [{"path": p, "oldText": format!("{p}\nsame\n"), "newText": format!("same\n{p}\n")}]}),
        vec![],
        None,
    );
    add(
        "search",
        json!({"card": "generic", "title": "search"}),
        json!({"card": "search", "shape": "matches", "title": p,
               "files": [{"path": p, "matches": [{"lineNumber": 1, "line": p}]}], "truncated": true, "total": 9}),
        vec![],
        None,
    );
    add(
        "paths",
        json!({"card": "generic", "title": "paths"}),
        json!({"card": "search", "shape": "paths", "paths": [p], "truncated": false, "total": 1}),
        vec![],
        None,
    );
    add(
        "read",
        json!({"card": "generic", "title": "read"}),
        json!({"card": "read", "title": p, "path": p, "offset": 1, "lines": [{"number": 1, "text": p}],
               "totalLines": 3, "lang": p, "content": p}),
        vec![],
        None,
    );
    add(
        "fetch",
        json!({"card": "generic", "title": PAYLOADS[2], "rawInput": {"url": PAYLOADS[2]}}),
        json!({"card": "web", "kind": "fetch", "title": p, "url": PAYLOADS[2], "statusCode": 200, "truncated": true}),
        vec![],
        None,
    );
    add(
        "websearch",
        json!({"card": "generic", "title": "search the web"}),
        json!({"card": "web", "kind": "search", "title": p, "answer": p, "truncated": true,
               "sources": [{"url": PAYLOADS[2], "title": p, "snippet": p, "publishedAt": p}]}),
        vec![],
        None,
    );
    // A failure whose code, id, tool name and content are hostile; its
    // tool is unknown, so replay draws generic cards from the raw log.
    let call = json!({"type": "tool/call", "callId": p, "name": p, "arguments": json!({"q": p}).to_string()});
    let result = json!({"type": "tool/result", "callId": p, "content": [text], "isError": true,
                        "error": {"code": p}, "meta": {"m": p}});
    log.push_str(&format!("{call}\n{result}\n"));
    // Arguments that are not JSON, shown as sent.
    let call = json!({"type": "tool/call", "callId": "raw", "name": "raw", "arguments": p});
    log.push_str(&format!("{call}\n"));
    // A corrupt line and a torn one, each full of payloads.
    log.push_str(&format!("{p}\n"));
    log.push_str(&format!(
        "{{\"type\":\"tool/call\",\"callId\":\"{}",
        p.replace('"', "\\\"")
    ));
    log
}

/// What the page's DOM holds that could run or load something.
const DANGER: &str = r#"(() => {
  const all = Array.from(document.querySelectorAll('*'));
  return {
    pwned: typeof window.__pwned === 'undefined' ? null : String(window.__pwned),
    scripts: document.scripts.length,
    loaders: document.querySelectorAll('img,iframe,frame,object,embed,form,link,base,meta[http-equiv=refresh],audio,video,source,textarea,input').length,
    externalLinks: Array.from(document.querySelectorAll('[href]')).map((e) => e.getAttribute('href')).filter((h) => !h.startsWith('#')),
    handlers: all.flatMap((e) => Array.from(e.attributes).filter((a) => a.name.startsWith('on')).map((a) => e.tagName + ' ' + a.name)),
    srcs: all.filter((e) => e.hasAttribute('src')).length,
    title: document.title,
  };
})()"#;

#[test]
fn a_hostile_log_renders_as_text_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // The log's file name is the page's title: hostile too.
    let log = dir
        .path()
        .join("<img src=x onerror=window.__pwned=1>.jsonl");
    std::fs::write(&log, hostile_log()).unwrap();
    let page = dir.path().join("hostile.html");
    let counts = html::write_session(&log, &echo::registry(), &page).unwrap();
    assert_eq!((counts.calls, counts.problems), (10, 2), "{counts:?}");
    let url = file_url(&page);
    let texts: Vec<String> = PAYLOADS
        .iter()
        .map(|p| format!("document.body.textContent.includes({})", json!(p)))
        .collect();
    let mut steps = vec![Step::Eval(DANGER)];
    steps.extend(texts.iter().map(|t| Step::Eval(t)));
    // Twice: under the page's CSP, and with CSP off, so that the escaping
    // alone is tested (the CSP would block an inline script that got through).
    for bypass_csp in [false, true] {
        let open = Open {
            bypass_csp,
            ..Open::default()
        };
        let run = browser().run(&url, open, &steps);
        let danger = &run.results[0];
        assert_eq!(danger["pwned"], Value::Null, "a payload ran: {danger}");
        assert!(run.dialogs.is_empty(), "a dialog opened: {:?}", run.dialogs);
        assert_eq!(
            run.requests_beyond(&url),
            Vec::<&Value>::new(),
            "the page made a request"
        );
        assert!(
            run.csp_violations.is_empty(),
            "markup got through: {:?}",
            run.csp_violations
        );
        assert!(run.errors().is_empty(), "{:?}", run.console);
        assert_eq!(danger["scripts"], 1, "only the page's own script: {danger}");
        assert_eq!(danger["loaders"], 0, "{danger}");
        assert_eq!(danger["externalLinks"], json!([]), "{danger}");
        assert_eq!(danger["handlers"], json!([]), "{danger}");
        assert_eq!(danger["srcs"], 0, "{danger}");
        assert_eq!(
            danger["title"],
            "<img src=x onerror=window.__pwned=1>.jsonl · toolprism session"
        );
        for (payload, shown) in PAYLOADS.iter().zip(&run.results[1..]) {
            assert_eq!(shown, &true, "not shown as text: {payload}");
        }
    }
}

/// A replayed entry from its JSON (fields replay adds later default).
fn entry(id: &str, call: Value, result: Option<Value>, extra: Value) -> ReplayedEntry {
    let mut v = json!({
        "callId": id, "name": "t", "arguments": "{}", "callCard": call, "resultCard": result,
        "content": [], "isError": false, "callLine": 1, "resultLine": result.as_ref().map(|_| 2),
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    serde_json::from_value(v).unwrap()
}

fn generic(title: &str) -> Value {
    json!({"card": "generic", "title": title, "kind": "other"})
}

#[test]
fn every_card_variant_and_nesting_draw_in_the_browser() {
    let ok = Some(json!({"card": "generic", "content": [{"type": "text", "text": "ok"}]}));
    let entries = vec![
        entry(
            "a",
            json!({"card": "terminal", "title": "make all", "cwd": "/w"}),
            Some(
                json!({"card": "terminal", "output": "built\n[timed out after 9 ms]", "signal": "SIGKILL"}),
            ),
            json!({}),
        ),
        entry("a:nested:1", generic("nested one"), ok.clone(), json!({})),
        entry(
            "a:nested:1:nested:1",
            generic("nested two"),
            ok.clone(),
            json!({}),
        ),
        entry(
            "b",
            json!({"card": "diff", "title": "Create x", "diffs": [{"path": "x", "oldText": null, "newText": "1\n2\n"}]}),
            Some(
                json!({"card": "diff", "diffs": [{"path": "x", "oldText": "a\nb\n", "newText": "a\nc\n"}]}),
            ),
            json!({}),
        ),
        entry(
            "c",
            generic("find"),
            Some(
                json!({"card": "search", "shape": "matches", "files": [{"path": "f.rs", "matches": [{"lineNumber": 4, "line": "hit"}]}], "truncated": true, "total": 7}),
            ),
            json!({}),
        ),
        entry(
            "d",
            generic("read"),
            Some(
                json!({"card": "read", "path": "f.rs", "offset": 11, "lines": [{"number": 11, "text": "x"}, {"number": 12, "text": "y"}], "totalLines": 20}),
            ),
            json!({}),
        ),
        entry(
            "e",
            generic("fetch"),
            Some(
                json!({"card": "web", "kind": "fetch", "url": "https://example.invalid/", "statusCode": 301, "truncated": false}),
            ),
            json!({}),
        ),
        entry(
            "f",
            generic("ask"),
            Some(
                json!({"card": "web", "kind": "search", "answer": "42", "truncated": false,
                          "sources": [{"url": "https://example.invalid/a", "title": "A", "snippet": "about a"}]}),
            ),
            json!({}),
        ),
        entry(
            "g",
            generic("shot"),
            Some(
                json!({"card": "generic", "content": [{"type": "image", "mimeType": "image/png", "data": "AAAAAAAA"}]}),
            ),
            json!({}),
        ),
        entry(
            "h",
            generic("broken"),
            Some(json!({"card": "generic", "content": [{"type": "text", "text": "Error: bad"}]})),
            json!({"isError": true, "errorCode": "INVALID_ARGS"}),
        ),
        entry("i", generic("crashed mid-call"), None, json!({})),
    ];
    let parents = [None, Some("a"), Some("a:nested:1")];
    let calls = entries
        .iter()
        .enumerate()
        .map(|(i, entry)| SessionCall {
            entry,
            parent_call_id: parents.get(i).copied().flatten(),
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("cards.html");
    std::fs::write(
        &page,
        html::session_page(&Session::from_calls("every card", calls, &[])),
    )
    .unwrap();
    let shot = toolprism_testkit::target_dir()
        .join("html-viewer")
        .join("cards.png");
    std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
    let url = file_url(&page);
    let run = browser().run(
        &url,
        Open::default(),
        &[
            Step::Eval(r#"(() => {
              const q = (s) => Array.from(document.querySelectorAll(s));
              const t = (s) => q(s).map((e) => e.textContent.trim());
              const margin = (id) => parseFloat(getComputedStyle(document.getElementById(id)).marginLeft);
              return {
                tags: q('article.call').map((a) => a.dataset.result),
                margins: [margin('c1'), margin('c2'), margin('c3'), margin('c4')],
                up: t('.up'),
                chips: t('details.c > :not(summary) .chip'),
                window: t('.wl'),
                image: t('.img'),
                answer: t('.t-web pre.answer'),
                sources: t('.sources li'),
                added: q('.diff .r.add').length, removed: q('.diff .r.del').length,
                err: q('article.err section.result.err').length,
                pending: t('article.pending .none-result'),
              };
            })()"#),
            Step::Screenshot(&shot, true),
        ],
    );
    assert!(run.errors().is_empty(), "{:?}", run.console);
    assert_eq!(run.requests_beyond(&url), Vec::<&Value>::new());
    let f = &run.results[0];
    assert_eq!(
        f["tags"],
        json!([
            "terminal", "generic", "generic", "diff", "search", "read", "web", "web", "generic",
            "generic", "none"
        ])
    );
    // Nested calls are indented, one step per level.
    let m: Vec<f64> = f["margins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        m[0] == 0.0 && m[1] > m[0] && m[2] > m[1] && m[3] == 0.0,
        "{m:?}"
    );
    assert_eq!(f["up"], json!(["↳ 1", "↳ 2"]));
    let chips: Vec<&str> = f["chips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    // The terminal card's output says "[timed out …]": its status says
    // SIGKILL, and only the status is a chip.
    assert!(!chips.contains(&"timed out"), "{chips:?}");
    for want in [
        "killed by SIGKILL",
        "1 shown of 7",
        "HTTP 301 Moved Permanently",
        "1 source",
        "INVALID_ARGS",
        "new file",
        "+2",
        "−0",
    ] {
        assert!(chips.contains(&want), "{want} missing from {chips:?}");
    }
    assert_eq!(f["window"], json!(["lines 11–12 of 20"]));
    assert!(
        f["image"][0]
            .as_str()
            .unwrap()
            .contains("image/png · 6 bytes"),
        "{f}"
    );
    assert_eq!(f["answer"], json!(["42"]));
    assert!(
        f["sources"][0]
            .as_str()
            .unwrap()
            .contains("https://example.invalid/a")
    );
    // The create (2 added) and the change (1 removed, 1 added).
    assert_eq!(
        (f["added"].as_u64(), f["removed"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(f["err"], 1);
    assert!(
        f["pending"][0]
            .as_str()
            .unwrap()
            .contains("No result in the log")
    );
}

/// One of eight kinds of call, in turn; every 17th fails.
fn big_log(calls: usize) -> String {
    let mut log = String::with_capacity(calls * 700);
    for i in 0..calls {
        let id = format!("call-{i}");
        let (call, result) = match i % 8 {
            0 => (
                json!({"card": "terminal", "title": format!("cargo test -p crate{i}"), "cwd": "/work"}),
                json!({"card": "terminal", "output": format!("running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... ok\n\ntest result: ok. 3 passed ({i})"), "exitCode": i % 3}),
            ),
            1 => (
                json!({"card": "diff", "title": format!("Edit src/m{i}.rs"), "diffs": [{"path": format!("src/m{i}.rs"), "oldText": "fn a() {}\nfn b() {}\nfn c() {}\n", "newText": format!("fn a() {{}}\nfn b() {{ {i} }}\nfn c() {{}}\n")}]}),
                json!({"card": "diff", "diffs": [{"path": format!("src/m{i}.rs"), "oldText": "fn a() {}\nfn b() {}\nfn c() {}\n", "newText": format!("fn a() {{}}\nfn b() {{ {i} }}\nfn c() {{}}\n")}]}),
            ),
            2 => (
                json!({"card": "generic", "title": format!("Read src/m{i}.rs"), "kind": "read", "rawInput": {"path": format!("src/m{i}.rs"), "offset": 1, "limit": 6}}),
                json!({"card": "read", "path": format!("src/m{i}.rs"), "offset": 1, "totalLines": 40, "lang": "rust",
                       "lines": (1..=6).map(|n| json!({"number": n, "text": format!("let x{n} = {i};")})).collect::<Vec<_>>()}),
            ),
            3 => (
                json!({"card": "generic", "title": format!("Grep /x{i}/"), "kind": "search", "rawInput": {"pattern": format!("x{i}")}}),
                json!({"card": "search", "shape": "matches", "truncated": true, "total": 40,
                       "files": [{"path": "a.rs", "matches": [{"lineNumber": 1, "line": "x"}, {"lineNumber": 9, "line": "y"}]}, {"path": "b.rs", "matches": [{"lineNumber": 3, "line": "z"}]}]}),
            ),
            4 => (
                json!({"card": "generic", "title": "Glob **/*.rs", "kind": "search"}),
                json!({"card": "search", "shape": "paths", "truncated": false, "total": 3, "paths": ["a.rs", "b.rs", format!("c{i}.rs")]}),
            ),
            5 => (
                json!({"card": "generic", "title": format!("Fetch http://127.0.0.1/{i}"), "kind": "fetch", "rawInput": {"url": format!("http://127.0.0.1/{i}")}}),
                json!({"card": "web", "kind": "fetch", "url": format!("http://127.0.0.1/{i}"), "statusCode": 200, "truncated": i % 2 == 0}),
            ),
            6 => (
                json!({"card": "generic", "title": "Ask the web", "kind": "fetch"}),
                json!({"card": "web", "kind": "search", "answer": "yes", "truncated": false,
                       "sources": [{"url": "https://example.invalid/1", "title": "One"}]}),
            ),
            _ => (
                json!({"card": "generic", "title": format!("Query {i}"), "kind": "other", "rawInput": {"sql": "SELECT 1"}}),
                json!({"card": "generic", "content": [{"type": "text", "text": "1 row\n| 1 |"}]}),
            ),
        };
        let code = (i % 17 == 16).then_some("TOOL_FAILED");
        let content = [json!({"type": "text", "text": format!("content of {i}")})];
        log.push_str(&echo::call_lines(
            &id,
            echo::ECHO,
            &call,
            &result,
            &content,
            code,
        ));
    }
    log
}

// Bounds for the 10,000-call page, with wide headroom for a loaded
// 2-core machine (measured here, unloaded: see the test's output).
const LOAD_BOUND_MS: f64 = 60_000.0;
const FIRST_CLICK_BOUND_MS: f64 = 10_000.0;
const COLLAPSE_ALL_BOUND_MS: f64 = 30_000.0;

#[test]
fn a_ten_thousand_call_log_loads_and_answers_a_click_within_bounds() {
    const CALLS: usize = 10_000;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.jsonl");
    std::fs::write(&log, big_log(CALLS)).unwrap();
    // Kept under target/ to look at; replaced by the next run.
    let page = toolprism_testkit::target_dir()
        .join("html-viewer")
        .join("big.html");
    std::fs::create_dir_all(page.parent().unwrap()).unwrap();
    let started = Instant::now();
    let counts = html::write_session(&log, &echo::registry(), &page).unwrap();
    let write_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(counts.calls, CALLS);
    assert_eq!(counts.failed(), CALLS / 17);
    let bytes = std::fs::metadata(&page).unwrap().len();
    let log_bytes = std::fs::metadata(&log).unwrap().len();
    let url = file_url(&page);
    let last = format!("#c{CALLS} > details > summary");
    // The page's CSP is off here: the driver polls a click's condition
    // with `eval`, which the CSP forbids (it only answers when the first
    // check already holds). The page is the same page.
    let open = Open {
        bypass_csp: true,
        ..Open::default()
    };
    let run = browser().run(
        &url,
        open,
        &[
            Step::Eval("document.querySelectorAll('article.call').length"),
            // The first click: collapse the first call.
            Step::Click(
                "#c1 > details > summary",
                "!document.querySelector('#c1 > details').open",
            ),
            // The last call, scrolled to and collapsed.
            Step::Click(
                &last,
                &format!("!document.querySelector('#c{CALLS} > details').open"),
            ),
            Step::Click(
                "button[data-a=close]",
                "document.querySelectorAll('details.c[open]').length === 0",
            ),
            Step::Click(
                "button[data-a=open]",
                &format!("document.querySelectorAll('details.c[open]').length === {CALLS}"),
            ),
            Step::Click(
                "button[data-a=err]",
                "document.body.classList.contains('only-err')",
            ),
        ],
    );
    assert!(run.errors().is_empty(), "{:?}", run.console);
    assert_eq!(run.requests_beyond(&url), Vec::<&Value>::new());
    assert_eq!(run.results[0], CALLS);
    let ms = |i: usize| run.results[i]["ms"].as_f64().unwrap();
    let (first, last_click, collapse, expand, filter) = (ms(1), ms(2), ms(3), ms(4), ms(5));
    eprintln!(
        "[html] {CALLS} calls: log {:.1} MB, page {:.1} MB written in {write_ms:.0} ms; \
         load {:.0} ms; first click {first:.0} ms; last call {last_click:.0} ms; \
         collapse all {collapse:.0} ms; expand all {expand:.0} ms; errors only {filter:.0} ms",
        log_bytes as f64 / 1e6,
        bytes as f64 / 1e6,
        run.load_ms,
    );
    assert!(
        run.load_ms < LOAD_BOUND_MS,
        "load took {:.0} ms",
        run.load_ms
    );
    assert!(
        first < FIRST_CLICK_BOUND_MS,
        "the first click took {first:.0} ms"
    );
    assert!(
        last_click < FIRST_CLICK_BOUND_MS,
        "a click on the last call took {last_click:.0} ms"
    );
    assert!(
        collapse < COLLAPSE_ALL_BOUND_MS,
        "collapse all took {collapse:.0} ms"
    );
    assert!(
        expand < COLLAPSE_ALL_BOUND_MS,
        "expand all took {expand:.0} ms"
    );
}

/// The showcase's 19 calls as replay drew them (arguments, both cards,
/// content, error code and meta, as `toolprism-examples --json` printed
/// them), repeated to `calls` calls: the showcase's session at the length
/// of a long agent run. This is the log whose page was 58.8 MB.
fn showcase_session(calls: usize) -> Vec<ReplayedEntry> {
    let one: Vec<Value> = include_str!("../support/showcase.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (0..calls)
        .map(|i| {
            let mut v = one[i % one.len()].clone();
            let id = format!("{}#{}", v["callId"].as_str().unwrap(), i / one.len());
            v["callId"] = id.into();
            v["callLine"] = (2 * i + 1).into();
            if v.get("resultLine").is_some() {
                v["resultLine"] = (2 * i + 2).into();
            }
            serde_json::from_value(v).unwrap()
        })
        .collect()
}

/// The first frame after the page loaded: by then it is parsed, laid out
/// and painted whole.
const FIRST_FRAME: &str = r#"new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  done({ usable: performance.now(), load: nav.loadEventEnd, fcp: paint ? paint.startTime : null });
})))"#;

/// What of the page is rendered: the calls none of whose boxes
/// `content-visibility` skips, how often the showcase's `exit 3` call's
/// status is in the rendered text (`innerText`) and in the page's text,
/// the last call's rendered text, and whether the print stylesheet draws
/// every call.
const RENDERED: &str = r#"(() => {
  const calls = Array.from(document.querySelectorAll('article.call'));
  const skipped = (e) => {
    for (; e; e = e.parentElement) if (getComputedStyle(e).contentVisibility !== 'visible') return true;
    return false;
  };
  const text = document.body.innerText;
  const printDrawsAll = Array.from(document.styleSheets[0].cssRules).some((r) =>
    r.media && r.media.mediaText === 'print' && r.cssText.includes('content-visibility: visible'));
  return {
    calls: calls.length,
    skipped: calls.filter(skipped).length,
    exit3: text.split('exit code 3').length - 1,
    lastText: calls[calls.length - 1].innerText,
    inDom: document.body.textContent.split('exit code 3').length - 1,
    printDrawsAll,
    nodes: document.getElementsByTagName('*').length,
  };
})()"#;

fn showcase_page(calls: usize, name: &str) -> (Vec<ReplayedEntry>, std::path::PathBuf, u64, f64) {
    let entries = showcase_session(calls);
    let session = entries
        .iter()
        .map(|entry| SessionCall {
            entry,
            parent_call_id: None,
        })
        .collect();
    let started = Instant::now();
    let text = html::session_page(&Session::from_calls(name, session, &[]));
    let draw_ms = started.elapsed().as_secs_f64() * 1000.0;
    let page = toolprism_testkit::target_dir()
        .join("html-viewer")
        .join(format!("{name}.html"));
    std::fs::create_dir_all(page.parent().unwrap()).unwrap();
    std::fs::write(&page, &text).unwrap();
    (entries, page, text.len() as u64, draw_ms)
}

/// The calls of the showcase's `exit 3` call among the first `calls`.
fn exit3_calls(entries: &[ReplayedEntry]) -> usize {
    entries
        .iter()
        .filter(|e| e.call_id.starts_with("bash-2#"))
        .count()
}

#[test]
fn every_call_of_a_page_of_500_calls_is_rendered_for_screenshots_and_text() {
    // No call is left for the browser to draw later: a full-page
    // screenshot draws every call and the rendered text holds every one.
    let (entries, page, _, _) = showcase_page(500, "showcase-500");
    let run = browser().run(&file_url(&page), Open::default(), &[Step::Eval(RENDERED)]);
    assert!(run.errors().is_empty(), "{:?}", run.console);
    let r = &run.results[0];
    assert_eq!(r["calls"], 500);
    assert_eq!(r["skipped"], 0, "every call is rendered: {r}");
    assert_eq!(
        r["exit3"],
        exit3_calls(&entries),
        "in the rendered text: {r}"
    );
    assert_eq!(entries.last().unwrap().call_id, "bash-2#26");
    assert!(
        r["lastText"].as_str().unwrap().contains("exit code 3"),
        "{r}"
    );
}

/// The 10,000-call showcase page: at most this many bytes…
const SHOWCASE_PAGE_BOUND_BYTES: u64 = 20_000_000;
/// …and usable (loaded, laid out, painted, a click answered) within this,
/// with headroom for a loaded 2-core machine (the figures are printed).
const SHOWCASE_USABLE_BOUND_MS: f64 = 10_000.0;

#[test]
fn the_ten_thousand_call_showcase_session_is_small_and_usable_at_once() {
    const CALLS: usize = 10_000;
    let (entries, page, bytes, draw_ms) = showcase_page(CALLS, "showcase-10k");
    let url = file_url(&page);
    let last = format!("#c{CALLS} > details > summary");
    // The page's CSP is off here: the driver polls a click's condition
    // with `eval`, which the CSP forbids (it only answers when the first
    // check already holds). The page is the same page.
    let open = Open {
        bypass_csp: true,
        ..Open::default()
    };
    let run = browser().run(
        &url,
        open,
        &[
            Step::Eval(FIRST_FRAME),
            Step::Click(
                "#c1 > details > summary",
                "!document.querySelector('#c1 > details').open",
            ),
            // The last call, scrolled to (drawn as it comes into view) and
            // collapsed.
            Step::Click(
                &last,
                &format!("!document.querySelector('#c{CALLS} > details').open"),
            ),
            Step::Eval(RENDERED),
        ],
    );
    assert!(run.errors().is_empty(), "{:?}", run.console);
    assert_eq!(run.requests_beyond(&url), Vec::<&Value>::new());
    let frame = &run.results[0];
    let usable = frame["usable"].as_f64().unwrap();
    let click = run.results[1]["ms"].as_f64().unwrap();
    let last_click = run.results[2]["ms"].as_f64().unwrap();
    let rendered = &run.results[3];
    eprintln!(
        "[html] showcase ×527, {CALLS} calls: page {:.1} MB ({} elements), drawn in {draw_ms:.0} ms; \
         first paint {:.0} ms, load {:.0} ms, first frame after load {usable:.0} ms, first click {click:.0} ms \
         (usable in {:.0} ms); last call {last_click:.0} ms",
        bytes as f64 / 1e6,
        rendered["nodes"],
        frame["fcp"].as_f64().unwrap_or(f64::NAN),
        frame["load"].as_f64().unwrap(),
        usable + click,
    );
    assert_eq!(rendered["calls"], CALLS);
    // Every call is in the page, whatever is drawn yet; print draws all.
    assert_eq!(rendered["inDom"], exit3_calls(&entries), "{rendered}");
    assert_eq!(rendered["printDrawsAll"], true, "{rendered}");
    // The last call, scrolled to, is drawn (then collapsed, as clicked):
    // its summary is rendered text.
    assert_eq!(entries.last().unwrap().call_id, "bash-2#526");
    let last_text = rendered["lastText"].as_str().unwrap();
    assert!(
        last_text.contains("grep -c discount src/lib.rs; exit 3") && last_text.contains("exit 3"),
        "the last call's text is rendered text: {last_text}"
    );
    assert!(
        bytes <= SHOWCASE_PAGE_BOUND_BYTES,
        "the page is {bytes} bytes"
    );
    assert!(
        usable + click < SHOWCASE_USABLE_BOUND_MS,
        "usable in {:.0} ms",
        usable + click
    );
}
