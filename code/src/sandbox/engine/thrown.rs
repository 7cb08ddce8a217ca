//! What the program threw, as a message for the model: the error's name and
//! message, where in the program's own source it was thrown, and a short
//! stack.

use rquickjs::function::This;
use rquickjs::{Ctx, Object, Value};

use super::format::Formatter;
use super::kit::{Intrinsic, Kit};
use super::text;
use crate::sandbox::{ErrorKind, RunError, SourceLocation};

/// The file name QuickJS gives the program in stacks.
pub(crate) const PROGRAM_FILE: &str = "program";
/// The name of the function the program is the body of.
pub(crate) const PROGRAM_FUNCTION: &str = "__toolprism_program__";
/// At most this many stack frames are shown.
const FRAMES: usize = 6;

/// Maps positions in the wrapped source back to the program's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SourceMap {
    /// Columns the wrapper adds before the program on line 1.
    pub(crate) prefix: u32,
    /// Lines in the program.
    pub(crate) lines: u32,
}

impl SourceMap {
    /// The program's position of QuickJS's `line:column` in the wrapped
    /// source. QuickJS counts columns in UTF-8 bytes; the result counts
    /// UTF-16 units, as JavaScript strings and editors do.
    fn map(&self, program: &str, line: u32, column: u32) -> Option<SourceLocation> {
        if line == 0 {
            return None;
        }
        if line > self.lines {
            // The wrapper's closing line: the end of the program.
            return Some(SourceLocation {
                line: self.lines.max(1),
                column: 1,
            });
        }
        let byte = if line == 1 {
            column.saturating_sub(self.prefix)
        } else {
            column
        }
        .saturating_sub(1) as usize;
        let text = program.lines().nth(line as usize - 1).unwrap_or_default();
        let mut end = byte.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let column = text[..end].encode_utf16().count() as u32 + 1;
        Some(SourceLocation { line, column })
    }
}

/// A short, one-line description of a thrown value (at most `max` bytes):
/// `TypeError: message` for an error, else the value formatted. Fails with
/// the uncatchable exception when the interrupt handler stopped it.
pub(crate) fn summary<'js>(
    ctx: &Ctx<'js>,
    kit: &Kit,
    value: Value<'js>,
    max: usize,
) -> Result<String, Value<'js>> {
    let mut f = Formatter::new(ctx, kit, max);
    f.value(value, 0);
    let formatted = f.finish();
    match formatted.interrupted {
        Some(exception) => Err(exception),
        None => Ok(formatted.text),
    }
}

/// The diagnostic of an exception nothing caught, at most `max` bytes of
/// message. `compiling` marks an exception from parsing the program.
pub(crate) fn diagnose<'js>(
    ctx: &Ctx<'js>,
    kit: &Kit,
    value: Value<'js>,
    map: SourceMap,
    program: &str,
    compiling: bool,
    max: usize,
) -> RunError {
    if value.is_null() {
        // QuickJS throws `null` when it cannot allocate even the error for
        // running out of memory; a program almost never throws `null` itself.
        return RunError::new(
            ErrorKind::Memory,
            "the program ran out of memory (the heap cap, Limits::memory_bytes, was reached; \
             QuickJS then throws `null`, as nothing is left to build an error with. If the \
             program threw `null` itself, throw an Error instead)",
        );
    }
    let Some(error) = value.as_object().filter(|_| value.is_error()).cloned() else {
        // Not an Error: a string, a number, a plain object...
        let mut f = Formatter::new(ctx, kit, max);
        f.push("Uncaught ");
        f.value(value, 0);
        return RunError::new(ErrorKind::Exception, f.finish().text);
    };
    let proto = error.get_prototype().map(Object::into_value);
    let is = |which| proto.as_ref() == Some(&kit.value(ctx, which));
    let name = read(ctx, kit, &error, "name", 100).unwrap_or_else(|| "Error".to_owned());
    let message = read(ctx, kit, &error, "message", max).unwrap_or_default();
    let stack = kit
        .function(ctx, Intrinsic::ErrorStack)
        .and_then(|getter| getter.call::<_, Value>((This(error.clone()),)).ok())
        .and_then(|s| {
            s.as_string()
                .and_then(|s| text::read_bounded(ctx, kit, s, 8192).ok())
                .map(|(text, _)| text)
        })
        .unwrap_or_default();
    if ctx.has_exception() {
        let _ = ctx.catch();
    }

    let kind = if is(Intrinsic::InternalErrorProto) && message == "out of memory" {
        ErrorKind::Memory
    } else if is(Intrinsic::RangeErrorProto) && message == "Maximum call stack size exceeded" {
        ErrorKind::Stack
    } else if compiling && is(Intrinsic::SyntaxErrorProto) {
        ErrorKind::Syntax
    } else {
        ErrorKind::Exception
    };

    let frames = frames(&stack, map, program);
    let location = frames.first().map(|(_, at)| *at);
    let mut text = format!("{name}: {message}");
    if is(Intrinsic::ToolErrorProto) {
        let tool = read(ctx, kit, &error, "toolName", 200).unwrap_or_default();
        let code = read(ctx, kit, &error, "code", 200).unwrap_or_default();
        text.push_str(&format!(" [tool {tool:?}, code {code}]"));
    }
    match kind {
        ErrorKind::Memory => text.push_str(" (the heap cap, Limits::memory_bytes, was reached)"),
        ErrorKind::Stack => text
            .push_str(" (the stack cap, Limits::stack_bytes, was reached: unbounded recursion?)"),
        _ => {}
    }
    if let Some(hint) = hint(&message, location, program, kind) {
        text.push_str("\n(hint: ");
        text.push_str(hint);
        text.push(')');
    }
    for (function, at) in &frames {
        match function {
            Some(f) => text.push_str(&format!(
                "\n    at {f} (line {}, column {})",
                at.line, at.column
            )),
            None => text.push_str(&format!("\n    at line {}, column {}", at.line, at.column)),
        }
    }
    let (text, _) = text::cut(text, max);
    RunError {
        kind,
        message: text,
        location,
    }
}

