//! `toolprism::html` without a browser: every card variant and its key
//! facts, escaping of every field, error cards, truncation marks, nesting,
//! and `write_session` on real files.

use crate::echo;

use serde_json::{Value, json};
use toolprism::card::{
    CallCard, DiffCall, DiffResult, ExitStatus, FileDiff, GenericCall, GenericResult, Location,
    NumberedLine, ReadResult, ResultCard, SearchFile, SearchMatch, SearchResult, TerminalCall,
    TerminalResult, ToolKind, WebFetch, WebResult, WebSearch, WebSource,
};
use toolprism::html::{self, Session, SessionCall};
use toolprism::replay::{ReplayProblem, ReplayProblemKind, ReplayedEntry};
use toolprism::{ContentBlock, Registry};

/// A replayed entry, built from its JSON so that fields replay adds later
/// (with defaults) do not break the tests.
fn entry(id: &str, name: &str, call: &CallCard, result: Option<&ResultCard>) -> ReplayedEntry {
    let line = id.bytes().map(usize::from).sum::<usize>();
    serde_json::from_value(json!({
        "callId": id,
        "name": name,
        "arguments": "{\"a\":1}",
        "callCard": call,
        "resultCard": result,
        "content": [],
        "isError": false,
        "callLine": line,
        "resultLine": result.map(|_| line + 1),
    }))
    .expect("a replayed entry")
}

fn failed(mut e: ReplayedEntry, code: &str, message: &str) -> ReplayedEntry {
    let mut v = serde_json::to_value(&e).unwrap();
    v["isError"] = true.into();
    v["errorCode"] = code.into();
    v["content"] = json!([{"type": "text", "text": message}]);
    e = serde_json::from_value(v).unwrap();
    e
}

fn page_of(entries: &[ReplayedEntry], parents: &[Option<&str>]) -> String {
    let calls = entries
        .iter()
        .enumerate()
        .map(|(i, entry)| SessionCall {
            entry,
            parent_call_id: parents.get(i).copied().flatten(),
        })
        .collect();
    html::session_page(&Session::from_calls("test", calls, &[]))
}

fn terminal(output: &str, status: Option<ExitStatus>) -> ResultCard {
    ResultCard::Terminal(TerminalResult::new(None, Some(output.into()), status))
}

fn generic_call(title: &str) -> CallCard {
    CallCard::generic(title, Some(ToolKind::Other), Some(json!({"q": 1})))
}

// ---------------------------------------------------------------------------
// Every variant and its key facts
// ---------------------------------------------------------------------------

#[test]
fn generic_call_card_shows_kind_icon_title_input_locations_and_content() {
    let card = CallCard::Generic(
        GenericCall::new("Grep /TODO/")
            .with_kind(ToolKind::Search)
            .with_raw_input(
                json!({"pattern": "TODO", "limit": 5, "deep": {"x": [1, 2]}, "body": "a\nb"}),
            )
            .with_content(vec![ContentBlock::text("note")])
            .with_locations(vec![Location::new("src/lib.rs").with_line(7)]),
    );
    let html = html::call_card(&card);
    assert!(
        html.starts_with("<section class=\"tp card call t-generic\">"),
        "{html}"
    );
    // The kind's icon is a class on the title (a mask in the stylesheet).
    assert!(
        html.contains("<span class=\"ttl ic i-search\">Grep /TODO/</span>"),
        "kind icon: {html}"
    );
    assert!(html.contains("<code class=\"loc\">src/lib.rs:7</code>"));
    // The input as keys and values: strings as text, numbers as themselves,
    // nested values and multi-line strings as blocks.
    assert!(
        html.contains("<dt>pattern</dt><dd><code class=\"arg s\">TODO</code></dd>"),
        "{html}"
    );
    assert!(html.contains("<dt>limit</dt><dd><code class=\"arg lit\">5</code></dd>"));
    assert!(html.contains("\"x\": ["), "{html}");
    assert!(html.contains("<pre class=\"tx json\">a\nb</pre>"), "{html}");
    assert!(html.contains("<pre class=\"tx out\">note</pre>"));
    // A few short scalars fit on one line.
    let short = CallCard::generic(
        "Read",
        Some(ToolKind::Read),
        Some(json!({"path": "src/lib.rs", "offset": 1, "all": true})),
    );
    let html = html::call_card(&short);
    assert!(
        html.contains("<code class=\"arg s\"><b>path</b> src/lib.rs</code>"),
        "{html}"
    );
    assert!(html.contains("<code class=\"arg lit\"><b>all</b> true</code>"));
    assert!(!html.contains("<dl"));
    // Every kind has its own icon.
    for kind in ToolKind::ALL {
        let card = CallCard::generic("t", Some(kind), None);
        assert!(html::call_card(&card).contains(&format!("ic i-{}\"", kind.as_str())));
    }
}

#[test]
fn terminal_call_card_is_the_command_with_its_directory() {
    let card = CallCard::Terminal(
        TerminalCall::new("cargo test")
            .with_description("run the tests")
            .with_cwd("/work/app"),
    );
    let html = html::call_card(&card);
    assert!(html.contains("<code class=\"ttl cmd ic i-execute\">$ cargo test</code>"));
    assert!(html.contains("<span class=\"cwd\">in <code>/work/app</code></span>"));
    assert!(html.contains("run the tests"));
}

