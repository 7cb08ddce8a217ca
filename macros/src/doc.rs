//! The description: the impl block's doc comment.
//!
//! Each `///` line becomes one string with its first leading space removed;
//! the lines are joined with `\n` and emitted through `concat!`, so
//! `#[doc = include_str!("tool.md")]` works too. Splitting off a `# Heading`
//! title happens in a `const fn` of the runtime, after `concat!` has run.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Expr, Lit, LitStr};

/// An expression of type `&'static str`: the whole doc comment.
pub(crate) fn doc_string(docs: &[&Expr], private: &TokenStream) -> TokenStream {
    if docs.is_empty() {
        return quote!("");
    }
    let mut parts = Vec::with_capacity(docs.len() * 2);
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            parts.push(quote!("\n"));
        }
        parts.push(match doc {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Str(s) => {
                    LitStr::new(&strip_one_space(&s.value()), s.span()).into_token_stream()
                }
                _ => doc.to_token_stream(),
            },
            _ => doc.to_token_stream(),
        });
    }
    quote!(#private::core::concat!(#(#parts),*))
}

/// Removes one leading space from each line: `/// text` gives ` text`.
fn strip_one_space(text: &str) -> String {
    text.split('\n')
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_one_space_per_line() {
        assert_eq!(strip_one_space(" a"), "a");
        assert_eq!(strip_one_space("  indented"), " indented");
        assert_eq!(strip_one_space(" a\n b\nc"), "a\nb\nc");
        assert_eq!(strip_one_space(""), "");
    }
}
