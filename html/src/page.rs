//! The session page: every call of a replayed log, in order, with its call
//! card and result card, nested calls indented under their parent, and a
//! header that counts calls and errors by code.

use std::collections::{BTreeMap, HashMap};

use super::cards::{self, Limits, ResultContext, chip, content_text, line_text, log_part};
use super::csp;
use super::session::{Placed, Session, SessionCall, SessionCounts, place};
use super::text::{escape, escape_attr, plural, thousands};
use toolprism_core::card::{CallCard, ResultCard};
use toolprism_core::replay::{ReplayProblem, ReplayedEntry};

/// Indentation levels drawn; deeper calls are drawn at this level and say
/// their depth.
const MAX_INDENT: usize = 8;

/// Pages of up to this many calls draw every call as they load, so print,
/// a full-page screenshot and anything reading the rendered text
/// (`innerText`) see every call. Drawing costs about a millisecond of a
/// browser's time per call, and a page that is all drawn answers every
/// click by laying out all of it again: a longer page draws its calls as
/// they come into view (`content-visibility: auto`, a chunk of [`CHUNK`]
/// calls at a time), prints every call (the print stylesheet draws them
/// all), and find in page, select all and screen readers reach every call;
/// its header says so.
const LAZY_FROM: usize = 500;

/// Calls per chunk drawn at once on a long page: the browser tracks ten
/// times fewer boxes than one per call (each click answers sooner), and a
/// chunk's estimated height is off by little enough that a link to a call
/// (or a scroll to it) lands on it once its chunk is drawn.
const CHUNK: usize = 10;

/// The page for `session`: one self-contained HTML document.
pub(crate) fn session_page(session: &Session<'_>) -> String {
    let counts = session.counts();
    let placed = place(&session.calls);
    // Every call is drawn; on a long page each draws its share (Limits).
    let lim = Limits::for_page(session.calls.len());
    let mut out = String::with_capacity(16 * 1024 + session.calls.len() * 1500);
    head(&mut out, session);
    header(&mut out, session, &counts, &placed);
    problems(&mut out, session.problems);
    // A long page draws its calls as they come into view, a chunk at a
    // time (see LAZY_FROM); a shorter one draws every call as it loads.
    let lazy = placed.len() > LAZY_FROM;
    out.push_str(if lazy {
        "<main class=\"calls lazy\">"
    } else {
        "<main class=\"calls\">"
    });
    if placed.is_empty() {
        out.push_str("<p class=\"empty\">This log holds no calls.</p>");
    }
    if lazy {
        for (c, chunk) in placed.chunks(CHUNK).enumerate() {
            // The chunk's height until it is drawn, estimated from what it
            // draws: a good guess keeps the scroll bar right and a link to
            // a call from landing elsewhere once the calls above are drawn.
            let start = out.len();
            let mut height = 0;
            for (i, p) in chunk.iter().enumerate() {
                let at = out.len();
                let how = Drawing {
                    lim,
                    log_text: false,
                };
                call(&mut out, c * CHUNK + i + 1, p, &session.calls[p.index], how);
                height += estimated_height(&out[at..]);
            }
            out.insert_str(
                start,
                &format!("<div class=\"chunk\" style=\"contain-intrinsic-size:auto {height}px\">"),
            );
            out.push_str("</div>");
        }
    } else {
        let how = Drawing {
            lim,
            log_text: true,
        };
        for (n, p) in placed.iter().enumerate() {
            call(&mut out, n + 1, p, &session.calls[p.index], how);
        }
    }
    out.push_str("</main>");
    footer(&mut out);
    out
}