#[test]
fn diff_cards_show_hunks_with_line_numbers_and_a_create_as_all_added() {
    let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 10\n", "line ten\n")
        .replace("line 25\n", "");
    let card = ResultCard::Diff(
        DiffResult::new(vec![
            // The whole file, placed at its first line.
            FileDiff::new("a.txt", Some(old), new).with_starts(Some(1), Some(1)),
            FileDiff::new("new.md", None, "# New\n\nbody\n").with_starts(None, Some(1)),
        ])
        .with_title("Edited a.txt"),
    );
    let html = html::result_card(&card);
    // Two hunks in a.txt (the changes are far apart), one in new.md.
    assert_eq!(html.matches("<span class=\"r hh\">").count(), 3, "{html}");
    assert!(html.contains("@@ -7,7 +7,7 @@"), "{html}");
    assert!(html.contains("@@ -22,7 +22,6 @@"), "{html}");
    // Each line with its old and new number, and its sign.
    assert!(
        html.contains("<span class=\"r del\"><i>10</i><i></i>- line 10</span>"),
        "{html}"
    );
    assert!(html.contains("<span class=\"r add\"><i></i><i>10</i>+ line ten</span>"));
    assert!(html.contains("<span class=\"r\"><i>11</i><i>11</i>  line 11</span>"));
    // The create: a "new file" mark, every line added and numbered, none removed.
    let new_file = &html[html.find("new.md").unwrap()..];
    assert!(new_file.contains("new file"));
    assert!(new_file.contains("@@ -0,0 +1,3 @@"));
    assert_eq!(new_file.matches("<span class=\"r add\">").count(), 3);
    assert_eq!(new_file.matches("<span class=\"r del\">").count(), 0);
    // The totals: +1 −2 in a.txt, +3 in new.md.
    assert!(
        html.contains("<span class=\"chip add\">+4</span><span class=\"chip del\">−2</span>"),
        "{html}"
    );

    let call = CallCard::Diff(DiffCall::new(
        "Write b",
        vec![FileDiff::new("b", Some("same\n".into()), "same\n")],
    ));
    assert!(html::call_card(&call).contains("No change."));
}

#[test]
fn a_few_lines_changed_in_large_files_are_drawn_as_only_those_lines() {
    // 5,000 lines, two changed 4,000 lines apart: two hunks of seven rows,
    // +2 −2, and every line between them left out (the old line diff drew
    // this as 4,001 lines removed, then added, under a "too large" note).
    let old: String = (1..=5_000).map(|i| format!("row {i}\n")).collect();
    let new = old
        .replace("row 500\n", "row five hundred\n")
        .replace("row 4500\n", "row four thousand five hundred\n");
    let html = html::result_card(&ResultCard::Diff(DiffResult::new(vec![
        FileDiff::new("big.txt", Some(old), new).with_starts(Some(1), Some(1)),
    ])));
    assert!(
        html.contains("<span class=\"chip add\">+2</span><span class=\"chip del\">−2</span>"),
        "{html}"
    );
    assert_eq!(html.matches("<span class=\"r hh\">").count(), 2, "{html}");
    assert!(html.contains("@@ -497,7 +497,7 @@"), "{html}");
    assert!(html.contains("@@ -4497,7 +4497,7 @@"), "{html}");
    assert_eq!(html.matches("<span class=\"r del\">").count(), 2, "{html}");
    assert_eq!(html.matches("<span class=\"r add\">").count(), 2, "{html}");
    assert!(html.contains("<span class=\"r del\"><i>4500</i><i></i>- row 4500</span>"));
    assert!(html.contains(
        "<span class=\"r add\"><i></i><i>4500</i>+ row four thousand five hundred</span>"
    ));
    assert!(!html.contains("row 2000"), "{html}");
    assert!(!html.contains("class=\"cut\""), "{html}");
}

#[test]
fn diff_lines_are_numbered_only_from_where_the_card_says_they_start() {
    // A hunk of an edit: lines 17–23 of the file, the change at line 20.
    let old = "s17\ns18\ns19\nport = 8080\ns21\ns22\ns23\n";
    let new = old.replace("8080", "9090");
    let hunk = || FileDiff::new("app.toml", Some(old.to_owned()), new.clone());
    let placed = html::result_card(&ResultCard::Diff(DiffResult::new(vec![
        hunk().with_starts(Some(17), Some(17)),
    ])));
    assert!(placed.contains("@@ -17,7 +17,7 @@"), "{placed}");
    assert!(
        placed.contains("<span class=\"r del\"><i>20</i><i></i>- port = 8080</span>"),
        "{placed}"
    );
    assert!(placed.contains("<span class=\"r add\"><i></i><i>20</i>+ port = 9090</span>"));
    assert!(placed.contains("<span class=\"r\"><i>23</i><i>23</i>  s23</span>"));
    // The same hunk from a log written before cards said where hunks
    // start: no line number at all, rather than numbers from 1.
    let unplaced = html::result_card(&ResultCard::Diff(DiffResult::new(vec![hunk()])));
    assert!(!unplaced.contains("@@"), "{unplaced}");
    assert!(!unplaced.contains("<i>"), "{unplaced}");
    assert!(
        unplaced.contains("<pre class=\"diff bare\"><span class=\"r\">  s17</span>"),
        "{unplaced}"
    );
    assert!(
        unplaced.contains("<span class=\"r del\">- port = 8080</span>"),
        "{unplaced}"
    );
    // A call card's diff comes from the arguments, which say no line:
    // unnumbered, and the excerpt's unchanged lines between two changes
    // are counted, not numbered.
    let excerpt: String = (1..=12).map(|i| format!("l{i}\n")).collect();
    let call = html::call_card(&CallCard::Diff(DiffCall::new(
        "Edit a",
        vec![FileDiff::new(
            "a",
            Some(excerpt.clone()),
            excerpt.replace("l1\n", "L1\n").replace("l12\n", "L12\n"),
        )],
    )));
    assert!(!call.contains("<i>") && !call.contains("@@"), "{call}");
    assert!(
        call.contains("<span class=\"r hh\">⋯ 4 unchanged lines</span>"),
        "{call}"
    );
}

