//! The purity checks of the projections (`render`, `presentation_meta`,
//! `present_call`, `present_result`): their signatures ([`signature`]: K2,
//! K3, K4, K8) and their bodies (K5: [`body`] reports what the deny list
//! [`deny`] names, found by the syntax walk [`walker`], or, in macro
//! arguments that are not Rust syntax, by the token scan [`tokens`]).

mod body;
mod deny;
mod signature;
mod tokens;
mod walker;

use std::collections::HashSet;

use syn::Type;

use crate::ast::{Input, Kind};
use crate::ctxt::Ctxt;

/// Type names for the hints in error messages.
pub(crate) struct Hints {
    pub(crate) args: String,
    pub(crate) value: String,
    pub(crate) meta: String,
}

/// A projection that passed its checks.
pub(crate) struct Checked<'a> {
    pub(crate) kind: Kind,
    /// The referenced type of each parameter (`ReadArgs` of `args: &ReadArgs`), in order.
    pub(crate) params: Vec<&'a Type>,
    /// The declared return type.
    pub(crate) ret: &'a Type,
}

/// Checks every projection of the block: signature and body. Returns those
/// whose signature passed.
pub(crate) fn check_projections<'a>(
    cx: &Ctxt,
    input: &Input<'a>,
    hints: &Hints,
) -> Vec<Checked<'a>> {
    let mut checked = Vec::new();
    // Helpers already walked, so each problem in one is reported once.
    let mut visited = HashSet::new();
    for projection in &input.projections {
        if let Some(c) = signature::check(cx, projection, hints) {
            checked.push(c);
        }
        body::check(cx, input, projection, &mut visited);
    }
    checked
}
