//! The engine's native functions: the one behind `tools.<name>(args)`, the
//! traps of `tools`, `ToolCallError`, and `console.*`.

use std::rc::Rc;

use rquickjs::atom::PredefinedAtom;
use rquickjs::function::{Opt, Rest, This};
use rquickjs::object::Property;
use rquickjs::{Atom, Ctx, Exception, Function, Object, Persistent, Value};

use super::calls::Submitted;
use super::format::Formatter;
use super::kit::{Intrinsic, Kit};
use super::meter::Stop;
use super::text;
use super::{Pending, Session, Slot, deliver};
use crate::sandbox::codes as code;
use crate::sandbox::convert::to_json::{ToJsonError, to_json};

/// The longest tool name accepted, in bytes.
const NAME_CAP: usize = 256;

/// How many tool names the engine keeps read (a name is read when `tools`
/// first hands out its function; past this many, a name is read on every
/// call). Bounds the memory outside the heap cap: at most this many × 256
/// bytes.
const NAMES_KEPT: usize = 1024;

/// What `tools.x = …` and every other change to `tools` throws.
const READ_ONLY: &str = "tools is read-only: call tools.<name>(args), or tools[\"name\"](args)";

/// A tool name as read from the program: the text (cut to [`NAME_CAP`]
/// bytes) and whether it was cut. Shared, not copied, by the calls that
/// use it: the one copy a call makes is the `String` the host is given.
#[derive(Debug, Clone)]
pub(crate) struct ToolName {
    text: Rc<str>,
    cut: bool,
}

/// Reads a tool name (bounded: a 100 MB name is not copied whole).
fn read_name<'js>(
    ctx: &Ctx<'js>,
    session: &Session,
    name: &Value<'js>,
) -> rquickjs::Result<ToolName> {
    let kit = session.kit.borrow();
    match name
        .as_string()
        .map(|s| text::read_bounded(ctx, &kit, s, NAME_CAP))
    {
        Some(Ok((text, cut))) => Ok(ToolName {
            text: text.into(),
            cut,
        }),
        Some(Err(exception)) => Err(ctx.throw(exception)),
        None => Ok(ToolName {
            text: "".into(),
            cut: false,
        }),
    }
}

/// Whether `key` names a tool: any string but `then` (so that `tools` is
/// not a thenable, which `await tools` and `return tools` would call).
fn is_tool_key<'js>(ctx: &Ctx<'js>, key: &Value<'js>) -> rquickjs::Result<Option<Atom<'js>>> {
    if !key.is_string() {
        return Ok(None);
    }
    let atom = Atom::from_value(ctx.clone(), key)?;
    let then = Atom::from_predefined(ctx.clone(), PredefinedAtom::Then);
    Ok((atom != then).then_some(atom))
}

/// The `get` trap of `tools`, in JavaScript so that a call's path stays in
/// the interpreter: the function of the tool named `key` from `callers`,
/// made by `make(key)` the first time. It reads no global and no prototype
/// (`callers` has none, and the program cannot reach it).
pub(crate) const GET_TRAP: &str = "(function (callers, make) {\n\
    \"use strict\";\n\
    return (target, key) =>\n\
        typeof key === \"string\" && key !== \"then\" ? (callers[key] ?? make(key)) : undefined;\n\
})";

/// `make(key)` of the `get` trap: the function of the tool named `key`,
/// kept in the callers: the native call bound to the name, and to the
/// name's id once it is read and kept.
pub(crate) fn make_caller<'js>(ctx: &Ctx<'js>, slot: Rc<Slot>) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, key: Value<'js>| -> rquickjs::Result<Value<'js>> {
            let atom = Atom::from_value(ctx.clone(), &key)?;
            let session = slot.session()?;
            let (callers, call, bind) = {
                let kit = session.kit.borrow();
                (
                    kit.value(&ctx, Intrinsic::Callers).into_object(),
                    kit.value(&ctx, Intrinsic::ToolCall),
                    kit.function(&ctx, Intrinsic::FunctionBind),
                )
            };
            let (Some(callers), Some(bind)) = (callers, bind) else {
                return Err(rquickjs::Error::Unknown);
            };
            let id = if session.names.borrow().len() < NAMES_KEPT {
                let read = read_name(&ctx, &session, &key)?;
                let mut names = session.names.borrow_mut();
                names.push(read);
                (names.len() - 1) as i32
            } else {
                -1
            };
            let caller: Value =
                bind.call((This(call), Value::new_undefined(ctx.clone()), id, key))?;
            callers.set(atom, caller.clone())?;
            Ok(caller)
        },
    )
}

/// The `has` trap of `tools`: every tool key is in it.
pub(crate) fn has_trap<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        |ctx: Ctx<'js>, _target: Value<'js>, key: Value<'js>| -> rquickjs::Result<bool> {
            Ok(is_tool_key(&ctx, &key)?.is_some())
        },
    )
}

