//! K5: a projection's body must not name I/O or non-determinism.
//!
//! A best-effort walk of the body's syntax (and of helper methods of the same
//! impl block that it calls as `Self::helper(..)`): it rejects paths, macros
//! and method calls that are I/O, clocks, randomness, threads or global
//! mutable state, `unsafe` blocks and `static mut`. It cannot see into
//! functions defined elsewhere; `toolprism::testing` checks the rest at run
//! time.

use std::collections::HashSet;

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::{self, Visit};
use syn::{
    Expr, ExprCall, ExprMethodCall, ExprPath, ExprUnsafe, ImplItemFn, ItemForeignMod, ItemStatic,
    ItemUse, Macro, Path, StaticMutability, UseTree,
};

use crate::ast::{Input, Kind, Projection};
use crate::ctxt::Ctxt;

/// Checks a projection's body and the helpers it calls. `visited` holds the
/// helpers already checked, so each problem is reported once.
pub(super) fn check<'a>(
    cx: &Ctxt,
    input: &Input<'a>,
    projection: &Projection<'a>,
    visited: &mut HashSet<String>,
) {
    let mut walker = Walker {
        cx,
        projection: projection.kind.name(),
        via: None,
        input,
        pending: Vec::new(),
    };
    walker.visit_block(&projection.original.block);
    while let Some(helper) = walker.pending.pop() {
        if !visited.insert(helper.sig.ident.to_string()) {
            continue;
        }
        walker.via = Some(helper.sig.ident.to_string());
        walker.visit_block(&helper.block);
    }
}

/// What a problem is about, and how to fix it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Category {
    Files,
    Network,
    Processes,
    Environment,
    Threads,
    Os,
    Console,
    Clock,
    Randomness,
    Crate,
}

impl Category {
    fn noun(self) -> &'static str {
        match self {
            Category::Files => "the file system",
            Category::Network => "the network",
            Category::Processes => "processes",
            Category::Environment => "the environment",
            Category::Threads => "threads",
            Category::Os => "the operating system",
            Category::Console => "the console",
            Category::Clock => "the clock",
            Category::Randomness => "randomness",
            Category::Crate => "I/O",
        }
    }

    fn fix(self, projection: &str) -> String {
        match self {
            Category::Files => format!(
                "read or write files in `execute` and put what `{projection}` needs in the value"
            ),
            Category::Network => {
                "talk to the network in `execute` and put the answer in the value".to_owned()
            }
            Category::Processes => {
                "run commands in `execute` and put their output in the value".to_owned()
            }
            Category::Environment => format!(
                "read it in `execute` and put what `{projection}` needs in the value (a replay runs in another environment)"
            ),
            Category::Threads => format!(
                "`{projection}` runs inline and returns; spawn, sleep or wait only in `execute`"
            ),
            Category::Os => "do it in `execute` and put the outcome in the value".to_owned(),
            Category::Console => format!(
                "`{projection}` only builds its output: put the text there, or log from `execute`"
            ),
            Category::Clock => {
                "a replay would draw something else: read the time in `execute` and put it in the value"
                    .to_owned()
            }
            Category::Randomness => {
                "two runs would differ: draw random values in `execute` and put them in the value"
                    .to_owned()
            }
            Category::Crate => "use it in `execute` and put the result in the value".to_owned(),
        }
    }
}

/// Crates whose every use is I/O, scheduling or randomness.
const IO_CRATES: &[(&str, Category)] = &[
    ("tokio", Category::Crate),
    ("reqwest", Category::Crate),
    ("hyper", Category::Crate),
    ("ureq", Category::Crate),
    ("isahc", Category::Crate),
    ("surf", Category::Crate),
    ("async_std", Category::Crate),
    ("smol", Category::Crate),
    ("mio", Category::Crate),
    ("libc", Category::Crate),
    ("nix", Category::Crate),
    ("sqlx", Category::Crate),
    ("rusqlite", Category::Crate),
    ("redis", Category::Crate),
    ("walkdir", Category::Crate),
    ("notify", Category::Crate),
    ("rand", Category::Randomness),
    ("getrandom", Category::Randomness),
    ("fastrand", Category::Randomness),
];

