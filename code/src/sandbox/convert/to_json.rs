//! JavaScript values to lossless JSON, walked through the engine's own API.
//!
//! No JavaScript global or prototype method the program can reach is used:
//! types are read from value tags and class checks, own enumerable keys come
//! from the engine's property enumeration, and prototypes are compared with
//! the intrinsics captured before the program ran. So `toJSON`, a replaced
//! `JSON.stringify`, `Array.isArray` or `Object.keys` change nothing.
//!
//! What is refused, with the path of the offending value:
//! `undefined` (anywhere, including as a property value: refusing, not
//! dropping as `JSON.stringify` does, keeps the conversion lossless), `-0`,
//! `NaN`, `±Infinity`, BigInt, symbols (as values and as keys), functions,
//! promises, proxies, holes in sparse arrays, arrays with non-index
//! properties, cycles, strings holding a lone UTF-16 surrogate, nesting
//! deeper than [`MAX_DEPTH`], and every object that is not a plain object
//! (prototype `Object.prototype` or `null`) or an array: Date, RegExp, Map,
//! Set, typed arrays, errors, boxed primitives and class instances.
//! Non-enumerable own properties are not data and are skipped, as
//! `JSON.stringify` skips them. An own getter is called (as
//! `JSON.stringify` does); if it throws, the error names the path.

use rquickjs::atom::PredefinedAtom;
use rquickjs::object::Filter;
use rquickjs::{Atom, Ctx, Object, Type, Value};
use serde_json::{Map, Number, Value as Json};

use super::MAX_DEPTH;
use super::path::{self, Step};
use crate::sandbox::engine::kit::{Intrinsic, Kit};
use crate::sandbox::engine::thrown;

/// The largest integer a JavaScript number holds exactly: 2^53 − 1.
pub(crate) const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Why a value could not be converted.
#[derive(Debug)]
pub(crate) enum ToJsonError<'js> {
    /// The value is not lossless JSON; the message names the path.
    Refused(String),
    /// The JSON would be larger than the budget.
    TooLarge,
    /// An uncatchable exception (an interrupt) unwound through a getter:
    /// it must be thrown on so the run stops.
    Interrupted(Value<'js>),
}

/// Converts `value` to JSON; `root` names it in paths (`args`, `result`);
/// `budget` bounds the bytes of JSON text it may take.
pub(crate) fn to_json<'js>(
    ctx: &Ctx<'js>,
    kit: &Kit,
    value: Value<'js>,
    root: &'static str,
    budget: usize,
) -> Result<Json, ToJsonError<'js>> {
    let mut walk = Walk {
        ctx,
        kit,
        root,
        budget,
        used: 0,
        steps: Vec::new(),
        ancestors: Vec::new(),
        object_proto: kit.value(ctx, Intrinsic::ObjectProto),
    };
    walk.value(value)
}

struct Walk<'a, 'js> {
    ctx: &'a Ctx<'js>,
    kit: &'a Kit,
    root: &'static str,
    budget: usize,
    used: usize,
    steps: Vec<Step>,
    /// The arrays and objects on the path from the root, for cycles.
    ancestors: Vec<Object<'js>>,
    object_proto: Value<'js>,
}