/// The trap of every change to `tools`: it throws.
pub(crate) fn read_only_trap<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Function<'js>> {
    Function::new(ctx.clone(), |ctx: Ctx<'js>| -> rquickjs::Result<()> {
        Err(Exception::throw_type(&ctx, READ_ONLY))
    })
}

/// The function behind every `tools.<name>`, bound to the tool's `id` (the
/// index of its name read and kept, or -1) and `name` (read again only if
/// the id is not one): `call(id, name, ...args)`.
pub(crate) fn tool_function<'js>(
    ctx: &Ctx<'js>,
    slot: Rc<Slot>,
) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, id: Value<'js>, name: Value<'js>, args: Rest<Value<'js>>| {
            let session = slot.session()?;
            let kept = id
                .as_int()
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| session.names.borrow().get(i).cloned());
            let name = match kept {
                Some(name) => name,
                None => read_name(&ctx, &session, &name)?,
            };
            let argc = args.0.len();
            let args = args.0.into_iter().next();
            call_tool(&ctx, &session, name, args, argc)
        },
    )?
    .with_name("call")
}

/// The `ToolCallError` constructor: `new ToolCallError(toolName, code,
/// message)` is an `Error` made in the caller's frame (so its stack shows
/// the call site) with the prototype of the class constructed (`new.target`).
pub(crate) fn tool_error_constructor<'js>(
    ctx: &Ctx<'js>,
    slot: Rc<Slot>,
    prototype: Object<'js>,
) -> rquickjs::Result<Function<'js>> {
    let constructor = rquickjs::Constructor::new_prototype(
        ctx,
        prototype,
        move |ctx: Ctx<'js>,
              tool_name: Opt<Value<'js>>,
              code: Opt<Value<'js>>,
              message: Opt<Value<'js>>|
              -> rquickjs::Result<Object<'js>> {
            let session = slot.session()?;
            let error = {
                let kit = session.kit.borrow();
                kit.value(&ctx, Intrinsic::ErrorCtor)
                    .into_constructor()
                    .ok_or(rquickjs::Error::Unknown)?
            };
            let error: Object = match message.0 {
                Some(message) => error.construct((message,))?,
                None => error.construct(())?,
            };
            let undefined = || Value::new_undefined(ctx.clone());
            error.prop(
                "toolName",
                data(tool_name.0.unwrap_or_else(undefined), true),
            )?;
            error.prop("code", data(code.0.unwrap_or_else(undefined), true))?;
            Ok(error)
        },
    )?;
    let function: Function = constructor.into_inner();
    function.set_name("ToolCallError")?;
    function.set_length(3)?;
    Ok(function)
}

/// A writable, configurable data property, enumerable or not.
fn data(value: Value<'_>, enumerable: bool) -> Property<Value<'_>> {
    let property = Property::from(value).writable().configurable();
    if enumerable {
        property.enumerable()
    } else {
        property
    }
}

/// Fills in a failed call's `ToolCallError`: `toolName` and `code` (own,
/// enumerable) and `message` (own, not enumerable), as the constructor
/// and `Error` make them.
pub(crate) fn fill<'js>(
    ctx: &Ctx<'js>,
    error: &Object<'js>,
    name: &str,
    code: &str,
    message: &str,
) -> rquickjs::Result<()> {
    let text = |s: &str| rquickjs::String::from_str(ctx.clone(), s).map(|s| s.into_value());
    error.prop("toolName", data(text(name)?, true))?;
    error.prop("code", data(text(code)?, true))?;
    error.prop("message", data(text(message)?, false))?;
    Ok(())
}

/// Makes the error a call rejects with: an `Error` made here, in the
/// program's frame (so its stack shows the program's call site), with
/// `ToolCallError.prototype`; [`fill`] completes it.
pub(crate) fn call_site<'js>(ctx: &Ctx<'js>, kit: &Kit) -> rquickjs::Result<Object<'js>> {
    let error_ctor = kit
        .value(ctx, Intrinsic::ErrorCtor)
        .into_constructor()
        .ok_or(rquickjs::Error::Unknown)?;
    let site: Object = error_ctor.construct(())?;
    let proto = kit.value(ctx, Intrinsic::ToolErrorProto).into_object();
    site.set_prototype(proto.as_ref())?;
    Ok(site)
}

