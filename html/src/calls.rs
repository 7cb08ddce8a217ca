//! One call on the session page: its summary line (number, parent, title,
//! tool, the one fact of its result), its call card's body, its result
//! card, and where it is in the log, with the log's own text folded under
//! it when that adds to the cards.

use super::cards::{self, Limits, ResultContext, chip, content_text, line_text, log_part};
use super::session::{Placed, SessionCall};
use super::text::{escape, thousands};
use toolprism_core::card::{CallCard, ResultCard};
use toolprism_core::replay::ReplayedEntry;

/// Indentation levels drawn; deeper calls are drawn at this level and say
/// their depth.
const MAX_INDENT: usize = 8;
/// How a call is drawn beyond its cards.
#[derive(Clone, Copy)]
pub(crate) struct Drawing {
    /// What each card draws.
    pub lim: Limits,
    /// Whether the log's own text is folded under each call (not on a
    /// long page, where it would be most of the page: where the call is in
    /// the log is said instead).
    pub log_text: bool,
}

/// Call `n` of the page (1-based), as placed.
pub(crate) fn call(
    out: &mut String,
    n: usize,
    placed: &Placed,
    call: &SessionCall<'_>,
    how: Drawing,
) {
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

/// About how tall a call's markup is drawn, in CSS pixels: its lines of
/// text and its boxes, leaving out what is folded (a closed `<details>`
/// past its summary).
pub(crate) fn estimated_height(html: &str) -> usize {
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
