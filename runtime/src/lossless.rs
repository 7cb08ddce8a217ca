//! Lossless JSON: turning values into JSON without silently changing them.
//!
//! `serde_json::to_value` quietly maps `f64` NaN and the infinities to
//! `null`, and JSON has no faithful way to carry `-0.0`. The framework must
//! reject such values instead of altering them, so this module offers:
//!
//! - [`to_lossless_value`]: serialize any `Serialize` value into a
//!   [`serde_json::Value`], failing on NaN, infinities, `-0.0` and map keys
//!   that cannot become JSON object keys;
//! - [`check_value`]: check an already-built [`serde_json::Value`] (which
//!   cannot hold NaN or infinities, but can hold `-0.0`).
//!
//! Both report a [`LosslessError`] naming *where* the offending value sits,
//! as a path such as `value.rows[3].score` or `meta["some key"]`.
//!
//! Checking is done by a serializer that produces nothing: it only walks the
//! value. The path is built only when something is wrong, by collecting
//! segments while the error travels back up.

use std::fmt::{self, Write as _};

use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::Value;

const NAN: &str = "is NaN, which JSON cannot represent";
const INFINITE: &str = "is infinite, which JSON cannot represent";
const NEGATIVE_ZERO: &str = "is -0.0, which JSON cannot represent losslessly";
const NON_STRING_KEY: &str = "has a non-string map key";

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

    fn unserializable(root: &str, error: impl fmt::Display) -> Self {
        Self {
            path: root.to_owned(),
            reason: format!("could not be serialized: {error}"),
        }
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
/// Rejects `f32`/`f64` NaN, infinities and `-0.0`, and map keys that are not
/// strings, chars, integers or bools (unit enum variants and newtype structs
/// around those are accepted too, as `serde_json` turns them into string
/// keys). Any error raised by the value's own `Serialize` implementation, or
/// by `serde_json`, is reported at `root` as `could not be serialized: …`.
///
/// `root` is the label the error path starts with, e.g. `"value"` or
/// `"meta"`.
pub fn to_lossless_value<T: Serialize + ?Sized>(
    value: &T,
    root: &str,
) -> Result<Value, LosslessError> {
    match value.serialize(Checker) {
        Ok(()) => serde_json::to_value(value).map_err(|e| LosslessError::unserializable(root, e)),
        Err(CheckError {
            problem: Problem::Lossless(reason),
            segments,
        }) => {
            let mut path = String::from(root);
            for segment in segments.iter().rev() {
                segment.write_to(&mut path);
            }
            Err(LosslessError {
                path,
                reason: reason.to_owned(),
            })
        }
        Err(CheckError {
            problem: Problem::Custom(message),
            ..
        }) => match serde_json::to_value(value) {
            Err(e) => Err(LosslessError::unserializable(root, e)),
            // The value's `Serialize` failed once and then succeeded: report
            // the first failure rather than trust the second attempt.
            Ok(_) => Err(LosslessError::unserializable(root, message)),
        },
    }
}

/// Check an already-built [`serde_json::Value`] for values that are not
/// lossless JSON.
///
/// A `Value` cannot hold NaN or infinities, but it can hold `-0.0`, which is
/// rejected. Integers (including an integer zero) are always fine. The walk
/// uses an explicit stack, so arbitrarily deep values are safe.
///
/// `root` is the label the error path starts with, e.g. `"value"` or
/// `"meta"`.
pub fn check_value(value: &Value, root: &str) -> Result<(), LosslessError> {
    enum Frame<'a> {
        Array {
            items: std::iter::Enumerate<std::slice::Iter<'a, Value>>,
            index: usize,
        },
        Object {
            entries: serde_json::map::Iter<'a>,
            key: &'a str,
        },
    }

    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(current) = next.take() {
            match current {
                Value::Number(n) if is_negative_zero(n) => {
                    let mut path = String::from(root);
                    for frame in &stack {
                        match frame {
                            Frame::Array { index, .. } => write_index(&mut path, *index),
                            Frame::Object { key, .. } => write_name(&mut path, key),
                        }
                    }
                    return Err(LosslessError {
                        path,
                        reason: NEGATIVE_ZERO.to_owned(),
                    });
                }
                Value::Array(items) if !items.is_empty() => stack.push(Frame::Array {
                    items: items.iter().enumerate(),
                    index: 0,
                }),
                Value::Object(map) if !map.is_empty() => stack.push(Frame::Object {
                    entries: map.iter(),
                    key: "",
                }),
                _ => {}
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ok(());
        };
        let child = match top {
            Frame::Array { items, index } => items.next().map(|(i, item)| {
                *index = i;
                item
            }),
            Frame::Object { entries, key } => entries.next().map(|(k, item)| {
                *key = k.as_str();
                item
            }),
        };
        match child {
            Some(child) => next = Some(child),
            None => {
                stack.pop();
            }
        }
    }
}

