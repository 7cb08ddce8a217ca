//! The attribute's own arguments: `#[tool(name = "read", kind = read, read_only, ...)]`.
//!
//! Every key is optional. Problems (an unknown key, a duplicate, a bad value)
//! are recorded in the [`Ctxt`] and parsing goes on, so they are all
//! reported together.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, LitBool, LitInt, LitStr, Path, Token};

use crate::ctxt::Ctxt;
use crate::names::{closest, tool_name_problem};

/// Every key the attribute knows, in the order the reference lists them.
pub(crate) const KEYS: &[&str] = &[
    "name",
    "title",
    "icon",
    "kind",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "timeout_ms",
    "spill",
    "blocking",
    "approval",
    "task",
    "builtin",
    "crate",
];

/// The values of `kind = ...`.
pub(crate) const KINDS: &[&str] = &[
    "read", "edit", "delete", "move", "search", "execute", "fetch", "other",
];

/// The values of `task = "..."`.
pub(crate) const TASK_SUPPORT: &[&str] = &["optional", "required"];

/// The attribute's arguments, parsed.
#[derive(Default)]
pub(crate) struct Attrs {
    /// `name = "..."` and the literal, for spans.
    pub(crate) name: Option<(String, LitStr)>,
    pub(crate) title: Option<String>,
    /// `icon = "data:…"` or `"https://…"`.
    pub(crate) icon: Option<String>,
    /// The `ToolKind` variant, e.g. `Read`.
    pub(crate) kind: Option<&'static str>,
    pub(crate) read_only: bool,
    pub(crate) destructive: bool,
    pub(crate) idempotent: bool,
    pub(crate) open_world: bool,
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) spill: Spill,
    /// `blocking`: `execute` is synchronous and runs on tokio's blocking pool.
    pub(crate) blocking: bool,
    /// `approval = "..."`: the question every call asks a person first.
    pub(crate) approval: Option<String>,
    /// `task = "optional" | "required"`: the `TaskSupport` variant.
    pub(crate) task: Option<&'static str>,
    /// `builtin`, with its span.
    pub(crate) builtin: Option<Span>,
    /// `crate = path`.
    pub(crate) krate: Option<Path>,
}

#[derive(Default, Clone, Copy)]
pub(crate) enum Spill {
    #[default]
    Default,
    Bytes(u64),
    Never,
}

/// One `key` or `key = value` item, before interpretation.
struct Item {
    key: Ident,
    value: Value,
}

enum Value {
    None,
    /// The tokens after `=`, up to the next top-level comma.
    Assigned(TokenStream),
    /// `key(...)`, which the attribute does not use.
    Parenthesized(Span),
}

