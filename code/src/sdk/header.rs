//! The fixed text of the SDK: the header comment that tells the model how
//! to run a program, and the declarations every SDK has (`ToolCallError`,
//! `ToolName`, `tools`).

use super::doc::Doc;
use super::names::{is_identifier, string_literal};

/// The header's paragraphs; [`header`] adds one when a tool's name needs
/// brackets.
const HEADER: &str = "\
Code Mode: the tools below, as typed async functions on `tools`.

To run a program, call the tool `run_code` with both required arguments:
- `code`: the program, the body of an async function, so top-level
  `await` and `return` work. What it returns and what it logs with
  `console.log` is what you read back.
- `description`: a few words on what it does, shown to the person watching.

`await tools.<name>(args)` runs a tool (`ToolArgsMap` types its arguments)
and resolves to its value (`ToolOutputMap` types it). A failed call
rejects with a `ToolCallError` (`toolName`, `code`, `message`). Calls to
tools marked \"Read-only.\" may overlap under `Promise.all`; every other
call runs alone, one at a time, in the order made.";

/// The last paragraph of a read-only tool's JSDoc.
pub(crate) const READ_ONLY: &str = "Read-only.";

/// The last paragraph of any other tool's JSDoc.
pub(crate) const NOT_READ_ONLY: &str = "Not read-only.";

/// The declarations between the header and the maps.
pub(crate) const ERROR_CLASS: &str = "\
/** The error a failed tool call rejects with. */
declare class ToolCallError extends Error {
  readonly name: \"ToolCallError\";
  /** The tool whose call failed. */
  readonly toolName: string;
  /** Why, as a machine-readable code: \"INVALID_ARGS\", \"TOOL_FAILED\", \"DENIED\", \"TIMEOUT\", … */
  readonly code: string;
}
";

/// The declarations after the maps.
pub(crate) const TOOLS: &str = "\
/** The name of a tool. */
type ToolName = keyof ToolArgsMap;

/** The tools: `await tools.<name>(args)` runs one. */
declare const tools: { readonly [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]> };
";

/// The header comment, for tools with these sorted `names`: when one is
/// not an identifier, a line shows how to call it with brackets.
pub(crate) fn header<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut doc = Doc::text(HEADER);
    if let Some(name) = names.into_iter().find(|n| !is_identifier(n)) {
        doc.paragraph(&format!(
            "A tool whose name is not an identifier is called with brackets: `tools[{}](args)`.",
            string_literal(name)
        ));
    }
    let mut out = String::new();
    doc.write(0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_one_comment() {
        let text = header(["read", "write"]);
        assert!(text.starts_with("/**\n * Code Mode: "));
        assert!(text.ends_with(" * call runs alone, one at a time, in the order made.\n */\n"));
        assert_eq!(text.matches("*/").count(), 1);
        assert!(text.contains("`run_code`"));
        assert!(text.contains("`code`") && text.contains("`description`"));
        assert!(!text.contains("brackets"));
    }

    #[test]
    fn bracket_calls_are_shown_when_a_name_needs_them() {
        let text = header(["read", "web-fetch", "x-y"]);
        assert!(text.ends_with(
            " *\n * A tool whose name is not an identifier is called with brackets: `tools[\"web-fetch\"](args)`.\n */\n"
        ));
    }
}