/// Which category a path falls in, if it names I/O or non-determinism.
fn classify(segments: &[String]) -> Option<Category> {
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    if let Some(&(_, category)) = IO_CRATES.iter().find(|(c, _)| s.first() == Some(c)) {
        return Some(category);
    }
    // `Instant::now`, `std::time::SystemTime::now`, `chrono::Utc::now`, ...
    if let [.., clock, now] = s[..]
        && matches!(
            clock,
            "Instant" | "SystemTime" | "Utc" | "Local" | "OffsetDateTime"
        )
        && now.starts_with("now")
    {
        return Some(Category::Clock);
    }
    // Constructors of I/O handles, however they were imported.
    if let [.., ty, f] = s[..] {
        let category = match (ty, f) {
            ("File", "open" | "create" | "create_new" | "options") | ("OpenOptions", "new") => {
                Some(Category::Files)
            }
            ("Command", "new") => Some(Category::Processes),
            ("TcpStream", "connect" | "connect_timeout")
            | ("TcpListener" | "UdpSocket" | "UnixListener" | "UnixDatagram", "bind")
            | ("UnixStream", "connect") => Some(Category::Network),
            _ => None,
        };
        if category.is_some() {
            return category;
        }
    }
    let (module, rest) = match s[..] {
        ["std", module, ref rest @ ..] => (module, rest),
        // A module imported with `use std::fs;` and the like.
        [module, ref rest @ ..] if !rest.is_empty() => (module, rest),
        _ => return None,
    };
    let from_std = s[0] == "std";
    let first = rest.first().copied();
    match module {
        "fs" => Some(Category::Files),
        "net" => match first {
            Some("TcpStream" | "TcpListener" | "UdpSocket" | "ToSocketAddrs") => {
                Some(Category::Network)
            }
            _ => None,
        },
        "process" => match first {
            Some("ExitCode" | "ExitStatus" | "Termination") => None,
            Some("Command" | "exit" | "abort" | "id" | "Child" | "Stdio") => {
                Some(Category::Processes)
            }
            _ if from_std => Some(Category::Processes),
            _ => None,
        },
        "env" => match first {
            Some("consts") => None,
            Some(
                "var" | "var_os" | "vars" | "vars_os" | "args" | "args_os" | "current_dir"
                | "set_current_dir" | "set_var" | "remove_var" | "home_dir" | "temp_dir"
                | "current_exe",
            ) => Some(Category::Environment),
            _ if from_std => Some(Category::Environment),
            _ => None,
        },
        "thread" => match first {
            Some(
                "spawn" | "sleep" | "scope" | "current" | "Builder" | "park" | "park_timeout"
                | "yield_now" | "sleep_ms",
            ) => Some(Category::Threads),
            _ if from_std => Some(Category::Threads),
            _ => None,
        },
        "io" => match first {
            Some("stdin" | "stdout" | "stderr" | "Stdin" | "Stdout" | "Stderr") => {
                Some(Category::Console)
            }
            _ => None,
        },
        "os" if from_std && rest.iter().any(|m| matches!(*m, "fs" | "net" | "process")) => {
            Some(Category::Os)
        }
        _ => None,
    }
}

/// Methods that ask the file system (on `Path`) or read the clock.
fn method_category(method: &str) -> Option<Category> {
    match method {
        "exists" | "try_exists" | "is_file" | "is_dir" | "is_symlink" | "canonicalize"
        | "read_dir" | "read_link" | "symlink_metadata" => Some(Category::Files),
        "elapsed" => Some(Category::Clock),
        _ => None,
    }
}

/// Methods that read or change global mutable state when called on a `static`.
const STATE_METHODS: &[&str] = &[
    "fetch_add",
    "fetch_sub",
    "fetch_and",
    "fetch_or",
    "fetch_xor",
    "fetch_nand",
    "fetch_max",
    "fetch_min",
    "fetch_update",
    "store",
    "swap",
    "compare_exchange",
    "compare_exchange_weak",
    "load",
    "lock",
    "try_lock",
    "read",
    "try_read",
    "write",
    "try_write",
    "borrow",
    "borrow_mut",
    "set",
    "get_or_init",
    "get_or_try_init",
    "with",
    "with_borrow",
    "with_borrow_mut",
    "replace",
    "take",
    "get_mut",
];

