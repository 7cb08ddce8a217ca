//! The engine's native functions: the one behind `tools.<name>(args)`, and
//! `console.*`.

use std::rc::Rc;

use rquickjs::function::{Opt, Rest};
use rquickjs::{Ctx, Function, Object, Persistent, Value};

use super::format::Formatter;
use super::kit::Intrinsic;
use super::meter::Stop;
use super::text;
use super::{Pending, Session};
use crate::sandbox::codes as code;
use crate::sandbox::convert::to_json::{ToJsonError, to_json};
use crate::sandbox::run::ToHost;

/// The longest tool name accepted, in bytes.
const NAME_CAP: usize = 256;

/// The function behind every `tools.<name>`: `call(name, args, argc, site)`,
/// where `site` is the `ToolCallError` the call rejects with, made in the
/// program's frame so its stack shows the call site.
pub(crate) fn tool_function<'js>(
    ctx: &Ctx<'js>,
    session: Rc<Session>,
) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>,
              name: Value<'js>,
              args: Opt<Value<'js>>,
              argc: Opt<i32>,
              site: Opt<Object<'js>>| {
            call_tool(&ctx, &session, name, args.0, argc.0.unwrap_or(0), site.0)
        },
    )
}

fn call_tool<'js>(
    ctx: &Ctx<'js>,
    session: &Session,
    name: Value<'js>,
    args: Option<Value<'js>>,
    argc: i32,
    site: Option<Object<'js>>,
) -> rquickjs::Result<Value<'js>> {
    let kit = session.kit.borrow();
    let (promise, resolve, reject) = ctx.promise()?;
    let site = match site {
        Some(site) => site,
        None => Object::new(ctx.clone())?,
    };
    let fail = |code: &str, message: String| -> rquickjs::Result<Value<'js>> {
        let fill = kit
            .function(ctx, Intrinsic::FillToolError)
            .ok_or(rquickjs::Error::Unknown)?;
        let error: Value = fill.call((site.clone(), code, message))?;
        reject.call::<_, ()>((error,))?;
        Ok(promise.clone().into_value())
    };

    let (name, cut) = match name
        .as_string()
        .map(|s| text::read_bounded(ctx, &kit, s, NAME_CAP))
    {
        Some(Ok(read)) => read,
        Some(Err(exception)) => return Err(ctx.throw(exception)),
        None => (String::new(), false),
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
    session.pending.borrow_mut().insert(
        id,
        Pending {
            resolve: Persistent::save(ctx, resolve),
            reject: Persistent::save(ctx, reject),
            site: Persistent::save(ctx, site),
            name: name.clone(),
        },
    );
    if session
        .to_host
        .send(ToHost::Call { id, name, args })
        .is_err()
    {
        // The async side is gone: the run was dropped.
        session.meter.stop(Stop::Aborted);
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
