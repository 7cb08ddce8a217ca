//! Cards and whole sessions drawn as HTML (feature `html`).
//!
//! - [`call_card`] and [`result_card`] draw one card as an HTML fragment
//!   (style it with [`STYLE`]);
//! - [`session_page`] draws a [`Session`] (calls replayed from a log) as
//!   one self-contained page; [`write_session`] does it from a log's path
//!   in one call;
//! - [`card_app`] is the same cards' MCP App (`ui://toolprism/card`), the
//!   page an MCP Apps host draws next to a call, and [`card_view`] the
//!   drawn cards a result carries to it (one renderer, two outputs).
//!
//! What the page promises:
//!
//! - **Cards, not tools** (contract rule C8, `docs/contract.md`): every card is drawn from its tag
//!   alone; no tool name changes how anything is drawn (a tool's name is
//!   shown, as text, next to its call).
//! - **Data, never markup**: every string from a log (content, arguments,
//!   titles, meta, paths, URLs, error codes, tool names, call ids) is
//!   escaped. URLs are shown as text, never as links, so a `javascript:` URL
//!   stays text.
//! - **Nothing loads**: no font, image, script or stylesheet from anywhere,
//!   and a Content-Security-Policy (`default-src 'none'`; inline styles;
//!   only the page's own script, by its SHA-256) keeps it so. An image
//!   content block is a labelled placeholder (its type and size), never an
//!   `<img>`.
//! - **Readable without scripts**: calls are `<details>` elements, open by
//!   default; long bodies fold under "N more lines" the same way. The one
//!   small script only adds *Expand all*, *Collapse all* and *Errors only*.
//! - **Every call drawn**: a page of up to 500 calls draws every call as it
//!   loads, so print, a full-page screenshot and the rendered text
//!   (`innerText`) hold them all. A longer page draws its calls a hundred at
//!   a time as they come into view (`content-visibility`; drawing them all
//!   at once takes a browser tens of seconds), prints every call, and find
//!   in page, select all and screen readers reach every one; its header
//!   says so.
//! - **Truncation is never hidden**: a search card says "100 shown of 243",
//!   a read card "lines 1–12 of 44" (with a bar for the window's place in the
//!   file), a fetch "truncated"; and where the page itself stops drawing
//!   it says how much it left out. A card draws at most 5,000 rows and
//!   256 KB of text (16 KB of a line); on a page of more than 32 calls each
//!   card draws its share of the page's budget (never less than 24 rows and
//!   2 KB), so that 10,000 calls make a page of under 20 MB.
//! - **Lean**: icons are CSS masks, numbered lines are text, and the log's
//!   own text (arguments as sent, meta, the content the model read) is
//!   folded under each call only where it adds to the cards, and not on a
//!   page of more than 500 calls (each call says where it is in the log).
//!
//! How each tag is drawn:
//!
//! | card | drawn as |
//! |---|---|
//! | generic call | kind icon, title, kind and locations, the raw input (a few short arguments on one line, else keys and values; arguments that were not JSON as the text sent), content |
//! | terminal call | `$ command` as the title, working directory, description |
//! | diff call / result | per file: hunks, added and removed lines coloured, `+a −r`; line numbers only where the card says where its texts start (`oldStart`, `newStart`), none otherwise; `oldText: null` is a new file, all added |
//! | generic result | title and content (text folded after 16 lines; images as placeholders) |
//! | terminal result | output (a spill notice in it always in view), `exit code N` or `killed by SIGNAL`: from the card's status alone, never from the output's text |
//! | search result | matches grouped by file with line numbers, or a path list; "N shown of M" when truncated, "all N shown" when not |
//! | read result | numbered lines, "lines 1–12 of 44", a bar for the window's place, the language |
//! | web result | fetch: the URL (as text), `HTTP 404 Not Found`, truncated; search: the answer, the sources (title, URL as text, date, snippet), truncated |
//!
//! An error result is drawn red with its error code; a call with no result
//! in the log says so. Diffs are `similar`'s line diff (Myers, as the
//! built-in `edit` and `write` tools compute theirs), three lines of
//! context around each change, every change aligned line by line whatever
//! the texts' size.
//!
//! ```
//! use toolprism::card::{ExitStatus, ResultCard, TerminalResult};
//!
//! let card = ResultCard::Terminal(TerminalResult::new(None, Some("<b>not bold</b>\n[timed out after 300 ms]".into()), Some(ExitStatus::Signal("SIGKILL".into()))));
//! let html = toolprism::html::result_card(&card);
//! assert!(html.contains("killed by SIGKILL")); // the card's status
//! assert!(html.contains("&lt;b&gt;not bold&lt;/b&gt;\n[timed out after 300 ms]")); // its output, as text
//! assert!(!html.contains("chip bad timedout")); // no label read out of the text
//! ```

mod app;
mod calls;
mod cards;
mod csp;
mod line_diff;
mod page;
mod session;
mod text;

use std::fs;
use std::io;
use std::path::Path;

pub use app::{CARD_APP_MIME, CARD_APP_URI, VIEW_KEY, app_policy, card_app, card_view};
pub use session::{Session, SessionCall, SessionCounts};