/// `SCREAMING_SNAKE`: the name of a `static` (or a `const`).
fn is_screaming(ident: &str) -> bool {
    ident.len() > 1
        && ident.chars().any(|c| c.is_ascii_uppercase())
        && ident
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

struct Walker<'c, 'i, 'a> {
    cx: &'c Ctxt,
    projection: &'static str,
    /// The helper being checked, when not the projection itself.
    via: Option<String>,
    input: &'i Input<'a>,
    pending: Vec<&'a ImplItemFn>,
}

impl Walker<'_, '_, '_> {
    fn subject(&self) -> String {
        match &self.via {
            None => format!("`{}` must be pure", self.projection),
            Some(helper) => format!(
                "`{}` must be pure, and so must `Self::{helper}`, which it calls",
                self.projection
            ),
        }
    }

    fn report(&self, tokens: impl ToTokens, what: &str, fix: &str) {
        let message = format!("{}: it cannot use {what}; {fix}", self.subject());
        self.cx.error_spanned_by(tokens, message);
    }

    fn report_path(&self, tokens: impl ToTokens, shown: &str, category: Category) {
        let what = match category {
            Category::Crate => {
                let root = shown.split("::").next().unwrap_or(shown);
                format!("`{shown}` (`{root}` does I/O)")
            }
            _ => format!("`{shown}` ({})", category.noun()),
        };
        self.report(tokens, &what, &category.fix(self.projection));
    }

    fn check_segments(&self, tokens: impl ToTokens, segments: &[String]) {
        if let Some(category) = classify(segments) {
            self.report_path(tokens, &segments.join("::"), category);
        }
    }

    fn check_macro_name(&self, tokens: impl ToTokens, name: &str) -> bool {
        match name {
            "print" | "println" | "eprint" | "eprintln" => {
                self.report(
                    tokens,
                    &format!("`{name}!` (the console)"),
                    &Category::Console.fix(self.projection),
                );
                true
            }
            "dbg" => {
                self.report(
                    tokens,
                    "`dbg!` (it writes to stderr)",
                    "remove it, or inspect the value in a test",
                );
                true
            }
            "thread_local" => {
                self.report(
                    tokens,
                    "`thread_local!` state",
                    "a projection's output must depend only on its inputs; put what it needs in the value",
                );
                true
            }
            _ => false,
        }
    }

    fn check_unsafe(&self, tokens: impl ToTokens, body: TokenStream) {
        match first_screaming(body) {
            Some(name) => self.report(
                tokens,
                &format!("`static mut` state (`{name}`)"),
                "a projection's output must depend only on its inputs; keep state in the value, or in the tool's fields for `execute`",
            ),
            None => self.report(
                tokens,
                "`unsafe` blocks",
                "the purity check cannot see through them; move this code to `execute` and put its result in the value",
            ),
        }
    }

    fn check_state_method(&self, tokens: impl ToTokens, receiver: &str, method: &str) {
        if is_screaming(receiver) && STATE_METHODS.contains(&method) {
            self.report(
                tokens,
                &format!("global state (`{receiver}.{method}(..)`)"),
                "a projection's output must depend only on its inputs; keep counters and caches out of projections",
            );
        }
    }

    /// `Self::helper` or `ReadTool::helper` naming a method of this impl.
    fn follow(&mut self, tokens: impl ToTokens, segments: &[String]) {
        let [owner, name] = segments else {
            return;
        };
        let is_self = owner == "Self" || self.input.type_ident.is_some_and(|ident| ident == owner);
        if !is_self {
            return;
        }
        if name == "execute" {
            self.cx.error_spanned_by(
                tokens,
                format!(
                    "{}: it cannot call `execute`; projections run after `execute` and read its value",
                    self.subject()
                ),
            );
            return;
        }
        let helper = self
            .input
            .methods
            .iter()
            .find(|m| m.sig.ident == name)
            .copied();
        if let Some(helper) = helper
            && Kind::ALL.iter().all(|k| helper.sig.ident != k.name())
        {
            self.pending.push(helper);
        }
    }

    /// Scans a macro's tokens, which syn does not parse, for the same things.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tts.len() {
            match &tts[i] {
                TokenTree::Group(g) => {
                    self.scan_tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(ident) if ident == "unsafe" => {
                    if let Some(TokenTree::Group(g)) = tts.get(i + 1)
                        && g.delimiter() == Delimiter::Brace
                    {
                        let tokens: TokenStream = tts[i..i + 2].iter().cloned().collect();
                        self.check_unsafe(tokens, g.stream());
                    }
                    i += 1;
                }
                TokenTree::Ident(_) | TokenTree::Punct(_) if path_starts(&tts, i) => {
                    let end = path_end(&tts, i);
                    let segments: Vec<String> = tts[i..end]
                        .iter()
                        .filter_map(|t| match t {
                            TokenTree::Ident(id) => Some(id.to_string()),
                            _ => None,
                        })
                        .collect();
                    let path_tokens: TokenStream = tts[i..end].iter().cloned().collect();
                    let after = tts.get(end);
                    let is_macro = matches!(after, Some(TokenTree::Punct(p)) if p.as_char() == '!');
                    let is_call = matches!(after, Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis);
                    let after_dot =
                        i > 0 && matches!(&tts[i - 1], TokenTree::Punct(p) if p.as_char() == '.');
                    if is_macro {
                        let name = segments.last().cloned().unwrap_or_default();
                        let mut with_bang = path_tokens.clone();
                        with_bang.extend([tts[end].clone()]);
                        if !self.check_macro_name(&with_bang, &name) {
                            self.check_segments(&path_tokens, &segments);
                        }
                    } else if after_dot && segments.len() == 1 {
                        if is_call {
                            let method = &segments[0];
                            if let Some(category) = method_category(method) {
                                self.report_path(&path_tokens, &format!(".{method}()"), category);
                            }
                            if i >= 2
                                && let TokenTree::Ident(receiver) = &tts[i - 2]
                            {
                                self.check_state_method(
                                    &path_tokens,
                                    &receiver.to_string(),
                                    method,
                                );
                            }
                        }
                    } else if is_call
                        && segments.len() == 1
                        && matches!(segments[0].as_str(), "stdin" | "stdout" | "stderr")
                    {
                        self.report_path(
                            &path_tokens,
                            &format!("{}()", segments[0]),
                            Category::Console,
                        );
                    } else {
                        self.check_segments(&path_tokens, &segments);
                        self.follow(&path_tokens, &segments);
                    }
                    i = end.max(i + 1);
                }
                _ => i += 1,
            }
        }
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

