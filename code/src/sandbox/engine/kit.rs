//! Intrinsics captured before the program runs, so that no later change to
//! a global or a prototype can reach the engine's own code, and the values
//! the engine made for the program's globals.

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
    /// The `Error` constructor: a call's `ToolCallError` starts as an `Error`
    /// made in the program's frame.
    ErrorCtor,
    /// `Function.prototype.bind`: each tool's function is the native call
    /// bound to the tool's name.
    FunctionBind,
    /// `ToolCallError.prototype`.
    ToolErrorProto,
    /// The native function behind every `tools.<name>(args)`.
    ToolCall,
    /// The functions `tools` handed out so far, by tool name (an object
    /// with no prototype, out of the program's reach).
    Callers,
}

const COUNT: usize = Intrinsic::Callers as usize + 1;

/// Where an intrinsic is read from.
enum Source {
    /// `globalThis[name].prototype`.
    Proto(&'static str),
    /// `globalThis[name].prototype[method]`.
    Method(&'static str, &'static str),
    /// `Object.getPrototypeOf(Uint8Array.prototype)`.
    TypedArrayProto,
    /// The getter of the accessor `globalThis[name].prototype[property]`.
    Getter(&'static str, &'static str),
    /// `globalThis[name]`.
    Global(&'static str),
    /// A value the engine made before the program ran (see [`Kit::capture`]).
    Made,
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
    (Intrinsic::ErrorStack, Source::Getter("Error", "stack")),
    (Intrinsic::ErrorCtor, Source::Global("Error")),
    (Intrinsic::FunctionBind, Source::Method("Function", "bind")),
    (Intrinsic::ToolErrorProto, Source::Made),
    (Intrinsic::ToolCall, Source::Made),
    (Intrinsic::Callers, Source::Made),
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
    /// Reads every intrinsic from `ctx`'s globals. Must run before any
    /// program code. The values the engine makes itself (the [`Source::Made`]
    /// ones) are undefined until [`keep`](Kit::keep) puts them in.
    pub(crate) fn capture<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Kit> {
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
                Source::Getter(name, property) => {
                    let object: Object = globals.get("Object")?;
                    let describe: Function = object.get("getOwnPropertyDescriptor")?;
                    let descriptor: Object = describe.call((proto(name)?, *property))?;
                    descriptor.get("get")?
                }
                Source::Global(name) => globals.get(*name)?,
                Source::Made => Value::new_undefined(ctx.clone()),
            };
            values.push(Persistent::save(ctx, value));
        }
        Ok(Kit { values })
    }

    /// Keeps `value`, one of the values the engine makes, as `which`.
    pub(crate) fn keep<'js>(&mut self, ctx: &Ctx<'js>, which: Intrinsic, value: Value<'js>) {
        debug_assert!(matches!(SOURCES[which as usize].1, Source::Made));
        if let Some(slot) = self.values.get_mut(which as usize) {
            *slot = Persistent::save(ctx, value);
        }
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
