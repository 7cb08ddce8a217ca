//! The engine's native functions: the one behind `tools.<name>(args)`, and
//! `console.*`.

use std::rc::Rc;

use rquickjs::function::{Opt, Rest};
use rquickjs::{Ctx, Function, Object, Persistent, Value};

use super::calls::Submitted;
use super::format::Formatter;
use super::kit::{Intrinsic, Kit};
use super::meter::Stop;
use super::text;
use super::{Pending, Session, deliver};
use crate::sandbox::codes as code;
use crate::sandbox::convert::to_json::{ToJsonError, to_json};

/// The longest tool name accepted, in bytes.
const NAME_CAP: usize = 256;

/// How many tool names the engine keeps read (names are registered on a
/// tool's first call; past this many, a name is read on every call).
/// Bounds the memory outside the heap cap: at most this many × 256 bytes.
const NAMES_KEPT: usize = 1024;

/// A tool name as read from the program: the text (cut to [`NAME_CAP`]
/// bytes) and whether it was cut. Shared, not copied, by the calls that
/// use it: the one copy a call makes is the `String` the host is given.
#[derive(Debug, Clone)]
pub(crate) struct ToolName {
    text: Rc<str>,
    cut: bool,
}

/// The function behind `nativeName(name)`: reads a tool's name once and
/// answers with its id, or -2 when no more names are kept.
pub(crate) fn name_function<'js>(
    ctx: &Ctx<'js>,
    session: Rc<Session>,
) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, name: Value<'js>| -> rquickjs::Result<i32> {
            if session.names.borrow().len() >= NAMES_KEPT {
                return Ok(-2);
            }
            let read = read_name(&ctx, &session, &name)?;
            let mut names = session.names.borrow_mut();
            names.push(read);
            Ok((names.len() - 1) as i32)
        },
    )
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

/// The function behind every `tools.<name>`: `call(id, name, args, argc)`,
/// where `id` is what `nativeName(name)` answered (the name is read again
/// only if the id is not one).
pub(crate) fn tool_function<'js>(
    ctx: &Ctx<'js>,
    session: Rc<Session>,
) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>,
              id: Value<'js>,
              name: Value<'js>,
              args: Opt<Value<'js>>,
              argc: Opt<i32>| {
            let kept = id
                .as_int()
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| session.names.borrow().get(i).cloned());
            let name = match kept {
                Some(name) => name,
                None => read_name(&ctx, &session, &name)?,
            };
            call_tool(&ctx, &session, name, args.0, argc.0.unwrap_or(0))
        },
    )?
    .with_name("call")
}

/// Makes the error a call rejects with: an `Error` made here, in the
/// program's frame (so its stack shows the program's call site), with
/// `ToolCallError.prototype`; `fill` completes it.
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
    argc: i32,
) -> rquickjs::Result<Value<'js>> {
    let kit = session.kit.borrow();
    let (promise, resolve, reject) = ctx.promise()?;
    let ToolName { text: name, cut } = name;
    let fail = |code: &str, message: String| -> rquickjs::Result<Value<'js>> {
        let site = call_site(ctx, &kit)?;
        let fill = kit
            .function(ctx, Intrinsic::FillToolError)
            .ok_or(rquickjs::Error::Unknown)?;
        let error: Value = fill.call((site, &*name, code, message))?;
        reject.call::<_, ()>((error,))?;
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
    session: &Rc<Session>,
) -> rquickjs::Result<Object<'js>> {
    let console = Object::new(ctx.clone())?;
    for (method, prefix) in [
        ("log", ""),
        ("info", ""),
        ("debug", "debug: "),
        ("warn", "warn: "),
        ("error", "error: "),
    ] {
        let session = session.clone();
        let function = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
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