/// About how tall a call's markup is drawn, in CSS pixels: its lines of
/// text and its boxes, leaving out what is folded (a closed `<details>`
/// past its summary).
fn estimated_height(html: &str) -> usize {
    let (mut lines, mut boxes) = (0usize, 0usize);
    let mut folded = 0usize;
    let mut rest = html;
    while let Some(at) = rest.find(['<', '\n']) {
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix('\n') {
            lines += usize::from(folded == 0);
            rest = after;
            continue;
        }
        let end = tail.find('>').map_or(tail.len(), |i| i + 1);
        let tag = &tail[..end];
        if tag.starts_with("<details") && !tag.contains(" open") {
            folded += 1;
            boxes += usize::from(folded == 1);
        } else if tag == "</details>" {
            folded = folded.saturating_sub(1);
        } else if folded == 0
            && [
                "<div",
                "<p",
                "<pre",
                "<section",
                "<span class=\"r",
                "<dl",
                "<summary",
            ]
            .iter()
            .any(|t| tag.starts_with(t))
        {
            boxes += 1;
        }
        rest = &tail[end..];
    }
    24 + 19 * lines + 22 * boxes
}

fn head(out: &mut String, session: &Session<'_>) {
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    escape_attr(out, &csp::policy());
    out.push_str("\"><meta name=\"referrer\" content=\"no-referrer\">");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    out.push_str("<meta name=\"generator\" content=\"toolprism ");
    out.push_str(env!("CARGO_PKG_VERSION"));
    out.push_str("\"><title>");
    line_text(out, &session.title);
    out.push_str(" · toolprism session</title><style>");
    out.push_str(super::STYLE);
    out.push_str("</style></head><body class=\"tp\">");
    out.push_str(include_str!("icons.svg"));
}

fn header(out: &mut String, session: &Session<'_>, counts: &SessionCounts, placed: &[Placed]) {
    out.push_str("<header class=\"top\"><div class=\"brand\">toolprism · session</div><h1>");
    line_text(out, &session.title);
    out.push_str("</h1>");
    // A source that is the title again (a log named by a relative path)
    // is not drawn twice.
    if let Some(source) = session.source.as_ref().filter(|s| **s != session.title) {
        out.push_str("<div class=\"source\"><code>");
        line_text(out, source);
        out.push_str("</code></div>");
    }
    out.push_str("<div class=\"stats\">");
    let stat = |out: &mut String, class: &str, n: usize, label: &str| {
        out.push_str("<div class=\"stat ");
        out.push_str(class);
        out.push_str("\"><b>");
        out.push_str(&thousands(n as u64));
        out.push_str("</b> <span>");
        out.push_str(label);
        out.push_str("</span></div>");
    };
    stat(
        out,
        "all",
        counts.calls,
        if counts.calls == 1 { "call" } else { "calls" },
    );
    stat(out, "good", counts.succeeded, "succeeded");
    stat(
        out,
        if counts.failed() > 0 { "bad" } else { "zero" },
        counts.failed(),
        if counts.failed() == 1 {
            "error"
        } else {
            "errors"
        },
    );
    if counts.nested > 0 {
        stat(out, "info", counts.nested, "nested");
    }
    if counts.without_result > 0 {
        stat(out, "muted", counts.without_result, "without result");
    }
    if counts.problems > 0 {
        stat(
            out,
            "warn",
            counts.problems,
            if counts.problems == 1 {
                "log problem"
            } else {
                "log problems"
            },
        );
    }
    out.push_str("</div>");

    if !counts.errors.is_empty() {
        // Each code links to its first call on the page.
        let mut first: HashMap<&str, usize> = HashMap::new();
        for (n, p) in placed.iter().enumerate() {
            let entry = session.calls[p.index].entry;
            if entry.is_error && entry.has_result() {
                let code = entry
                    .error_code
                    .as_ref()
                    .map_or("(no code)", |c| c.as_str());
                first.entry(code).or_insert(n + 1);
            }
        }
        out.push_str("<div class=\"row codes\"><span class=\"k\">errors by code</span>");
        for (code, n) in &counts.errors {
            out.push_str("<a class=\"chip bad code\" href=\"#c");
            out.push_str(&first.get(code.as_str()).copied().unwrap_or(1).to_string());
            out.push_str("\">");
            line_text(out, code);
            out.push_str(" <b>×");
            out.push_str(&thousands(*n as u64));
            out.push_str("</b></a>");
        }
        out.push_str("</div>");
    }
    let mut tags: BTreeMap<&str, usize> = BTreeMap::new();
    let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
    for call in &session.calls {
        if let Some(card) = &call.entry.result_card {
            *tags.entry(card.tag()).or_default() += 1;
        }
        *tools.entry(call.entry.name.as_str()).or_default() += 1;
    }
    if !tags.is_empty() {
        out.push_str("<div class=\"row\"><span class=\"k\">result cards</span>");
        for (tag, n) in &tags {
            chip(out, "muted", &format!("{tag} ×{}", thousands(*n as u64)));
        }
        out.push_str("</div>");
    }
    if !tools.is_empty() {
        out.push_str("<div class=\"row\"><span class=\"k\">tools</span>");
        for (i, (tool, n)) in tools.iter().enumerate() {
            if i == 40 {
                chip(
                    out,
                    "muted",
                    &format!(
                        "{} more",
                        plural((tools.len() - 40) as u64, "tool", "tools")
                    ),
                );
                break;
            }
            out.push_str("<span class=\"chip tool\">");
            line_text(out, tool);
            out.push_str(" ×");
            out.push_str(&thousands(*n as u64));
            out.push_str("</span>");
        }
        out.push_str("</div>");
    }
    if placed.len() > LAZY_FROM {
        out.push_str("<p class=\"lazy-note\">");
        escape(
            out,
            &format!(
                "{} calls: each card draws a share of the page's limits, the log's own text is not repeated \
                 under each call (each says where it is in the log), and calls are drawn as they come into view. \
                 Print draws every call; find in page and select all reach them all; \
                 a screenshot or the page's rendered text holds the calls drawn so far.",
                thousands(placed.len() as u64)
            ),
        );
        out.push_str("</p>");
    }
    // Shown by the script only: without it, every call is open already.
    out.push_str(
        "<nav id=\"tb\" class=\"toolbar\" hidden>\
         <button type=\"button\" data-a=\"open\">Expand all</button>\
         <button type=\"button\" data-a=\"close\">Collapse all</button>\
         <button type=\"button\" data-a=\"err\" aria-pressed=\"false\">Errors only</button></nav>",
    );
    out.push_str("</header>");
}