#[test]
fn a_command_is_marked_by_its_card_status_never_by_its_output() {
    let ok = html::result_card(&terminal("hi", Some(ExitStatus::Code(0))));
    assert!(
        ok.contains("<span class=\"chip good exit\">exit code 0</span>"),
        "{ok}"
    );
    assert!(ok.contains("<pre class=\"tx out term\">hi</pre>"), "{ok}");
    let three = html::result_card(&terminal("", Some(ExitStatus::Code(3))));
    assert!(three.contains("<span class=\"chip bad exit\">exit code 3</span>"));
    assert!(three.contains("no output"));
    let killed = html::result_card(&terminal("x", Some(ExitStatus::Signal("SIGTERM".into()))));
    assert!(killed.contains("killed by SIGTERM"));
    let running = html::result_card(&terminal("x", None));
    assert!(running.contains("no exit status"));
    // A bracketed line of output saying "timed out" marks nothing: the
    // card says the command exited 0, and that is what is drawn.
    let said = "fetching\n[timed out after 3 s; retrying]\ndone";
    let card = terminal(said, Some(ExitStatus::Code(0)));
    let html = html::result_card(&card);
    assert!(!html.contains("chip bad timedout"), "{html}");
    assert!(html.contains("<span class=\"chip good exit\">exit code 0</span>"));
    // Nor does the content the model read, on the page.
    let mut e = entry(
        "t1",
        "sh",
        &CallCard::Terminal(TerminalCall::new("fetch")),
        Some(&card),
    );
    e.content = vec![
        ContentBlock::text(said),
        ContentBlock::text("[exit code: 0]"),
    ];
    let page = page_of(&[e], &[]);
    assert!(!page.contains("timedout"), "{page}");
    assert!(
        page.contains("<span class=\"chip good\">exit 0</span>"),
        "the summary says what the card says"
    );
    // A call the registry timed out is an error with its code.
    let registry_timeout = failed(
        entry(
            "t2",
            "sh",
            &generic_call("sh"),
            Some(&ResultCard::generic(None, vec![])),
        ),
        "TIMEOUT",
        "Error: the call timed out after 10 s",
    );
    let page = page_of(&[registry_timeout], &[]);
    assert!(page.contains("<span class=\"chip bad code\">TIMEOUT</span>"));
}

#[test]
fn a_spill_notice_stays_in_view_and_no_line_is_drawn_cut() {
    // What spill leaves of `seq 1 5000`: head, the notice, tail.
    let mut output: String = (1..=1836).map(|i| format!("{i}\n")).collect();
    let notice = "(Omitted 4350 of 16456 bytes. The full result (16456 bytes) is stored at: /s/spill-1.txt. Read that file in pages to see the rest.)";
    output.push_str(&format!("\n{notice}\n\n"));
    output.extend((2707..=3498).map(|i| format!("{i}\n")));
    output.push_str("[stdout truncated: only the first 16384 bytes were kept]");
    let html = html::result_card(&terminal(&output, Some(ExitStatus::Code(0))));
    let at = html.find(notice).expect("the notice is drawn");
    let before = &html[..at];
    assert_eq!(
        before.matches("<details").count(),
        before.matches("</details>").count(),
        "the notice is not inside a fold: {}",
        &html[at.saturating_sub(300)..at]
    );
    // The folds on either side count their lines.
    assert!(
        html.contains("<summary>1,825 more lines</summary>"),
        "{html}"
    );
    assert!(html.contains("<summary>790 more lines</summary>"));
    assert!(html.ends_with(
        "3498\n[stdout truncated: only the first 16384 bytes were kept]</pre></div></div></section>"
    ));

    // A middle past what the page draws stops at a line's end.
    let big: String = (0..300_000).map(|i| format!("row {i:06} end\n")).collect();
    let html = html::result_card(&terminal(&big, Some(ExitStatus::Code(0))));
    let fold = &html[html.find("<details class=\"more\">").unwrap()..];
    let drawn = &fold[..fold.find("</pre>").unwrap()];
    let last = drawn.rsplit('\n').next().unwrap();
    assert!(
        last.starts_with("row ") && last.ends_with(" end"),
        "the last line drawn is whole: {last:?}"
    );
    assert!(
        fold.contains("more lines (") && fold.contains(") not drawn here"),
        "the cut is said"
    );
}

#[test]
fn arguments_that_were_not_json_are_shown_as_sent() {
    let sent = "{\"path\": \"src/lib.rs\", oops";
    let card = CallCard::generic(
        "read",
        Some(ToolKind::Read),
        Some(Value::String(sent.into())),
    );
    let html = html::call_card(&card);
    assert!(
        html.contains("<pre class=\"tx json\">{\"path\": \"src/lib.rs\", oops</pre>"),
        "{html}"
    );
    assert!(
        !html.contains("\\\""),
        "not re-encoded as a JSON string: {html}"
    );
}

#[test]
fn counts_and_call_numbers_are_grouped_and_a_relative_log_is_named_once() {
    let created: String = (0..1234).map(|i| format!("{i}\n")).collect();
    let html = html::result_card(&ResultCard::Diff(DiffResult::new(vec![FileDiff::new(
        "big.txt", None, created,
    )])));
    assert!(
        html.contains("<span class=\"chip add\">+1,234</span>"),
        "{html}"
    );
    let e = |id: &str| {
        entry(
            id,
            "t",
            &generic_call("t"),
            Some(&ResultCard::generic(None, vec![])),
        )
    };
    let entries: Vec<ReplayedEntry> = (0..1000).map(|i| e(&format!("c{i}"))).collect();
    let page = page_of(&entries, &[]);
    assert!(
        page.contains("<a class=\"n\" href=\"#c1000\">1,000</a>"),
        "the call number"
    );

    // `replay session.jsonl --html …` names the log by the path it was
    // given: the header does not draw the same name twice.
    let replayed = toolprism::replay::Replayed::new(vec![e("1")], vec![]);
    let page =
        html::session_page(&Session::new("session.jsonl", &replayed).with_source("session.jsonl"));
    let header = &page[page.find("<header").unwrap()..page.find("</header>").unwrap()];
    assert_eq!(header.matches("session.jsonl").count(), 1, "{header}");
    let page = html::session_page(
        &Session::new("session.jsonl", &replayed).with_source("logs/session.jsonl"),
    );
    assert!(page.contains("<div class=\"source\"><code>logs/session.jsonl</code></div>"));
}

