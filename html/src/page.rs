//! The session page: every call of a replayed log, in order, with its call
//! card and result card, nested calls indented under their parent, and a
//! header that counts calls and errors by code.

use std::collections::{BTreeMap, HashMap};

use super::calls::{Drawing, call, estimated_height};
use super::cards::{Limits, chip, line_text};
use super::csp;
use super::session::{Placed, Session, SessionCounts, place};
use super::text::{escape, escape_attr, plural, thousands};
use toolprism_core::replay::ReplayProblem;

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
