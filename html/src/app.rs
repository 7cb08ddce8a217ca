//! The card app: the page an MCP Apps host (extension
//! `io.modelcontextprotocol/ui`) draws in a sandboxed iframe next to a
//! tool call, and the drawn cards each result carries for it.
//!
//! One renderer, two outputs: the cards are drawn by the same functions,
//! with the same stylesheet and icons, as on the session page. The app
//! cannot run that renderer (it is Rust, the app a page), so the server
//! draws the cards and sends the drawing as data: [`card_view`] turns the
//! renderer's markup into an element tree (`[tag, {attributes}, child…]`,
//! text as JSON strings), which the app builds with `createElement` and
//! `createTextNode`. Every string from a card was escaped by the renderer
//! and arrives in the tree as a text node: tool output never becomes
//! markup, script or a URL, in the tree or in the app. Both ends keep only
//! the few tags and attributes the renderer writes (no link, image,
//! event handler or URL of any kind), and the app's Content-Security-Policy
//! lets nothing load or connect.

use serde_json::{Map, Value, json};

use crate::cards::{self, Limits, ResultContext};
use crate::csp;
use crate::text::escape_attr;
use toolprism_core::card::{CallCard, ResultCard};

/// The card app's resource URI: one app for every tool.
pub const CARD_APP_URI: &str = "ui://toolprism/card";

/// The MIME type of an MCP Apps page.
pub const CARD_APP_MIME: &str = "text/html;profile=mcp-app";

/// The `_meta` key of a `tools/call` result under which the drawn cards
/// ([`card_view`]) travel to the app.
pub const VIEW_KEY: &str = "toolprism/view";

/// The elements a drawn card may hold: those the renderer writes. The app
/// keeps the same list (`app.js`); anything else is dropped, its text kept.
pub(crate) const TAGS: &[&str] = &[
    "b", "code", "dd", "details", "div", "dl", "dt", "i", "li", "ol", "p", "pre", "section",
    "span", "summary", "ul",
];

/// The attributes kept: classes, the tag label, a fold's state, and the
/// read window's bar (two percentages, checked at both ends).
const ATTRIBUTES: &[&str] = &["class", "data-tag", "open", "style"];

/// The app's script (its SHA-256 is in the app's policy).
pub(crate) const APP_SCRIPT: &str = include_str!("app.js");

/// The card app: one self-contained page (`text/html;profile=mcp-app`)
/// that speaks the MCP Apps protocol over `postMessage` and draws the call
/// card and the result card of the call it is shown for.
///
/// - It sends `ui/initialize`, then `ui/notifications/initialized`, and
///   follows the host's theme (`hostContext.theme`, at initialisation and
///   on `ui/notifications/host-context-changed`), else the system's.
/// - On `ui/notifications/tool-input` it draws the call from the arguments
///   (a generic card); on `ui/notifications/tool-result` it draws the
///   cards the result carries under `_meta["toolprism/view"]`
///   ([`card_view`]), or, for a result without them (another server, an
///   older one), a generic call card and a generic result card from the
///   arguments, the text content, `isError` and
///   `_meta["toolprism/errorCode"]`, all set as text.
/// - It reports its height with `ui/notifications/size-changed` whenever
///   it changes.
/// - Its Content-Security-Policy lets nothing load or connect
///   (`default-src 'none'`), runs only its own script (by hash) and allows
///   inline styles; messages are taken only from the parent window.
///
/// ```
/// let page = toolprism::html::card_app();
/// assert!(page.starts_with("<!DOCTYPE html>"));
/// assert!(toolprism::html::app_policy().starts_with("default-src 'none';"));
/// assert!(page.contains("default-src &#39;none&#39;;")); // in its meta tag
/// ```
pub fn card_app() -> String {
    let mut out = String::with_capacity(32 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    escape_attr(&mut out, &app_policy());
    out.push_str("\"><meta name=\"referrer\" content=\"no-referrer\">");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    out.push_str("<meta name=\"generator\" content=\"toolprism ");
    out.push_str(env!("CARGO_PKG_VERSION"));
    out.push_str("\"><title>toolprism card</title><style>");
    out.push_str(crate::STYLE);
    theme_style(&mut out);
    out.push_str(APP_STYLE);
    out.push_str("</style></head><body class=\"tp app\">");
    out.push_str(include_str!("icons.svg"));
    out.push_str("<main id=\"app\"><p class=\"none\">Waiting for the call…</p></main><script>");
    out.push_str(APP_SCRIPT);
    out.push_str("</script></body></html>\n");
    out
}

/// The app's policy: nothing loads, nothing connects, only its script runs.
pub fn app_policy() -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src '{}'; base-uri 'none'; form-action 'none'",
        *csp::APP_SCRIPT_HASH
    )
}