/// Parses the attribute's arguments, recording every problem in `cx`.
pub(crate) fn parse(cx: &Ctxt, args: TokenStream) -> Attrs {
    let mut attrs = Attrs::default();
    let items = match parse_items.parse2(args) {
        Ok(items) => items,
        Err(e) => {
            cx.syn_error(e);
            return attrs;
        }
    };
    let mut seen: HashMap<String, Span> = HashMap::new();
    for item in items {
        let key = item.key.unraw().to_string();
        if !KEYS.contains(&key.as_str()) {
            unknown_key(cx, &item.key, &key);
            continue;
        }
        if seen.insert(key.clone(), item.key.span()).is_some() {
            cx.error_spanned_by(
                &item.key,
                format!("duplicate key `{key}` in #[tool(...)]: each key may appear once; remove this one"),
            );
            continue;
        }
        if let Value::Parenthesized(span) = item.value {
            cx.error_at(
                span,
                format!("`{key}` does not take parentheses: write {}", usage(&key)),
            );
            continue;
        }
        match key.as_str() {
            "name" => {
                if let Some(lit) = lit_str(cx, &item, "name") {
                    let name = lit.value();
                    if let Some(problem) = tool_name_problem(&name) {
                        cx.error_spanned_by(
                            &lit,
                            format!(
                                "the tool name \"{}\" {problem}: a tool name has 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`",
                                name.escape_debug()
                            ),
                        );
                    }
                    attrs.name = Some((name, lit));
                }
            }
            "title" => {
                if let Some(lit) = lit_str(cx, &item, "title") {
                    let title = lit.value();
                    if title.trim().is_empty() {
                        cx.error_spanned_by(&lit, "the title is empty: write a short human title, or remove `title` to use the doc comment's `# Heading`");
                    }
                    attrs.title = Some(title);
                }
            }
            "kind" => attrs.kind = kind(cx, &item),
            "read_only" => attrs.read_only = flag(cx, &item),
            "destructive" => attrs.destructive = flag(cx, &item),
            "idempotent" => attrs.idempotent = flag(cx, &item),
            "open_world" => attrs.open_world = flag(cx, &item),
            "blocking" => attrs.blocking = flag(cx, &item),
            "icon" => {
                if let Some(lit) = lit_str(cx, &item, "icon") {
                    let icon = lit.value();
                    let scheme_ok = icon.starts_with("data:image/") || icon.starts_with("https://");
                    if !scheme_ok || icon.len() <= "https://".len() {
                        cx.error_spanned_by(&lit, "the icon must be a `data:image/…` URI or an `https://` URL, e.g. `icon = \"https://example.com/icon.svg\"`");
                    }
                    attrs.icon = Some(icon);
                }
            }
            "approval" => {
                if let Some(lit) = lit_str(cx, &item, "approval") {
                    let question = lit.value();
                    if question.trim().is_empty() {
                        cx.error_spanned_by(&lit, "the approval question is empty: write what to ask the person, e.g. `approval = \"Run this command?\"`");
                    }
                    attrs.approval = Some(question);
                }
            }
            "task" => attrs.task = task(cx, &item),
            "builtin" => {
                if flag(cx, &item) {
                    attrs.builtin = Some(item.key.span());
                }
            }
            "timeout_ms" => attrs.timeout_ms = timeout(cx, &item),
            "spill" => attrs.spill = spill(cx, &item),
            "crate" => attrs.krate = krate(cx, &item),
            _ => unreachable!("every key in KEYS is handled"),
        }
    }
    attrs
}

fn parse_items(input: ParseStream) -> syn::Result<Vec<Item>> {
    let mut items = Vec::new();
    while !input.is_empty() {
        let key = input.call(Ident::parse_any).map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a key such as `name = \"read\"`, `kind = read` or `read_only`",
            )
        })?;
        let value = if input.peek(Token![=]) {
            let eq: Token![=] = input.parse()?;
            let mut tokens = TokenStream::new();
            while !input.is_empty() && !input.peek(Token![,]) {
                tokens.extend([input.parse::<TokenTree>()?]);
            }
            if tokens.is_empty() {
                return Err(syn::Error::new(
                    eq.span,
                    format!("`{key} =` needs a value: write {}", usage(&key.to_string())),
                ));
            }
            Value::Assigned(tokens)
        } else if input.peek(syn::token::Paren) {
            let group: TokenTree = input.parse()?;
            Value::Parenthesized(group.span())
        } else {
            Value::None
        };
        items.push(Item { key, value });
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(items)
}

fn unknown_key(cx: &Ctxt, ident: &Ident, key: &str) {
    let hint = if KINDS.contains(&key) {
        format!("did you mean `kind = {key}`?")
    } else if matches!(key, "description" | "desc" | "doc" | "about") {
        "the description is the doc comment: write `/// ...` above the impl block".to_owned()
    } else if let Some(suggestion) = closest(key, KEYS) {
        format!("did you mean `{suggestion}`?")
    } else {
        format!("the keys are: {}", KEYS.join(", "))
    };
    cx.error_spanned_by(ident, format!("unknown #[tool] key `{key}`; {hint}"));
}

/// How a key is written, for error messages.
fn usage(key: &str) -> String {
    match key {
        "name" => "`name = \"read\"`".to_owned(),
        "title" => "`title = \"Read file\"`".to_owned(),
        "kind" => format!("`kind = read` (one of {})", KINDS.join(", ")),
        "timeout_ms" => "`timeout_ms = 5000`".to_owned(),
        "spill" => "`spill = 65536` (bytes) or `spill = never`".to_owned(),
        "crate" => "`crate = ::toolprism`".to_owned(),
        "approval" => "`approval = \"Run this command?\"`".to_owned(),
        "icon" => "`icon = \"https://example.com/icon.svg\"`".to_owned(),
        "task" => "`task = \"optional\"` or `task = \"required\"`".to_owned(),
        flag => format!("`{flag}`"),
    }
}

