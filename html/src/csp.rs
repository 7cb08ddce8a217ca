//! The page's Content-Security-Policy, with the hash of its one inline
//! script.
//!
//! The policy lets nothing load (`default-src 'none'`), allows the inline
//! stylesheet and style attributes, and runs only the script whose SHA-256
//! it names. The hashes come from `sha2` and `base64`, computed once per
//! process on first use (a few tens of microseconds for the two scripts):
//! at run time rather than in a build script, since a build script would
//! compile both crates a second time for the host (a program with the
//! `mcp` feature already compiles them for rmcp, and shares that build
//! here) and add a build script to compile and run.

use std::sync::LazyLock;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

/// The page's inline script.
pub(crate) const SCRIPT: &str = include_str!("script.js");

/// `sha256-<base64>` of [`SCRIPT`], as a CSP source.
pub(crate) static SCRIPT_HASH: LazyLock<String> = LazyLock::new(|| hash_source(SCRIPT));

/// `sha256-<base64>` of the card app's script, as a CSP source.
pub(crate) static APP_SCRIPT_HASH: LazyLock<String> =
    LazyLock::new(|| hash_source(crate::app::APP_SCRIPT));

/// `sha256-<base64>` of `text`, as a CSP source: standard base64, padded
/// (CSP's `base64-value`).
fn hash_source(text: &str) -> String {
    format!("sha256-{}", STANDARD.encode(Sha256::digest(text)))
}

/// The policy: nothing loads, nothing connects, only the hashed script runs.
pub(crate) fn policy() -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src '{}'; base-uri 'none'; form-action 'none'",
        *SCRIPT_HASH
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_source_is_sha256_in_padded_standard_base64() {
        // FIPS 180-4's "abc" vector; its base64 has a `+`, a `/` and the
        // padding, which the URL-safe or unpadded alphabets would change.
        assert_eq!(
            hash_source("abc"),
            "sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
        assert_eq!(
            hash_source(""),
            "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
        assert!(SCRIPT_HASH.starts_with("sha256-") && SCRIPT_HASH.len() == 51);
        assert_ne!(*SCRIPT_HASH, *APP_SCRIPT_HASH);
        assert!(policy().contains(&format!("script-src '{}'", *SCRIPT_HASH)));
    }
}