/// What the app adds to the page's stylesheet: no page frame, cards edge
/// to edge.
const APP_STYLE: &str = "html,body.tp.app{background:transparent}\
body.tp.app{padding:0 2px}#app{padding:1px 0}#app>.card:first-child{margin-top:0}\
#app>.card:last-child{margin-bottom:0}#app>.none{color:var(--muted);margin:8px}";

/// The host's theme over the system's: the stylesheet's light and dark
/// colours again, under `data-theme` on the root (set by the app from the
/// host context), which outranks the `prefers-color-scheme` query.
fn theme_style(out: &mut String) {
    let (light, dark) = theme_blocks(crate::STYLE);
    out.push_str(":root[data-theme=light]{color-scheme:light;");
    out.push_str(light);
    out.push_str("}:root[data-theme=dark]{color-scheme:dark;");
    out.push_str(dark);
    out.push('}');
}

/// The colour declarations of the stylesheet's first `:root{…}` and of its
/// `prefers-color-scheme:dark` block.
fn theme_blocks(style: &str) -> (&str, &str) {
    let block = |from: &str| -> &str {
        style
            .find(from)
            .map(|at| &style[at + from.len()..])
            .and_then(|rest| rest.find('}').map(|end| &rest[..end]))
            .unwrap_or("")
    };
    (
        block(":root{"),
        block("@media (prefers-color-scheme:dark){:root{"),
    )
}

/// The call card and the result card of one call, drawn as on the session
/// page and turned into the element tree the card app builds:
/// `{"call": [node…], "result": [node…]}`, each node a JSON string (text)
/// or `[tag, {attribute: value}, child…]`. `result` is empty when there is
/// no result card; `error_code` marks the result as failed.
///
/// ```
/// use toolprism::card::{CallCard, ExitStatus, ResultCard, TerminalResult};
///
/// let call = CallCard::generic("<img src=x onerror=alert(1)>", None, None);
/// let result = ResultCard::Terminal(TerminalResult::new(None, Some("<script>alert(1)</script>".into()), Some(ExitStatus::Code(2))));
/// let view = toolprism::html::card_view(&call, Some(&result), None);
/// let text = view.to_string();
/// assert!(text.contains("\"<script>alert(1)</script>\"")); // a text node
/// assert!(text.contains("exit code 2"));
/// ```
pub fn card_view(call: &CallCard, result: Option<&ResultCard>, error_code: Option<&str>) -> Value {
    let mut html = String::new();
    match (call, result) {
        // A proposed change that is its result: drawn once, in the result.
        (CallCard::Diff(proposed), Some(ResultCard::Diff(done)))
            if proposed.diffs == done.diffs =>
        {
            html.push_str(
                "<section class=\"tp card call t-diff\"><div class=\"hd\" data-tag=\"diff\">",
            );
            cards::call_head(&mut html, call);
            html.push_str("</div><div class=\"bd\"><p class=\"none\">The change it proposed is the one drawn in its result below.</p></div></section>");
        }
        _ => cards::call_card(&mut html, call),
    }
    let call_tree = tree(&html);
    html.clear();
    if let Some(card) = result {
        let cx = ResultContext {
            error_code,
            call_title: Some(cards::call_title(call)),
            limits: Limits::FULL,
        };
        cards::result_card(&mut html, card, &cx);
    }
    json!({ "call": call_tree, "result": tree(&html) })
}

