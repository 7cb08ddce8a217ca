//! The `#[tool]` attribute of [toolprism](https://docs.rs/toolprism).
//! Depend on `toolprism` and write `#[toolprism::tool]`; this crate is its
//! implementation. The attribute reference is on [`macro@tool`].
//!
//! The passes, one module each: `attr` parses the attribute's arguments,
//! `ast` models the impl block, `valid` and `purity` check the compile-time
//! contract and collect every error in a `ctxt::Ctxt`, and `expand`
//! generates the code, or, on error, `fallback` emits the errors next to
//! the user's impl block.

mod ast;
mod attr;
mod ctxt;
mod doc;
mod expand;
mod fallback;
mod names;
mod pretty;
mod purity;
mod valid;

use proc_macro::TokenStream;

#[doc = include_str!("../doc/tool.md")]
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool(args.into(), input.into()).into()
}
