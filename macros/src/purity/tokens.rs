//! K5 for the macros whose arguments do not parse as Rust expressions or
//! statements (`json!({..})`, `matches!(x, Pat)`, a crate's own DSL): their
//! tokens are scanned for the same paths, macros, method calls and `unsafe`
//! blocks that [`super::walker`] finds in parsed syntax.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

use super::body::Body;

/// Scans `tokens`, reporting what the deny list names.
pub(super) fn scan(body: &mut Body<'_, '_, '_>, tokens: TokenStream) {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tts.len() {
        match &tts[i] {
            TokenTree::Group(g) => {
                scan(body, g.stream());
                i += 1;
            }
            TokenTree::Ident(ident) if ident == "unsafe" => {
                if let Some(TokenTree::Group(g)) = tts.get(i + 1)
                    && g.delimiter() == Delimiter::Brace
                {
                    let tokens: TokenStream = tts[i..i + 2].iter().cloned().collect();
                    body.check_unsafe(tokens, g.stream());
                }
                i += 1;
            }
            TokenTree::Ident(_) | TokenTree::Punct(_) if path_starts(&tts, i) => {
                let end = path_end(&tts, i);
                path(body, &tts, i, end);
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
}

/// The path `tts[start..end]`, judged by what follows it (`!`, a call)
/// and what precedes it (a `.`).
fn path(body: &mut Body<'_, '_, '_>, tts: &[TokenTree], start: usize, end: usize) {
    let segments: Vec<String> = tts[start..end]
        .iter()
        .filter_map(|t| match t {
            TokenTree::Ident(id) => Some(id.to_string()),
            _ => None,
        })
        .collect();
    let path_tokens: TokenStream = tts[start..end].iter().cloned().collect();
    let after = tts.get(end);
    let is_macro = matches!(after, Some(TokenTree::Punct(p)) if p.as_char() == '!');
    let is_call =
        matches!(after, Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis);
    let after_dot =
        start > 0 && matches!(&tts[start - 1], TokenTree::Punct(p) if p.as_char() == '.');
    if is_macro {
        let name = segments.last().cloned().unwrap_or_default();
        let mut with_bang = path_tokens.clone();
        with_bang.extend([tts[end].clone()]);
        if !body.check_macro_name(&with_bang, &name) {
            body.check_segments(&path_tokens, &segments);
        }
    } else if after_dot && let [method] = &segments[..] {
        if is_call {
            body.check_method(&path_tokens, method);
            if let Some(TokenTree::Ident(receiver)) = start.checked_sub(2).map(|r| &tts[r]) {
                body.check_state_method(&path_tokens, &receiver.to_string(), method);
            }
        }
    } else {
        if is_call && let [name] = &segments[..] {
            body.check_bare_call(&path_tokens, name);
        }
        body.check_segments(&path_tokens, &segments);
        body.follow(&path_tokens, &segments);
    }
}

fn is_path_sep(tts: &[TokenTree], i: usize) -> bool {
    matches!(
        (tts.get(i), tts.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

fn path_starts(tts: &[TokenTree], i: usize) -> bool {
    match &tts[i] {
        TokenTree::Ident(_) => true,
        TokenTree::Punct(_) => {
            is_path_sep(tts, i) && matches!(tts.get(i + 2), Some(TokenTree::Ident(_)))
        }
        _ => false,
    }
}

/// The end (exclusive) of the path `[::] ident (:: ident)*` starting at `i`.
fn path_end(tts: &[TokenTree], mut i: usize) -> usize {
    if is_path_sep(tts, i) {
        i += 2;
    }
    loop {
        if !matches!(tts.get(i), Some(TokenTree::Ident(_))) {
            return i;
        }
        i += 1;
        if is_path_sep(tts, i) && matches!(tts.get(i + 2), Some(TokenTree::Ident(_))) {
            i += 2;
        } else {
            return i;
        }
    }
}