fn call_tool<'js>(
    ctx: &Ctx<'js>,
    session: &Session,
    name: ToolName,
    args: Option<Value<'js>>,
    argc: usize,
) -> rquickjs::Result<Value<'js>> {
    let kit = session.kit.borrow();
    let (promise, resolve, reject) = ctx.promise()?;
    let ToolName { text: name, cut } = name;
    let fail = |code: &str, message: String| -> rquickjs::Result<Value<'js>> {
        let site = call_site(ctx, &kit)?;
        fill(ctx, &site, &name, code, &message)?;
        reject.call::<_, ()>((site,))?;
        Ok(promise.clone().into_value())
    };

    if cut {
        return fail(
            code::INVALID_ARGUMENTS,
            format!("a tool name longer than {NAME_CAP} bytes (tools.{name}…) is not a tool"),
        );
    }
    if argc > 1 {
        return fail(
            code::INVALID_ARGUMENTS,
            format!(
                "tools.{name} takes one argument, an object of named arguments, but got {argc}; the tool was not called"
            ),
        );
    }
    let args = match args {
        None => serde_json::Value::Object(Default::default()),
        Some(v) if v.is_undefined() => serde_json::Value::Object(Default::default()),
        Some(v) => match to_json(ctx, &kit, v, "args", session.limits.args_bytes) {
            Ok(json) => json,
            Err(ToJsonError::Refused(why)) => {
                return fail(
                    code::INVALID_ARGUMENTS,
                    format!("tools.{name}: {why}; the tool was not called"),
                );
            }
            Err(ToJsonError::TooLarge) => {
                return fail(
                    code::INVALID_ARGUMENTS,
                    format!(
                        "tools.{name}: args exceed {} bytes of JSON (Limits::args_bytes); the tool was not called",
                        session.limits.args_bytes
                    ),
                );
            }
            Err(ToJsonError::Interrupted(exception)) => return Err(ctx.throw(exception)),
        },
    };
    if session.calls.get() >= session.limits.max_calls {
        session.meter.stop(Stop::Calls);
        return fail(
            code::CALL_LIMIT,
            format!(
                "tools.{name}: the program made more than {} nested calls (Limits::max_calls)",
                session.limits.max_calls
            ),
        );
    }
    session.calls.set(session.calls.get() + 1);
    let id = session.next_id.get();
    session.next_id.set(id + 1);
    // The call starts here if the schedule admits it: `Host::call` and the
    // first poll run now, on this thread (host time, not compute).
    let submitted = session.host_work(|| {
        let mut nested = session.nested.borrow_mut();
        let concurrent = nested.concurrent(&name);
        nested.submit(id, String::from(&*name), args, concurrent)
    });
    match submitted {
        // Done on the first poll: settled now, nothing kept, and no error
        // object made unless it failed (we are still in the program's frame).
        Submitted::Answered(answer) => {
            let result = answer.into_result(&name);
            if result.is_err() && session.cancelled() {
                // Maybe an answer to the cancellation: the run is over.
                return Ok(promise.into_value());
            }
            deliver(ctx, session, &name, &resolve, &reject, None, result);
        }
        Submitted::Running | Submitted::Queued => {
            let site = call_site(ctx, &kit)?;
            session.pending.borrow_mut().insert(
                id,
                Pending {
                    resolve: Persistent::save(ctx, resolve),
                    reject: Persistent::save(ctx, reject),
                    site: Persistent::save(ctx, site),
                    name,
                },
            );
        }
    }
    Ok(promise.into_value())
}

/// The `console` object: `log`, `info`, `debug`, `warn` and `error`.
pub(crate) fn console_object<'js>(
    ctx: &Ctx<'js>,
    slot: &Rc<Slot>,
) -> rquickjs::Result<Object<'js>> {
    let console = Object::new(ctx.clone())?;
    for (method, prefix) in [
        ("log", ""),
        ("info", ""),
        ("debug", "debug: "),
        ("warn", "warn: "),
        ("error", "error: "),
    ] {
        let slot = slot.clone();
        let function = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            let session = slot.session()?;
            log(&ctx, &session, prefix, args.0)
        })?
        .with_name(method)?;
        console.set(method, function)?;
    }
    Ok(console)
}

fn log<'js>(
    ctx: &Ctx<'js>,
    session: &Session,
    prefix: &str,
    args: Vec<Value<'js>>,
) -> rquickjs::Result<()> {
    if session.meter.stopped().is_some() {
        // The run is ending (the ledger may be full): log nothing more.
        return Ok(());
    }
    let kit = session.kit.borrow();
    let room = session
        .limits
        .output_bytes
        .saturating_sub(session.output.get());
    let mut f = Formatter::new(ctx, &kit, room);
    f.push(prefix);
    for (i, arg) in args.into_iter().enumerate() {
        if i > 0 {
            f.push(" ");
        }
        f.top(arg);
    }
    let formatted = f.finish();
    if let Some(exception) = formatted.interrupted {
        return Err(ctx.throw(exception));
    }
    session
        .output
        .set(session.output.get() + formatted.text.len());
    session.logs.borrow_mut().push(formatted.text);
    if formatted.cut {
        session.meter.stop(Stop::Output);
    }
    Ok(())
}