fn problems(out: &mut String, problems: &[ReplayProblem]) {
    if problems.is_empty() {
        return;
    }
    out.push_str("<section class=\"problems\"><h2>");
    escape(
        out,
        &format!(
            "{} in the log: replay skipped or worked around {}",
            plural(problems.len() as u64, "problem", "problems"),
            if problems.len() == 1 { "it" } else { "them" }
        ),
    );
    out.push_str("</h2><ul>");
    for problem in problems {
        out.push_str("<li><span class=\"chip warn\">");
        out.push_str(problem.kind.label());
        out.push_str("</span> <span class=\"k\">line ");
        out.push_str(&thousands(problem.line as u64));
        out.push_str("</span> ");
        line_text(out, &problem.reason);
        out.push_str("</li>");
    }
    out.push_str("</ul></section>");
}

/// How a call is drawn beyond its cards.
#[derive(Clone, Copy)]
struct Drawing {
    /// What each card draws.
    lim: Limits,
    /// Whether the log's own text is folded under each call (not on a
    /// long page, where it would be most of the page: where the call is in
    /// the log is said instead).
    log_text: bool,
}

fn call(out: &mut String, n: usize, placed: &Placed, call: &SessionCall<'_>, how: Drawing) {
    let lim = how.lim;
    let entry = call.entry;
    let failed = entry.has_result() && entry.is_error;
    let code = failed.then(|| {
        entry
            .error_code
            .as_ref()
            .map_or("(no code)", |c| c.as_str())
    });
    let cx = ResultContext {
        error_code: code,
        call_title: Some(cards::call_title(&entry.call_card)),
        limits: lim,
    };
    let depth = placed.depth.min(MAX_INDENT);
    out.push_str("<article class=\"call d");
    out.push_str(&depth.to_string());
    if failed {
        out.push_str(" err");
    }
    if !entry.has_result() {
        out.push_str(" pending");
    }
    out.push_str("\" id=\"c");
    out.push_str(&n.to_string());
    out.push_str("\" data-call=\"");
    out.push_str(entry.call_card.tag());
    out.push_str("\" data-result=\"");
    out.push_str(entry.result_card.as_ref().map_or("none", |c| c.tag()));
    out.push_str("\"><details class=\"c\" open><summary>");
    out.push_str("<a class=\"n\" href=\"#c");
    out.push_str(&n.to_string());
    out.push_str("\">");
    out.push_str(&thousands(n as u64));
    out.push_str("</a>");
    if let Some(parent) = placed.parent {
        let parent = thousands(parent as u64 + 1);
        out.push_str("<span class=\"up\" title=\"nested in call ");
        out.push_str(&parent);
        out.push_str("\">↳ ");
        out.push_str(&parent);
        out.push_str("</span>");
    }
    if placed.depth > MAX_INDENT {
        chip(
            out,
            "info",
            &format!("depth {}", thousands(placed.depth as u64)),
        );
    }
    cards::call_head(out, &entry.call_card);
    // The tool's name, as text (a generic card's title often is the name).
    if cards::call_title(&entry.call_card) != entry.name {
        out.push_str("<span class=\"tool\">");
        line_text(out, &entry.name);
        out.push_str("</span>");
    }
    match (&entry.result_card, code) {
        (_, Some(code)) => chip(out, "bad code", code),
        (None, None) => chip(out, "muted", "no result"),
        (Some(card), None) => {
            let (class, text) = cards::result_status(card);
            chip(out, class, &text);
        }
    }
    out.push_str("</summary>");
    if placed.missing_parent {
        out.push_str("<p class=\"cut\">Nested in call id <code>");
        line_text(out, call.parent_call_id.unwrap_or_default());
        out.push_str("</code>, which is not in this log: drawn at the top level.</p>");
    }
    if placed.in_loop {
        out.push_str("<p class=\"cut\">Its parent calls form a loop (a corrupt log): drawn at the top level.</p>");
    }
    match (&entry.call_card, &entry.result_card) {
        // A diff call whose result is the same diff: drawn once, below.
        (CallCard::Diff(call), Some(ResultCard::Diff(result))) if call.diffs == result.diffs => {
            out.push_str("<p class=\"none\">The change it proposed is the one drawn in its result below.</p>");
        }
        (card, _) => cards::call_body(out, card, lim),
    }
    match &entry.result_card {
        Some(card) => cards::result_card(out, card, &cx),
        None => out.push_str(
            "<section class=\"card result none-result\"><div class=\"hd\"><span class=\"ttl\">No result in the log</span></div>\
             <div class=\"bd\"><p class=\"none\">The session ended while this call ran, or its result line was lost.</p></div></section>",
        ),
    }
    raw(out, entry, how);
    out.push_str("</details></article>");
}

