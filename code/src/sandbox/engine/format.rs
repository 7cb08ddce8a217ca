//! Deterministic, bounded text for `console.*` and for thrown values.
//!
//! Strings passed straight to `console.log` are written as they are; every
//! other value is written as compact JSON-like text: `{"a":1,"b":[1,2]}`,
//! with JavaScript's own spellings for what JSON lacks (`undefined`, `NaN`,
//! `-0`, `Infinity`, `12n`, `Symbol(x)`, `[Function]`, `[Circular]`).
//! Nesting deeper than [`DEPTH`] shows as `[Object]`/`[Array]`, containers
//! show at most [`ITEMS`] entries, and the whole text stops at its cap.
//! Numbers are spelled as JavaScript's `String(n)` spells them.

use rquickjs::function::This;
use rquickjs::{Atom, Coerced, Ctx, Object, Type, Value};

use super::kit::{Intrinsic, Kit};
use super::text;

/// Containers nested deeper than this are shown as `[Object]` / `[Array]`.
pub(crate) const DEPTH: usize = 6;
/// At most this many elements or properties of one container are shown.
pub(crate) const ITEMS: usize = 100;

/// Formats values into one bounded line.
pub(crate) struct Formatter<'a, 'js> {
    ctx: &'a Ctx<'js>,
    kit: &'a Kit,
    out: String,
    cap: usize,
    cut: bool,
    seen: Vec<Object<'js>>,
    interrupted: Option<Value<'js>>,
}

/// What a [`Formatter`] produced.
pub(crate) struct Formatted<'js> {
    /// The text, at most the cap in bytes.
    pub(crate) text: String,
    /// Whether the text was cut at the cap.
    pub(crate) cut: bool,
    /// An uncatchable exception (an interrupt) met while reading a property:
    /// the caller must throw it on.
    pub(crate) interrupted: Option<Value<'js>>,
}

impl<'a, 'js> Formatter<'a, 'js> {
    /// A formatter writing at most `cap` bytes.
    pub(crate) fn new(ctx: &'a Ctx<'js>, kit: &'a Kit, cap: usize) -> Self {
        Formatter {
            ctx,
            kit,
            out: String::new(),
            cap,
            cut: false,
            seen: Vec::new(),
            interrupted: None,
        }
    }

    /// Whether nothing more can be written.
    pub(crate) fn full(&self) -> bool {
        self.cut || self.interrupted.is_some()
    }

    /// Writes raw text.
    pub(crate) fn push(&mut self, s: &str) {
        if self.full() {
            return;
        }
        let room = self.cap - self.out.len();
        if s.len() <= room {
            self.out.push_str(s);
        } else {
            let (piece, _) = text::cut(s.to_owned(), room);
            self.out.push_str(&piece);
            self.cut = true;
        }
    }

    /// Writes a top-level value: a string as it is, anything else formatted.
    pub(crate) fn top(&mut self, value: Value<'js>) {
        if self.full() {
            return;
        }
        if let Some(s) = value.as_string() {
            let room = self.cap - self.out.len();
            match text::read_bounded(self.ctx, self.kit, s, room) {
                Ok((piece, cut)) => {
                    self.push(&piece);
                    self.cut |= cut;
                }
                Err(exception) => self.interrupted = Some(exception),
            }
        } else {
            self.value(value, 0);
        }
    }