fn assigned<'a>(cx: &Ctxt, item: &'a Item, key: &str) -> Option<&'a TokenStream> {
    match &item.value {
        Value::Assigned(tokens) => Some(tokens),
        _ => {
            cx.error_spanned_by(
                &item.key,
                format!("`{key}` needs a value: write {}", usage(key)),
            );
            None
        }
    }
}

fn lit_str(cx: &Ctxt, item: &Item, key: &str) -> Option<LitStr> {
    let tokens = assigned(cx, item, key)?;
    match syn::parse2::<LitStr>(tokens.clone()) {
        Ok(lit) => Some(lit),
        Err(_) => {
            cx.error_spanned_by(
                tokens,
                format!("expected a string literal: write {}", usage(key)),
            );
            None
        }
    }
}

fn flag(cx: &Ctxt, item: &Item) -> bool {
    match &item.value {
        Value::Assigned(tokens) => match syn::parse2::<LitBool>(tokens.clone()) {
            Ok(b) => b.value,
            Err(_) => {
                let key = item.key.unraw();
                cx.error_spanned_by(
                    tokens,
                    format!("`{key}` is a flag: write `{key}` alone (or `{key} = true` / `{key} = false`)"),
                );
                false
            }
        },
        _ => true,
    }
}

fn kind(cx: &Ctxt, item: &Item) -> Option<&'static str> {
    let tokens = assigned(cx, item, "kind")?;
    let word = if let Ok(ident) = Ident::parse_any.parse2(tokens.clone()) {
        ident.unraw().to_string()
    } else if let Ok(lit) = syn::parse2::<LitStr>(tokens.clone()) {
        lit.value()
    } else {
        cx.error_spanned_by(tokens, format!("expected a kind: write {}", usage("kind")));
        return None;
    };
    match KINDS.iter().position(|k| *k == word) {
        Some(i) => Some(
            [
                "Read", "Edit", "Delete", "Move", "Search", "Execute", "Fetch", "Other",
            ][i],
        ),
        None => {
            let hint = match closest(&word, KINDS) {
                Some(k) => format!("did you mean `{k}`? "),
                None => String::new(),
            };
            cx.error_spanned_by(
                tokens,
                format!(
                    "unknown kind `{word}`; {hint}The kinds are: {}",
                    KINDS.join(", ")
                ),
            );
            None
        }
    }
}

fn task(cx: &Ctxt, item: &Item) -> Option<&'static str> {
    let tokens = assigned(cx, item, "task")?;
    let word = if let Ok(lit) = syn::parse2::<LitStr>(tokens.clone()) {
        lit.value()
    } else if let Ok(ident) = Ident::parse_any.parse2(tokens.clone()) {
        ident.unraw().to_string()
    } else {
        cx.error_spanned_by(
            tokens,
            format!(
                "expected how calls may run as MCP tasks: write {}",
                usage("task")
            ),
        );
        return None;
    };
    match word.as_str() {
        "optional" => Some("Optional"),
        "required" => Some("Required"),
        _ => {
            let hint = match closest(&word, TASK_SUPPORT) {
                Some(k) => format!("did you mean `\"{k}\"`? "),
                None => String::new(),
            };
            cx.error_spanned_by(
                tokens,
                format!(
                    "unknown task support \"{}\"; {hint}write `task = \"optional\"` (a task for MCP clients that know tasks, the inline result for the others) or `task = \"required\"` (only as a task); without `task`, calls are never tasks",
                    word.escape_debug()
                ),
            );
            None
        }
    }
}

fn timeout(cx: &Ctxt, item: &Item) -> Option<u64> {
    let tokens = assigned(cx, item, "timeout_ms")?;
    let Ok(lit) = syn::parse2::<LitInt>(tokens.clone()) else {
        cx.error_spanned_by(
            tokens,
            "expected a whole number of milliseconds: write `timeout_ms = 5000`",
        );
        return None;
    };
    match lit.base10_parse::<u64>() {
        Ok(0) => {
            cx.error_spanned_by(&lit, "a timeout of 0 ms would fail every call: use a positive number of milliseconds, or remove `timeout_ms` to use the registry's default");
            None
        }
        Ok(ms) => Some(ms),
        Err(e) => {
            cx.error_spanned_by(
                &lit,
                format!(
                    "`timeout_ms` must be a whole number of milliseconds that fits in a u64: {e}"
                ),
            );
            None
        }
    }
}

