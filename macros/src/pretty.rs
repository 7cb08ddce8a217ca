//! Types and patterns as a human writes them, for error messages: a leaf
//! that the checks (`valid`, `purity`) share.

use quote::ToTokens;

/// Tokens as a human writes them: `Vec<String>`, not `Vec < String >`.
pub(crate) fn pretty(tokens: impl ToTokens) -> String {
    let text = tokens.to_token_stream().to_string();
    text.replace(" : ", ": ")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace("& ", "&")
        .replace(" ,", ",")
        .replace("' _", "'_")
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::pretty;

    #[test]
    fn reads_like_source() {
        assert_eq!(pretty(quote!(Vec<String>)), "Vec<String>");
        assert_eq!(pretty(quote!(&ToolContext<'_>)), "&ToolContext<'_>");
        assert_eq!(pretty(quote!(::std::path::PathBuf)), "::std::path::PathBuf");
        assert_eq!(
            pretty(quote!(args: HashMap<String, u8>)),
            "args: HashMap<String, u8>"
        );
    }
}