#[test]
fn search_cards_say_how_many_of_how_many() {
    let files = vec![
        SearchFile::new(
            "a.rs",
            (1..=60)
                .map(|n| SearchMatch::new(n, format!("TODO {n}")))
                .collect(),
        ),
        SearchFile::new(
            "b.rs",
            (1..=40)
                .map(|n| SearchMatch::new(n * 2, format!("TODO b{n}")))
                .collect(),
        ),
    ];
    let card = ResultCard::Search(
        SearchResult::matches(files, 243)
            .unwrap()
            .with_title("TODOs"),
    );
    let html = html::result_card(&card);
    assert!(
        html.contains("<span class=\"chip warn trunc\">100 shown of 243</span>"),
        "{html}"
    );
    assert!(html.contains("the search found 143 more that the card does not hold"));
    // Grouped by file, each with its count and numbered lines.
    assert!(
        html.contains(
            "<code class=\"path\">a.rs</code><span class=\"chip muted\">60 matches</span>"
        )
    );
    assert!(
        html.contains(
            "<code class=\"path\">b.rs</code><span class=\"chip muted\">40 matches</span>"
        )
    );
    assert!(html.contains("<i>80</i> TODO b40"), "{html}");

    let paths = ResultCard::Search(
        SearchResult::paths(vec!["x".into(), "y".into(), "z".into()], 3).unwrap(),
    );
    let html = html::result_card(&paths);
    assert!(html.contains("all 3 paths shown"), "{html}");
    assert!(!html.contains("trunc"));
    assert!(
        html.contains("<pre class=\"src paths\">x\ny\nz</pre>"),
        "{html}"
    );
    let empty = ResultCard::Search(SearchResult::paths(vec![], 0).unwrap());
    assert!(html::result_card(&empty).contains("no paths"));
}

#[test]
fn read_card_shows_numbered_lines_and_the_window_in_the_file() {
    let card = ResultCard::Read(
        ReadResult::new(
            "src/lib.rs",
            1,
            (1..=12)
                .map(|n| NumberedLine::new(n, format!("line {n}")))
                .collect(),
            44,
        )
        .with_lang("rust"),
    );
    let html = html::result_card(&card);
    // The window, over a bar of its place in the file.
    assert!(
        html.contains("<span class=\"wl\" style=\"--l:0.0%;--w:27.3%\">lines 1–12 of 44</span>"),
        "{html}"
    );
    assert!(html.contains("<span class=\"chip muted lang\">rust</span>"));
    assert!(
        html.contains("<i>11</i> line 11\n<i>12</i> line 12</pre>"),
        "{html}"
    );
    assert!(html.contains("32 more lines after line 12 not in this window."));
    // A window past the end, and the last window.
    let past = ResultCard::Read(ReadResult::new("a", 50, vec![], 44));
    assert!(html::result_card(&past).contains("no lines from line 50 of 44"));
    let last = ResultCard::Read(ReadResult::new(
        "a",
        44,
        vec![NumberedLine::new(44, "end")],
        44,
    ));
    let html = html::result_card(&last);
    assert!(html.contains("lines 44–44 of 44"));
    assert!(!html.contains("after line"));
}

#[test]
fn web_cards_show_status_url_as_text_sources_answer_and_truncation() {
    let fetch = ResultCard::Web(WebResult::Fetch(WebFetch::new(
        "http://127.0.0.1:8080/missing",
        404,
        true,
    )));
    let html = html::result_card(&fetch);
    assert!(
        html.contains("<span class=\"chip warn status\">HTTP 404 Not Found</span>"),
        "{html}"
    );
    assert!(html.contains("<span class=\"chip warn trunc\">truncated</span>"));
    assert!(html.contains("<code class=\"ttl url\">http://127.0.0.1:8080/missing</code>"));
    assert!(!html.contains("href"), "a URL is text, never a link");
    let five = html::result_card(&ResultCard::Web(WebResult::Fetch(
        WebFetch::new("https://x", 503, false).with_title("Down"),
    )));
    assert!(five.contains("<span class=\"chip bad status\">HTTP 503 Service Unavailable</span>"));
    assert!(five.contains("Down") && !five.contains("trunc"));

    let search = ResultCard::Web(WebResult::Search(
        WebSearch::new(
            vec![
                WebSource::new("https://a.example/x")
                    .with_title("A")
                    .with_snippet("about A")
                    .with_published_at("2025-01-02"),
                WebSource::new("https://b.example"),
            ],
            true,
        )
        .with_title("rust html escaping")
        .with_answer("Escape five characters."),
    ));
    let html = html::result_card(&search);
    assert!(html.contains("2 sources"));
    assert!(html.contains("truncated: more sources exist"));
    assert!(html.contains("Escape five characters."));
    assert!(html.contains("<span class=\"st\">A</span><code class=\"url\">https://a.example/x</code><span class=\"date\">2025-01-02</span><p class=\"snip\">about A</p>"), "{html}");
    assert!(!html.contains("href"));
}

#[test]
fn generic_result_shows_content_and_images_as_placeholders() {
    let card = ResultCard::generic(
        Some("Screenshot".into()),
        vec![
            ContentBlock::text("taken"),
            // 12 bytes of PNG-ish data, base64.
            ContentBlock::image("image/png", "iVBORw0KGgoAAAAN"),
        ],
    );
    let html = html::result_card(&card);
    assert!(html.contains("<span class=\"ttl\">Screenshot</span>"));
    assert!(html.contains("<pre class=\"tx out\">taken</pre>"));
    assert!(
        html.contains("<code>image/png</code> · 12 bytes · not drawn"),
        "{html}"
    );
    assert!(
        !html.contains("<img"),
        "no image is ever drawn from its data"
    );
    assert!(
        !html.contains("iVBORw0KGgo"),
        "the data is not copied into the page"
    );
    let empty = ResultCard::Generic(GenericResult::empty());
    assert!(html::result_card(&empty).contains("no content"));
}

// ---------------------------------------------------------------------------
// Escaping
// ---------------------------------------------------------------------------

