//! The session page: every call of a replayed log, in order, with its call
//! card and result card, nested calls indented under their parent, and a
//! header that counts calls and errors by code.

use std::collections::{BTreeMap, HashMap};

use super::cards::{self, ResultContext, chip, icon, line_text, text_block};
use super::csp;
use super::session::{Placed, Session, SessionCall, SessionCounts, place};
use super::text::{escape, escape_attr, plural, thousands};
use toolprism_core::card::{CallCard, ResultCard};
use toolprism_core::replay::{ReplayProblem, ReplayedEntry};

/// Indentation levels drawn; deeper calls are drawn at this level and say
/// their depth.
const MAX_INDENT: usize = 8;

/// The page for `session`: one self-contained HTML document.
pub(crate) fn session_page(session: &Session<'_>) -> String {
    let counts = session.counts();
    let placed = place(&session.calls);
    let mut out = String::with_capacity(16 * 1024 + session.calls.len() * 1500);
    head(&mut out, session);
    header(&mut out, session, &counts, &placed);
    problems(&mut out, session.problems);
    out.push_str("<main class=\"calls\">");
    if placed.is_empty() {
        out.push_str("<p class=\"empty\">This log holds no calls.</p>");
    }
    for (n, p) in placed.iter().enumerate() {
        call(&mut out, n + 1, p, &session.calls[p.index]);
    }
    out.push_str("</main>");
    footer(&mut out);
    out
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
    icon(out, "error");
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

fn call(out: &mut String, n: usize, placed: &Placed, call: &SessionCall<'_>) {
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
    out.push_str("<span class=\"head\">");
    cards::call_head(out, &entry.call_card);
    out.push_str("</span>");
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
    out.push_str("</summary><div class=\"cb\">");
    if placed.missing_parent {
        out.push_str("<p class=\"cut\">Nested in call id <code>");
        line_text(out, call.parent_call_id.unwrap_or_default());
        out.push_str("</code>, which is not in this log: drawn at the top level.</p>");
    }
    if placed.in_loop {
        out.push_str("<p class=\"cut\">Its parent calls form a loop (a corrupt log): drawn at the top level.</p>");
    }
    let start = out.len();
    match (&entry.call_card, &entry.result_card) {
        // A diff call whose result is the same diff: drawn once, below.
        (CallCard::Diff(call), Some(ResultCard::Diff(result))) if call.diffs == result.diffs => {
            out.push_str("<p class=\"none\">The change it proposed is the one drawn in its result below.</p>");
        }
        (card, _) => cards::call_body(out, card),
    }
    if out.len() > start {
        out.insert_str(start, "<div class=\"callbody\">");
        out.push_str("</div>");
    }
    match &entry.result_card {
        Some(card) => cards::result_card(out, card, &cx),
        None => out.push_str(
            "<section class=\"card result none-result\"><div class=\"hd\"><span class=\"ttl\">No result in the log</span></div>\
             <div class=\"bd\"><p class=\"none\">The session ended while this call ran, or its result line was lost.</p></div></section>",
        ),
    }
    raw(out, entry);
    out.push_str("</div></details></article>");
}

/// What the log holds for the call, folded: arguments, meta, and the
/// content the model read when the result card is not that content.
fn raw(out: &mut String, entry: &ReplayedEntry) {
    out.push_str("<details class=\"raw\"><summary>log · ");
    match entry.result_line {
        Some(result) => escape(
            out,
            &format!(
                "lines {}–{}",
                thousands(entry.call_line as u64),
                thousands(result as u64)
            ),
        ),
        None => escape(out, &format!("line {}", thousands(entry.call_line as u64))),
    }
    out.push_str(" · id <code>");
    line_text(out, &entry.call_id);
    out.push_str("</code></summary><div class=\"lbl\">arguments</div>");
    let parsed = serde_json::from_str::<serde_json::Value>(&entry.arguments).ok();
    let shown_above = match (&entry.call_card, &parsed) {
        (CallCard::Generic(card), Some(args)) => card.raw_input.as_ref() == Some(args),
        _ => false,
    };
    match parsed {
        _ if shown_above => out.push_str("<p class=\"none\">the call card's input, above</p>"),
        Some(value) if !cards::depth_exceeds(&value, 128) => {
            let pretty =
                serde_json::to_string_pretty(&value).unwrap_or_else(|_| entry.arguments.clone());
            text_block(out, "json", &pretty);
        }
        _ => text_block(out, "json", &entry.arguments),
    }
    if let Some(meta) = &entry.meta {
        out.push_str("<div class=\"lbl\">meta</div>");
        let pretty = serde_json::to_string_pretty(meta).unwrap_or_else(|e| e.to_string());
        text_block(out, "json", &pretty);
    }
    let card_is_content = entry
        .result_card
        .as_ref()
        .is_some_and(|c| matches!(c, ResultCard::Generic(_)));
    if entry.has_result() && !card_is_content {
        out.push_str("<div class=\"lbl\">content (what the model read)</div>");
        if entry.content.is_empty() {
            out.push_str("<p class=\"none\">no content</p>");
        }
        cards::content_blocks(out, &entry.content);
    }
    out.push_str("</details>");
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
