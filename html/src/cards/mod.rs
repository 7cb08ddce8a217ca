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
//! - [`blocks`]: what every card draws with: text boxes that fold, tables
//!   that fold, the page's own limits, content blocks;
//! - [`input`]: a call's arguments (a grid of keys and values, or JSON).

mod blocks;
mod call;
mod diff;
mod input;
mod read;
mod result;
mod search;
mod web;

pub(crate) use blocks::{content_blocks, line_text, text_block};
pub(crate) use call::{call_body, call_card, call_head, call_title};
pub(crate) use input::depth_exceeds;
pub(crate) use result::{ResultContext, result_card, result_status};

use toolprism_core::card::ToolKind;

/// A body of up to this many lines or rows is shown whole; a longer one
/// shows its first rows and folds the rest under "N more …".
pub(crate) const PREVIEW_LINES: usize = 16;

/// Bytes of text drawn per body; the rest is said, not drawn.
pub(crate) const MAX_TEXT_BYTES: usize = 256 * 1024;

/// Rows drawn per table (numbered lines, matches, paths, diff lines).
pub(crate) const MAX_ROWS: usize = 5_000;

/// Bytes drawn of one row (a line, a path, a URL); the rest is said.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024;

/// The icon of a kind: the id of a symbol in the page's sprite.
pub(crate) fn kind_icon(kind: ToolKind) -> &'static str {
    kind.as_str()
}

/// A chip: a short fact in a coloured pill.
pub(crate) fn chip(out: &mut String, class: &str, text: &str) {
    out.push_str("<span class=\"chip ");
    out.push_str(class);
    out.push_str("\">");
    line_text(out, text);
    out.push_str("</span>");
}

/// An `<svg>` using the sprite's symbol for `icon`.
pub(crate) fn icon(out: &mut String, icon: &str) {
    out.push_str("<svg class=\"ic\" aria-hidden=\"true\"><use href=\"#i-");
    out.push_str(icon);
    out.push_str("\"/></svg>");
}

/// Wraps what was written since `start` in the body's `<div>`, if anything was.
pub(crate) fn wrap_body(out: &mut String, start: usize) {
    if out.len() > start {
        out.insert_str(start, "<div class=\"bd\">");
        out.push_str("</div>");
    }
}