    /// Ends formatting.
    pub(crate) fn finish(self) -> Formatted<'js> {
        Formatted {
            text: self.out,
            cut: self.cut,
            interrupted: self.interrupted,
        }
    }

    /// A pending exception was met while reading: keep an interrupt, show
    /// anything else as `<threw>`.
    fn threw(&mut self) {
        let exception = self.ctx.catch();
        if exception.is_uncatchable_error() {
            self.interrupted = Some(exception);
        } else {
            self.push("<threw>");
        }
    }

    /// Writes a nested value.
    pub(crate) fn value(&mut self, value: Value<'js>, depth: usize) {
        if self.full() {
            return;
        }
        if value.is_proxy() {
            return self.push("[Proxy]");
        }
        match value.type_of() {
            Type::Undefined | Type::Uninitialized => self.push("undefined"),
            Type::Null => self.push("null"),
            Type::Bool => self.push(if value.as_bool() == Some(true) {
                "true"
            } else {
                "false"
            }),
            Type::Int => self.push(&value.as_int().unwrap_or_default().to_string()),
            Type::Float => self.push(&js_number(value.as_float().unwrap_or(f64::NAN))),
            Type::String => {
                let Some(s) = value.as_string() else { return };
                let room = self.cap - self.out.len();
                match text::read_bounded(self.ctx, self.kit, s, room) {
                    Ok((piece, cut)) => {
                        self.push(&serde_json::Value::String(piece).to_string());
                        self.cut |= cut;
                    }
                    Err(exception) => self.interrupted = Some(exception),
                }
            }
            Type::Symbol => {
                let description = match value.as_symbol().map(|s| s.description()) {
                    Some(Ok(d)) => d.as_string().and_then(|s| s.to_string().ok()),
                    Some(Err(_)) => return self.threw(),
                    None => None,
                };
                self.push(&format!("Symbol({})", description.unwrap_or_default()));
            }
            Type::BigInt => match value.get::<Coerced<String>>() {
                Ok(digits) => self.push(&format!("{}n", digits.0)),
                Err(_) => self.threw(),
            },
            Type::Function | Type::Constructor => self.push("[Function]"),
            Type::Promise => self.push("[Promise]"),
            Type::Module | Type::Unknown => self.push("[internal]"),
            Type::Array => {
                if let Some(array) = value.into_object() {
                    self.array(array, depth);
                }
            }
            Type::Exception => {
                if let Some(error) = value.into_object() {
                    self.error(&error);
                }
            }
            Type::Object | Type::Proxy => {
                if let Some(object) = value.into_object() {
                    self.object(object, depth);
                }
            }
        }
    }

    fn error(&mut self, error: &Object<'js>) {
        let name = self.read_string(error, "name", 100);
        let message = self.read_string(error, "message", self.cap);
        let name = name.unwrap_or_else(|| "Error".to_owned());
        match message {
            Some(message) if !message.is_empty() => self.push(&format!("{name}: {message}")),
            _ => self.push(&name),
        }
    }

    /// Reads property `key` of `object` when it is a string, cut to `max`.
    fn read_string(&mut self, object: &Object<'js>, key: &str, max: usize) -> Option<String> {
        match object.get::<_, Value>(key) {
            Ok(v) => match v
                .as_string()
                .map(|s| text::read_bounded(self.ctx, self.kit, s, max))
            {
                Some(Ok((text, _))) => Some(text),
                Some(Err(exception)) => {
                    self.interrupted = Some(exception);
                    None
                }
                None => None,
            },
            Err(_) => {
                let exception = self.ctx.catch();
                if exception.is_uncatchable_error() {
                    self.interrupted = Some(exception);
                }
                None
            }
        }
    }

    fn enter(&mut self, object: &Object<'js>, depth: usize, shallow: &str) -> bool {
        if self.seen.iter().any(|o| o == object) {
            self.push("[Circular]");
            return false;
        }
        if depth >= DEPTH {
            self.push(shallow);
            return false;
        }
        self.seen.push(object.clone());
        true
    }

    fn array(&mut self, array: Object<'js>, depth: usize) {
        if !self.enter(&array, depth, "[Array]") {
            return;
        }
        let length = match array.get::<_, Value>("length") {
            Ok(v) => v.as_number().unwrap_or(0.0).clamp(0.0, u32::MAX as f64) as u32,
            Err(_) => {
                self.threw();
                0
            }
        };
        self.push("[");
        for index in 0..length {
            if self.full() {
                break;
            }
            if index as usize == ITEMS {
                self.push(&format!(",…{} more", length - index));
                break;
            }
            if index > 0 {
                self.push(",");
            }
            match array.get::<_, Value>(index) {
                Ok(item) => self.value(item, depth + 1),
                Err(_) => self.threw(),
            }
        }
        self.push("]");
        self.seen.pop();
    }

    fn object(&mut self, object: Object<'js>, depth: usize) {
        // Builtins are named by their prototype, a few steps up the chain
        // (a typed array's is two steps up, a class extending Map's too).
        let object_proto = self.kit.value(self.ctx, Intrinsic::ObjectProto);
        let mut proto = object.get_prototype();
        for _ in 0..3 {
            let Some(p) = proto else { break };
            let p = p.into_value();
            if p == object_proto {
                break;
            }
            if p == self.kit.value(self.ctx, Intrinsic::DateProto) {
                return self.date(&object);
            }
            for (which, shown) in [
                (Intrinsic::MapProto, "[Map]"),
                (Intrinsic::SetProto, "[Set]"),
                (Intrinsic::WeakMapProto, "[WeakMap]"),
                (Intrinsic::WeakSetProto, "[WeakSet]"),
                (Intrinsic::RegExpProto, "[RegExp]"),
                (Intrinsic::ArrayBufferProto, "[ArrayBuffer]"),
                (Intrinsic::TypedArrayProto, "[TypedArray]"),
            ] {
                if p == self.kit.value(self.ctx, which) {
                    return self.push(shown);
                }
            }
            proto = p.into_object().and_then(|o| {
                if o.is_proxy() {
                    None
                } else {
                    o.get_prototype()
                }
            });
        }
        if !self.enter(&object, depth, "[Object]") {
            return;
        }
        self.push("{");
        for (i, key) in object.keys::<Atom>().enumerate() {
            if self.full() {
                break;
            }
            if i == ITEMS {
                self.push(",…");
                break;
            }
            if i > 0 {
                self.push(",");
            }
            let Ok(key) = key else {
                self.threw();
                break;
            };
            let name =
                crate::sandbox::convert::key_text(&key).unwrap_or_else(|| "<key>".to_owned());
            self.push(&serde_json::Value::String(name).to_string());
            self.push(":");
            match object.get::<_, Value>(key) {
                Ok(item) => self.value(item, depth + 1),
                Err(_) => self.threw(),
            }
        }
        self.push("}");
        self.seen.pop();
    }

    fn date(&mut self, date: &Object<'js>) {
        let Some(to_iso) = self.kit.function(self.ctx, Intrinsic::DateToIso) else {
            return self.push("[Date]");
        };
        match to_iso.call::<_, String>((This(date.clone()),)) {
            Ok(iso) => self.push(&format!("Date({iso})")),
            Err(_) => {
                let exception = self.ctx.catch();
                if exception.is_uncatchable_error() {
                    self.interrupted = Some(exception);
                } else {
                    self.push("Date(Invalid Date)");
                }
            }
        }
    }
}

/// `f` spelled as JavaScript's `String(f)` spells it, except that negative
/// zero is `-0` (as `console.log` shows it).
pub(crate) fn js_number(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, as
    // JavaScript's Number::toString picks them: d.ddd e x.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let n = exponent + 1;
    let mut out = String::new();
    if f < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        let e = n - 1;
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&e.abs().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::js_number;

    #[test]
    fn numbers_are_spelled_as_javascript_spells_them() {
        let cases = [
            (1.0, "1"),
            (-1.5, "-1.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789.125, "123456789.125"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (-0.0, "-0"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (2f64.powi(53), "9007199254740992"),
        ];
        for (f, js) in cases {
            assert_eq!(js_number(f), js, "{f}");
        }
    }
}
