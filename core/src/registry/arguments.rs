//! Step 2 of the pipeline for every reader of a call's arguments (the live
//! call, replay, the testing helpers): [`Arguments`], how they arrive, and
//! [`read_arguments`]: JSON syntax, the lossless and depth rules (C3), the
//! input schema, then the tool's own `Deserialize`; `INVALID_ARGS` naming
//! the path, rooted at `arguments`, for anything that breaks them.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::kernel::Kernel;
use crate::argument_dialect::ArgumentDialect;
use crate::error::{ErrorCode, ErrorInfo};
use crate::guard::guard;
use crate::lossless::parse::{self, ReadError};
use crate::lossless::{MAX_DEPTH, check_value_with, drop_deep};
use crate::path::Keys;
use crate::schema::{Compiled, violations};
use crate::text::cap;

/// A call's arguments as they arrive.
pub(crate) enum Arguments<'a> {
    /// Text as the model (or a client on the wire) sent it: only the empty
    /// string means `{}`. Owned by a live call, borrowed by replay.
    Text(Cow<'a, str>),
    /// A program's JSON, already checked (depth, `-0.0`) by
    /// [`Arguments::checked`].
    Json(Value),
    /// A program's JSON refused before anything recursive touched it (too
    /// deep): the error to report.
    Refused(ErrorInfo),
}

impl Arguments<'_> {
    /// A program's JSON, checked for depth and the lossless rules before
    /// anything recursive (the log's writer, the schema, serde) touches it.
    pub(crate) fn checked(json: Value) -> Self {
        match check_value_with(&json, "arguments", Keys::Shown) {
            Ok(()) => Arguments::Json(json),
            Err(e) => {
                drop_deep(json);
                Arguments::Refused(ErrorInfo::new(
                    ErrorCode::InvalidArgs,
                    format!("invalid arguments: {e}"),
                ))
            }
        }
    }

    /// What the session log records: the text as sent, or the JSON as text.
    pub(crate) fn logged(&self) -> Cow<'_, str> {
        match self {
            Arguments::Text(text) => Cow::Borrowed(text),
            Arguments::Json(json) => Cow::Owned(json.to_string()),
            Arguments::Refused(_) => Cow::Owned(Value::String(too_deep_input()).to_string()),
        }
    }

    /// What the generic call card shows of arguments that were never read.
    pub(crate) fn into_input(self) -> Value {
        match self {
            Arguments::Text(text) => raw_input(&text),
            Arguments::Json(json) => json,
            Arguments::Refused(_) => Value::String(too_deep_input()),
        }
    }
}

/// The arguments as JSON, for what reads them after step 2 (policies, an
/// approval's request, the generic call card).
#[derive(Debug)]
pub(crate) enum Input {
    /// The value step 2 read (and a dialect restored).
    Json(Value),
    /// The text as sent, when nothing needed the value during the call
    /// (no policy, no dialect): read again only if the generic call card is
    /// drawn or a person is asked, which reads it as step 2 did (the text
    /// passed step 2, so it is lossless JSON).
    Text(String),
}

impl Input {
    /// The arguments as JSON, borrowed when they were kept as JSON.
    pub(crate) fn json(&self) -> Cow<'_, Value> {
        match self {
            Input::Json(json) => Cow::Borrowed(json),
            Input::Text(text) => Cow::Owned(raw_input(text)),
        }
    }

    /// The arguments as JSON, taken.
    pub(crate) fn into_json(self) -> Value {
        match self {
            Input::Json(json) => json,
            Input::Text(text) => raw_input(&text),
        }
    }
}

/// Step 2 for any reader (the live call, replay, the testing helpers): JSON
/// syntax, the lossless and depth rules, the input schema, deserialize. On
/// failure, also what the generic call card shows.
///
/// `keep`: whether the caller reads the arguments as JSON during the call
/// (policies). When it does not, and the arguments came as owned text with
/// no dialect, the tool's `Deserialize` takes the value itself (its
/// strings are moved, not copied) and the text is kept instead.
pub(crate) fn read_arguments<K: Kernel>(
    name: &str,
    compiled: &Compiled,
    arguments: Arguments<'_>,
    dialect: Option<&dyn ArgumentDialect>,
    keep: bool,
) -> Result<(Input, K::Args), (Value, ErrorInfo)> {
    let mut sent = None;
    let json = match arguments {
        Arguments::Refused(error) => return Err((Value::String(too_deep_input()), error)),
        Arguments::Json(json) => json,
        Arguments::Text(text) if text.is_empty() => Value::Object(Default::default()),
        // One pass: serde_json's parser (and its depth cap) under the
        // lossless rules, so a key written twice or a `-0.0` is refused
        // where it sits instead of reaching the tool changed.
        Arguments::Text(text) => match parse::from_str(&text, "arguments") {
            Ok(json) => {
                if let Cow::Owned(text) = text {
                    sent = Some(text);
                }
                json
            }
            Err(ReadError::Lossless(e)) => {
                // The card shows the text as sent: no JSON value holds it.
                let input = Value::String(cap(&text, 4096).into_owned());
                return Err((input, invalid_args(&e.to_string())));
            }
            Err(ReadError::Json(e)) => {
                let detail = if nesting_exceeds(&text, MAX_DEPTH) {
                    format!(
                        "\"arguments\" nests deeper than {MAX_DEPTH} levels of arrays and objects"
                    )
                } else {
                    format!("\"arguments\" is not valid JSON ({e}); send one JSON object")
                };
                return Err((raw_input(&text), invalid_args(&detail)));
            }
        },
    };
    if !json.is_object() {
        return Err((json, invalid_args("\"arguments\" must be a JSON object")));
    }
    let json = match dialect {
        Some(dialect) => {
            // The card shows the arguments as restored, not as sent.
            sent = None;
            dialect.restore(&compiled.definition.input_schema, json)
        }
        None => json,
    };
    if let Some(message) = violations(&compiled.input, &json, "arguments", Keys::Shown) {
        return Err((json, invalid_args(&message)));
    }
    let (input, read) = match sent.filter(|_| !keep) {
        Some(text) => (Input::Text(text), guard(|| K::Args::deserialize(json))),
        None => {
            let read = guard(|| K::Args::deserialize(&json));
            (Input::Json(json), read)
        }
    };
    match read {
        Ok(Ok(args)) => Ok((input, args)),
        Ok(Err(e)) => {
            let message = invalid_args(&cap(&e.to_string(), 300));
            Err((input.into_json(), message))
        }
        Err(panic) => Err((
            input.into_json(),
            ErrorInfo::new(
                ErrorCode::ToolFailed,
                format!(
                    "tool \"{}\" panicked while reading its arguments (they match its input schema, so the fault is the tool's): {panic}",
                    name
                ),
            ),
        )),
    }
}

#[cold]
fn invalid_args(detail: &str) -> ErrorInfo {
    ErrorInfo::new(
        ErrorCode::InvalidArgs,
        format!("invalid arguments: {detail}"),
    )
}

/// What a call card shows for arguments refused as too deep.
fn too_deep_input() -> String {
    format!("(arguments nested deeper than {MAX_DEPTH} levels; not shown)")
}

/// Whether the arrays and objects of a JSON text nest deeper than `max`
/// (strings skipped), read without recursion.
fn nesting_exceeds(text: &str, max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The raw arguments as the generic call card shows them: the JSON when it
/// parses, else the text (cut at 4 KiB).
pub(crate) fn raw_input(arguments: &str) -> Value {
    if arguments.is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(arguments)
        .unwrap_or_else(|_| Value::String(cap(arguments, 4096).into_owned()))
}
