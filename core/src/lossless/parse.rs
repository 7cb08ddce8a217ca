//! JSON text read into a `serde_json::Value` under the lossless rules: in
//! the same pass as `serde_json::from_str`, an object key written twice
//! (which `serde_json` would collapse, keeping the last) and `-0.0` are
//! refused, naming where they sit. Everything else reads exactly as
//! `serde_json::from_str::<Value>` reads it, depth limit included.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::{LosslessError, Reason, Segment, path_of};
use crate::path::Keys;

/// Why a text did not read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Not JSON (or nested deeper than `serde_json` reads).
    Json(serde_json::Error),
    /// JSON that does not read losslessly: a key written twice, `-0.0`.
    Lossless(LosslessError),
}

/// Reads `text` as one JSON value, refusing what would not survive as
/// written. `root` starts the error path (`"arguments"`); keys are shown.
pub(crate) fn from_str(text: &str, root: &str) -> Result<Value, ReadError> {
    let fault = Fault::default();
    let mut reader = serde_json::Deserializer::from_str(text);
    let read = Seed(&fault)
        .deserialize(&mut reader)
        .and_then(|value| reader.end().map(|()| value));
    match (read, fault.0.into_inner()) {
        (Ok(value), _) => Ok(value),
        (Err(e), None) => Err(ReadError::Json(e)),
        (Err(_), Some((reason, segments))) => {
            // Reading stopped at the fault: a text that is not JSON past it
            // is named as such first.
            if let Err(e) = serde_json::from_str::<de::IgnoredAny>(text) {
                return Err(ReadError::Json(e));
            }
            Err(ReadError::Lossless(LosslessError {
                path: path_of(root, segments.into_iter().rev(), Keys::Shown),
                reason: reason.text(),
            }))
        }
    }
}

/// The lossless fault found while reading, with its path, innermost
/// segment first (pushed while the error travels back up).
#[derive(Default)]
struct Fault(RefCell<Option<(Reason, Vec<Segment>)>>);

impl Fault {
    fn set<E: de::Error>(&self, reason: Reason) -> E {
        *self.0.borrow_mut() = Some((reason, Vec::new()));
        E::custom("not lossless JSON")
    }

    /// Records where an error passed, when it is a lossless fault.
    fn at(&self, segment: Segment) {
        if let Some((_, segments)) = self.0.borrow_mut().as_mut() {
            segments.push(segment);
        }
    }
}

#[derive(Clone, Copy)]
struct Seed<'f>(&'f Fault);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // The parser gives finite numbers only; `-0` and `-0.0` come as
        // `-0.0`.
        if v == 0.0 && v.is_sign_negative() {
            return Err(self.0.set(Reason::NegativeZero));
        }
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            match seq.next_element_seed(self) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => return Ok(Value::Array(items)),
                Err(e) => {
                    self.0.at(Segment::Index(items.len()));
                    return Err(e);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        let mut position = 0;
        while let Some(key) = map.next_key::<String>()? {
            let value = match map.next_value_seed(self) {
                Ok(value) => value,
                Err(e) => {
                    self.0.at(Segment::Key {
                        position,
                        key: Some(key),
                    });
                    return Err(e);
                }
            };
            match object.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                Entry::Occupied(slot) => {
                    let e = self.0.set(Reason::KeyGivenTwice);
                    self.0.at(Segment::Key {
                        position,
                        key: Some(slot.key().clone()),
                    });
                    return Err(e);
                }
            }
            position += 1;
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lossless(text: &str) -> String {
        match from_str(text, "arguments") {
            Err(ReadError::Lossless(e)) => e.to_string(),
            other => panic!("expected a lossless error, got {other:?}"),
        }
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            r#"{"a":[1,-2,3.5,18446744073709551615,-9223372036854775808,1e300],"b":{"c":null,"d":true,"e":"x\u00e9\n"}}"#,
            "[]",
            "{}",
            " 0 ",
            r#""s""#,
            "-1.5",
        ] {
            let ours = from_str(text, "arguments").unwrap();
            let theirs: Value = serde_json::from_str(text).unwrap();
            assert_eq!(ours, theirs, "{text}");
            assert_eq!(ours.to_string(), theirs.to_string(), "{text}");
        }
    }

    #[test]
    fn a_key_written_twice_is_refused_where_it_sits() {
        assert_eq!(
            lossless(r#"{"a":1,"a":2}"#),
            r#""arguments.a" is given twice; send each key once"#
        );
        assert!(
            lossless(r#"{"x":[{},{"k":1,"k":1}]}"#)
                .starts_with(r#""arguments.x[1].k" is given twice"#)
        );
    }

    #[test]
    fn negative_zero_is_refused_where_it_sits() {
        assert!(lossless(r#"{"n":-0.0}"#).starts_with(r#""arguments.n" is -0.0"#));
        assert!(lossless(r#"{"n":[1,-0]}"#).starts_with(r#""arguments.n[1]" is -0.0"#));
        assert!(lossless("-0e7").starts_with(r#""arguments" is -0.0"#));
        assert_eq!(
            from_str("[0,-1,0.0]", "a").unwrap().to_string(),
            "[0,-1,0.0]"
        );
    }

    #[test]
    fn json_100000_deep_is_refused_on_the_default_stack() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let read = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || matches!(from_str(&deep, "arguments"), Err(ReadError::Json(_))))
            .unwrap()
            .join()
            .unwrap();
        assert!(read, "serde_json's depth cap must refuse it");
    }

    #[test]
    fn syntax_errors_and_depth_stay_serde_jsons() {
        for text in ["", "{", r#"{"a":1} x"#, r#"{"a":-0.0"#, &"[".repeat(200)] {
            match from_str(text, "arguments") {
                Err(ReadError::Json(_)) => {}
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
