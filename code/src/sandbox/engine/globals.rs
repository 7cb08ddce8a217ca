//! The globals a program finds besides the language's own: `tools`,
//! `ToolCallError` and `console`, made from Rust in a fresh context before
//! any program code runs. The one piece of JavaScript is the `get` trap of
//! `tools` (a line, so that a call's path stays in the interpreter);
//! compiling the 86-line prelude this replaces cost more than the whole
//! context.
//!
//! What they need is read from the pristine context here, once, and kept in
//! the [`Kit`](super::kit::Kit); nothing the program later does to a global
//! or a prototype reaches them. `tools` is a proxy over an empty object with
//! no prototype: every string key but `then` is a tool (a misspelled name
//! rejects with `UNKNOWN_TOOL` instead of throwing a `TypeError`, and
//! `tools` is no thenable), and every change to it throws. `tools` and
//! `ToolCallError` are neither writable nor configurable; `ToolCallError`
//! and its prototype are frozen.

use std::rc::Rc;

use rquickjs::context::EvalOptions;
use rquickjs::object::Property;
use rquickjs::proxy::ProxyHandler;
use rquickjs::{Ctx, Function, Object, Proxy};

use super::Slot;
use super::kit::{Intrinsic, Kit};
use super::natives;

/// Captures the intrinsics and defines `tools`, `ToolCallError` and
/// `console` on `ctx`'s global object; their natives find the run they
/// serve in `slot`. Returns what was captured.
pub(crate) fn install<'js>(ctx: &Ctx<'js>, slot: &Rc<Slot>) -> rquickjs::Result<Kit> {
    let mut kit = Kit::capture(ctx)?;
    let globals = ctx.globals();
    let object: Object = globals.get("Object")?;
    let freeze: Function = object.get("freeze")?;
    let error: Object = globals.get("Error")?;
    let error_proto: Object = error.get("prototype")?;

    // ToolCallError, a subclass of Error whose prototype is named.
    let proto = Object::new_proto(ctx.clone(), Some(&error_proto))?;
    proto.prop(
        "name",
        Property::from("ToolCallError").writable().configurable(),
    )?;
    let tool_error = natives::tool_error_constructor(ctx, slot.clone(), proto.clone())?;
    tool_error.set_prototype(Some(&error))?;
    freeze.call::<_, ()>((proto.clone(),))?;
    freeze.call::<_, ()>((tool_error.clone(),))?;
    kit.keep(ctx, Intrinsic::ToolErrorProto, proto.into_value());

    // tools, a proxy whose every string key but `then` is a tool.
    let call = natives::tool_function(ctx, slot.clone())?;
    kit.keep(ctx, Intrinsic::ToolCall, call.into_value());
    let callers = Object::new_proto(ctx.clone(), None)?;
    kit.keep(ctx, Intrinsic::Callers, callers.clone().into_value());
    let handler = Object::new_proto(ctx.clone(), None)?;
    let mut options = EvalOptions::default();
    options.filename = Some("sandbox".to_owned());
    options.strict = true;
    let get_trap: Function = ctx.eval_with_options(natives::GET_TRAP, options)?;
    let get: Function =
        get_trap.call((callers.clone(), natives::make_caller(ctx, slot.clone())?))?;
    handler.set("get", get)?;
    handler.set("has", natives::has_trap(ctx)?)?;
    let read_only = natives::read_only_trap(ctx)?;
    for trap in [
        "set",
        "defineProperty",
        "deleteProperty",
        "setPrototypeOf",
        "preventExtensions",
    ] {
        handler.set(trap, read_only.clone())?;
    }
    let target = Object::new_proto(ctx.clone(), None)?;
    let tools = Proxy::new(ctx.clone(), target, ProxyHandler::from_object(handler)?)?;

    globals.prop("tools", Property::from(tools))?;
    globals.prop("ToolCallError", Property::from(tool_error))?;
    let console = natives::console_object(ctx, slot)?;
    globals.prop("console", Property::from(console).writable().configurable())?;
    Ok(kit)
}
