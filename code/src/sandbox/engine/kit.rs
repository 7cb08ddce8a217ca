//! Intrinsics captured before the program runs, so that no later change to
//! a global or a prototype can reach the engine's own code.

use rquickjs::{Ctx, Function, Object, Persistent, Value};

/// The values the engine keeps, each read once from a pristine context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intrinsic {
    ObjectProto,
    ErrorProto,
    InternalErrorProto,
    RangeErrorProto,
    SyntaxErrorProto,
    DateProto,
    RegExpProto,
    MapProto,
    SetProto,
    WeakMapProto,
    WeakSetProto,
    PromiseProto,
    ArrayBufferProto,
    SharedArrayBufferProto,
    TypedArrayProto,
    DataViewProto,
    NumberProto,
    StringProto,
    BooleanProto,
    SymbolProto,
    BigIntProto,
    /// `String.prototype.slice`: bounded reads of program strings.
    StringSlice,
    /// `String.prototype.toWellFormed`: lone surrogates to U+FFFD for display.
    StringToWellFormed,
    /// `Date.prototype.toISOString`, for logs.
    DateToIso,
    /// The getter of `Error.prototype.stack`.
    ErrorStack,
    /// `ToolCallError.prototype`.
    ToolErrorProto,
    /// The `Error` constructor: a call's `ToolCallError` starts as an `Error`
    /// made in the program's frame.
    ErrorCtor,
    /// The prelude's `fill(error, toolName, code, message)`.
    FillToolError,
}

const COUNT: usize = Intrinsic::FillToolError as usize + 1;

/// Where an intrinsic is read from.
enum Source {
    /// `globalThis[name].prototype`.
    Proto(&'static str),
    /// `globalThis[name].prototype[method]`.
    Method(&'static str, &'static str),
    /// `Object.getPrototypeOf(Uint8Array.prototype)`.
    TypedArrayProto,
    /// `globalThis[name]`.
    Global(&'static str),
    /// A property of the object the prelude returned.
    Prelude(&'static str),
}

/// Each intrinsic's source, in the order of [`Intrinsic`].
const SOURCES: [(Intrinsic, Source); COUNT] = [
    (Intrinsic::ObjectProto, Source::Proto("Object")),
    (Intrinsic::ErrorProto, Source::Proto("Error")),
    (
        Intrinsic::InternalErrorProto,
        Source::Proto("InternalError"),
    ),
    (Intrinsic::RangeErrorProto, Source::Proto("RangeError")),
    (Intrinsic::SyntaxErrorProto, Source::Proto("SyntaxError")),
    (Intrinsic::DateProto, Source::Proto("Date")),
    (Intrinsic::RegExpProto, Source::Proto("RegExp")),
    (Intrinsic::MapProto, Source::Proto("Map")),
    (Intrinsic::SetProto, Source::Proto("Set")),
    (Intrinsic::WeakMapProto, Source::Proto("WeakMap")),
    (Intrinsic::WeakSetProto, Source::Proto("WeakSet")),
    (Intrinsic::PromiseProto, Source::Proto("Promise")),
    (Intrinsic::ArrayBufferProto, Source::Proto("ArrayBuffer")),
    (
        Intrinsic::SharedArrayBufferProto,
        Source::Proto("SharedArrayBuffer"),
    ),
    (Intrinsic::TypedArrayProto, Source::TypedArrayProto),
    (Intrinsic::DataViewProto, Source::Proto("DataView")),
    (Intrinsic::NumberProto, Source::Proto("Number")),
    (Intrinsic::StringProto, Source::Proto("String")),
    (Intrinsic::BooleanProto, Source::Proto("Boolean")),
    (Intrinsic::SymbolProto, Source::Proto("Symbol")),
    (Intrinsic::BigIntProto, Source::Proto("BigInt")),
    (Intrinsic::StringSlice, Source::Method("String", "slice")),
    (
        Intrinsic::StringToWellFormed,
        Source::Method("String", "toWellFormed"),
    ),
    (Intrinsic::DateToIso, Source::Method("Date", "toISOString")),
    (Intrinsic::ErrorStack, Source::Prelude("stack")),
    (Intrinsic::ToolErrorProto, Source::Prelude("toolErrorProto")),
    (Intrinsic::ErrorCtor, Source::Global("Error")),
    (Intrinsic::FillToolError, Source::Prelude("fill")),
];

/// The captured values, kept alive across `Context::with` calls.
///
/// Holds JavaScript values outside the engine's garbage collector: it must
/// be dropped (or [`clear`](Kit::clear)ed) before the context and runtime.
#[derive(Debug, Default)]
pub(crate) struct Kit {
    values: Vec<Persistent<Value<'static>>>,
}

impl Kit {
    /// Reads every intrinsic from `ctx`'s globals, and the prelude's helpers
    /// from `prelude`. Must run before any program code.
    pub(crate) fn capture<'js>(ctx: &Ctx<'js>, prelude: &Object<'js>) -> rquickjs::Result<Kit> {
        let globals = ctx.globals();
        let proto = |name: &str| -> rquickjs::Result<Object<'js>> {
            let ctor: Object = globals.get(name)?;
            ctor.get("prototype")
        };
        let mut values = Vec::with_capacity(COUNT);
        for (index, (which, source)) in SOURCES.iter().enumerate() {
            debug_assert_eq!(*which as usize, index, "SOURCES is out of order");
            let value: Value = match source {
                Source::Proto(name) => proto(name)?.into_value(),
                Source::Method(name, method) => proto(name)?.get(*method)?,
                Source::TypedArrayProto => match proto("Uint8Array")?.get_prototype() {
                    Some(p) => p.into_value(),
                    None => Value::new_null(ctx.clone()),
                },
                Source::Global(name) => globals.get(*name)?,
                Source::Prelude(name) => prelude.get(*name)?,
            };
            values.push(Persistent::save(ctx, value));
        }
        Ok(Kit { values })
    }

    /// The captured value.
    pub(crate) fn value<'js>(&self, ctx: &Ctx<'js>, which: Intrinsic) -> Value<'js> {
        self.values
            .get(which as usize)
            .and_then(|v| v.clone().restore(ctx).ok())
            .unwrap_or_else(|| Value::new_undefined(ctx.clone()))
    }

    /// The captured value as a function, if it is one.
    pub(crate) fn function<'js>(&self, ctx: &Ctx<'js>, which: Intrinsic) -> Option<Function<'js>> {
        self.value(ctx, which).into_function()
    }

    /// Drops every captured value.
    pub(crate) fn clear(&mut self) {
        self.values.clear();
    }
}