/// What the log holds for the call, folded, as the log holds it: the
/// arguments as sent, the meta as JSON, and the content the model read
/// when the result card does not already show it (a terminal card's output
/// is the content but for its status line: only that rest is drawn). Each
/// part draws at most a quarter of a card's text; the rest is said (the
/// log holds it). With nothing to add, or on a long page, only where the
/// call is in the log.
fn raw(out: &mut String, entry: &ReplayedEntry, how: Drawing) {
    let lim = how.lim;
    let mut where_ = String::from("log · ");
    match entry.result_line {
        Some(result) => where_.push_str(&format!(
            "lines {}–{}",
            thousands(entry.call_line as u64),
            thousands(result as u64)
        )),
        None => where_.push_str(&format!("line {}", thousands(entry.call_line as u64))),
    }
    where_.push_str(" · id ");
    let max = (lim.text / 4).max(512);
    let mut parts = String::new();
    if !how.log_text {
        return log_ref(out, &where_, &entry.call_id);
    }
    let shown_above = match &entry.call_card {
        CallCard::Generic(card) => card.raw_input.as_ref().is_some_and(|input| {
            serde_json::from_str::<serde_json::Value>(&entry.arguments)
                .ok()
                .as_ref()
                == Some(input)
        }),
        _ => false,
    };
    if !shown_above {
        log_part(&mut parts, "arguments", &entry.arguments, max);
    }
    if let Some(meta) = &entry.meta {
        log_part(&mut parts, "meta", &meta.to_string(), max);
    }
    const CONTENT: &str = "content (what the model read)";
    match &entry.result_card {
        _ if !entry.has_result() => {}
        // The card is the content.
        Some(ResultCard::Generic(_)) => {}
        _ if entry.content.is_empty() => {
            parts.push_str("<b>");
            parts.push_str(CONTENT);
            parts.push_str("</b>\n<i>no content</i>\n");
        }
        card => {
            let text = content_text(&entry.content);
            let output = match card {
                Some(ResultCard::Terminal(t)) => t.output.as_deref().filter(|o| !o.is_empty()),
                _ => None,
            };
            match output.and_then(|o| text.strip_prefix(o)) {
                Some(rest) if rest.trim().is_empty() => {
                    parts.push_str("<b>");
                    parts.push_str(CONTENT);
                    parts.push_str("</b>\n<i>the card's output, above</i>\n");
                }
                Some(rest) => {
                    let rest = rest.trim_start_matches('\n');
                    let label = format!("{CONTENT}: the card's output, above, then");
                    log_part(&mut parts, &label, rest, max);
                }
                None => log_part(&mut parts, CONTENT, &text, max),
            }
        }
    }
    if parts.is_empty() {
        return log_ref(out, &where_, &entry.call_id);
    }
    out.push_str("<details class=\"raw\"><summary>");
    escape(out, &where_);
    out.push_str("<code>");
    line_text(out, &entry.call_id);
    out.push_str("</code></summary><pre class=\"log\">");
    out.push_str(&parts);
    out.push_str("</pre></details>");
}