impl<'js> Walk<'_, 'js> {
    fn refuse<T>(&self, what: &str) -> Result<T, ToJsonError<'js>> {
        Err(ToJsonError::Refused(format!(
            "{}: {what}",
            path::render(self.root, &self.steps)
        )))
    }

    fn charge(&mut self, bytes: usize) -> Result<(), ToJsonError<'js>> {
        self.used = self.used.saturating_add(bytes);
        if self.used > self.budget {
            Err(ToJsonError::TooLarge)
        } else {
            Ok(())
        }
    }

    /// A JavaScript exception is pending (a getter threw): take it.
    fn threw<T>(&self, reading: &str) -> Result<T, ToJsonError<'js>> {
        let exception = self.ctx.catch();
        if exception.is_uncatchable_error() {
            return Err(ToJsonError::Interrupted(exception));
        }
        match thrown::summary(self.ctx, self.kit, exception, 300) {
            Ok(text) => self.refuse(&format!("{reading} threw {text}")),
            Err(interrupt) => Err(ToJsonError::Interrupted(interrupt)),
        }
    }

    fn value(&mut self, value: Value<'js>) -> Result<Json, ToJsonError<'js>> {
        if value.is_proxy() {
            return self.refuse("a Proxy is not JSON");
        }
        match value.type_of() {
            Type::Undefined | Type::Uninitialized => self.refuse("undefined is not JSON"),
            Type::Null => {
                self.charge(4)?;
                Ok(Json::Null)
            }
            Type::Bool => {
                self.charge(5)?;
                Ok(Json::Bool(value.as_bool().unwrap_or_default()))
            }
            Type::Int => {
                self.charge(11)?;
                Ok(Json::from(value.as_int().unwrap_or_default()))
            }
            Type::Float => self.float(value.as_float().unwrap_or(f64::NAN)),
            Type::String => {
                let Some(s) = value.as_string() else {
                    return self.refuse("an unreadable string");
                };
                self.string(s)
            }
            Type::Symbol => self.refuse("a symbol is not JSON"),
            Type::BigInt => self.refuse(
                "a BigInt is not JSON (convert it: Number(x) if it is at most 2^53 - 1, else String(x))",
            ),
            Type::Function | Type::Constructor => self.refuse("a function is not JSON"),
            Type::Promise => self.refuse("a Promise is not JSON (did you forget `await`?)"),
            Type::Array => match value.into_object() {
                Some(array) => self.array(array),
                None => self.refuse("an unreadable array"),
            },
            Type::Object | Type::Exception | Type::Proxy => match value.into_object() {
                Some(object) => self.object(object),
                None => self.refuse("an unreadable object"),
            },
            Type::Module | Type::Unknown => self.refuse("an engine-internal value is not JSON"),
        }
    }

    fn float(&mut self, f: f64) -> Result<Json, ToJsonError<'js>> {
        if f.is_nan() {
            return self.refuse("NaN is not JSON");
        }
        if f.is_infinite() {
            return self.refuse(if f > 0.0 {
                "Infinity is not JSON"
            } else {
                "-Infinity is not JSON"
            });
        }
        if f == 0.0 && f.is_sign_negative() {
            return self.refuse("-0 is not JSON (JSON has no negative zero; use 0)");
        }
        self.charge(24)?;
        if f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER {
            // Integral and exact: an integer in JSON, as `JSON.stringify` writes it.
            return Ok(Json::from(f as i64));
        }
        match Number::from_f64(f) {
            Some(n) => Ok(Json::Number(n)),
            None => self.refuse("a number JSON cannot hold"),
        }
    }

    fn string(&mut self, s: &rquickjs::String<'js>) -> Result<Json, ToJsonError<'js>> {
        match s.to_string() {
            Ok(text) => {
                self.charge(text.len() + 2)?;
                Ok(Json::String(text))
            }
            Err(rquickjs::Error::Utf8(_)) => self.refuse(
                "a string holding a lone UTF-16 surrogate is not JSON (it has no UTF-8 form)",
            ),
            Err(_) => {
                let _ = self.ctx.catch();
                self.refuse("a string too large to copy out of the heap")
            }
        }
    }

    /// Enters an array or object: depth and cycle checks.
    fn enter(&mut self, object: &Object<'js>) -> Result<(), ToJsonError<'js>> {
        if self.ancestors.len() >= MAX_DEPTH {
            return self.refuse(&format!(
                "nests deeper than {MAX_DEPTH} levels of arrays and objects"
            ));
        }
        if let Some(at) = self.ancestors.iter().position(|a| a == object) {
            let target = path::render(self.root, &self.steps[..at]);
            return self.refuse(&format!(
                "a cycle (this is the value at {target} again) is not JSON"
            ));
        }
        self.ancestors.push(object.clone());
        Ok(())
    }

    fn array(&mut self, array: Object<'js>) -> Result<Json, ToJsonError<'js>> {
        self.enter(&array)?;
        let length: Value = match array.get(PredefinedAtom::Length) {
            Ok(v) => v,
            Err(_) => return self.threw("reading its length"),
        };
        let length = length
            .as_number()
            .unwrap_or(0.0)
            .clamp(0.0, u32::MAX as f64) as u32;
        self.charge(2 + length as usize)?;
        let mut items = Vec::with_capacity((length as usize).min(1 << 16));
        // Own enumerable string keys come indices first, ascending: index
        // `i` must be the `i`-th key, or there is a hole (or a stray key).
        let mut keys = array.keys::<Atom>();
        for index in 0..length {
            self.steps.push(Step::Index(index));
            let key = match keys.next() {
                Some(Ok(key)) => Some(key),
                Some(Err(_)) => return self.threw("listing its keys"),
                None => None,
            };
            let expected = Atom::from_u32(self.ctx.clone(), index).ok();
            if key.is_none() || key != expected {
                return self.refuse(
                    "a hole in a sparse array is not JSON (fill it, or build the array with push)",
                );
            }
            let item: Value = match array.get(index) {
                Ok(v) => v,
                Err(_) => return self.threw("reading it"),
            };
            let json = self.value(item)?;
            items.push(json);
            self.steps.pop();
        }
        if let Some(extra) = keys.next() {
            let name = extra
                .ok()
                .and_then(|k| super::key_text(&k))
                .unwrap_or_default();
            self.steps.push(Step::Key(name));
            return self.refuse(
                "an array with a non-index property is not JSON (copy the elements: [...x])",
            );
        }
        if self.has_symbol_keys(&array) {
            return self.refuse("an array with a symbol-keyed property is not JSON");
        }
        self.ancestors.pop();
        Ok(Json::Array(items))
    }

    fn has_symbol_keys(&self, object: &Object<'js>) -> bool {
        object
            .own_keys::<Atom>(Filter::new().symbol().enum_only())
            .next()
            .is_some()
    }

    fn object(&mut self, object: Object<'js>) -> Result<Json, ToJsonError<'js>> {
        match object.get_prototype() {
            None => {}
            Some(proto) if *proto.as_value() == self.object_proto => {}
            Some(proto) => {
                let what = describe_non_plain(self.ctx, self.kit, proto);
                return self.refuse(&what);
            }
        }
        self.enter(&object)?;
        if self.has_symbol_keys(&object) {
            return self.refuse("an object with a symbol-keyed property is not JSON");
        }
        self.charge(2)?;
        let mut map = Map::new();
        for key in object.keys::<Atom>() {
            let Ok(key) = key else {
                return self.threw("listing its keys");
            };
            let Some(name) = super::key_text(&key) else {
                return self
                    .refuse("an object with a key holding a lone UTF-16 surrogate is not JSON");
            };
            self.charge(name.len() + 4)?;
            self.steps.push(Step::Key(name));
            let item: Value = match object.get(key) {
                Ok(v) => v,
                Err(_) => return self.threw("reading it"),
            };
            let json = self.value(item)?;
            let Some(Step::Key(name)) = self.steps.pop() else {
                unreachable!("the step pushed above")
            };
            map.insert(name, json);
        }
        self.ancestors.pop();
        Ok(Json::Object(map))
    }
}

/// What a non-plain object is, from its prototype chain, as "… is not JSON".
fn describe_non_plain<'js>(ctx: &Ctx<'js>, kit: &Kit, proto: Object<'js>) -> String {
    const NAMED: [(Intrinsic, &str); 20] = [
        (
            Intrinsic::DateProto,
            "a Date is not JSON (use date.toISOString() or date.getTime())",
        ),
        (
            Intrinsic::RegExpProto,
            "a RegExp is not JSON (use its .source)",
        ),
        (
            Intrinsic::MapProto,
            "a Map is not JSON (use Object.fromEntries(map))",
        ),
        (Intrinsic::SetProto, "a Set is not JSON (use [...set])"),
        (Intrinsic::WeakMapProto, "a WeakMap is not JSON"),
        (Intrinsic::WeakSetProto, "a WeakSet is not JSON"),
        (
            Intrinsic::PromiseProto,
            "a Promise is not JSON (did you forget `await`?)",
        ),
        (Intrinsic::ArrayBufferProto, "an ArrayBuffer is not JSON"),
        (
            Intrinsic::SharedArrayBufferProto,
            "a SharedArrayBuffer is not JSON",
        ),
        (
            Intrinsic::TypedArrayProto,
            "a typed array is not JSON (use Array.from(x))",
        ),
        (Intrinsic::DataViewProto, "a DataView is not JSON"),
        (
            Intrinsic::ToolErrorProto,
            "a ToolCallError is not JSON (use its .code and .message)",
        ),
        (
            Intrinsic::ErrorProto,
            "an Error is not JSON (use its .message)",
        ),
        (
            Intrinsic::NumberProto,
            "a Number object is not JSON (use a plain number)",
        ),
        (
            Intrinsic::StringProto,
            "a String object is not JSON (use a plain string)",
        ),
        (
            Intrinsic::BooleanProto,
            "a Boolean object is not JSON (use true or false)",
        ),
        (Intrinsic::SymbolProto, "a Symbol object is not JSON"),
        (Intrinsic::BigIntProto, "a BigInt object is not JSON"),
        (
            Intrinsic::InternalErrorProto,
            "an Error is not JSON (use its .message)",
        ),
        (
            Intrinsic::RangeErrorProto,
            "an Error is not JSON (use its .message)",
        ),
    ];
    let object_proto = kit.value(ctx, Intrinsic::ObjectProto);
    let mut current = Some(proto);
    // A few steps up the chain: class hierarchies over builtins are shallow.
    for _ in 0..8 {
        let Some(p) = current else { break };
        if p.as_value() == &object_proto || p.is_proxy() {
            break;
        }
        for (which, text) in NAMED {
            if *p.as_value() == kit.value(ctx, which) {
                return text.to_owned();
            }
        }
        current = p.get_prototype();
    }
    "an instance of a class (its prototype is not Object.prototype) is not JSON \
     (copy its fields into a plain object: {...x})"
        .to_owned()
}
