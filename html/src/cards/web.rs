//! Web result cards: a fetch (the URL as text, the HTTP status, whether
//! the body was cut) and a search (the answer, the sources, whether more
//! exist). No URL is ever a link.

use super::blocks::{Budget, not_drawn, text_block, url_text};
use super::{Limits, MAX_LINE_BYTES, chip, line_text};
use crate::text::plural;
use toolprism_core::card::WebSource;

/// The class of an HTTP status: `good` (2xx), `info` (3xx), `warn` (4xx),
/// `bad` (anything else).
pub(super) fn status_class(code: u16) -> &'static str {
    match code {
        200..=299 => "good",
        300..=399 => "info",
        400..=499 => "warn",
        _ => "bad",
    }
}

fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

/// A fetch's status (`HTTP 404 Not Found`) and truncation as chips.
pub(super) fn fetch_facts(out: &mut String, status_code: u16, truncated: bool) {
    let reason = reason_phrase(status_code);
    let text = if reason.is_empty() {
        format!("HTTP {status_code}")
    } else {
        format!("HTTP {status_code} {reason}")
    };
    chip(out, &format!("{} status", status_class(status_code)), &text);
    if truncated {
        chip(out, "warn trunc", "truncated");
    }
}

/// A search's source count and truncation as chips.
pub(super) fn search_facts(out: &mut String, sources: &[WebSource], truncated: bool) {
    chip(
        out,
        "muted",
        &plural(sources.len() as u64, "source", "sources"),
    );
    if truncated {
        chip(out, "warn trunc", "truncated: more sources exist");
    }
}

/// A search's answer and sources (title, URL as text, date, snippet).
pub(super) fn search_body(
    out: &mut String,
    sources: &[WebSource],
    answer: Option<&str>,
    truncated: bool,
    lim: Limits,
) {
    if let Some(answer) = answer {
        out.push_str("<div class=\"lbl\">answer</div>");
        text_block(out, "answer", answer, lim);
    }
    if sources.is_empty() {
        out.push_str("<p class=\"none\">no sources</p>");
    } else {
        out.push_str("<ol class=\"sources\">");
        let mut budget = Budget::new(lim);
        let mut stopped = None;
        for (i, source) in sources.iter().enumerate() {
            let len = source.url.len()
                + source.title.as_ref().map_or(0, String::len)
                + source.snippet.as_ref().map_or(0, String::len);
            if !budget.take_row(len.min(3 * MAX_LINE_BYTES)) {
                stopped = Some(i);
                break;
            }
            out.push_str("<li>");
            if let Some(title) = &source.title {
                out.push_str("<span class=\"st\">");
                line_text(out, title);
                out.push_str("</span>");
            }
            url_text(out, &source.url);
            if let Some(date) = &source.published_at {
                out.push_str("<span class=\"date\">");
                line_text(out, date);
                out.push_str("</span>");
            }
            if let Some(snippet) = &source.snippet {
                out.push_str("<p class=\"snip\">");
                line_text(out, snippet);
                out.push_str("</p>");
            }
            out.push_str("</li>");
        }
        out.push_str("</ol>");
        if let Some(i) = stopped {
            not_drawn(out, sources.len() - i, ("source", "sources"), lim);
        }
    }
    if truncated {
        out.push_str("<p class=\"cut\">The search found more sources than the card holds.</p>");
    }
}
