//! Tool results (JSON) to JavaScript values, built through the engine's API.
//!
//! Objects and arrays are made with the intrinsic constructors and filled by
//! defining own data properties, never by assignment: a setter or getter the
//! program put on `Object.prototype` or `Array.prototype` is not run, and a
//! key `"__proto__"` becomes an own property, as `JSON.parse` makes it.
//! (Writing the value as JSON text for the engine's own parser,
//! `JS_ParseJSON`, keeps those rules too, but costs more: QuickJS-ng's JSON
//! tokenizer and its parse arena took 30,000 instructions for a `read`
//! result that this builds in 18,000.)
//!
//! Before anything is built, [`check`] refuses what JavaScript cannot hold
//! exactly: an integer beyond ±(2^53 − 1) (it would be rounded) and nesting
//! deeper than [`MAX_DEPTH`].

use rquickjs::object::Property;
use rquickjs::{Array, Ctx, Object, Value};
use serde_json::Value as Json;

use super::MAX_DEPTH;
use super::path::{self, Step};
use super::to_json::MAX_SAFE_INTEGER;

/// Checks that `value` can become a JavaScript value without loss; the error
/// names the path under `root`. Recursion stops at [`MAX_DEPTH`], so any
/// depth is safe to check. Allocates nothing unless it refuses.
pub(crate) fn check(value: &Json, root: &str) -> Result<(), String> {
    let Some((fault, mut steps)) = fault(value, 0) else {
        return Ok(());
    };
    steps.reverse();
    let at = path::render(root, &steps);
    Err(match fault {
        Fault::Unsafe(n) => format!(
            "{at} is the integer {n}, beyond ±(2^53 - 1): a JavaScript number cannot hold it exactly"
        ),
        Fault::Deep => format!("{at} nests deeper than {MAX_DEPTH} levels of arrays and objects"),
    })
}

/// What [`check`] refuses.
enum Fault<'a> {
    Unsafe(&'a serde_json::Number),
    Deep,
}

/// The first fault in `value` (whose `depth` arrays and objects enclose it)
/// and the steps to it, innermost first.
fn fault(value: &Json, depth: usize) -> Option<(Fault<'_>, Vec<Step>)> {
    match value {
        Json::Null | Json::Bool(_) | Json::String(_) => None,
        Json::Number(n) => {
            let exact = match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => (i.unsigned_abs() as f64) <= MAX_SAFE_INTEGER,
                (None, Some(u)) => (u as f64) <= MAX_SAFE_INTEGER,
                (None, None) => true,
            };
            (!exact).then(|| (Fault::Unsafe(n), Vec::new()))
        }
        Json::Array(_) | Json::Object(_) if depth >= MAX_DEPTH => Some((Fault::Deep, Vec::new())),
        Json::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let (fault, mut steps) = fault(item, depth + 1)?;
            steps.push(Step::Index(i as u32));
            Some((fault, steps))
        }),
        Json::Object(map) => map.iter().find_map(|(key, item)| {
            let (fault, mut steps) = fault(item, depth + 1)?;
            steps.push(Step::Key(key.clone()));
            Some((fault, steps))
        }),
    }
}

/// Builds the JavaScript value of `value`, which [`check`] accepted (so the
/// recursion is at most [`MAX_DEPTH`] deep). Fails only when the heap is full.
pub(crate) fn build<'js>(ctx: &Ctx<'js>, value: &Json) -> rquickjs::Result<Value<'js>> {
    Ok(match value {
        Json::Null => Value::new_null(ctx.clone()),
        Json::Bool(b) => Value::new_bool(ctx.clone(), *b),
        Json::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f == 0.0 && f.is_sign_negative() {
                Value::new_float(ctx.clone(), f)
            } else {
                Value::new_number(ctx.clone(), f)
            }
        }
        Json::String(s) => rquickjs::String::from_str(ctx.clone(), s)?.into_value(),
        Json::Array(items) => {
            let array = Array::new(ctx.clone())?;
            for (i, item) in items.iter().enumerate() {
                let item = build(ctx, item)?;
                array.as_object().prop(i as u32, data(item))?;
            }
            array.into_value()
        }
        Json::Object(map) => {
            let object = Object::new(ctx.clone())?;
            for (key, item) in map {
                let item = build(ctx, item)?;
                object.prop(key.as_str(), data(item))?;
            }
            object.into_value()
        }
    })
}

/// A writable, enumerable, configurable data property, as `JSON.parse` makes.
fn data(value: Value<'_>) -> Property<Value<'_>> {
    Property::from(value).writable().enumerable().configurable()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refuses_unsafe_integers_with_their_path() {
        assert!(
            check(
                &json!({"a": [9007199254740991_i64, -9007199254740991_i64]}),
                "r"
            )
            .is_ok()
        );
        let err = check(&json!({"a": [1, 9007199254740992_u64]}), "result").unwrap_err();
        assert_eq!(
            err,
            "result.a[1] is the integer 9007199254740992, beyond ±(2^53 - 1): a JavaScript number cannot hold it exactly"
        );
        assert!(check(&json!(u64::MAX), "r").is_err());
        assert!(check(&json!(i64::MIN), "r").is_err());
        assert!(check(&json!(1e300), "r").is_ok());
    }

    #[test]
    fn refuses_deep_values_without_deep_recursion() {
        let mut deep = json!(null);
        for _ in 0..MAX_DEPTH {
            deep = json!([deep]);
        }
        assert!(check(&deep, "r").is_ok());
        let deeper = json!([deep]);
        assert!(
            check(&deeper, "r")
                .unwrap_err()
                .contains("nests deeper than 127")
        );
        crate::sandbox::convert::drop_deep(deeper);
    }
}