const PAYLOAD: &str =
    "<script>window.__pwned=1</script><img src=x onerror=\"alert(2)\">'&</textarea>";
/// The payload as element text: markup escaped, quotes plain.
const ESCAPED: &str = "&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;img src=x onerror=\"alert(2)\"&gt;'&amp;&lt;/textarea&gt;";

/// No raw markup from the payload survives; its escaped form is there.
fn assert_escaped(what: &str, html: &str) {
    for raw in ["<script>window", "<img", "</textarea", "'&<"] {
        assert!(!html.contains(raw), "{what}: {raw:?} got through:\n{html}");
    }
    // Whole, or JSON-encoded (its quotes backslashed) inside pretty JSON.
    let start = "&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;img src=x onerror=";
    assert!(
        html.contains(ESCAPED) || html.contains(start),
        "{what}: the payload is not shown as text:\n{html}"
    );
}

#[test]
fn every_string_field_of_every_card_is_escaped() {
    let p = || PAYLOAD.to_owned();
    let calls: Vec<(&str, CallCard)> = vec![
        ("generic title", CallCard::generic(p(), None, None)),
        (
            "generic raw input value",
            CallCard::generic("t", None, Some(json!({"k": p()}))),
        ),
        (
            "generic raw input key",
            CallCard::generic("t", None, Some(json!({ p(): 1 }))),
        ),
        (
            "generic raw input nested",
            CallCard::generic("t", None, Some(json!({"k": [p()]}))),
        ),
        (
            "generic raw input scalar",
            CallCard::generic("t", None, Some(json!(p()))),
        ),
        (
            "generic content",
            CallCard::Generic(GenericCall::new("t").with_content(vec![ContentBlock::text(p())])),
        ),
        (
            "generic image mime",
            CallCard::Generic(
                GenericCall::new("t").with_content(vec![ContentBlock::image(p(), "AAAA")]),
            ),
        ),
        (
            "generic location",
            CallCard::Generic(GenericCall::new("t").with_locations(vec![Location::new(p())])),
        ),
        ("terminal title", CallCard::Terminal(TerminalCall::new(p()))),
        (
            "terminal description",
            CallCard::Terminal(TerminalCall::new("t").with_description(p())),
        ),
        (
            "terminal cwd",
            CallCard::Terminal(TerminalCall::new("t").with_cwd(p())),
        ),
        ("diff title", CallCard::Diff(DiffCall::new(p(), vec![]))),
        (
            "diff path",
            CallCard::Diff(DiffCall::new("t", vec![FileDiff::new(p(), None, "x")])),
        ),
        (
            "diff old text",
            CallCard::Diff(DiffCall::new("t", vec![FileDiff::new("a", Some(p()), "x")])),
        ),
        (
            "diff new text",
            CallCard::Diff(DiffCall::new("t", vec![FileDiff::new("a", None, p())])),
        ),
        (
            "diff location",
            CallCard::Diff(
                DiffCall::new("t", vec![]).with_locations(vec![Location::new(p()).with_line(1)]),
            ),
        ),
    ];
    for (what, card) in &calls {
        assert_escaped(what, &html::call_card(card));
    }
    let search_file =
        |path: String, line: String| SearchFile::new(path, vec![SearchMatch::new(1, line)]);
    let results: Vec<(&str, ResultCard)> = vec![
        ("generic title", ResultCard::generic(Some(p()), vec![])),
        (
            "generic content",
            ResultCard::generic(None, vec![ContentBlock::text(p())]),
        ),
        (
            "terminal title",
            ResultCard::Terminal(TerminalResult::new(Some(p()), None, None)),
        ),
        ("terminal output", terminal(&p(), Some(ExitStatus::Code(1)))),
        (
            "terminal signal",
            terminal("x", Some(ExitStatus::Signal(p()))),
        ),
        (
            "diff title",
            ResultCard::Diff(DiffResult::new(vec![]).with_title(p())),
        ),
        (
            "diff text",
            ResultCard::Diff(DiffResult::new(vec![FileDiff::new(
                "a",
                Some("x".into()),
                p(),
            )])),
        ),
        (
            "search title",
            ResultCard::Search(SearchResult::paths(vec![], 0).unwrap().with_title(p())),
        ),
        (
            "search path",
            ResultCard::Search(SearchResult::paths(vec![p()], 1).unwrap()),
        ),
        (
            "search file",
            ResultCard::Search(
                SearchResult::matches(vec![search_file(p(), "x".into())], 1).unwrap(),
            ),
        ),
        (
            "search line",
            ResultCard::Search(
                SearchResult::matches(vec![search_file("a".into(), p())], 1).unwrap(),
            ),
        ),
        ("read title", read_with(|r| r.title = Some(p()))),
        ("read path", read_with(|r| r.path = p())),
        ("read line", read_with(|r| r.lines[0].text = p())),
        ("read lang", read_with(|r| r.lang = Some(p()))),
        ("read content", read_with(|r| r.content = Some(p()))),
        (
            "fetch title",
            ResultCard::Web(WebResult::Fetch(
                WebFetch::new("u", 200, false).with_title(p()),
            )),
        ),
        (
            "fetch url",
            ResultCard::Web(WebResult::Fetch(WebFetch::new(p(), 200, false))),
        ),
        ("search answer", web_search(None, Some(p()), |_| {})),
        ("search web title", web_search(Some(p()), None, |_| {})),
        ("source url", web_search(None, None, |s| s.url = p())),
        (
            "source title",
            web_search(None, None, |s| s.title = Some(p())),
        ),
        (
            "source snippet",
            web_search(None, None, |s| s.snippet = Some(p())),
        ),
        (
            "source date",
            web_search(None, None, |s| s.published_at = Some(p())),
        ),
    ];
    for (what, card) in &results {
        assert_escaped(what, &html::result_card(card));
    }
}

fn read_with(change: impl FnOnce(&mut ReadResult)) -> ResultCard {
    let mut r = ReadResult::new("a", 1, vec![NumberedLine::new(1, "x")], 1);
    change(&mut r);
    ResultCard::Read(r)
}

