//! K5: a projection's body must not name I/O or non-determinism.
//!
//! A best-effort check of the body's syntax, and of the helper methods of
//! the same impl block that it calls as `Self::helper(..)`: it rejects the
//! paths, macros and method calls of the deny list ([`super::deny`]),
//! `unsafe` blocks and `static mut`. [`super::walker`] walks the syntax,
//! macro arguments included where they parse as expressions;
//! [`super::tokens`] scans the tokens of the macros that do not. This file
//! holds what both report through: which projection is being checked, the
//! helpers still to follow, and the wording of each problem. The check
//! cannot see into functions defined elsewhere; `toolprism::testing` checks
//! the rest at run time.

use std::collections::HashSet;

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::ImplItemFn;
use syn::visit::Visit;

use super::deny::{self, Category};
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
    let mut body = Body {
        cx,
        projection: projection.kind.name(),
        via: None,
        input,
        pending: Vec::new(),
    };
    body.visit_block(&projection.original.block);
    while let Some(helper) = body.pending.pop() {
        if !visited.insert(helper.sig.ident.to_string()) {
            continue;
        }
        body.via = Some(helper.sig.ident.to_string());
        body.visit_block(&helper.block);
    }
}

/// The check of one projection's body (and of the helpers it calls).
pub(super) struct Body<'c, 'i, 'a> {
    cx: &'c Ctxt,
    projection: &'static str,
    /// The helper being checked, when not the projection itself.
    via: Option<String>,
    input: &'i Input<'a>,
    /// Helpers called and not yet checked.
    pending: Vec<&'a ImplItemFn>,
}

impl Body<'_, '_, '_> {
    fn subject(&self) -> String {
        match &self.via {
            None => format!("`{}` must be pure", self.projection),
            Some(helper) => format!(
                "`{}` must be pure, and so must `Self::{helper}`, which it calls",
                self.projection
            ),
        }
    }

    /// A problem at `tokens`: `what` the projection cannot use, and the fix.
    pub(super) fn report(&self, tokens: impl ToTokens, what: &str, fix: &str) {
        let message = format!("{}: it cannot use {what}; {fix}", self.subject());
        self.cx.error_spanned_by(tokens, message);
    }

    /// A path, method or call of the deny list, shown as `shown`.
    pub(super) fn report_path(&self, tokens: impl ToTokens, shown: &str, category: Category) {
        let what = match category {
            Category::Crate => {
                let root = shown.split("::").next().unwrap_or(shown);
                format!("`{shown}` (`{root}` does I/O)")
            }
            _ => format!("`{shown}` ({})", category.noun()),
        };
        self.report(tokens, &what, &category.fix(self.projection));
    }

    /// A path (`std::fs::read`, `Instant::now`, `tokio::spawn`...).
    pub(super) fn check_segments(&self, tokens: impl ToTokens, segments: &[String]) {
        if let Some(category) = deny::classify(segments) {
            self.report_path(tokens, &segments.join("::"), category);
        }
    }

    /// A macro's name (`println`, `dbg`...); whether it was reported.
    pub(super) fn check_macro_name(&self, tokens: impl ToTokens, name: &str) -> bool {
        match deny::denied_macro(name, self.projection) {
            Some((what, fix)) => {
                self.report(tokens, &what, &fix);
                true
            }
            None => false,
        }
    }

    /// A method call that asks the file system or reads the clock
    /// (`.exists()`, `.elapsed()`).
    pub(super) fn check_method(&self, tokens: impl ToTokens, method: &str) {
        if let Some(category) = deny::method_category(method) {
            self.report_path(tokens, &format!(".{method}()"), category);
        }
    }

    /// A method call on a `static` that reads or changes global state
    /// (`COUNTER.fetch_add(..)`).
    pub(super) fn check_state_method(&self, tokens: impl ToTokens, receiver: &str, method: &str) {
        if deny::is_screaming(receiver) && deny::STATE_METHODS.contains(&method) {
            self.report(
                tokens,
                &format!("global state (`{receiver}.{method}(..)`)"),
                "a projection's output must depend only on its inputs; keep counters and caches out of projections",
            );
        }
    }

    /// A bare call of `stdin()`, `stdout()` or `stderr()`.
    pub(super) fn check_bare_call(&self, tokens: impl ToTokens, name: &str) {
        if deny::is_console_function(name) {
            self.report_path(tokens, &format!("{name}()"), Category::Console);
        }
    }

    /// An `unsafe` block, whose `body` may touch a `static mut`.
    pub(super) fn check_unsafe(&self, tokens: impl ToTokens, body: TokenStream) {
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

    /// `Self::helper` or `ReadTool::helper` naming a method of this impl:
    /// check it too.
    pub(super) fn follow(&mut self, tokens: impl ToTokens, segments: &[String]) {
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
}

/// The first `SCREAMING_SNAKE` name in `tokens`: the `static` an `unsafe`
/// block most likely reaches.
fn first_screaming(tokens: TokenStream) -> Option<String> {
    for tt in tokens {
        match tt {
            TokenTree::Ident(ident) if deny::is_screaming(&ident.to_string()) => {
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

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use crate::ast::Input;
    use crate::ctxt::Ctxt;

    /// The errors of the first projection of `item`, joined.
    fn errors(item: syn::ItemImpl) -> String {
        let input = Input::from_syn(&item);
        let cx = Ctxt::new();
        let mut visited = HashSet::new();
        super::check(&cx, &input, &input.projections[0], &mut visited);
        match cx.check() {
            Ok(()) => String::new(),
            Err(e) => e
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    #[test]
    fn follows_helpers_called_inside_macros() {
        let message = errors(syn::parse_quote! {
            impl ReadTool {
                fn render(args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
                    vec![ContentBlock::text(Self::header(args)), ContentBlock::text(&value.text)]
                }
                fn header(args: &ReadArgs) -> String {
                    let size = std::fs::metadata(&args.path).map(|m| m.len()).unwrap_or(0);
                    format!("{} ({size} bytes)", args.path)
                }
            }
        });
        assert!(message.contains("so must `Self::header`"), "{message}");
        assert!(
            message.contains("`std::fs::metadata` (the file system)"),
            "{message}"
        );
    }
}