fn first_screaming(tokens: TokenStream) -> Option<String> {
    for tt in tokens {
        match tt {
            TokenTree::Ident(ident) if is_screaming(&ident.to_string()) => {
                return Some(ident.to_string());
            }
            TokenTree::Group(g) => {
                if let Some(name) = first_screaming(g.stream()) {
                    return Some(name);
                }
            }
            _ => {}
        }
    }
    None
}

fn path_segments(path: &Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

fn use_paths(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.push(path);
        }
        UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.push(path);
        }
        UseTree::Glob(_) => out.push(prefix.clone()),
        UseTree::Group(g) => {
            for tree in &g.items {
                use_paths(tree, prefix, out);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Walker<'_, '_, '_> {
    fn visit_path(&mut self, path: &'ast Path) {
        self.check_segments(path, &path_segments(path));
        visit::visit_path(self, path);
    }

    fn visit_expr_path(&mut self, expr: &'ast ExprPath) {
        if expr.qself.is_none() {
            self.follow(&expr.path, &path_segments(&expr.path));
        }
        visit::visit_expr_path(self, expr);
    }

    fn visit_expr_call(&mut self, call: &'ast ExprCall) {
        if let Expr::Path(p) = &*call.func
            && let Some(ident) = p.path.get_ident()
            && matches!(ident.to_string().as_str(), "stdin" | "stdout" | "stderr")
        {
            self.report_path(&p.path, &format!("{ident}()"), Category::Console);
        }
        visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        let method = call.method.to_string();
        if let Some(category) = method_category(&method) {
            self.report_path(&call.method, &format!(".{method}()"), category);
        }
        if let Expr::Path(p) = &*call.receiver
            && let Some(last) = p.path.segments.last()
        {
            let mut tokens = p.to_token_stream();
            call.dot_token.to_tokens(&mut tokens);
            call.method.to_tokens(&mut tokens);
            self.check_state_method(tokens, &last.ident.to_string(), &method);
        }
        visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_unsafe(&mut self, expr: &'ast ExprUnsafe) {
        self.check_unsafe(
            expr.unsafe_token.to_token_stream(),
            expr.block.to_token_stream(),
        );
        visit::visit_expr_unsafe(self, expr);
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let mut with_bang = mac.path.to_token_stream();
        mac.bang_token.to_tokens(&mut with_bang);
        if !self.check_macro_name(&with_bang, &name) {
            self.check_segments(&mac.path, &path_segments(&mac.path));
        }
        self.scan_tokens(mac.tokens.clone());
    }

    fn visit_item_static(&mut self, item: &'ast ItemStatic) {
        if let StaticMutability::Mut(m) = &item.mutability {
            let mut tokens = item.static_token.to_token_stream();
            m.to_tokens(&mut tokens);
            item.ident.to_tokens(&mut tokens);
            self.report(
                tokens,
                &format!("`static mut` state (`{}`)", item.ident),
                "a projection's output must depend only on its inputs; keep state in the value",
            );
        }
        visit::visit_item_static(self, item);
    }

    fn visit_item_foreign_mod(&mut self, item: &'ast ItemForeignMod) {
        self.report(
            &item.abi,
            "foreign functions (`extern` blocks)",
            "call them from `execute` and put the result in the value",
        );
        visit::visit_item_foreign_mod(self, item);
    }

    fn visit_item_use(&mut self, item: &'ast ItemUse) {
        let mut paths = Vec::new();
        use_paths(&item.tree, &mut Vec::new(), &mut paths);
        for path in paths {
            self.check_segments(&item.tree, &path);
        }
        visit::visit_item_use(self, item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(path: &str) -> Option<Category> {
        let segments: Vec<String> = path.split("::").map(str::to_owned).collect();
        classify(&segments)
    }

    #[test]
    fn classifies_paths() {
        assert_eq!(c("std::fs::read_to_string"), Some(Category::Files));
        assert_eq!(c("fs::read_to_string"), Some(Category::Files));
        assert_eq!(c("File::open"), Some(Category::Files));
        assert_eq!(c("std::net::TcpStream::connect"), Some(Category::Network));
        assert_eq!(c("std::net::IpAddr"), None);
        assert_eq!(c("std::process::Command::new"), Some(Category::Processes));
        assert_eq!(c("Command::new"), Some(Category::Processes));
        assert_eq!(c("std::process::ExitCode"), None);
        assert_eq!(c("std::env::var"), Some(Category::Environment));
        assert_eq!(c("env::var"), Some(Category::Environment));
        assert_eq!(c("std::env::consts::OS"), None);
        assert_eq!(c("std::thread::spawn"), Some(Category::Threads));
        assert_eq!(c("std::io::stdout"), Some(Category::Console));
        assert_eq!(c("std::io::Write"), None);
        assert_eq!(c("Instant::now"), Some(Category::Clock));
        assert_eq!(c("std::time::SystemTime::now"), Some(Category::Clock));
        assert_eq!(c("std::time::Duration::from_secs"), None);
        assert_eq!(c("tokio::spawn"), Some(Category::Crate));
        assert_eq!(c("reqwest::get"), Some(Category::Crate));
        assert_eq!(c("rand::random"), Some(Category::Randomness));
        assert_eq!(c("String::new"), None);
        assert_eq!(c("format"), None);
        assert_eq!(c("my::process::step"), None);
    }

    #[test]
    fn screaming() {
        assert!(is_screaming("COUNTER"));
        assert!(is_screaming("MAX_2"));
        assert!(!is_screaming("Counter"));
        assert!(!is_screaming("X"));
        assert!(!is_screaming("_"));
    }
}
#[cfg(test)]
mod helper_tests {
    #[test]
    fn follows_helpers_called_inside_macros() {
        let item: syn::ItemImpl = syn::parse_quote! {
            impl ReadTool {
                fn render(args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
                    vec![ContentBlock::text(Self::header(args)), ContentBlock::text(&value.text)]
                }
                fn header(args: &ReadArgs) -> String {
                    let size = std::fs::metadata(&args.path).map(|m| m.len()).unwrap_or(0);
                    format!("{} ({size} bytes)", args.path)
                }
            }
        };
        let input = crate::ast::Input::from_syn(&item);
        let cx = crate::ctxt::Ctxt::new();
        let mut visited = Default::default();
        crate::purity::body::check(&cx, &input, &input.projections[0], &mut visited);
        let message = cx.check().unwrap_err().to_string();
        assert!(message.contains("so must `Self::header`"), "{message}");
        assert!(
            message.contains("`std::fs::metadata` (the file system)"),
            "{message}"
        );
    }
}