fn web_search(
    title: Option<String>,
    answer: Option<String>,
    change: impl FnOnce(&mut WebSource),
) -> ResultCard {
    let mut source = WebSource::new("u");
    change(&mut source);
    let mut search = WebSearch::new(vec![source], false);
    search.title = title;
    search.answer = answer;
    ResultCard::Web(WebResult::Search(search))
}

#[test]
fn the_page_escapes_ids_names_codes_arguments_meta_content_problems_and_title() {
    let p = PAYLOAD;
    let mut e = failed(
        entry(
            p,
            p,
            &generic_call("t"),
            Some(&ResultCard::generic(None, vec![])),
        ),
        p,
        p,
    );
    let mut v = serde_json::to_value(&e).unwrap();
    v["arguments"] = json!({ "a": p }).to_string().into();
    v["meta"] = json!({ "m": p, p: 1 });
    e = serde_json::from_value(v).unwrap();
    let mut unparsable = entry("u", "u", &generic_call("t"), Some(&terminal("x", None)));
    unparsable.arguments = p.to_owned(); // not JSON: shown as it was sent
    unparsable.content = vec![ContentBlock::text(p)];
    let problems = [ReplayProblem::new(3, ReplayProblemKind::CorruptLine, p).with_call_id(p)];
    let gone = format!("{p}-gone");
    let calls = vec![
        SessionCall {
            entry: &e,
            parent_call_id: None,
        },
        SessionCall {
            entry: &unparsable,
            parent_call_id: Some(&gone),
        },
    ];
    let source = format!("logs/{p}");
    let page = html::session_page(&Session::from_calls(p, calls, &problems).with_source(&source));
    // The only script is the page's own, the only `<img` none.
    assert_eq!(page.matches("<script").count(), 1, "{page}");
    let body = &page[..page.rfind("<script>").unwrap()];
    assert_escaped("page", body);
    for (what, escaped) in [
        (
            "title",
            format!("<title>{ESCAPED} · toolprism session</title>"),
        ),
        ("heading", format!("<h1>{ESCAPED}</h1>")),
        (
            "source",
            format!("<div class=\"source\"><code>logs/{ESCAPED}</code></div>"),
        ),
        (
            "tool name",
            format!("<span class=\"tool\">{ESCAPED}</span>"),
        ),
        (
            "error code",
            format!("<span class=\"chip bad code\">{ESCAPED}</span>"),
        ),
        ("call id", format!(" · id <code>{ESCAPED}</code>")),
        ("problem", format!("</span> {ESCAPED}</li>")),
        (
            "missing parent",
            format!("Nested in call id <code>{ESCAPED}-gone</code>"),
        ),
    ] {
        assert!(page.contains(&escaped), "{what} is not escaped:\n{page}");
    }
    // Arguments as sent and meta as JSON, as the log holds them; arguments
    // that are not JSON as sent too.
    assert!(page.contains("{\"a\":\"&lt;script&gt;"), "{page}");
    assert!(page.contains("\"m\":\"&lt;script&gt;"), "{page}");
    assert!(
        page.contains(&format!("<b>arguments</b>\n{ESCAPED}\n")),
        "{page}"
    );
    // The error code's link target is ours, not the code.
    assert!(
        page.contains("<a class=\"chip bad code\" href=\"#c1\">"),
        "{page}"
    );
}

// ---------------------------------------------------------------------------
// Errors, counts, truncation
// ---------------------------------------------------------------------------

#[test]
fn error_results_look_like_errors_and_are_counted_by_code() {
    let ok = entry(
        "1",
        "a",
        &generic_call("a"),
        Some(&ResultCard::generic(None, vec![])),
    );
    let bad1 = failed(
        entry(
            "2",
            "b",
            &generic_call("b"),
            Some(&ResultCard::generic(
                None,
                vec![ContentBlock::text("Error: no")],
            )),
        ),
        "INVALID_ARGS",
        "Error: no",
    );
    let bad2 = failed(
        entry(
            "3",
            "c",
            &generic_call("c"),
            Some(&ResultCard::generic(None, vec![])),
        ),
        "INVALID_ARGS",
        "Error: no",
    );
    let bad3 = failed(
        entry(
            "4",
            "d",
            &generic_call("d"),
            Some(&ResultCard::generic(None, vec![])),
        ),
        "DENIED",
        "Error: denied",
    );
    let pending = entry("5", "e", &generic_call("e"), None);
    let entries = [ok, bad1, bad2, bad3, pending];
    let calls: Vec<SessionCall> = entries
        .iter()
        .map(|entry| SessionCall {
            entry,
            parent_call_id: None,
        })
        .collect();
    let session = Session::from_calls("s", calls, &[]);
    let counts = session.counts();
    assert_eq!(
        (
            counts.calls,
            counts.succeeded,
            counts.failed(),
            counts.without_result
        ),
        (5, 1, 3, 1)
    );
    assert_eq!(counts.errors.get("INVALID_ARGS"), Some(&2));
    assert_eq!(counts.errors.get("DENIED"), Some(&1));
    let page = html::session_page(&session);
    assert!(
        page.contains("<div class=\"stat bad\"><b>3</b> <span>errors</span></div>"),
        "{page}"
    );
    assert!(page.contains("<div class=\"stat muted\"><b>1</b> <span>without result</span></div>"));
    // Each code links to its first call.
    assert!(
        page.contains("<a class=\"chip bad code\" href=\"#c2\">INVALID_ARGS <b>×2</b></a>"),
        "{page}"
    );
    assert!(page.contains("<a class=\"chip bad code\" href=\"#c4\">DENIED <b>×1</b></a>"));
    assert_eq!(page.matches("<article class=\"call d0 err\"").count(), 3);
    assert_eq!(
        page.matches("<section class=\"tp card result t-generic err\">")
            .count(),
        3
    );
    assert!(page.contains("<article class=\"call d0 pending\""));
    assert!(page.contains("No result in the log"));
}

