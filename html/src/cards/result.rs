//! Result cards: the head (title, the key facts as chips), the one fact a
//! collapsed call shows, and the body, switched on the card's tag; the
//! families with more to draw are in their own modules.

use super::blocks::{content_blocks, text_block};
use super::diff::{diff_counts, file_diffs};
use super::read::{self, window_label};
use super::web::{self, status_class};
use super::{Limits, chip, line_text, search, wrap_body};
use crate::text::{plural, thousands};
use toolprism_core::card::{
    DiffResult, ExitStatus, GenericResult, ReadResult, ResultCard, TerminalResult, WebFetch,
    WebResult, WebSearch,
};

/// What the page knows of a result beyond its card: whether it failed,
/// with which code, the call card's title, and how much a card draws on
/// this page.
#[derive(Clone, Copy, Default)]
pub(crate) struct ResultContext<'a> {
    pub error_code: Option<&'a str>,
    /// The call card's title, drawn just above: a result title equal to it
    /// is not drawn twice.
    pub call_title: Option<&'a str>,
    /// How much the card draws.
    pub limits: Limits,
}

/// The one fact a collapsed call shows about its result: class and text.
pub(crate) fn result_status(card: &ResultCard) -> (&'static str, String) {
    match card {
        // From the card's status alone (C7): never from the output's text.
        ResultCard::Terminal(t) => match &t.status {
            Some(ExitStatus::Code(0)) => ("good", "exit 0".to_owned()),
            Some(ExitStatus::Code(code)) => ("warn", format!("exit {code}")),
            Some(ExitStatus::Signal(signal)) => ("bad", signal.clone()),
            None => ("muted", "no exit status".to_owned()),
        },
        ResultCard::Search(s) => {
            let shown = s.shape().shown() as u64;
            if s.truncated() {
                (
                    "warn",
                    format!("{} of {}", thousands(shown), thousands(s.total())),
                )
            } else {
                ("good", format!("{} found", thousands(shown)))
            }
        }
        ResultCard::Read(r) => ("good", window_label(r)),
        ResultCard::Web(WebResult::Fetch(WebFetch { status_code, .. })) => {
            (status_class(*status_code), format!("HTTP {status_code}"))
        }
        ResultCard::Web(WebResult::Search(WebSearch { sources, .. })) => {
            ("good", plural(sources.len() as u64, "source", "sources"))
        }
        ResultCard::Diff(DiffResult { diffs, .. }) => {
            let (added, removed) = diff_counts(diffs);
            (
                "good",
                format!(
                    "+{} −{}",
                    thousands(added as u64),
                    thousands(removed as u64)
                ),
            )
        }
        ResultCard::Generic(_) => ("good", "ok".to_owned()),
    }
}

/// The title a result card shows.
fn result_title(card: &ResultCard) -> Option<&str> {
    match card {
        ResultCard::Generic(GenericResult { title, .. })
        | ResultCard::Terminal(TerminalResult { title, .. })
        | ResultCard::Diff(DiffResult { title, .. })
        | ResultCard::Read(ReadResult { title, .. })
        | ResultCard::Web(WebResult::Fetch(WebFetch { title, .. }))
        | ResultCard::Web(WebResult::Search(WebSearch { title, .. })) => title.as_deref(),
        ResultCard::Search(s) => s.title(),
    }
}