fn is_negative_zero(n: &serde_json::Number) -> bool {
    n.is_f64() && n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative())
}

fn check_float(f: f64) -> Result<(), CheckError> {
    if f.is_nan() {
        Err(CheckError::lossless(NAN))
    } else if f.is_infinite() {
        Err(CheckError::lossless(INFINITE))
    } else if f == 0.0 && f.is_sign_negative() {
        Err(CheckError::lossless(NEGATIVE_ZERO))
    } else {
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Path rendering
// ---------------------------------------------------------------------------

/// `true` if `name` can be written as `.name` in a path.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Append an object member: `.name`, or `["any name"]` when it is not an
/// identifier.
fn write_name(path: &mut String, name: &str) {
    if is_identifier(name) {
        path.push('.');
        path.push_str(name);
    } else {
        path.push('[');
        match serde_json::to_string(name) {
            Ok(quoted) => path.push_str(&quoted),
            Err(_) => {
                let _ = write!(path, "{name:?}");
            }
        }
        path.push(']');
    }
}

/// Append an array element: `[index]`.
fn write_index(path: &mut String, index: usize) {
    let _ = write!(path, "[{index}]");
}

// ---------------------------------------------------------------------------
// The check-only serializer
// ---------------------------------------------------------------------------

/// One step of a path, collected only while an error travels up.
#[derive(Debug)]
enum Segment {
    /// A struct field or enum variant name.
    Name(&'static str),
    /// A sequence or tuple position.
    Index(usize),
    /// A map key.
    Key(Key),
}

impl Segment {
    fn write_to(&self, path: &mut String) {
        match self {
            Segment::Name(name) => write_name(path, name),
            Segment::Index(index) => write_index(path, *index),
            Segment::Key(key) => key.write_to(path),
        }
    }
}

/// A map key that serde_json can turn into a string, kept cheaply.
#[derive(Debug)]
enum Key {
    /// A string key; only captured when needed for a path.
    Str(String),
    Signed(i128),
    Unsigned(u128),
    Bool(bool),
    Char(char),
    Variant(&'static str),
    /// A string key that was checked but not captured.
    Unrendered,
}

impl Key {
    fn write_to(&self, path: &mut String) {
        match self {
            Key::Str(s) => write_name(path, s),
            Key::Signed(i) => write_name(path, &i.to_string()),
            Key::Unsigned(u) => write_name(path, &u.to_string()),
            Key::Bool(b) => write_name(path, if *b { "true" } else { "false" }),
            Key::Char(c) => write_name(path, c.encode_utf8(&mut [0; 4])),
            Key::Variant(v) => write_name(path, v),
            Key::Unrendered => path.push_str("[?]"),
        }
    }
}

#[derive(Debug)]
enum Problem {
    /// The value is well-formed but cannot be represented losslessly.
    Lossless(&'static str),
    /// The value's `Serialize` implementation reported an error.
    Custom(String),
}

/// The checker's error: the problem plus the path segments, innermost first.
#[derive(Debug)]
struct CheckError {
    problem: Problem,
    segments: Vec<Segment>,
}

impl CheckError {
    fn lossless(reason: &'static str) -> Self {
        Self {
            problem: Problem::Lossless(reason),
            segments: Vec::new(),
        }
    }

    fn within(mut self, segment: Segment) -> Self {
        self.segments.push(segment);
        self
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            Problem::Lossless(reason) => f.write_str(reason),
            Problem::Custom(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for CheckError {}

impl ser::Error for CheckError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self {
            problem: Problem::Custom(msg.to_string()),
            segments: Vec::new(),
        }
    }
}

/// Check `value`, adding `segment` to the path if it fails.
fn check_at<T: Serialize + ?Sized>(
    value: &T,
    segment: impl FnOnce() -> Segment,
) -> Result<(), CheckError> {
    value.serialize(Checker).map_err(|e| e.within(segment()))
}

/// A `Serializer` that produces nothing and fails on values that are not
/// lossless JSON.
struct Checker;

impl ser::Serializer for Checker {
    type Ok = ();
    type Error = CheckError;

    type SerializeSeq = SeqChecker;
    type SerializeTuple = SeqChecker;
    type SerializeTupleStruct = SeqChecker;
    type SerializeTupleVariant = TupleVariantChecker;
    type SerializeMap = MapChecker;
    type SerializeStruct = StructChecker;
    type SerializeStructVariant = StructVariantChecker;

    fn serialize_bool(self, _v: bool) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_i8(self, _v: i8) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_i16(self, _v: i16) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_i32(self, _v: i32) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_i64(self, _v: i64) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_i128(self, _v: i128) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_u8(self, _v: u8) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_u16(self, _v: u16) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_u32(self, _v: u32) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_u64(self, _v: u64) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_u128(self, _v: u128) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> Result<(), CheckError> {
        check_float(f64::from(v))
    }

    fn serialize_f64(self, v: f64) -> Result<(), CheckError> {
        check_float(v)
    }

    fn serialize_char(self, _v: char) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_str(self, _v: &str) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_none(self) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), CheckError> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _variant_index: u32,
        _variant: &'static str,
    ) -> Result<(), CheckError> {
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), CheckError> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _variant_index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), CheckError> {
        check_at(value, || Segment::Name(variant))
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<SeqChecker, CheckError> {
        Ok(SeqChecker { index: 0 })
    }

    fn serialize_tuple(self, _len: usize) -> Result<SeqChecker, CheckError> {
        Ok(SeqChecker { index: 0 })
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<SeqChecker, CheckError> {
        Ok(SeqChecker { index: 0 })
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _variant_index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<TupleVariantChecker, CheckError> {
        Ok(TupleVariantChecker { variant, index: 0 })
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<MapChecker, CheckError> {
        Ok(MapChecker { key: None })
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<StructChecker, CheckError> {
        Ok(StructChecker)
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _variant_index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<StructVariantChecker, CheckError> {
        Ok(StructVariantChecker { variant })
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, _value: &T) -> Result<(), CheckError> {
        Ok(())
    }

    fn is_human_readable(&self) -> bool {
        true
    }
}

/// Checks sequences, tuples and tuple structs.
struct SeqChecker {
    index: usize,
}

impl SeqChecker {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        let index = self.index;
        self.index += 1;
        check_at(value, || Segment::Index(index))
    }
}

impl ser::SerializeSeq for SeqChecker {
    type Ok = ();
    type Error = CheckError;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        self.element(value)
    }

    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

impl ser::SerializeTuple for SeqChecker {
    type Ok = ();
    type Error = CheckError;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        self.element(value)
    }

    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for SeqChecker {
    type Ok = ();
    type Error = CheckError;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        self.element(value)
    }

    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

/// Checks tuple variants, emitted by serde_json as `{"Variant": [...]}`.
struct TupleVariantChecker {
    variant: &'static str,
    index: usize,
}

impl ser::SerializeTupleVariant for TupleVariantChecker {
    type Ok = ();
    type Error = CheckError;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        let index = self.index;
        self.index += 1;
        check_at(value, || Segment::Index(index)).map_err(|e| e.within(Segment::Name(self.variant)))
    }

    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

/// Checks maps. A key passed on its own through `serialize_key` is kept for
/// the following `serialize_value`; `serialize_entry` keeps nothing and
/// renders the key only if the value fails.
struct MapChecker {
    key: Option<Key>,
}

impl ser::SerializeMap for MapChecker {
    type Ok = ();
    type Error = CheckError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), CheckError> {
        self.key = Some(key.serialize(KeyChecker { capture: true })?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CheckError> {
        let key = self.key.take();
        check_at(value, || Segment::Key(key.unwrap_or(Key::Unrendered)))
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), CheckError> {
        key.serialize(KeyChecker { capture: false })?;
        check_at(value, || {
            Segment::Key(
                key.serialize(KeyChecker { capture: true })
                    .unwrap_or(Key::Unrendered),
            )
        })
    }

    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

/// Checks structs.
struct StructChecker;

impl ser::SerializeStruct for StructChecker {
    type Ok = ();
    type Error = CheckError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), CheckError> {
        check_at(value, || Segment::Name(key))
    }

    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

/// Checks struct variants, emitted by serde_json as `{"Variant": {...}}`.
struct StructVariantChecker {
    variant: &'static str,
}

impl ser::SerializeStructVariant for StructVariantChecker {
    type Ok = ();
    type Error = CheckError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), CheckError> {
        check_at(value, || Segment::Name(key)).map_err(|e| e.within(Segment::Name(self.variant)))
    }

    fn end(self) -> Result<(), CheckError> {
        Ok(())
    }
}

/// Checks a map key: it must become a JSON string key. With `capture`, the
/// key is also kept (string keys are copied) so it can name a path segment.
struct KeyChecker {
    capture: bool,
}

fn non_string_key<T>() -> Result<T, CheckError> {
    Err(CheckError::lossless(NON_STRING_KEY))
}

impl ser::Serializer for KeyChecker {
    type Ok = Key;
    type Error = CheckError;

    type SerializeSeq = Impossible<Key, CheckError>;
    type SerializeTuple = Impossible<Key, CheckError>;
    type SerializeTupleStruct = Impossible<Key, CheckError>;
    type SerializeTupleVariant = Impossible<Key, CheckError>;
    type SerializeMap = Impossible<Key, CheckError>;
    type SerializeStruct = Impossible<Key, CheckError>;
    type SerializeStructVariant = Impossible<Key, CheckError>;

    fn serialize_bool(self, v: bool) -> Result<Key, CheckError> {
        Ok(Key::Bool(v))
    }

    fn serialize_i8(self, v: i8) -> Result<Key, CheckError> {
        Ok(Key::Signed(v.into()))
    }

    fn serialize_i16(self, v: i16) -> Result<Key, CheckError> {
        Ok(Key::Signed(v.into()))
    }

    fn serialize_i32(self, v: i32) -> Result<Key, CheckError> {
        Ok(Key::Signed(v.into()))
    }

    fn serialize_i64(self, v: i64) -> Result<Key, CheckError> {
        Ok(Key::Signed(v.into()))
    }

    fn serialize_i128(self, v: i128) -> Result<Key, CheckError> {
        Ok(Key::Signed(v))
    }

    fn serialize_u8(self, v: u8) -> Result<Key, CheckError> {
        Ok(Key::Unsigned(v.into()))
    }

    fn serialize_u16(self, v: u16) -> Result<Key, CheckError> {
        Ok(Key::Unsigned(v.into()))
    }

    fn serialize_u32(self, v: u32) -> Result<Key, CheckError> {
        Ok(Key::Unsigned(v.into()))
    }

    fn serialize_u64(self, v: u64) -> Result<Key, CheckError> {
        Ok(Key::Unsigned(v.into()))
    }

    fn serialize_u128(self, v: u128) -> Result<Key, CheckError> {
        Ok(Key::Unsigned(v))
    }

    fn serialize_f32(self, _v: f32) -> Result<Key, CheckError> {
        non_string_key()
    }

    fn serialize_f64(self, _v: f64) -> Result<Key, CheckError> {
        non_string_key()
    }

    fn serialize_char(self, v: char) -> Result<Key, CheckError> {
        Ok(Key::Char(v))
    }

    fn serialize_str(self, v: &str) -> Result<Key, CheckError> {
        Ok(if self.capture {
            Key::Str(v.to_owned())
        } else {
            Key::Unrendered
        })
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<Key, CheckError> {
        non_string_key()
    }

    fn serialize_none(self) -> Result<Key, CheckError> {
        non_string_key()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<Key, CheckError> {
        non_string_key()
    }

    fn serialize_unit(self) -> Result<Key, CheckError> {
        non_string_key()
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<Key, CheckError> {
        non_string_key()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _variant_index: u32,
        variant: &'static str,
    ) -> Result<Key, CheckError> {
        Ok(Key::Variant(variant))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Key, CheckError> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _variant_index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Key, CheckError> {
        non_string_key()
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, CheckError> {
        non_string_key()
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, CheckError> {
        non_string_key()
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, CheckError> {
        non_string_key()
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _variant_index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, CheckError> {
        non_string_key()
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, CheckError> {
        non_string_key()
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, CheckError> {
        non_string_key()
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _variant_index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, CheckError> {
        non_string_key()
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<Key, CheckError> {
        Ok(if self.capture {
            Key::Str(value.to_string())
        } else {
            Key::Unrendered
        })
    }

    fn is_human_readable(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::ser::{SerializeMap, Serializer};
    use serde_json::{Map, json};

    use super::*;

    #[derive(Serialize)]
    struct Row {
        name: String,
        score: f64,
    }

    #[derive(Serialize)]
    struct Report {
        title: String,
        rows: Vec<Row>,
    }

    fn row(name: &str, score: f64) -> Row {
        Row {
            name: name.to_owned(),
            score,
        }
    }

    fn err<T: Serialize + ?Sized>(value: &T) -> LosslessError {
        to_lossless_value(value, "value").expect_err("value should be rejected")
    }

    #[test]
    fn nan_nested_in_vec_in_struct() {
        let report = Report {
            title: "t".into(),
            rows: vec![row("a", 1.0), row("b", f64::NAN), row("c", 2.0)],
        };
        let e = err(&report);
        assert_eq!(e.path(), "value.rows[1].score");
        assert_eq!(e.reason(), "is NaN, which JSON cannot represent");
        assert_eq!(
            e.to_string(),
            r#""value.rows[1].score" is NaN, which JSON cannot represent"#
        );
    }

    #[test]
    fn root_label_starts_the_path() {
        let e = to_lossless_value(&vec![1.0, f64::NAN], "meta").unwrap_err();
        assert_eq!(e.path(), "meta[1]");
        let e = to_lossless_value(&f64::NAN, "meta").unwrap_err();
        assert_eq!(e.path(), "meta");
    }

    #[test]
    fn infinities_are_rejected() {
        for f in [f64::INFINITY, f64::NEG_INFINITY] {
            let e = err(&Report {
                title: "t".into(),
                rows: vec![row("a", f)],
            });
            assert_eq!(e.path(), "value.rows[0].score");
            assert_eq!(e.reason(), "is infinite, which JSON cannot represent");
        }
        assert_eq!(
            err(&f32::NEG_INFINITY).reason(),
            "is infinite, which JSON cannot represent"
        );
    }

    #[test]
    fn f32_nan_is_rejected() {
        #[derive(Serialize)]
        struct Small {
            x: f32,
        }
        let e = err(&Small { x: f32::NAN });
        assert_eq!(e.path(), "value.x");
        assert_eq!(e.reason(), "is NaN, which JSON cannot represent");
    }

    #[test]
    fn negative_zero_is_rejected() {
        let e = err(&Report {
            title: "t".into(),
            rows: vec![row("a", -0.0)],
        });
        assert_eq!(e.path(), "value.rows[0].score");
        assert_eq!(
            e.reason(),
            "is -0.0, which JSON cannot represent losslessly"
        );
        assert_eq!(err(&-0.0f32).reason(), NEGATIVE_ZERO);
        // A serde_json::Value holding -0.0 is caught too.
        assert_eq!(err(&json!({"a": [1, -0.0]})).path(), "value.a[1]");
    }

    #[test]
    fn positive_zero_and_ordinary_floats_pass() {
        assert_eq!(to_lossless_value(&0.0f64, "value").unwrap(), json!(0.0));
        assert_eq!(to_lossless_value(&0.0f32, "value").unwrap(), json!(0.0));
        assert_eq!(
            to_lossless_value(&[f64::MIN_POSITIVE, -1.5, f64::MAX], "value").unwrap(),
            json!([f64::MIN_POSITIVE, -1.5, f64::MAX])
        );
        check_value(&json!({"a": [0.0, 0, -1, -0.5]}), "value").unwrap();
    }

    #[test]
    fn check_value_rejects_negative_zero() {
        let value = json!({"rows": [{"score": 1.0}, {"score": -0.0}]});
        let e = check_value(&value, "meta").unwrap_err();
        assert_eq!(e.path(), "meta.rows[1].score");
        assert_eq!(e.reason(), NEGATIVE_ZERO);

        let e = check_value(&json!(-0.0), "value").unwrap_err();
        assert_eq!(e.path(), "value");

        let e = check_value(&json!({"a b": {"x\"y": -0.0}}), "value").unwrap_err();
        assert_eq!(e.path(), r#"value["a b"]["x\"y"]"#);
    }

    #[test]
    fn check_value_on_parsed_negative_zero() {
        // serde_json parses `-0`, `-0.0` and `-0e0` as the float -0.0.
        for (text, path) in [("-0", "value"), ("-0.0", "value"), ("[-0e0]", "value[0]")] {
            let value: Value = serde_json::from_str(text).unwrap();
            let e = check_value(&value, "value").unwrap_err();
            assert_eq!(e.path(), path, "{text}");
        }
        check_value(&serde_json::from_str("[0, 0.0, 1e-300]").unwrap(), "value").unwrap();
    }

    #[test]
    fn hash_map_key_path() {
        let mut map = HashMap::new();
        map.insert("ok".to_owned(), 1.0);
        map.insert("a b".to_owned(), f64::NAN);
        let e = err(&map);
        assert_eq!(e.path(), r#"value["a b"]"#);
        assert_eq!(e.reason(), NAN);

        let mut map = HashMap::new();
        map.insert("plain_key".to_owned(), f64::INFINITY);
        assert_eq!(err(&map).path(), "value.plain_key");

        let mut map = HashMap::new();
        map.insert("quote\"d".to_owned(), f64::NAN);
        assert_eq!(err(&map).path(), r#"value["quote\"d"]"#);
    }

    #[test]
    fn non_string_like_keys_render_as_quoted_strings() {
        let mut map = BTreeMap::new();
        map.insert(7u32, f64::NAN);
        assert_eq!(err(&map).path(), r#"value["7"]"#);

        let mut map = BTreeMap::new();
        map.insert(-3i64, vec![0.5, f64::NAN]);
        assert_eq!(err(&map).path(), r#"value["-3"][1]"#);

        let mut map = BTreeMap::new();
        map.insert('c', f64::NAN);
        assert_eq!(err(&map).path(), "value.c");

        let mut map = BTreeMap::new();
        map.insert(true, f64::NAN);
        assert_eq!(err(&map).path(), "value.true");
    }

    #[test]
    fn nested_map_in_struct() {
        #[derive(Serialize)]
        struct Holder {
            scores: BTreeMap<String, Vec<f64>>,
        }
        let mut scores = BTreeMap::new();
        scores.insert("x y".to_owned(), vec![1.0, 2.0, f64::NAN]);
        let e = err(&Holder { scores });
        assert_eq!(e.path(), r#"value.scores["x y"][2]"#);
    }

    #[test]
    fn composite_keys_are_rejected() {
        let mut map = BTreeMap::new();
        map.insert((1, 2), 3);
        let e = err(&map);
        assert_eq!(e.path(), "value");
        assert_eq!(e.reason(), "has a non-string map key");

        #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
        struct StructKey {
            a: u8,
        }
        #[derive(Serialize)]
        struct Holder {
            inner: Vec<BTreeMap<StructKey, u8>>,
        }
        let mut map = BTreeMap::new();
        map.insert(StructKey { a: 1 }, 2);
        let e = err(&Holder {
            inner: vec![BTreeMap::new(), map],
        });
        assert_eq!(e.path(), "value.inner[1]");
        assert_eq!(e.reason(), NON_STRING_KEY);

        let mut map = BTreeMap::new();
        map.insert(vec![1u8], 2);
        assert_eq!(err(&map).reason(), NON_STRING_KEY);

        let mut map = BTreeMap::new();
        map.insert((), 2);
        assert_eq!(err(&map).reason(), NON_STRING_KEY);

        let mut map = BTreeMap::new();
        map.insert(Some("x"), 2);
        assert_eq!(err(&map).reason(), NON_STRING_KEY);
    }

    /// A map with a float key, which serde_json would stringify; we reject it.
    struct FloatKeyed(f64);

    impl Serialize for FloatKeyed {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(1))?;
            map.serialize_entry(&self.0, &1)?;
            map.end()
        }
    }

    #[test]
    fn float_keys_are_rejected() {
        assert_eq!(err(&FloatKeyed(1.5)).reason(), NON_STRING_KEY);
        assert_eq!(err(&FloatKeyed(f64::NAN)).reason(), NON_STRING_KEY);
    }

    #[test]
    fn unit_variant_and_newtype_keys_are_accepted() {
        #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
        #[serde(rename_all = "snake_case")]
        enum Color {
            DarkRed,
        }
        #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
        struct Id(u32);

        let mut map = BTreeMap::new();
        map.insert(Color::DarkRed, 1.0);
        assert_eq!(
            to_lossless_value(&map, "value").unwrap(),
            json!({"dark_red": 1.0})
        );
        map.insert(Color::DarkRed, f64::NAN);
        assert_eq!(err(&map).path(), "value.dark_red");

        let mut map = BTreeMap::new();
        map.insert(Id(4), 1.0);
        assert_eq!(to_lossless_value(&map, "value").unwrap(), json!({"4": 1.0}));
        map.insert(Id(4), f64::NAN);
        assert_eq!(err(&map).path(), r#"value["4"]"#);
    }

    /// A map written with separate `serialize_key` / `serialize_value` calls.
    struct SplitMap(Vec<(String, f64)>);

    impl Serialize for SplitMap {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(self.0.len()))?;
            for (k, v) in &self.0 {
                map.serialize_key(k)?;
                map.serialize_value(v)?;
            }
            map.end()
        }
    }

    #[test]
    fn split_key_value_calls_keep_the_key_for_the_path() {
        let ok = SplitMap(vec![("a".into(), 1.0)]);
        assert_eq!(to_lossless_value(&ok, "value").unwrap(), json!({"a": 1.0}));
        let bad = SplitMap(vec![("a".into(), 1.0), ("b-c".into(), f64::NAN)]);
        assert_eq!(err(&bad).path(), r#"value["b-c"]"#);
    }

    #[derive(Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Shape {
        Circle(f64),
        Pair(f64, f64),
        Rect { width: f64, height: f64 },
        Empty,
    }

    #[test]
    fn enum_variant_paths() {
        let e = err(&Shape::Circle(f64::NAN));
        assert_eq!(e.path(), "value.circle");
        assert_eq!(
            err(&vec![Shape::Empty, Shape::Circle(-0.0)]).path(),
            "value[1].circle"
        );
        assert_eq!(err(&Shape::Pair(1.0, f64::NAN)).path(), "value.pair[1]");
        assert_eq!(
            err(&Shape::Rect {
                width: 1.0,
                height: f64::INFINITY
            })
            .path(),
            "value.rect.height"
        );
        assert_eq!(
            to_lossless_value(&Shape::Empty, "value").unwrap(),
            json!("empty")
        );
    }

    #[test]
    fn internally_tagged_and_flattened() {
        #[derive(Serialize)]
        #[serde(tag = "type")]
        enum Tagged {
            Point { x: f64 },
        }
        assert_eq!(err(&Tagged::Point { x: f64::NAN }).path(), "value.x");

        #[derive(Serialize)]
        struct Outer {
            id: u32,
            #[serde(flatten)]
            extra: HashMap<String, f64>,
        }
        let mut extra = HashMap::new();
        extra.insert("w".to_owned(), f64::NAN);
        assert_eq!(err(&Outer { id: 1, extra }).path(), "value.w");
    }

    #[test]
    fn options_tuples_and_newtypes() {
        #[derive(Serialize)]
        struct Meters(f64);
        #[derive(Serialize)]
        struct Pair(u8, Meters);
        #[derive(Serialize)]
        struct S {
            maybe: Option<f64>,
            tuple: (u8, f64),
            pair: Pair,
        }
        let base = || S {
            maybe: None,
            tuple: (1, 1.0),
            pair: Pair(1, Meters(1.0)),
        };
        assert!(to_lossless_value(&base(), "value").is_ok());
        let mut s = base();
        s.maybe = Some(f64::NAN);
        assert_eq!(err(&s).path(), "value.maybe");
        let mut s = base();
        s.tuple.1 = f64::NAN;
        assert_eq!(err(&s).path(), "value.tuple[1]");
        let mut s = base();
        s.pair.1 = Meters(f64::NAN);
        assert_eq!(err(&s).path(), "value.pair[1]");
    }

    #[test]
    fn renamed_fields_that_are_not_identifiers() {
        #[derive(Serialize)]
        struct S {
            #[serde(rename = "@score")]
            score: f64,
        }
        assert_eq!(err(&S { score: f64::NAN }).path(), r#"value["@score"]"#);
    }

    struct Failing;

    impl Serialize for Failing {
        fn serialize<S: Serializer>(&self, _serializer: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("boom"))
        }
    }

    #[test]
    fn custom_serialize_error_is_reported_at_root() {
        let e = err(&Failing);
        assert_eq!(e.path(), "value");
        assert_eq!(e.reason(), "could not be serialized: boom");

        #[derive(Serialize)]
        struct Holder {
            items: Vec<Failing>,
        }
        let e = to_lossless_value(
            &Holder {
                items: vec![Failing],
            },
            "meta",
        )
        .unwrap_err();
        assert_eq!(e.path(), "meta");
        assert_eq!(e.reason(), "could not be serialized: boom");
        assert_eq!(e.to_string(), r#""meta" could not be serialized: boom"#);
    }

    #[test]
    fn serde_json_errors_are_reported_at_root() {
        // Passes the check, but serde_json cannot hold it without
        // `arbitrary_precision`.
        let big = u128::from(u64::MAX) + 1;
        let e = to_lossless_value(&vec![big], "value").unwrap_err();
        assert_eq!(e.path(), "value");
        assert!(e.reason().starts_with("could not be serialized: "), "{e}");
    }

    struct Bytes<'a>(&'a [u8]);

    impl Serialize for Bytes<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bytes(self.0)
        }
    }

    struct Displayed(u32);

    impl Serialize for Displayed {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_str(&format_args!("#{}", self.0))
        }
    }

    #[test]
    fn big_ordinary_value_matches_serde_json() {
        #[derive(Serialize, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        enum Kind {
            Alpha,
            Beta,
        }
        #[derive(Serialize)]
        struct Unit;
        #[derive(Serialize)]
        struct Newtype(String);
        #[derive(Serialize)]
        struct Big {
            text: String,
            emoji: char,
            flags: Vec<bool>,
            small: (i8, i16, i32, i64, u8, u16, u32, u64),
            extremes: [i64; 2],
            big_unsigned: u64,
            wide: (i128, u128),
            floats: Vec<f64>,
            single: f32,
            maybe: Option<Box<Big>>,
            none: Option<u8>,
            unit: (),
            unit_struct: Unit,
            newtype: Newtype,
            shapes: Vec<Shape>,
            kinds: BTreeMap<Kind, Vec<u8>>,
            by_id: BTreeMap<u64, String>,
            by_char: BTreeMap<char, bool>,
            by_bool: BTreeMap<bool, i32>,
            by_name: HashMap<String, Value>,
            json: Value,
        }
        let leaf = Big {
            text: "leaf".into(),
            emoji: '✓',
            flags: vec![],
            small: (-1, -2, -3, -4, 1, 2, 3, 4),
            extremes: [i64::MIN, i64::MAX],
            big_unsigned: u64::MAX,
            wide: (-5, 6),
            floats: vec![0.0, 0.1, -2.5e-300, 1e300],
            single: 0.1,
            maybe: None,
            none: None,
            unit: (),
            unit_struct: Unit,
            newtype: Newtype("n".into()),
            shapes: vec![],
            kinds: BTreeMap::new(),
            by_id: BTreeMap::new(),
            by_char: BTreeMap::new(),
            by_bool: BTreeMap::new(),
            by_name: HashMap::new(),
            json: Value::Null,
        };
        let mut by_name = HashMap::new();
        for i in 0..50 {
            by_name.insert(
                format!("key {i}"),
                json!({"i": i, "half": f64::from(i) / 2.0}),
            );
        }
        let big = Big {
            text: "top \"quoted\" \n line".into(),
            emoji: '😀',
            flags: vec![true, false, true],
            small: (
                i8::MIN,
                i16::MIN,
                i32::MIN,
                i64::MIN,
                u8::MAX,
                u16::MAX,
                u32::MAX,
                u64::MAX,
            ),
            extremes: [i64::MIN, i64::MAX],
            big_unsigned: u64::MAX,
            wide: (i128::from(i64::MIN), u128::from(u64::MAX)),
            floats: (0..1000).map(|i| f64::from(i) * 0.37 - 100.0).collect(),
            single: f32::MAX,
            maybe: Some(Box::new(leaf)),
            none: None,
            unit: (),
            unit_struct: Unit,
            newtype: Newtype("wrapped".into()),
            shapes: vec![
                Shape::Circle(1.0),
                Shape::Pair(2.0, 3.0),
                Shape::Rect {
                    width: 4.0,
                    height: 5.0,
                },
                Shape::Empty,
            ],
            kinds: [(Kind::Alpha, vec![1, 2]), (Kind::Beta, vec![])]
                .into_iter()
                .collect(),
            by_id: (0..100).map(|i| (i * 1_000_003, format!("v{i}"))).collect(),
            by_char: [('a', true), ('é', false)].into_iter().collect(),
            by_bool: [(true, 1), (false, 0)].into_iter().collect(),
            by_name,
            json: json!({"nested": [1, 2.5, "x", null, {"deep": [true]}]}),
        };
        let expected = serde_json::to_value(&big).unwrap();
        assert_eq!(to_lossless_value(&big, "value").unwrap(), expected);
        check_value(&expected, "value").unwrap();

        let odd = (Bytes(&[0, 1, 255]), Displayed(7));
        assert_eq!(
            to_lossless_value(&odd, "value").unwrap(),
            json!([[0, 1, 255], "#7"])
        );
    }

    #[test]
    fn error_trait_and_accessors() {
        let e: Box<dyn std::error::Error> = Box::new(err(&f64::NAN));
        assert_eq!(
            e.to_string(),
            r#""value" is NaN, which JSON cannot represent"#
        );
        let a = err(&f64::NAN);
        assert_eq!(a.clone(), a);
        assert_ne!(a, err(&f64::INFINITY));
    }

    /// Drop a deep value without recursing.
    fn dismantle(value: Value) {
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::Array(items) => stack.extend(items),
                Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }

    fn deep(depth: usize, leaf: Value) -> (Value, String) {
        let mut value = leaf;
        let mut segments = Vec::with_capacity(depth);
        for i in 0..depth {
            value = if i % 2 == 0 {
                segments.push("[0]");
                Value::Array(vec![value])
            } else {
                segments.push(".k");
                let mut map = Map::new();
                map.insert("k".to_owned(), value);
                Value::Object(map)
            };
        }
        let mut path = String::from("value");
        for segment in segments.iter().rev() {
            path.push_str(segment);
        }
        (value, path)
    }

    #[test]
    fn check_value_handles_deep_nesting() {
        // A small stack proves the walk does not recurse.
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let (value, _) = deep(10_000, json!(1.5));
                check_value(&value, "value").unwrap();
                dismantle(value);

                let (value, path) = deep(10_000, json!(-0.0));
                let e = check_value(&value, "value").unwrap_err();
                assert_eq!(e.path(), path);
                assert!(e.path().starts_with("value.k[0].k[0]"));
                assert_eq!(e.reason(), NEGATIVE_ZERO);
                dismantle(value);
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn check_value_visits_every_sibling() {
        let value = json!([
            [],
            {},
            {"a": [1, 2, {"b": 3}], "c": []},
            [[[0.0]], [[-0.0]]]
        ]);
        let e = check_value(&value, "value").unwrap_err();
        assert_eq!(e.path(), "value[3][1][0][0]");
    }

    #[test]
    fn identifier_rule() {
        assert!(is_identifier("a"));
        assert!(is_identifier("_a1"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("1a"));
        assert!(!is_identifier("a-b"));
        assert!(!is_identifier("é"));
    }
}