#[test]
fn truncation_by_the_page_is_always_said() {
    // A 3 MB output: its middle is drawn up to 256 KB and the rest said;
    // its head and tail are shown.
    let big: String = (0..300_000).map(|i| format!("row {i}\n")).collect();
    let html = html::result_card(&terminal(&big, Some(ExitStatus::Code(0))));
    assert!(html.len() < 400 * 1024, "{} bytes", html.len());
    assert!(
        html.contains("299,984 more lines"),
        "the fold counts every hidden line"
    );
    assert!(html.contains(") not drawn here"), "the cut is said");
    assert!(
        html.contains("row 0\n") && html.contains("row 299999</pre>"),
        "head and tail shown"
    );
    // One 1 MB line.
    let line = "x".repeat(1 << 20);
    let read = read_with(|r| r.lines[0].text = line.clone());
    let html = html::result_card(&read);
    assert!(html.len() < 64 * 1024);
    assert!(
        html.contains("1008.0 KB more in this line, not drawn"),
        "{}",
        &html[html.len() - 600..]
    );
    // 20,000 paths: 5,000 rows drawn, the rest said, and the card's own truncation too.
    let paths: Vec<String> = (0..20_000).map(|i| format!("p{i}")).collect();
    let html = html::result_card(&ResultCard::Search(
        SearchResult::paths(paths, 30_000).unwrap(),
    ));
    assert!(
        html.contains("15,000 more paths not drawn"),
        "the page's cut"
    );
    assert!(html.contains("20,000 shown of 30,000"), "the card's cut");
    assert!(html.contains("4,992 more paths"), "the fold");
}

// ---------------------------------------------------------------------------
// Nesting
// ---------------------------------------------------------------------------

#[test]
fn nested_calls_are_indented_under_their_parent_in_order() {
    let e = |id: &str| {
        entry(
            id,
            "t",
            &generic_call(id),
            Some(&ResultCard::generic(None, vec![])),
        )
    };
    // Log order: a, a:nested:1, a:nested:1:nested:1, b, a:nested:2, orphan, c.
    let entries = [
        e("a"),
        e("a:nested:1"),
        e("a:nested:1:nested:1"),
        e("b"),
        e("a:nested:2"),
        e("orphan"),
        e("c"),
    ];
    let parents = [
        None,
        Some("a"),
        Some("a:nested:1"),
        None,
        Some("a"),
        Some("gone"),
        None,
    ];
    let page = page_of(&entries, &parents);
    let order: Vec<(&str, &str)> = page
        .match_indices("<article class=\"call d")
        .map(|(at, _)| {
            let rest = &page[at + "<article class=\"call ".len()..];
            let depth = &rest[..2];
            let open = "<span class=\"ttl ic i-other\">";
            let title_at = rest.find(open).unwrap() + open.len();
            let title = &rest[title_at..title_at + rest[title_at..].find('<').unwrap()];
            (depth, title)
        })
        .collect();
    assert_eq!(
        order,
        [
            ("d0", "a"),
            ("d1", "a:nested:1"),
            ("d2", "a:nested:1:nested:1"),
            ("d1", "a:nested:2"),
            ("d0", "b"),
            ("d0", "orphan"),
            ("d0", "c"),
        ]
    );
    assert!(page.contains("<span class=\"up\" title=\"nested in call 1\">↳ 1</span>"));
    assert!(page.contains("<span class=\"up\" title=\"nested in call 2\">↳ 2</span>"));
    assert!(page.contains("Nested in call id <code>gone</code>, which is not in this log"));
    assert!(
        page.contains("<div class=\"stat info\"><b>4</b> <span>nested</span></div>"),
        "{page}"
    );
}

#[test]
fn a_deep_chain_and_a_loop_of_parents_are_drawn_without_overflow() {
    let n = 20_000;
    let entries: Vec<ReplayedEntry> = (0..n)
        .map(|i| {
            entry(
                &format!("c{i}"),
                "t",
                &generic_call("t"),
                Some(&ResultCard::generic(None, vec![])),
            )
        })
        .collect();
    let ids: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    let parents: Vec<Option<&str>> = (0..n)
        .map(|i| (i > 0).then(|| ids[i - 1].as_str()))
        .collect();
    let page = page_of(&entries, &parents);
    assert_eq!(page.matches("<article class=\"call d8").count(), n - 8);
    assert!(page.contains("<span class=\"chip info\">depth 19,999</span>"));

    // x's parent is y and y's parent is x: neither is top-level.
    let looped = [
        entry("x", "t", &generic_call("x"), None),
        entry("y", "t", &generic_call("y"), None),
    ];
    let page = page_of(&looped, &[Some("y"), Some("x")]);
    assert_eq!(page.matches("<article class=\"call").count(), 2);
    assert!(page.contains("Its parent calls form a loop"));
}

// ---------------------------------------------------------------------------
// write_session on real files
// ---------------------------------------------------------------------------