/// An element being read: its tag, its attributes, its children.
struct Open {
    tag: String,
    attributes: Map<String, Value>,
    children: Vec<Value>,
}

impl Open {
    fn into_nodes(self, keep: bool) -> Vec<Value> {
        if !keep {
            return self.children;
        }
        let mut node = vec![Value::String(self.tag), Value::Object(self.attributes)];
        node.extend(self.children);
        vec![Value::Array(node)]
    }
}

/// The renderer's markup as an element tree. It reads only what the
/// renderer writes (double-quoted attributes, the five entities it
/// escapes with, numeric references), never markup from elsewhere.
pub(crate) fn tree(html: &str) -> Vec<Value> {
    let mut stack = vec![Open {
        tag: String::new(),
        attributes: Map::new(),
        children: Vec::new(),
    }];
    let mut text = String::new();
    let flush = |text: &mut String, stack: &mut Vec<Open>| {
        if !text.is_empty() {
            let children = &mut stack.last_mut().expect("the root stays").children;
            children.push(Value::String(std::mem::take(text)));
        }
    };
    let mut rest = html;
    while !rest.is_empty() {
        let special = rest.find(['<', '&']).unwrap_or(rest.len());
        text.push_str(&rest[..special]);
        rest = &rest[special..];
        if let Some(after) = rest.strip_prefix('&') {
            let end = after.find(';').filter(|&e| e <= 10);
            match end.and_then(|e| entity(&after[..e])) {
                Some(c) => {
                    text.push(c);
                    rest = &after[end.unwrap_or(0) + 1..];
                }
                None => {
                    text.push('&');
                    rest = after;
                }
            }
            continue;
        }
        let Some(after) = rest.strip_prefix('<') else {
            break;
        };
        let Some(end) = tag_end(after) else {
            // Not a tag after all: the rest is text.
            text.push_str(rest);
            break;
        };
        let inside = &after[..end];
        rest = &after[end + 1..];
        flush(&mut text, &mut stack);
        if let Some(name) = inside.strip_prefix('/') {
            let name = name.trim();
            // Close up to the matching element, if it is open.
            if stack[1..].iter().any(|open| open.tag == name) {
                while let Some(open) = stack.pop() {
                    let done = open.tag == name;
                    let keep = TAGS.contains(&open.tag.as_str());
                    let nodes = open.into_nodes(keep);
                    stack
                        .last_mut()
                        .expect("the root stays")
                        .children
                        .extend(nodes);
                    if done {
                        break;
                    }
                }
            }
            continue;
        }
        let (tag, attributes) = start_tag(inside);
        stack.push(Open {
            tag,
            attributes,
            children: Vec::new(),
        });
    }
    flush(&mut text, &mut stack);
    while stack.len() > 1 {
        let open = stack.pop().expect("more than the root");
        let keep = TAGS.contains(&open.tag.as_str());
        let nodes = open.into_nodes(keep);
        stack
            .last_mut()
            .expect("the root stays")
            .children
            .extend(nodes);
    }
    stack.pop().map(|root| root.children).unwrap_or_default()
}

