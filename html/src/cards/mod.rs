//! Cards drawn as HTML. Every function in these modules switches on the
//! card's tag (the enum variant) and on nothing else: no tool name reaches
//! them (DESIGN C8). Every string from a card goes through
//! [`escape`](crate::text::escape).
//!
//! A card is drawn in two parts, so that the session page can put the
//! head in a call's always-visible summary and the body below it: the
//! *head* (icon, title, the key facts as chips) and the *body*.
//!
//! - [`call`]: the call cards (generic, terminal, diff);
//! - [`result`]: the result cards' heads, statuses and bodies, by tag, with
//!   the families that need more in [`diff`], [`search`], [`read`] and
//!   [`web`];
//! - [`blocks`]: what every card draws with: text boxes that fold, rows
//!   that fold, the limits on what one card draws, content blocks;
//! - [`input`]: a call's arguments (a grid of keys and values, or JSON).
//!
//! The markup is lean on purpose, since a page may hold 10,000 calls and
//! draws every one of them: icons are CSS masks on the element they mark
//! (no element of their own), numbered lines are text in one `<pre>` with
//! the number in an `<i>`, and no wrapper exists for styling alone.

mod blocks;
mod call;
mod diff;
mod input;
mod read;
mod result;
mod search;
mod web;

pub(crate) use blocks::{content_text, line_text, log_part};
pub(crate) use call::{call_body, call_card, call_head, call_title};
pub(crate) use result::{ResultContext, result_card, result_status};

use crate::text::bytes;
use toolprism_core::card::ToolKind;

/// A body of up to this many lines or rows is shown whole; a longer one
/// shows its first rows and folds the rest under "N more …".
pub(crate) const PREVIEW_LINES: usize = 16;

/// Bytes drawn of one row (a line, a path, a URL); the rest is said.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024;

/// How much one card draws: rows (numbered lines, matches, paths, diff
/// lines) and bytes of text per body. Where a card draws less than it
/// holds, it says so, naming these limits.
///
/// A card drawn alone, or on a page of up to 32 calls, draws up to
/// [`Limits::FULL`]. On a longer page each card gets its share of one
/// budget for the page ([`Limits::for_page`]), so that a session of 10,000
/// calls stays a page a browser draws whole in a few seconds: every call is
/// drawn, each with less of its longest bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Rows drawn per table.
    pub rows: usize,
    /// Bytes of text drawn per body.
    pub text: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits::FULL
    }
}

impl Limits {
    /// The most any card draws: 5,000 rows and 256 KB of text.
    pub(crate) const FULL: Limits = Limits {
        rows: 5_000,
        text: 256 * 1024,
    };

    /// The rows all the cards of one page draw, shared out.
    const PAGE_ROWS: usize = 240_000;
    /// The text all the cards of one page draw, shared out.
    const PAGE_TEXT: usize = 8 * 1024 * 1024;
    /// The least a card's share is, however long the page.
    const MIN: Limits = Limits {
        rows: 24,
        text: 2 * 1024,
    };

    /// Each card's share on a page of `calls` calls: [`Limits::FULL`] up to
    /// 32 calls, less on longer pages, never below 24 rows and 2 KB.
    pub(crate) fn for_page(calls: usize) -> Limits {
        let calls = calls.max(1);
        Limits {
            rows: (Self::PAGE_ROWS / calls).clamp(Self::MIN.rows, Self::FULL.rows),
            text: (Self::PAGE_TEXT / calls).clamp(Self::MIN.text, Self::FULL.text),
        }
    }

    /// What the limits are, for a note that says where a card stopped.
    pub(crate) fn said(self) -> String {
        let scope = if self == Self::FULL {
            "a card draws"
        } else {
            "on a page this long, a card draws"
        };
        format!(
            "{scope} at most {} rows and {} of text, {} of a line",
            crate::text::thousands(self.rows as u64),
            bytes(self.text as u64),
            bytes(MAX_LINE_BYTES as u64)
        )
    }
}

/// The icon class of a kind: `i-read`, `i-execute`, …, a mask in the
/// page's stylesheet.
pub(crate) fn kind_icon(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Read => "i-read",
        ToolKind::Edit => "i-edit",
        ToolKind::Delete => "i-delete",
        ToolKind::Move => "i-move",
        ToolKind::Search => "i-search",
        ToolKind::Execute => "i-execute",
        ToolKind::Fetch => "i-fetch",
        ToolKind::Other => "i-other",
    }
}

/// A chip: a short fact in a coloured pill.
pub(crate) fn chip(out: &mut String, class: &str, text: &str) {
    out.push_str("<span class=\"chip ");
    out.push_str(class);
    out.push_str("\">");
    line_text(out, text);
    out.push_str("</span>");
}

/// Wraps what was written since `start` in the body's `<div>`, if anything was.
pub(crate) fn wrap_body(out: &mut String, start: usize) {
    if out.len() > start {
        out.insert_str(start, "<div class=\"bd\">");
        out.push_str("</div>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_page_shares_one_budget_and_a_short_one_draws_in_full() {
        assert_eq!(Limits::for_page(19), Limits::FULL);
        assert_eq!(Limits::for_page(0), Limits::FULL);
        assert_eq!(
            Limits::for_page(1_000),
            Limits {
                rows: 240,
                text: 8_388
            }
        );
        assert_eq!(Limits::for_page(10_000), Limits::MIN);
        assert_eq!(Limits::for_page(1_000_000), Limits::MIN);
        assert!(
            Limits::FULL
                .said()
                .starts_with("a card draws at most 5,000 rows")
        );
        assert!(
            Limits::MIN
                .said()
                .starts_with("on a page this long, a card draws at most 24 rows and 2.0 KB")
        );
    }
}