#[test]
fn write_session_draws_the_log_and_its_problems() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("s.jsonl");
    let mut text = echo::call_lines(
        "1",
        echo::ECHO,
        &json!({"card": "terminal", "title": "make"}),
        &json!({"card": "terminal", "output": "done", "exitCode": 2}),
        &[json!({"type": "text", "text": "done"})],
        None,
    );
    text.push_str("not json at all\n");
    text.push_str(r#"{"type":"tool/result","callId":"ghost","content":[],"isError":false}"#);
    text.push('\n');
    text.push_str(r#"{"type":"tool/call","callId":"2","name":"x","arguments":"{}"}"#);
    text.push('\n');
    text.push_str(r#"{"type":"tool/call","callId":"3","na"#);
    std::fs::write(&log, text).unwrap();
    let out = dir.path().join("s.html");
    let counts = html::write_session(&log, &echo::registry(), &out).unwrap();
    assert_eq!(
        (counts.calls, counts.without_result, counts.problems),
        (2, 1, 3)
    );
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.contains("<h1>s.jsonl</h1>"));
    assert!(page.contains("3 problems in the log"));
    for kind in ["corrupt line", "result without call", "torn line"] {
        assert!(
            page.contains(&format!("<span class=\"chip warn\">{kind}</span>")),
            "{kind}"
        );
    }
    assert!(
        page.contains("exit code 2"),
        "the echo tool's card is drawn"
    );
    assert!(page.contains("\">$ make</code>"));
}

#[test]
fn write_session_refuses_to_overwrite_the_log_and_reports_io_errors() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("s.jsonl");
    std::fs::write(&log, "").unwrap();
    let registry = Registry::builder().build().unwrap();
    let err =
        html::write_session(&log, &registry, dir.path().join(".").join("s.jsonl")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        err.to_string().contains("is the session log itself"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "",
        "the log is untouched"
    );
    let missing = html::write_session(
        dir.path().join("nope.jsonl"),
        &registry,
        dir.path().join("o.html"),
    );
    assert_eq!(missing.unwrap_err().kind(), std::io::ErrorKind::NotFound);
    let bad_out = html::write_session(&log, &registry, dir.path().join("no/such/dir/o.html"));
    assert!(bad_out.is_err());
    // An empty log is an empty session, not an error.
    let out = dir.path().join("empty.html");
    let counts = html::write_session(&log, &registry, &out).unwrap();
    assert_eq!(counts.calls, 0);
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .contains("This log holds no calls.")
    );
}

#[test]
fn the_page_is_self_contained_and_locked_down() {
    let e = entry(
        "1",
        "a",
        &generic_call("a"),
        Some(&ResultCard::generic(None, vec![])),
    );
    let page = page_of(&[e], &[]);
    let csp_at = page
        .find("http-equiv=\"Content-Security-Policy\" content=\"")
        .unwrap();
    let csp = &page[csp_at..csp_at + page[csp_at..].find("\">").unwrap()];
    assert!(
        csp.contains(
            "default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; script-src &#39;sha256-"
        ),
        "{csp}"
    );
    assert!(csp.contains("base-uri &#39;none&#39;; form-action &#39;none&#39;"));
    // Nothing that loads: no src, no external href, no @import, and no
    // url() but to a mask of the page's own (its icons).
    for needle in [
        " src=", "http://", "https://", "@import", "<link", "<img", "<iframe",
    ] {
        assert!(!page.contains(needle), "{needle} in the page");
    }
    let urls: Vec<&str> = page
        .match_indices("url(")
        .map(|(at, _)| &page[at..at + page[at..].find(')').unwrap() + 1])
        .collect();
    assert!(!urls.is_empty());
    for url in urls {
        assert!(
            url.starts_with("url(#m-")
                && page.contains(&format!("<mask id=\"{}\"", &url[5..url.len() - 1])),
            "{url} is not one of the page's masks"
        );
    }
    for (at, _) in page.match_indices("href=\"") {
        let target = &page[at + 6..];
        assert!(
            target.starts_with('#'),
            "a non-fragment href: {}",
            &target[..40.min(target.len())]
        );
    }
}

#[test]
fn the_renderer_never_switches_on_a_tool_name() {
    // C8: the card modules (and the text and diff helpers they draw with)
    // draw from the card alone; they have no notion of a tool (the page
    // shows a tool's name as text, next to its call). Every file is read,
    // so a module added later is checked too.
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<_> = std::fs::read_dir(src.join("cards"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.extend([src.join("line_diff.rs"), src.join("text.rs")]);
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for word in ["name", "tool"] {
            for (i, line) in text.lines().enumerate() {
                let code = line
                    .split("//")
                    .next()
                    .unwrap()
                    .replace("ToolKind", "")
                    .replace("toolprism_core", "");
                assert!(
                    !code.to_lowercase().contains(word),
                    "{} line {}: {line}",
                    file.display(),
                    i + 1
                );
            }
        }
    }
    let _ = Value::Null;
}

#[test]
fn write_session_survives_deep_huge_and_broken_logs() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hostile.jsonl");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let huge = "y\n".repeat(5 << 20); // 10 MB of content
    let mut text = String::new();
    // Arguments nested 100,000 deep (no parser reads them: shown as sent, cut).
    text.push_str(
        &json!({"type": "tool/call", "callId": "deep", "name": "x", "arguments": deep}).to_string(),
    );
    text.push('\n');
    text.push_str(&json!({"type": "tool/result", "callId": "deep", "content": [{"type": "text", "text": huge}], "isError": false}).to_string());
    text.push('\n');
    // Meta nested past what serde_json reads: a corrupt line, reported.
    text.push_str(&format!(
        r#"{{"type":"tool/result","callId":"deep","content":[],"isError":false,"meta":{deep}}}"#
    ));
    text.push('\n');
    // Control characters and a NUL in text.
    text.push_str(&json!({"type": "tool/call", "callId": "ctl", "name": "x\u{0}\u{1b}[31m", "arguments": "{}"}).to_string());
    text.push('\n');
    let mut bytes = text.into_bytes();
    // A line that is not UTF-8.
    bytes.extend_from_slice(b"{\"type\":\"tool/call\",\"callId\":\"\xff\xfe\"}\n");
    std::fs::write(&log, &bytes).unwrap();
    let out = dir.path().join("hostile.html");
    let counts = html::write_session(&log, &Registry::builder().build().unwrap(), &out).unwrap();
    assert_eq!(counts.calls, 2, "{counts:?}");
    assert_eq!(counts.problems, 2, "{counts:?}");
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(
        page.len() < 2 << 20,
        "the page stays small: {} bytes",
        page.len()
    );
    let at = page.find("more lines").expect("a fold");
    assert!(
        page.contains("5,242,864 more lines"),
        "{}",
        &page[at - 40..at + 20]
    );
    assert!(page.contains(") not drawn here"), "the cut is said");
    assert!(
        page.contains("x\u{0}\u{1b}[31m"),
        "control characters are kept as text"
    );
}