use toolprism_core::Registry;
use toolprism_core::card::{CallCard, ResultCard};
use toolprism_core::replay::replay_log;

/// The stylesheet the page embeds. Card fragments from [`call_card`] and
/// [`result_card`] use its classes, scoped under an element of class `tp`
/// (each fragment's root has it).
pub const STYLE: &str = include_str!("style.css");

/// A call card as an HTML fragment (`<section class="tp card call …">`),
/// drawn from its tag alone, with every string escaped.
///
/// ```
/// use toolprism::card::{CallCard, TerminalCall};
///
/// let card = CallCard::Terminal(
///     TerminalCall::new("cargo test <all>").with_description("run the tests").with_cwd("/work"),
/// );
/// let html = toolprism::html::call_card(&card);
/// assert!(html.starts_with("<section class=\"tp card call t-terminal\">"));
/// assert!(html.contains("cargo test &lt;all&gt;"));
/// assert!(html.contains("/work"));
/// ```
pub fn call_card(card: &CallCard) -> String {
    let mut out = String::new();
    cards::call_card(&mut out, card);
    out
}

/// A result card as an HTML fragment (`<section class="tp card result …">`),
/// drawn from its tag alone, with every string escaped and every
/// truncation said.
///
/// It knows only the card: on a session page the same card is also marked
/// as an error with its code.
///
/// ```
/// use toolprism::card::{ResultCard, SearchResult};
///
/// let paths = (0..100).map(|i| format!("src/m{i}.rs")).collect();
/// let card = ResultCard::Search(SearchResult::paths(paths, 243).unwrap());
/// let html = toolprism::html::result_card(&card);
/// assert!(html.contains("100 shown of 243"));
/// assert!(html.contains("92 more paths")); // 8 shown, the rest folded
/// ```
pub fn result_card(card: &ResultCard) -> String {
    let mut out = String::new();
    cards::result_card(&mut out, card, &cards::ResultContext::default());
    out
}

/// One self-contained HTML page for `session`: a header with the counts
/// (calls, errors by code, calls without result, log problems), the log's
/// problems, then every call in order with its call card and result card,
/// nested calls indented under the call they were made from.
///
/// ```
/// use toolprism::Registry;
/// use toolprism::html::{Session, session_page};
/// use toolprism::replay::Replay;
///
/// let log = concat!(
///     r#"{"type":"tool/call","callId":"1","name":"lookup","arguments":"{\"q\":\"<script>\"}"}"#, "\n",
///     r#"{"type":"tool/result","callId":"1","content":[{"type":"text","text":"Error: no"}],"isError":true,"error":{"code":"NOT_FOUND"}}"#, "\n",
/// );
/// let registry = Registry::builder().build().unwrap();
/// let replayed = Replay::new(log.as_bytes(), &registry).into_replayed().unwrap();
/// let page = session_page(&Session::new("demo", &replayed));
/// assert!(page.starts_with("<!DOCTYPE html>"));
/// assert!(page.contains("NOT_FOUND"));
/// assert!(page.contains("&lt;script&gt;"));
/// assert!(!page.contains("\"<script>\""));
/// ```
pub fn session_page(session: &Session<'_>) -> String {
    page::session_page(session)
}

/// Replays the log at `log_path` with `registry`'s presenters and writes
/// its page to `out_path`; returns what the page counts.
///
/// The log's problems (a torn last line, corrupt lines, results without a
/// call, …) are drawn on the page, not dropped. It fails only when the log
/// cannot be read or the page cannot be written, and refuses to write the
/// page over the log itself.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use toolprism::Registry;
///
/// let dir = tempfile::tempdir()?;
/// let log = dir.path().join("session.jsonl");
/// std::fs::write(&log, concat!(
///     r#"{"type":"tool/call","callId":"1","name":"ls","arguments":"{}"}"#, "\n",
///     r#"{"type":"tool/result","callId":"1","content":[],"isError":false}"#, "\n",
///     r#"{"type":"tool/call","callId":"2","na"#, // torn by a crash
/// ))?;
/// let out = dir.path().join("session.html");
/// let counts = toolprism::html::write_session(&log, &Registry::builder().build().unwrap(), &out)?;
/// assert_eq!((counts.calls, counts.problems), (1, 1));
/// assert!(std::fs::read_to_string(&out)?.contains("torn line"));
/// # Ok(())
/// # }
/// ```
pub fn write_session(
    log_path: impl AsRef<Path>,
    registry: &Registry,
    out_path: impl AsRef<Path>,
) -> io::Result<SessionCounts> {
    let (log_path, out_path) = (log_path.as_ref(), out_path.as_ref());
    if let (Ok(log), Ok(out)) = (fs::canonicalize(log_path), fs::canonicalize(out_path))
        && log == out
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is the session log itself; write the page to another path",
                out_path.display()
            ),
        ));
    }
    let replayed = replay_log(log_path, registry)?;
    let title = log_path.file_name().map_or_else(
        || log_path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let session = Session::new(title, &replayed).with_source(log_path.display().to_string());
    let counts = session.counts();
    fs::write(out_path, session_page(&session))?;
    Ok(counts)
}
