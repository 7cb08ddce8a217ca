//! Lossless JSON: values turned into JSON without being silently changed.
//!
//! `serde_json::to_value` quietly maps `f64` NaN and the infinities to
//! `null`, keeps the last of two equal object keys, and JSON has no
//! faithful way to carry `-0.0`. The framework rejects such values instead
//! of altering them (C3 in `docs/contract.md`):
//!
//! - [`to_lossless_value`] serializes any `Serialize` value into a
//!   [`serde_json::Value`] in one pass, failing on NaN, infinities, `-0.0`,
//!   map keys that cannot become JSON object keys, an object key written
//!   twice (a `#[serde(flatten)]` map repeating a field, a hand-written
//!   `Serialize`), and nesting deeper than [`MAX_DEPTH`];
//! - [`check_value`] checks an already-built [`serde_json::Value`] (which
//!   cannot hold NaN, infinities or a key twice, but can hold `-0.0` and any
//!   depth) without recursion, so any depth is safe to check.
//!
//! Both report a [`LosslessError`] naming *where* the offending value sits,
//! as a path such as `value.rows[3].score` or `meta["some key"]`.
//!
//! ```
//! use toolprism::lossless::to_lossless_value;
//!
//! #[derive(serde::Serialize)]
//! struct Row { name: &'static str, score: f64 }
//!
//! let err = to_lossless_value(&[Row { name: "a", score: 1.0 }, Row { name: "b", score: f64::NAN }], "value")
//!     .unwrap_err();
//! assert_eq!(err.to_string(), r#""value[1].score" is NaN, which JSON cannot represent"#);
//! ```

mod fault;
mod key;
pub(crate) mod parse;
mod serializer;
mod walk;

#[cfg(test)]
mod tests;

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::path::{JsonPath, Keys};

pub(crate) use walk::{check_value_with, drop_deep};

/// The deepest nesting of arrays and objects toolprism accepts or writes:
/// 127 levels, the deepest JSON `serde_json` reads back. Arguments, values,
/// meta and replacement values nested deeper are refused with an error
/// result before anything recursive touches them, so no call can overflow
/// the stack, and everything toolprism writes (the session log, MCP
/// messages) can be read back.
pub const MAX_DEPTH: usize = 127;

/// Where and why a value is not lossless JSON.
///
/// Displays as `"<path>" <reason>`, for example
/// `"value.rows[3].score" is NaN, which JSON cannot represent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LosslessError {
    path: String,
    reason: String,
}

impl LosslessError {
    /// The path to the offending value, starting with the root label,
    /// e.g. `value.rows[3].score` or `meta["some key"]`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Why the value at [`path`](Self::path) is not lossless JSON,
    /// e.g. `is NaN, which JSON cannot represent`.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for LosslessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\" {}", self.path, self.reason)
    }
}

impl std::error::Error for LosslessError {}

/// Serialize `value` to a [`serde_json::Value`], failing instead of losing
/// information.
///
/// Rejects `f32`/`f64` NaN, infinities and `-0.0`; map keys that are not
/// strings, chars, integers, bools or unit variants (newtypes around those
/// too), which `serde_json` writes as strings; an object key written twice;
/// nesting deeper than [`MAX_DEPTH`]. An error raised by the value's own
/// `Serialize` implementation is reported where it happened, as
/// `could not be serialized: …`. Every path names the keys it passes
/// through.
///
/// `root` is the label the error path starts with, e.g. `"value"` or
/// `"meta"`.
pub fn to_lossless_value<T: Serialize + ?Sized>(
    value: &T,
    root: &str,
) -> Result<Value, LosslessError> {
    to_value_with(value, root, Keys::Shown)
}

/// [`to_lossless_value`], writing object keys in error paths as `keys` says.
pub(crate) fn to_value_with<T: Serialize + ?Sized>(
    value: &T,
    root: &str,
    keys: Keys<'_>,
) -> Result<Value, LosslessError> {
    value
        .serialize(serializer::ValueSerializer::ROOT)
        .map_err(|fault| fault.into_error(root, keys))
}

/// Check an already-built [`serde_json::Value`]: it must not hold `-0.0`
/// and must not nest deeper than [`MAX_DEPTH`]. The walk uses an explicit
/// stack, so any depth is safe to check.
///
/// `root` is the label the error path starts with, e.g. `"value"` or
/// `"meta"`.
///
/// ```
/// use toolprism::lossless::check_value;
/// let err = check_value(&serde_json::json!({"a": [1, -0.0]}), "value").unwrap_err();
/// assert_eq!(err.path(), "value.a[1]");
/// ```
pub fn check_value(value: &Value, root: &str) -> Result<(), LosslessError> {
    check_value_with(value, root, Keys::Shown)
}

/// Why a value is refused; the text follows the path in messages.
#[derive(Debug)]
enum Reason {
    Nan,
    Infinite,
    NegativeZero,
    NonStringKey,
    DuplicateKey,
    /// A key written twice in JSON text someone sent (arguments).
    KeyGivenTwice,
    TooDeep,
    Custom(String),
}

impl Reason {
    fn text(self) -> String {
        match self {
            Reason::Nan => "is NaN, which JSON cannot represent".to_owned(),
            Reason::Infinite => "is infinite, which JSON cannot represent".to_owned(),
            Reason::NegativeZero => "is -0.0, which JSON cannot represent losslessly".to_owned(),
            Reason::NonStringKey => "has a map key that cannot be a JSON object key (only strings, chars, integers, bools and unit variants can)".to_owned(),
            Reason::DuplicateKey => "repeats a key already written in the same object (a flattened field or map, or a hand-written Serialize, writes it twice), which a JSON object cannot hold".to_owned(),
            Reason::KeyGivenTwice => "is given twice; send each key once".to_owned(),
            Reason::TooDeep => format!(
                "nests deeper than {MAX_DEPTH} levels of arrays and objects (toolprism::MAX_DEPTH)"
            ),
            Reason::Custom(message) => format!("could not be serialized: {message}"),
        }
    }
}

/// One step of a path, collected only while an error travels back up.
#[derive(Debug)]
enum Segment {
    /// A struct field or an enum variant: a name the type declares.
    Field(&'static str),
    /// A sequence or tuple position.
    Index(usize),
    /// A map entry: its position, and its key when it had become a string.
    Key {
        position: usize,
        key: Option<String>,
    },
}

fn path_of(root: &str, segments: impl Iterator<Item = Segment>, keys: Keys<'_>) -> String {
    let mut path = JsonPath::new(root);
    for segment in segments {
        match segment {
            Segment::Field(name) => path.field(name),
            Segment::Index(index) => path.index(index),
            Segment::Key { position, key } => path.key(key.as_deref(), position, keys),
        }
    }
    path.into_string()
}
