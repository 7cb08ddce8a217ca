//! The showcase's own session log drawn as an HTML page (`toolprism::html`)
//! and checked in headless Chromium: it loads with no console error and
//! makes no request, every card type shows its key facts in the DOM, it
//! reads the same with scripts off, a click collapses a call, and a
//! screenshot is saved under `target/html-viewer/`.
//!
//! The log comes from the showcase binary itself (`--log PATH`); the page
//! is drawn with the showcase's tools registered (for their presenters
//! only: replay runs nothing). The page's renderer knows none of them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;
use toolprism::code::CodeMode;
use toolprism::{Mode, Registry};
use toolprism_examples::tools::{AcmeTicketTool, FlakyRenderTool};
use toolprism_testkit::browser::{Open, Step, browser, file_url};
use toolprism_tools::{
    BashTool, EditTool, GlobTool, GrepTool, ReadTool, SqlQueryTool, WebFetchTool, WriteTool,
};

const BIN: &str = env!("CARGO_BIN_EXE_toolprism-examples");

/// Where the page and screenshots go: `target/html-viewer/`.
fn out_dir() -> PathBuf {
    let dir = toolprism_testkit::target_dir().join("html-viewer");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The showcase's log, made once per test binary, and its page.
fn showcase_page() -> &'static Path {
    static PAGE: OnceLock<PathBuf> = OnceLock::new();
    PAGE.get_or_init(|| {
        let dir = out_dir();
        // Its own directory, so the page is titled `session.jsonl`.
        let run = dir.join(format!("run-{}", std::process::id()));
        std::fs::create_dir_all(&run).unwrap();
        let log = run.join("session.jsonl");
        let _ = std::fs::remove_file(&log);
        let _ = std::fs::remove_dir_all(log.with_extension("spill"));
        let out = Command::new(BIN)
            .arg("--log")
            .arg(&log)
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("the showcase binary runs");
        assert!(
            out.status.success(),
            "the showcase failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // Replay draws cards with these tools' presenters and runs nothing,
        // so they need no real workspace or database.
        let registry = Registry::builder()
            .tool(ReadTool::default())
            .tool(GrepTool::default())
            .tool(GlobTool::default())
            .tool(BashTool::default())
            .tool(EditTool::default())
            .tool(WriteTool::default())
            .tool(WebFetchTool::new())
            .tool(SqlQueryTool::new(dir.join("unused.sqlite")))
            .tool(AcmeTicketTool::default())
            .tool(FlakyRenderTool)
            .code_mode(Mode::Both)
            .build()
            .expect("the showcase's tools register");
        let page = dir.join("showcase.html");
        let counts =
            toolprism::html::write_session(&log, &registry, &page).expect("write the page");
        assert_eq!(counts.calls, 31, "{counts:?}");
        assert_eq!(counts.problems, 0, "{counts:?}");
        let _ = std::fs::remove_dir_all(&run);
        eprintln!(
            "[html] showcase page: {} bytes, {} calls",
            std::fs::metadata(&page).unwrap().len(),
            counts.calls
        );
        page
    })
}

#[test]
fn the_showcase_page_loads_with_no_console_error_and_makes_no_request() {
    let page = showcase_page();
    let url = file_url(page);
    let run = browser().run(
        &url,
        Open::default(),
        &[
            // The script ran (its CSP hash matched): the toolbar is shown.
            Step::Eval("!document.getElementById('tb').hidden"),
            Step::Eval("document.querySelectorAll('article.call').length"),
        ],
    );
    assert_eq!(run.errors(), Vec::<String>::new(), "{:?}", run.console);
    assert_eq!(run.requests_beyond(&url), Vec::<&Value>::new());
    assert!(run.csp_violations.is_empty(), "{:?}", run.csp_violations);
    assert!(run.dialogs.is_empty(), "{:?}", run.dialogs);
    assert_eq!(run.results[0], true, "the page's script did not run");
    assert_eq!(run.results[1], 31);
    eprintln!("[html] showcase page loaded in {:.0} ms", run.load_ms);
}

#[test]
fn every_call_is_rendered_for_a_screenshot_and_for_anything_reading_its_text() {
    // No call is left for the browser to draw when scrolled to: none is
    // under `content-visibility`, and the rendered text (`innerText`, what
    // a full-page screenshot shows) holds every call's title and status.
    let page = showcase_page();
    let run = browser().run(
        &file_url(page),
        Open::default(),
        &[Step::Eval(
            r#"(() => {
              const calls = Array.from(document.querySelectorAll('article.call'));
              const skipped = (e) => {
                for (; e; e = e.parentElement) if (getComputedStyle(e).contentVisibility !== 'visible') return true;
                return false;
              };
              const text = document.body.innerText;
              return {
                skipped: calls.filter(skipped).length,
                missing: calls.map((a) => a.querySelector('summary').innerText.trim()).filter((s) => !s || !text.includes(s)),
                last: calls[calls.length - 1].querySelector('.card.result').innerText,
              };
            })()"#,
        )],
    );
    let r = &run.results[0];
    assert_eq!(r["skipped"], 0, "{r}");
    assert_eq!(r["missing"], serde_json::json!([]), "{r}");
    // The page's last call, far below the fold: the agent's read.
    assert!(
        r["last"]
            .as_str()
            .unwrap()
            .contains("src/generated/g_000.rs\nlines 1–2 of 2"),
        "{r}"
    );
}