/// Where the tag that `after` (the text after a `<`) begins ends: its
/// `>` outside quotes.
fn tag_end(after: &str) -> Option<usize> {
    let mut quoted = false;
    for (i, b) in after.bytes().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'>' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// A start tag's name and its kept attributes.
fn start_tag(inside: &str) -> (String, Map<String, Value>) {
    let inside = inside.strip_suffix('/').unwrap_or(inside);
    let name_end = inside
        .find(|c: char| c.is_ascii_whitespace())
        .unwrap_or(inside.len());
    let tag = inside[..name_end].to_ascii_lowercase();
    let mut attributes = Map::new();
    let mut rest = inside[name_end..].trim_start();
    while !rest.is_empty() {
        let name_end = rest
            .find(|c: char| c == '=' || c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        rest = &rest[name_end..];
        let value = match rest.strip_prefix("=\"") {
            Some(quoted) => {
                let end = quoted.find('"').unwrap_or(quoted.len());
                let value = decoded(&quoted[..end]);
                rest = quoted.get(end + 1..).unwrap_or("");
                value
            }
            None => String::new(),
        };
        rest = rest.trim_start();
        if ATTRIBUTES.contains(&name.as_str()) && (name != "style" || is_bar_style(&value)) {
            attributes.insert(name, Value::String(value));
        }
    }
    (tag, attributes)
}

/// Whether `style` is only custom properties set to percentages
/// (`--l:12.5%;--w:40.0%`), the one style the renderer writes.
pub(crate) fn is_bar_style(style: &str) -> bool {
    !style.is_empty()
        && style.split(';').filter(|d| !d.is_empty()).all(|d| {
            d.split_once(':').is_some_and(|(name, value)| {
                name.len() == 3
                    && name.starts_with("--")
                    && name.as_bytes()[2].is_ascii_lowercase()
                    && value.strip_suffix('%').is_some_and(|n| {
                        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                    })
            })
        })
}

/// An attribute value with its character references decoded.
fn decoded(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match after
            .find(';')
            .filter(|&e| e <= 10)
            .and_then(|e| entity(&after[..e]).map(|c| (e, c)))
        {
            Some((e, c)) => {
                out.push(c);
                rest = &after[e + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character a reference's name stands for (`lt`, `#39`, `#x27`).
fn entity(name: &str) -> Option<char> {
    match name {
        "lt" => Some('<'),
        "gt" => Some('>'),
        "amp" => Some('&'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_holds_text_as_text_and_only_the_renderers_tags() {
        let nodes = tree(
            "<section class=\"tp card\"><div class=\"hd\" data-tag=\"x\" onclick=\"alert(1)\">a &lt;b&gt; &amp; &#39;c&#x27;</div>\
             <a href=\"javascript:alert(1)\">link</a><pre>1\n2</pre><span class=\"wl\" style=\"--l:1.5%;--w:20.0%\"></span>\
             <span style=\"background:url(//x)\">s</span></section>",
        );
        assert_eq!(
            Value::Array(nodes),
            json!([["section", {"class": "tp card"},
                ["div", {"class": "hd", "data-tag": "x"}, "a <b> & 'c'"],
                "link",
                ["pre", {}, "1\n2"],
                ["span", {"class": "wl", "style": "--l:1.5%;--w:20.0%"}],
                ["span", {}, "s"]
            ]])
        );
    }

    #[test]
    fn the_bar_style_is_the_only_style() {
        assert!(is_bar_style("--l:0.0%;--w:100.0%"));
        assert!(!is_bar_style("--l:0.0%;background:red"));
        assert!(!is_bar_style("--l:url(x)%"));
        assert!(!is_bar_style(""));
    }

    #[test]
    fn the_app_keeps_the_same_tags_and_follows_both_themes() {
        let list = TAGS
            .iter()
            .map(|t| format!("{t}: 1"))
            .collect::<Vec<_>>()
            .join(", ");
        assert!(APP_SCRIPT.contains(&list), "app.js lists the tags: {list}");
        let (light, dark) = theme_blocks(crate::STYLE);
        assert!(light.contains("--bg:#f4f5f7"), "{light}");
        assert!(dark.contains("--bg:#0d1117"), "{dark}");
        let page = card_app();
        assert!(page.contains(":root[data-theme=dark]{color-scheme:dark;--bg:#0d1117"));
        assert!(page.contains(csp::APP_SCRIPT_HASH.as_str()));
    }
}