fn read<'js>(
    ctx: &Ctx<'js>,
    kit: &Kit,
    object: &Object<'js>,
    key: &str,
    max: usize,
) -> Option<String> {
    match object.get::<_, Value>(key) {
        Ok(v) => v
            .as_string()
            .and_then(|s| text::read_bounded(ctx, kit, s, max).ok())
            .map(|(text, _)| text),
        Err(_) => {
            let _ = ctx.catch();
            None
        }
    }
}

/// Frames of `stack` in the program's source: `(function, location)`.
fn frames(stack: &str, map: SourceMap, program: &str) -> Vec<(Option<String>, SourceLocation)> {
    let mut out = Vec::new();
    for line in stack.lines() {
        let Some(rest) = line.trim_start().strip_prefix("at ") else {
            continue;
        };
        // "f (program:3:5)" or "program:3:5" (a parse error).
        let (function, place) = match rest.rsplit_once(" (") {
            Some((f, place)) => (Some(f), place.trim_end_matches(')')),
            None => (None, rest),
        };
        let Some(position) = place
            .strip_prefix(PROGRAM_FILE)
            .and_then(|p| p.strip_prefix(':'))
        else {
            continue;
        };
        let mut numbers = position.split(':').map(|n| n.parse::<u32>().ok());
        let (Some(Some(line)), Some(Some(column))) = (numbers.next(), numbers.next()) else {
            continue;
        };
        let Some(at) = map.map(program, line, column) else {
            continue;
        };
        let function = function.map(|f| {
            if f == PROGRAM_FUNCTION {
                "<program>".to_owned()
            } else {
                f.to_owned()
            }
        });
        out.push((function, at));
        if out.len() == FRAMES {
            break;
        }
    }
    out
}

/// A hint for errors a model commonly meets in the sandbox.
fn hint(
    message: &str,
    location: Option<SourceLocation>,
    program: &str,
    kind: ErrorKind,
) -> Option<&'static str> {
    const NO_MODULES: &str = "there are no modules in the sandbox: `import`, `export` and `require` \
        are not available; reach tools through the global `tools`, e.g. `await tools.search({...})`";
    if message.starts_with("could not load module") {
        return Some(NO_MODULES);
    }
    if kind == ErrorKind::Syntax {
        let line = location
            .and_then(|at| program.lines().nth(at.line.saturating_sub(1) as usize))
            .unwrap_or_default()
            .trim_start();
        if line.starts_with("import ") || line.starts_with("import{") || line.starts_with("export ")
        {
            return Some(NO_MODULES);
        }
    }
    if message == "require is not defined" {
        return Some(NO_MODULES);
    }
    if message == "setTimeout is not defined" || message == "setInterval is not defined" {
        return Some("there are no timers in the sandbox: await tool calls, or use loops");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf16_units_not_bytes() {
        let map = SourceMap {
            prefix: 20,
            lines: 2,
        };
        let program = "const é = '😀'; x\nline two";
        // `x` is byte 20 (1-based) of line 1, its 17th UTF-16 unit.
        assert_eq!(
            map.map(program, 1, 20 + 20),
            Some(SourceLocation {
                line: 1,
                column: 17
            })
        );
        assert_eq!(
            map.map(program, 3, 2),
            Some(SourceLocation { line: 2, column: 1 })
        );
    }

    #[test]
    fn frames_are_mapped_to_the_program() {
        let map = SourceMap {
            prefix: 20,
            lines: 3,
        };
        let stack = "    at f (program:2:5)\n    at ToolCallError (sandbox:4:1)\n    \
                     at __toolprism_program__ (program:1:31)\n    at program:4:1\n";
        let program = "let a = 1;\n  f();\nreturn g();";
        let frames = frames(stack, map, program);
        assert_eq!(
            frames,
            vec![
                (Some("f".to_owned()), SourceLocation { line: 2, column: 5 }),
                (
                    Some("<program>".to_owned()),
                    SourceLocation {
                        line: 1,
                        column: 11
                    }
                ),
                (None, SourceLocation { line: 3, column: 1 }),
            ]
        );
    }
}