/// Facts read from the DOM, as `{name: value}`.
const FACTS: &str = r#"(() => {
  const q = (s) => Array.from(document.querySelectorAll(s));
  const text = (s) => q(s).map((e) => e.textContent.trim());
  const card = (tag) => q(`article[data-result="${tag}"]`).length;
  // A diff line's text: after its numbers, without its sign.
  const line = (r) => Array.from(r.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').slice(2);
  return {
    resultTags: Array.from(new Set(q('article.call').map((a) => a.dataset.result))).sort(),
    callTags: Array.from(new Set(q('article.call').map((a) => a.dataset.call))).sort(),
    exits: text('.result.t-terminal .chip.exit, .result.t-terminal .chip.signal'),
    timedOut: text('.result.t-terminal .chip.timedout'),
    cmdTitles: text('summary code.cmd'),
    searchCounts: text('.result.t-search .chip.trunc'),
    searchCut: text('.result.t-search p.cut'),
    searchFiles: q('.result.t-search .file').length,
    paths: q('.result.t-search pre.paths').map((p) => p.textContent.split('\n').length).reduce((a, b) => a + b, 0),
    readWindow: text('.result.t-read .wl'),
    readLines: text('.result.t-read pre.src i'),
    readMore: text('.result.t-read p.cut'),
    added: q('pre.diff .r.add').map(line),
    removed: q('pre.diff .r.del').map(line),
    addedNumbers: q('pre.diff:not(.bare) .r.add').map((r) => r.children[1].textContent),
    removedNumbers: q('pre.diff:not(.bare) .r.del').map((r) => r.children[0].textContent),
    hunks: text('pre.diff .r.hh'),
    newFile: text('.chip.info').filter((t) => t === 'new file').length,
    web: text('.result.t-web .chip'),
    webUrls: text('.result.t-web code.url'),
    errorCodes: text('article.err summary .chip.code'),
    errorCards: q('article.err .card.result.err').length,
    stats: text('.stats .stat').map((s) => s.replace(/\s+/g, ' ')),
    codes: text('.codes a.chip'),
    links: q('a[href]').map((a) => a.getAttribute('href')).filter((h) => !h.startsWith('#')),
    images: q('img').length,
    folds: text('details.more > summary'),
    titles: text('summary .ttl'),
    terminalOutputs: text('.result.t-terminal .tx.term'),
    spillNotes: text('.result.t-terminal pre.note'),
    spillNotesFolded: q('.result.t-terminal pre.note').filter((e) => e.closest('details.more')).length,
  };
})()"#;

