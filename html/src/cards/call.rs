//! Call cards: generic (kind icon, title, arguments, locations, content),
//! terminal (the command, its directory and description) and diff (the
//! proposed change).

use serde_json::Value;

use super::blocks::content_blocks;
use super::diff::file_diffs;
use super::input::{input_block, is_short, scalar};
use super::{Limits, kind_icon, line_text, wrap_body};
use toolprism_core::card::{CallCard, DiffCall, GenericCall, Location, TerminalCall, ToolKind};

/// The icon a call card gets: a generic card's kind, else its tag's.
fn call_icon(card: &CallCard) -> &'static str {
    match card {
        CallCard::Generic(GenericCall { kind, .. }) => kind_icon(kind.unwrap_or_default()),
        CallCard::Terminal(_) => kind_icon(ToolKind::Execute),
        CallCard::Diff(_) => kind_icon(ToolKind::Edit),
    }
}

/// A call card's title.
pub(crate) fn call_title(card: &CallCard) -> &str {
    match card {
        CallCard::Generic(GenericCall { title, .. })
        | CallCard::Terminal(TerminalCall { title, .. })
        | CallCard::Diff(DiffCall { title, .. }) => title,
    }
}

/// The head of a call card: the title with its icon (a command is set as
/// one, after a `$ `).
pub(crate) fn call_head(out: &mut String, card: &CallCard) {
    match card {
        CallCard::Terminal(TerminalCall { title, .. }) => {
            out.push_str("<code class=\"ttl cmd ic ");
            out.push_str(call_icon(card));
            out.push_str("\">$ ");
            line_text(out, title);
            out.push_str("</code>");
        }
        _ => {
            out.push_str("<span class=\"ttl ic ");
            out.push_str(call_icon(card));
            out.push_str("\">");
            line_text(out, call_title(card));
            out.push_str("</span>");
        }
    }
}

/// The body of a call card; nothing when it has nothing beyond its head.
pub(crate) fn call_body(out: &mut String, card: &CallCard, lim: Limits) {
    let start = out.len();
    match card {
        // `..`: the title and a generic card's kind are the head's; the
        // cards are `#[non_exhaustive]`.
        CallCard::Generic(GenericCall {
            raw_input,
            content,
            locations,
            ..
        }) => {
            // A few short scalar arguments fit on one line, with the locations.
            let inline = raw_input.as_ref().and_then(Value::as_object).filter(|map| {
                !map.is_empty()
                    && map.len() <= 8
                    && map.iter().all(|(key, value)| is_short(key, value))
            });
            if locations.as_ref().is_some_and(|l| !l.is_empty()) || inline.is_some() {
                out.push_str("<div class=\"facts\">");
                locations_list(out, locations.as_deref());
                for (key, value) in inline.into_iter().flatten() {
                    scalar(out, Some(key), value);
                }
                out.push_str("</div>");
            }
            if let Some(input) = raw_input.as_ref().filter(|_| inline.is_none()) {
                input_block(out, input, lim);
            }
            if let Some(content) = content {
                content_blocks(out, content, lim);
            }
        }
        CallCard::Terminal(TerminalCall {
            description, cwd, ..
        }) => {
            if description.is_some() || cwd.is_some() {
                out.push_str("<div class=\"facts\">");
                if let Some(cwd) = cwd {
                    out.push_str("<span class=\"cwd\">in <code>");
                    line_text(out, cwd);
                    out.push_str("</code></span>");
                }
                if let Some(description) = description {
                    out.push_str("<span class=\"desc\">");
                    line_text(out, description);
                    out.push_str("</span>");
                }
                out.push_str("</div>");
            }
        }
        CallCard::Diff(DiffCall {
            diffs, locations, ..
        }) => {
            // A location that only names a file of the diff says nothing new.
            let locations: Vec<Location> = locations
                .iter()
                .flatten()
                .filter(|l| l.line.is_some() || !diffs.iter().any(|d| d.path == l.path))
                .cloned()
                .collect();
            if !locations.is_empty() {
                out.push_str("<div class=\"facts\">");
                locations_list(out, Some(&locations));
                out.push_str("</div>");
            }
            file_diffs(out, diffs, lim);
        }
    }
    wrap_body(out, start);
}

fn locations_list(out: &mut String, locations: Option<&[Location]>) {
    for location in locations.unwrap_or_default() {
        out.push_str("<code class=\"loc\">");
        line_text(out, &location.path);
        if let Some(line) = location.line {
            out.push(':');
            out.push_str(&line.to_string());
        }
        out.push_str("</code>");
    }
}

/// A whole call card, standalone.
pub(crate) fn call_card(out: &mut String, card: &CallCard) {
    out.push_str("<section class=\"tp card call t-");
    out.push_str(card.tag());
    out.push_str("\"><div class=\"hd\" data-tag=\"");
    out.push_str(card.tag());
    out.push_str("\">");
    call_head(out, card);
    out.push_str("</div>");
    call_body(out, card, Limits::FULL);
    out.push_str("</section>");
}