fn spill(cx: &Ctxt, item: &Item) -> Spill {
    let Some(tokens) = assigned(cx, item, "spill") else {
        return Spill::Default;
    };
    if let Ok(ident) = syn::parse2::<Ident>(tokens.clone()) {
        if ident == "never" {
            return Spill::Never;
        }
        let hint = match closest(&ident.to_string(), &["never"]) {
            Some(_) => "did you mean `never`? ",
            None => "",
        };
        cx.error_spanned_by(
            &ident,
            format!("unknown spill budget `{ident}`; {hint}write `spill = never` or a number of bytes, e.g. `spill = 65536`"),
        );
        return Spill::Default;
    }
    match syn::parse2::<LitInt>(tokens.clone()).map(|lit| (lit.base10_parse::<u64>(), lit)) {
        Ok((Ok(bytes), _)) => Spill::Bytes(bytes),
        Ok((Err(e), lit)) => {
            cx.error_spanned_by(
                &lit,
                format!("the spill budget must be a whole number of bytes: {e}"),
            );
            Spill::Default
        }
        Err(_) => {
            cx.error_spanned_by(
                tokens,
                "expected `never` or a number of bytes: write `spill = 65536` or `spill = never`",
            );
            Spill::Default
        }
    }
}

fn krate(cx: &Ctxt, item: &Item) -> Option<Path> {
    let tokens = assigned(cx, item, "crate")?;
    let parsed = if let Ok(lit) = syn::parse2::<LitStr>(tokens.clone()) {
        lit.parse_with(Path::parse_mod_style)
    } else {
        Path::parse_mod_style.parse2(tokens.clone())
    };
    match parsed {
        Ok(path) => Some(path),
        Err(_) => {
            cx.error_spanned_by(
                tokens,
                "expected the path of the toolprism crate: write `crate = ::toolprism` (or the name you renamed it to)",
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn errors(args: TokenStream) -> String {
        let cx = Ctxt::new();
        let _ = parse(&cx, args);
        match cx.check() {
            Ok(()) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn misspelt_keys_suggest_the_nearest() {
        for (typo, key) in [
            ("blockng", "blocking"),
            ("block", "blocking"),
            ("read_olny", "read_only"),
            ("timeout", "timeout_ms"),
            ("bulitin", "builtin"),
        ] {
            let ident = Ident::new(typo, Span::call_site());
            let message = errors(quote!(#ident));
            assert!(
                message.contains(&format!("did you mean `{key}`?")),
                "{typo}: {message}"
            );
        }
    }

    #[test]
    fn an_icon_is_a_data_image_uri_or_an_https_url() {
        let cx = Ctxt::new();
        let attrs = parse(&cx, quote!(icon = "https://example.com/i.svg"));
        assert_eq!(attrs.icon.as_deref(), Some("https://example.com/i.svg"));
        assert!(cx.check().is_ok());
        for bad in [
            quote!(icon = "http://example.com/i.svg"),
            quote!(icon = "i.svg"),
            quote!(icon = "https://"),
        ] {
            assert!(errors(bad).contains("the icon must be"));
        }
    }

    #[test]
    fn task_is_optional_or_required() {
        let cx = Ctxt::new();
        assert_eq!(parse(&cx, quote!(task = "optional")).task, Some("Optional"));
        assert_eq!(parse(&cx, quote!(task = required)).task, Some("Required"));
        assert_eq!(parse(&cx, quote!(read_only)).task, None);
        cx.check().unwrap();
        assert!(errors(quote!(task = "optinal")).contains("did you mean `\"optional\"`?"));
        assert!(
            errors(quote!(task = "forbidden")).contains("without `task`, calls are never tasks")
        );
        assert!(errors(quote!(task)).contains("`task` needs a value"));
    }

    #[test]
    fn blocking_is_a_flag() {
        let cx = Ctxt::new();
        assert!(parse(&cx, quote!(blocking)).blocking);
        assert!(!parse(&cx, quote!(blocking = false)).blocking);
        cx.check().unwrap();
        assert!(errors(quote!(blocking = 5)).contains("`blocking` is a flag"));
        assert!(errors(quote!(blocking, blocking)).contains("duplicate key `blocking`"));
    }
}