/// A whole result card: head (title and facts) and body.
pub(crate) fn result_card(out: &mut String, card: &ResultCard, cx: &ResultContext<'_>) {
    out.push_str("<section class=\"tp card result t-");
    out.push_str(card.tag());
    if cx.error_code.is_some() {
        out.push_str(" err");
    }
    out.push_str("\"><div class=\"hd\" data-tag=\"");
    out.push_str(card.tag());
    out.push_str("\">");
    if let Some(code) = cx.error_code {
        chip(out, "bad code", code);
    }
    let title = result_title(card).filter(|t| Some(*t) != cx.call_title);
    match card {
        ResultCard::Read(r) => {
            out.push_str("<code class=\"ttl path\">");
            line_text(out, &r.path);
            out.push_str("</code>");
            if let Some(title) = title.filter(|t| *t != r.path) {
                out.push_str("<span class=\"sub\">");
                line_text(out, title);
                out.push_str("</span>");
            }
        }
        ResultCard::Web(WebResult::Fetch(WebFetch { url, .. })) => {
            out.push_str("<code class=\"ttl url\">");
            line_text(out, url);
            out.push_str("</code>");
            if let Some(title) = title.filter(|t| t != url) {
                out.push_str("<span class=\"sub\">");
                line_text(out, title);
                out.push_str("</span>");
            }
        }
        ResultCard::Terminal(_) => {
            if let Some(title) = title {
                out.push_str("<code class=\"ttl sub\">");
                line_text(out, title);
                out.push_str("</code>");
            }
        }
        _ => match title {
            Some(title) => {
                out.push_str("<span class=\"ttl\">");
                line_text(out, title);
                out.push_str("</span>");
            }
            None if matches!(card, ResultCard::Generic(_)) && cx.error_code.is_none() => {
                out.push_str("<span class=\"ttl muted\">result</span>");
            }
            None => {}
        },
    }
    result_facts(out, card);
    out.push_str("</div>");
    let start = out.len();
    result_body(out, card, cx.limits);
    wrap_body(out, start);
    out.push_str("</section>");
}

/// The key facts of a result as chips.
fn result_facts(out: &mut String, card: &ResultCard) {
    match card {
        ResultCard::Generic(_) => {}
        ResultCard::Terminal(t) => {
            match &t.status {
                Some(ExitStatus::Code(code)) => {
                    let class = if *code == 0 { "good exit" } else { "bad exit" };
                    chip(out, class, &format!("exit code {code}"));
                }
                Some(ExitStatus::Signal(signal)) => {
                    chip(out, "bad signal", &format!("killed by {signal}"))
                }
                None => chip(out, "muted exit", "no exit status"),
            }
            if let Some(sandbox) = &t.sandbox {
                let network = if sandbox.network {
                    "network on"
                } else {
                    "network off"
                };
                chip(
                    out,
                    "muted sandbox",
                    &format!("sandbox: {}, {network}", sandbox.mode),
                );
                if sandbox.denied {
                    chip(out, "warn sandbox", "the sandbox may have stopped it");
                }
            }
        }
        ResultCard::Diff(DiffResult { diffs, .. }) => {
            let (added, removed) = diff_counts(diffs);
            chip(out, "add", &format!("+{}", thousands(added as u64)));
            chip(out, "del", &format!("−{}", thousands(removed as u64)));
            chip(out, "muted", &plural(diffs.len() as u64, "file", "files"));
        }
        ResultCard::Search(s) => search::facts(out, s),
        ResultCard::Read(r) => read::facts(out, r),
        ResultCard::Web(WebResult::Fetch(WebFetch {
            status_code,
            truncated,
            ..
        })) => web::fetch_facts(out, *status_code, *truncated),
        ResultCard::Web(WebResult::Search(WebSearch {
            sources, truncated, ..
        })) => web::search_facts(out, sources, *truncated),
    }
}

fn result_body(out: &mut String, card: &ResultCard, lim: Limits) {
    match card {
        ResultCard::Generic(GenericResult { content, .. }) => match content {
            Some(content) if !content.is_empty() => content_blocks(out, content, lim),
            _ => out.push_str("<p class=\"none\">no content</p>"),
        },
        ResultCard::Terminal(TerminalResult { output, .. }) => match output {
            Some(output) if !output.is_empty() => text_block(out, "out term", output, lim),
            _ => out.push_str("<p class=\"none\">no output</p>"),
        },
        ResultCard::Diff(DiffResult { diffs, .. }) => file_diffs(out, diffs, lim),
        ResultCard::Search(s) => search::body(out, s, lim),
        ResultCard::Read(r) => read::body(out, r, lim),
        // The URL, status and truncation are all in the head.
        ResultCard::Web(WebResult::Fetch(_)) => {}
        ResultCard::Web(WebResult::Search(WebSearch {
            sources,
            answer,
            truncated,
            ..
        })) => web::search_body(out, sources, answer.as_deref(), *truncated, lim),
    }
}