#[test]
fn every_card_type_shows_its_key_facts() {
    let page = showcase_page();
    let run = browser().run(&file_url(page), Open::default(), &[Step::Eval(FACTS)]);
    let f = &run.results[0];
    let strings = |key: &str| -> Vec<String> {
        f[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: {f}"))
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect()
    };
    let has = |key: &str, want: &str| {
        let got = strings(key);
        assert!(
            got.iter().any(|s| s.contains(want)),
            "{key} lacks {want:?}: {got:?}"
        );
    };
    // Every result card tag and every call card tag of the vocabulary the
    // showcase uses.
    assert_eq!(
        strings("resultTags"),
        ["diff", "generic", "read", "search", "terminal", "web"]
    );
    assert_eq!(strings("callTags"), ["diff", "generic", "terminal"]);

    // Terminal: the exit codes and the signal from each card's status, the
    // command as title. The `sleep 5` call's card says SIGKILL; that it timed
    // out is in its output, as text: no label is read out of output text.
    has("exits", "exit code 0");
    has("exits", "exit code 3");
    has("exits", "killed by SIGKILL");
    assert_eq!(strings("timedOut"), Vec::<String>::new());
    has("terminalOutputs", "[timed out after 300 ms");
    has("cmdTitles", "$ sleep 5");
    has("cmdTitles", "$ seq 1 5000");
    // The spilled `seq 1 5000`: the spill notice is in view (not folded),
    // its status is said once (the chip), and its last line is whole.
    assert_eq!(strings("spillNotes").len(), 1, "{f}");
    has("spillNotes", "is stored at: ");
    assert_eq!(f["spillNotesFolded"], 0, "{f}");
    let seq = strings("terminalOutputs")
        .into_iter()
        .find(|o| o.contains("is stored at"))
        .unwrap();
    assert!(!seq.contains("[exit code"), "the exit status twice: {seq}");
    assert!(
        seq.ends_with("3498\n[stdout truncated: only the first 16384 bytes were kept; the line the cap split is left out]"),
        "{}",
        &seq[seq.len() - 200..]
    );

    // Search: matches grouped by file, and paths, each saying N shown of M.
    has("searchCounts", "100 shown of 243");
    has("searchCounts", "100 shown of 123");
    has("searchCut", "the search found 143 more");
    assert!(f["searchFiles"].as_u64().unwrap() > 1, "{f}");
    // The glob of the search scenario, the program's and the agent's: 100 each.
    assert_eq!(f["paths"], 300);

    // Read: the window and its numbered lines; the call cards' titles say
    // only the window the arguments asked for.
    // Then the program's nested read of README.md, and the agent's read.
    assert_eq!(
        strings("readWindow"),
        ["lines 1–12 of 44", "lines 1–3 of 5", "lines 1–2 of 2"]
    );
    has("titles", "Read src/lib.rs (lines 1–12)");
    has("titles", "Read ../outside.txt");
    assert!(strings("titles").iter().all(|t| !t.contains("2000")), "{f}");
    let numbers: Vec<String> = (1..=12)
        .chain(1..=3)
        .chain(1..=2)
        .map(|n| n.to_string())
        .collect();
    assert_eq!(strings("readLines"), numbers);
    has("readMore", "32 more lines after line 12");

    // Diff: the edit's removed and added line with their numbers; the
    // write of a new file is all added.
    has("removed", "port = 8080");
    has("added", "port = 9090");
    has("added", "# Plan");
    has("added", "- tests for remove");
    // The write's result: a new file. Its call card proposed the same
    // diff, so the page draws it once; the write the sandbox refused
    // (read-only) draws only its call card's.
    assert_eq!(f["newFile"], 2, "{f}");
    // The edit's hunk is numbered as in the file (`port` is line 20 of
    // config/app.toml); its call card, drawn from the arguments, which
    // say no line, is not numbered at all. The refused write (the sandbox
    // scenario) draws its proposed new file first.
    assert_eq!(
        strings("hunks"),
        ["@@ -0,0 +1,1 @@", "@@ -17,7 +17,7 @@", "@@ -0,0 +1,4 @@"],
        "{f}"
    );
    assert_eq!(strings("removedNumbers"), ["20"], "{f}");
    assert!(strings("addedNumbers").contains(&"20".to_owned()), "{f}");
    assert!(strings("addedNumbers").iter().all(|n| !n.is_empty()));

    // Web: status and truncation, the URL as text.
    has("web", "HTTP 200 OK");
    has("web", "HTTP 404 Not Found");
    has("web", "truncated");
    has("webUrls", "http://127.0.0.1:");

    // Errors: red, with their codes, counted in the header.
    let mut codes = strings("errorCodes");
    codes.sort();
    assert_eq!(
        codes,
        [
            "AMBIGUOUS_MATCH",
            "INVALID_TOOL_OUTPUT",
            "NOT_READ_ONLY",
            "OUTSIDE_WORKSPACE",
            "SANDBOX_DENIED"
        ]
    );
    assert_eq!(f["errorCards"], 5);
    has("stats", "31 calls");
    // The scenarios' calls and a program's 3 nested calls: all but the
    // five errors succeeded.
    has("stats", "26 succeeded");
    has("stats", "3 nested");
    has("stats", "5 errors");
    assert_eq!(strings("codes").len(), 5, "{f}");

    // Nothing live: no link out, no image; long bodies are folded, and say how much.
    assert_eq!(strings("links"), Vec::<String>::new());
    assert_eq!(f["images"], 0);
    has("folds", "more lines");
}

#[test]
fn the_page_reads_the_same_with_scripts_off() {
    let page = showcase_page();
    let open = Open {
        javascript: false,
        ..Open::default()
    };
    let run = browser().run(
        &file_url(page),
        open,
        &[
            Step::Eval("document.getElementById('tb').hidden"),
            Step::Eval("document.querySelectorAll('details.c[open]').length"),
            Step::Eval("document.body.textContent.includes('lines 1–12 of 44')"),
            Step::Eval("document.body.textContent.includes('100 shown of 243')"),
            Step::Eval("document.body.textContent.includes('exit code 3')"),
        ],
    );
    assert!(run.errors().is_empty(), "{:?}", run.console);
    assert_eq!(run.results[0], true, "the toolbar needs the script");
    assert_eq!(run.results[1], 31, "every call is open without the script");
    assert!(
        run.results[2..].iter().all(|r| r == true),
        "{:?}",
        run.results
    );
}

#[test]
fn a_click_collapses_a_call_and_the_toolbar_collapses_and_filters() {
    let page = showcase_page();
    let run = browser().run(
        &file_url(page),
        Open::default(),
        &[
            Step::Click("#c1 > details > summary", "!document.querySelector('#c1 > details').open"),
            Step::Click("#c1 > details > summary", "document.querySelector('#c1 > details').open"),
            Step::Click(
                "button[data-a=close]",
                "document.querySelectorAll('details.c[open]').length === 0",
            ),
            Step::Click(
                "button[data-a=open]",
                "document.querySelectorAll('details.c[open]').length === 31",
            ),
            Step::Click("button[data-a=err]", "document.body.classList.contains('only-err')"),
            Step::Eval(
                "Array.from(document.querySelectorAll('article.call')).filter((a) => a.offsetParent !== null).length",
            ),
        ],
    );
    assert!(run.errors().is_empty(), "{:?}", run.console);
    assert_eq!(run.results[5], 5, "errors only shows the 5 failed calls");
}

#[test]
fn a_screenshot_of_the_showcase_session_is_saved_under_target() {
    let page = showcase_page();
    let dir = out_dir();
    let full = dir.join("showcase.png");
    let top = dir.join("showcase-top.png");
    let _ = std::fs::remove_file(&full);
    let _ = std::fs::remove_file(&top);
    // The top: header, then read, errors, search, terminal cards.
    let open = Open {
        width: 1200,
        height: 2300,
        scale: 1.5,
        ..Open::default()
    };
    let run = browser().run(
        &file_url(page),
        open,
        &[Step::Screenshot(&top, false), Step::Screenshot(&full, true)],
    );
    assert!(run.errors().is_empty(), "{:?}", run.console);
    for path in [&full, &top] {
        let bytes = std::fs::read(path).unwrap();
        assert!(
            bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{}",
            path.display()
        );
        assert!(bytes.len() > 50_000, "{} is nearly empty", path.display());
    }
    eprintln!(
        "[html] screenshots: {} and {}",
        top.display(),
        full.display()
    );
}
