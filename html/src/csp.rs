//! The page's Content-Security-Policy, with the hash of its one inline
//! script computed at compile time.
//!
//! The policy lets nothing load (`default-src 'none'`), allows the inline
//! stylesheet and style attributes, and runs only the script whose SHA-256
//! it names. SHA-256 and base64 are written here as `const fn`s (about 80
//! lines) rather than pulled in from crates: they hash one constant, once,
//! at compile time, and a dependency would cost every user of the feature
//! its compile time for that.

/// The page's inline script.
pub(crate) const SCRIPT: &str = include_str!("script.js");

/// `sha256-<base64>` of a constant text, as a CSP source, computed at
/// compile time.
macro_rules! hash_source {
    ($text:expr) => {{
        const DIGEST: [u8; 32] = sha256($text.as_bytes());
        const B64: [u8; 44] = base64_32(&DIGEST);
        const SOURCE: [u8; 51] = {
            let mut out = [0u8; 51];
            let prefix = b"sha256-";
            let mut i = 0;
            while i < prefix.len() {
                out[i] = prefix[i];
                i += 1;
            }
            let mut j = 0;
            while j < B64.len() {
                out[prefix.len() + j] = B64[j];
                j += 1;
            }
            out
        };
        match std::str::from_utf8(&SOURCE) {
            Ok(s) => s,
            Err(_) => panic!("base64 is ASCII"),
        }
    }};
}

/// `sha256-<base64>` of [`SCRIPT`], as a CSP source.
pub(crate) const SCRIPT_HASH: &str = hash_source!(SCRIPT);

/// `sha256-<base64>` of the card app's script, as a CSP source.
pub(crate) const APP_SCRIPT_HASH: &str = hash_source!(crate::app::APP_SCRIPT);

/// The policy: nothing loads, nothing connects, only the hashed script runs.
pub(crate) fn policy() -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src '{SCRIPT_HASH}'; base-uri 'none'; form-action 'none'"
    )
}

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// SHA-256 (FIPS 180-4) of `data`.
pub(crate) const fn sha256(data: &[u8]) -> [u8; 32] {
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    // The message, then 0x80, zeros, and the bit length: whole 64-byte blocks.
    let total = (data.len() + 9).div_ceil(64) * 64;
    let bit_len = (data.len() as u64).wrapping_mul(8);
    let mut block_start = 0;
    while block_start < total {
        let mut w = [0u32; 64];
        let mut t = 0;
        while t < 16 {
            let mut word = 0u32;
            let mut b = 0;
            while b < 4 {
                let i = block_start + t * 4 + b;
                let byte = if i < data.len() {
                    data[i]
                } else if i == data.len() {
                    0x80
                } else if i >= total - 8 {
                    (bit_len >> (8 * (total - 1 - i))) as u8
                } else {
                    0
                };
                word = (word << 8) | byte as u32;
                b += 1;
            }
            w[t] = word;
            t += 1;
        }
        while t < 64 {
            let s0 = w[t - 15].rotate_right(7) ^ w[t - 15].rotate_right(18) ^ (w[t - 15] >> 3);
            let s1 = w[t - 2].rotate_right(17) ^ w[t - 2].rotate_right(19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16]
                .wrapping_add(s0)
                .wrapping_add(w[t - 7])
                .wrapping_add(s1);
            t += 1;
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        let mut t = 0;
        while t < 64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[t])
                .wrapping_add(w[t]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
            t += 1;
        }
        let add = [a, b, c, d, e, f, g, hh];
        let mut i = 0;
        while i < 8 {
            h[i] = h[i].wrapping_add(add[i]);
            i += 1;
        }
        block_start += 64;
    }
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 8 {
        let bytes = h[i].to_be_bytes();
        let mut b = 0;
        while b < 4 {
            out[i * 4 + b] = bytes[b];
            b += 1;
        }
        i += 1;
    }
    out
}

/// Standard base64 (with padding) of 32 bytes.
const fn base64_32(data: &[u8; 32]) -> [u8; 44] {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = [b'='; 44];
    let mut i = 0;
    let mut o = 0;
    while i < 32 {
        let b0 = data[i] as u32;
        let b1 = if i + 1 < 32 { data[i + 1] as u32 } else { 0 };
        let b2 = if i + 2 < 32 { data[i + 2] as u32 } else { 0 };
        let n = (b0 << 16) | (b1 << 8) | b2;
        out[o] = ALPHABET[(n >> 18) as usize & 63];
        out[o + 1] = ALPHABET[(n >> 12) as usize & 63];
        if i + 1 < 32 {
            out[o + 2] = ALPHABET[(n >> 6) as usize & 63];
        }
        if i + 2 < 32 {
            out[o + 3] = ALPHABET[n as usize & 63];
        }
        i += 3;
        o += 4;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn sha256_matches_the_standard_vectors() {
        assert_eq!(
            hex(&sha256(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // Two blocks, and a message whose padding spills into a second block.
        assert_eq!(
            hex(&sha256(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            hex(&sha256(&[b'a'; 1000])),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
    }

    #[test]
    fn base64_matches_the_standard() {
        let digest = sha256(b"abc");
        assert_eq!(
            std::str::from_utf8(&base64_32(&digest)).unwrap(),
            "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
        assert!(SCRIPT_HASH.starts_with("sha256-") && SCRIPT_HASH.len() == 51);
    }
}