/// Where a call is in the log: `log · lines 3–4 · id x`.
fn log_ref(out: &mut String, where_: &str, call_id: &str) {
    out.push_str("<p class=\"logref\">");
    escape(out, where_);
    line_text(out, call_id);
    out.push_str("</p>");
}

fn footer(out: &mut String) {
    out.push_str("<footer>Drawn from the session log by toolprism ");
    out.push_str(env!("CARGO_PKG_VERSION"));
    out.push_str(
        ". Every card is drawn from its tag alone; all text is from the log, shown as text. \
         The page loads nothing and makes no request; its one small script only expands, \
         collapses and filters, and the page reads the same without it.</footer><script>",
    );
    out.push_str(csp::SCRIPT);
    out.push_str("</script></body></html>\n");
}

#[cfg(test)]
mod tests {
    use super::estimated_height;

    #[test]
    fn a_fold_counts_as_its_summary_not_its_lines() {
        let lines = "<pre>1\n2\n3\n4\n5\n6\n7\n8</pre>";
        let open = estimated_height(&format!("<div class=\"bd\">{lines}</div>"));
        let folded = estimated_height(&format!(
            "<div class=\"bd\"><details class=\"more\"><summary>8 more lines</summary>{lines}</details></div>"
        ));
        let call_open = estimated_height(&format!(
            "<details class=\"c\" open><summary>1</summary>{lines}</details>"
        ));
        assert!(folded < open, "{folded} < {open}");
        assert_eq!(call_open, open, "an open call's lines count");
    }
}
