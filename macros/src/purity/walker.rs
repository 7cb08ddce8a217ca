//! K5's walk of a projection's syntax: every path, call, method call,
//! macro, `unsafe` block, `static` and `use` in the body, reported through
//! [`Body`]. A macro's arguments (`format!(..)`, `vec![..]`, `println!`'s
//! arguments, `assert!(..)`) are parsed as comma-separated expressions, or
//! else as statements (`vec![x; n]`, `thread_local! { .. }`), and walked the
//! same way; only the arguments that parse as neither go to the token
//! scanner ([`super::tokens`]).

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{
    Block, Expr, ExprCall, ExprMethodCall, ExprPath, ExprUnsafe, ItemForeignMod, ItemStatic,
    ItemUse, Macro, Path, StaticMutability, Stmt, Token, UseTree,
};

use super::body::Body;
use super::tokens;

/// A macro's arguments, parsed.
enum MacroArgs {
    /// `format!("{}", a)`, `vec![a, b]`, `assert!(a, "..")`: expressions.
    Exprs(Punctuated<Expr, Token![,]>),
    /// Statements: `vec![x; n]`, `thread_local! { .. }`, a crate's own macros.
    Stmts(Vec<Stmt>),
}

impl MacroArgs {
    fn parse(tokens: &TokenStream) -> Option<MacroArgs> {
        if let Ok(exprs) = Punctuated::parse_terminated.parse2(tokens.clone()) {
            return Some(MacroArgs::Exprs(exprs));
        }
        Block::parse_within
            .parse2(tokens.clone())
            .ok()
            .map(MacroArgs::Stmts)
    }
}

fn path_segments(path: &Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// Every path a `use` tree imports.
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

impl<'ast> Visit<'ast> for Body<'_, '_, '_> {
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
        {
            self.check_bare_call(&p.path, &ident.to_string());
        }
        visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        let method = call.method.to_string();
        self.check_method(&call.method, &method);
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
        match MacroArgs::parse(&mac.tokens) {
            Some(MacroArgs::Exprs(exprs)) => {
                for expr in &exprs {
                    self.visit_expr(expr);
                }
            }
            Some(MacroArgs::Stmts(stmts)) => {
                for stmt in &stmts {
                    self.visit_stmt(stmt);
                }
            }
            None => tokens::scan(self, mac.tokens.clone()),
        }
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
    use quote::quote;

    use super::MacroArgs;

    fn parsed(tokens: proc_macro2::TokenStream) -> &'static str {
        match MacroArgs::parse(&tokens) {
            Some(MacroArgs::Exprs(_)) => "exprs",
            Some(MacroArgs::Stmts(_)) => "stmts",
            None => "tokens",
        }
    }

    #[test]
    fn macro_arguments_parse_as_syntax_where_they_can() {
        assert_eq!(parsed(quote!("{} {x}", a.len(), b = c)), "exprs");
        assert_eq!(parsed(quote!(a, b,)), "exprs");
        assert_eq!(parsed(quote!()), "exprs");
        assert_eq!(parsed(quote!(0u8; n * 2)), "stmts");
        assert_eq!(parsed(quote!(let x = 1; x + 1)), "stmts");
        assert_eq!(
            parsed(quote!(
                static CACHE: RefCell<u8> = RefCell::new(0);
            )),
            "stmts"
        );
        assert_eq!(parsed(quote!({"a": 1, "b": [true]})), "tokens");
        assert_eq!(parsed(quote!(x, Some(y) if y > 1)), "tokens");
    }
}
