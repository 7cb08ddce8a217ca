//! `edit`: replace exact text in a file.
//!
//! - **Rule**: `oldText` must occur exactly once, unless `replaceAll` is set;
//!   zero or several matches are an error that says what to do. Text files
//!   (UTF-8) only. Confined to the tool's [`Workspace`].
//! - **Value** [`EditValue`]: `{path, before, after, replacements}`: the whole
//!   file before and after, for programs.
//! - **Render**: a summary line and a unified diff (3 lines of context).
//! - **Meta** [`DiffMeta`]: `{diffs}`, one entry per hunk with 3 lines of
//!   context (from `similar`) and the lines it starts at (`oldStart`,
//!   `newStart`), bounded in size.
//! - **Cards**: a `diff` call card from the arguments (old and new text,
//!   with no line numbers: the arguments do not hold them); a `diff` result
//!   card from meta, whose hunks are numbered as in the file.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::{DiffCall, DiffResult, FileDiff, Location, ResultCard};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolResult, tool};

use crate::blocking::Stop;
pub use crate::diff::DiffMeta;
use crate::diff::{diff_meta, unified};
use crate::text::plural;
use crate::workspace::{OpenFor, Want, Workspace};
use crate::write::{Existing, read_all};
use std::io::Write;

/// Arguments of `edit`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The exact text to replace, whitespace included. Must occur once unless `replaceAll`.
    pub old_text: String,
    /// The text to put instead.
    pub new_text: String,
    /// Replace every occurrence instead of exactly one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace_all: bool,
}

/// The value of `edit`: the file before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditValue {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The whole file before.
    pub before: String,
    /// The whole file after.
    pub after: String,
    /// How many occurrences were replaced.
    pub replacements: u64,
}

/// Edits files inside its workspace (`Default`: the current
/// directory).
#[derive(Debug, Clone, Default)]
pub struct EditTool {
    workspace: Workspace,
}

impl EditTool {
    /// An `edit` confined to `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        EditTool { workspace }
    }
}

/// Replace exact text in a file. `oldText` must match the file exactly
/// (whitespace included) and occur once, unless `replaceAll` is true. Read
/// the file first. Returns a unified diff of the change.
#[tool(
    name = "edit",
    title = "Edit file",
    kind = edit,
    destructive,
    timeout_ms = 10000,
    blocking,
    builtin
)]
impl EditTool {
    fn execute(&self, args: EditArgs, cx: &ToolContext<'_>) -> Result<EditValue, ToolError> {
        self.run(args, &Stop::of(cx))
    }

    fn render(_args: &EditArgs, value: &EditValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "Edited {}: {}.\n\n{}",
            value.path,
            plural(value.replacements, "replacement", "replacements"),
            unified(&value.path, &value.before, &value.after)
        ))]
    }

    fn presentation_meta(_args: &EditArgs, value: &EditValue) -> DiffMeta {
        diff_meta(&value.path, &value.before, &value.after)
    }

    fn present_call(args: &EditArgs) -> CallCard {
        let title = if args.replace_all {
            format!("Edit {} (every occurrence)", args.path)
        } else {
            format!("Edit {}", args.path)
        };
        // The arguments do not say where the text is: no line numbers.
        let diff = FileDiff::new(&args.path, Some(args.old_text.clone()), &args.new_text);
        CallCard::Diff(
            DiffCall::new(title, vec![diff]).with_locations(vec![Location::new(&args.path)]),
        )
    }

    fn present_result(args: &EditArgs, result: &ToolResult<DiffMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref().filter(|_| !result.is_error)?;
        Some(ResultCard::Diff(
            DiffResult::new(meta.diffs.clone()).with_title(diff_title("Edited", &args.path, meta)),
        ))
    }
}

impl EditTool {
    /// The work itself, synchronous (see [`crate::blocking`]); too short to
    /// check `stop`.
    fn run(&self, args: EditArgs, _stop: &Stop) -> Result<EditValue, ToolError> {
        self.workspace.check_writes("edit")?;
        let (path, existing) = self
            .workspace
            .opened(&args.path, Want::ForWrite, |resolved| {
                match self.workspace.open_resolved(resolved, OpenFor::Read) {
                    Ok(file) => read_all(file).map(Some),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(e),
                }
            })?;
        let shown = self.workspace.display(&path);
        let bytes = match existing {
            Some(Existing::File(bytes)) => bytes,
            Some(Existing::Dir) => {
                return Err(
                    ToolError::new(format!("\"{shown}\" is a directory, not a file"))
                        .with_code("IS_A_DIRECTORY"),
                );
            }
            None => {
                return Err(ToolError::new(format!(
                    "\"{shown}\" does not exist; use write to create a file"
                ))
                .with_code("NOT_FOUND"));
            }
        };
        let before = String::from_utf8(bytes).map_err(|_| {
            ToolError::new(format!(
                "\"{shown}\" is not UTF-8 text; edit only text files"
            ))
            .with_code("NOT_TEXT")
        })?;
        let after = replace(&shown, &before, &args)?;
        // The file is opened again for the write, beneath the root, without
        // creating it: if it went away in between, nothing is made.
        let (_, mut file) = self
            .workspace
            .opened(&args.path, Want::ForWrite, |resolved| {
                self.workspace
                    .open_resolved(resolved, OpenFor::Write { create: false })
            })?;
        file.write_all(after.0.as_bytes())
            .map_err(|e| format!("cannot write \"{shown}\": {e}"))?;
        Ok(EditValue {
            path: shown,
            before,
            after: after.0,
            replacements: after.1,
        })
    }
}

/// A diff card title that says when hunks were left out.
pub(crate) fn diff_title(verb: &str, path: &str, meta: &DiffMeta) -> String {
    if meta.omitted_hunks > 0 {
        format!(
            "{verb} {path} ({} not shown)",
            plural(meta.omitted_hunks, "more hunk", "more hunks")
        )
    } else {
        format!("{verb} {path}")
    }
}

/// The new text and how many replacements, or why not.
fn replace(shown: &str, before: &str, args: &EditArgs) -> Result<(String, u64), ToolError> {
    if args.old_text.is_empty() {
        return Err(ToolError::new(
            "oldText is empty; copy the exact text to replace from the file (use write to create or overwrite a whole file)",
        )
        .with_code("NO_MATCH"));
    }
    if args.old_text == args.new_text {
        return Err(
            ToolError::new("oldText and newText are the same; nothing would change")
                .with_code("NO_CHANGE"),
        );
    }
    let count = before.matches(args.old_text.as_str()).count() as u64;
    match count {
        0 => Err(ToolError::new(format!(
            "oldText was not found in \"{shown}\"; read the file and copy the exact text, whitespace and indentation included"
        ))
        .with_code("NO_MATCH")),
        1 => Ok((before.replacen(&args.old_text, &args.new_text, 1), 1)),
        n if args.replace_all => Ok((before.replace(&args.old_text, &args.new_text), n)),
        n => Err(ToolError::new(format!(
            "oldText occurs {n} times in \"{shown}\"; include more surrounding lines so it matches once, or set replaceAll: true"
        ))
        .with_code("AMBIGUOUS_MATCH")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use toolprism::{Registry, ToolCall, ToolOutcome};

    fn setup() -> (tempfile::TempDir, Registry) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        fs::create_dir(&ws).unwrap();
        let body: String = (1..=12).map(|i| format!("line {i}\n")).collect();
        fs::write(
            ws.join("f.txt"),
            format!("# VALUE-ONLY-MARKER\n{body}dup\ndup\n"),
        )
        .unwrap();
        fs::write(ws.join("bin"), [0xff, 0xfe]).unwrap();
        fs::write(dir.path().join("outside.txt"), "line 1\n").unwrap();
        let registry = Registry::builder()
            .tool(EditTool::new(Workspace::new(&ws).unwrap()))
            .build()
            .unwrap();
        (dir, registry)
    }

    async fn call(registry: &Registry, args: serde_json::Value) -> ToolOutcome {
        registry
            .call(ToolCall::new("c", "edit", args.to_string()))
            .await
    }

    #[tokio::test]
    async fn replaces_once_with_value_meta_and_diff_cards() {
        let (dir, registry) = setup();
        let out = call(
            &registry,
            serde_json::json!({"path": "f.txt", "oldText": "line 7\n", "newText": "LINE SEVEN\n"}),
        )
        .await;
        assert!(!out.is_error(), "{out:?}");
        let on_disk = fs::read_to_string(dir.path().join("ws/f.txt")).unwrap();
        assert!(on_disk.contains("LINE SEVEN\n"));
        let v = out.value_as::<EditValue>().unwrap();
        assert_eq!(v.after, on_disk);
        assert!(v.before.contains("line 7\n"));
        assert_eq!(v.replacements, 1);
        let meta: DiffMeta = serde_json::from_value(out.meta().unwrap().clone()).unwrap();
        assert_eq!(meta.diffs.len(), 1);
        assert_eq!(
            meta.diffs[0].old_text.as_deref(),
            Some("line 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n")
        );
        // The whole file is in the value only: not in content, not in meta.
        assert!(v.before.contains("VALUE-ONLY-MARKER"));
        assert!(
            !out.content()[0]
                .as_text()
                .unwrap()
                .contains("VALUE-ONLY-MARKER")
        );
        assert!(
            !out.meta()
                .unwrap()
                .to_string()
                .contains("VALUE-ONLY-MARKER")
        );
        let ResultCard::Diff(card) = out.result_card().unwrap() else {
            panic!()
        };
        assert_eq!(card.diffs, meta.diffs);
        // `line 7` is line 8 of the file (after the marker line): the hunk
        // with its 3 lines of context starts at line 5, as the content's
        // unified diff says.
        assert_eq!(
            (card.diffs[0].old_start, card.diffs[0].new_start),
            (Some(5), Some(5))
        );
        assert!(
            out.content()[0]
                .as_text()
                .unwrap()
                .contains("@@ -5,7 +5,7 @@")
        );
        let CallCard::Diff(call) = out.call_card().unwrap() else {
            panic!()
        };
        assert_eq!(call.diffs[0].old_text.as_deref(), Some("line 7\n"));
        assert_eq!(
            (call.diffs[0].old_start, call.diffs[0].new_start),
            (None, None)
        );
        assert!(
            out.content()[0]
                .as_text()
                .unwrap()
                .contains("-line 7\n+LINE SEVEN")
        );
    }

    #[tokio::test]
    async fn replace_all_and_ambiguity() {
        let (_d, registry) = setup();
        let out = call(
            &registry,
            serde_json::json!({"path": "f.txt", "oldText": "dup", "newText": "one"}),
        )
        .await;
        assert_eq!(out.error().unwrap().code.as_str(), "AMBIGUOUS_MATCH");
        assert!(out.error().unwrap().message.contains("occurs 2 times"));
        let out = call(
            &registry,
            serde_json::json!({"path": "f.txt", "oldText": "dup", "newText": "one", "replaceAll": true}),
        )
        .await;
        assert_eq!(out.value_as::<EditValue>().unwrap().replacements, 2);
    }

    #[tokio::test]
    async fn bad_input_is_a_clear_error_result() {
        let (dir, registry) = setup();
        for (args, code) in [
            (
                serde_json::json!({"path": "f.txt", "oldText": "absent", "newText": "x"}),
                "NO_MATCH",
            ),
            (
                serde_json::json!({"path": "f.txt", "oldText": "", "newText": "x"}),
                "NO_MATCH",
            ),
            (
                serde_json::json!({"path": "f.txt", "oldText": "dup", "newText": "dup"}),
                "NO_CHANGE",
            ),
            (
                serde_json::json!({"path": "new.txt", "oldText": "a", "newText": "b"}),
                "NOT_FOUND",
            ),
            (
                serde_json::json!({"path": "bin", "oldText": "a", "newText": "b"}),
                "NOT_TEXT",
            ),
            (
                serde_json::json!({"path": "../outside.txt", "oldText": "line 1", "newText": "x"}),
                "OUTSIDE_WORKSPACE",
            ),
            (
                serde_json::json!({"path": "f.txt", "oldText": "a"}),
                "INVALID_ARGS",
            ),
        ] {
            let out = call(&registry, args.clone()).await;
            assert_eq!(out.error().unwrap().code.as_str(), code, "{args}");
            assert_eq!(out.result_card().unwrap().tag(), "generic");
        }
        assert_eq!(
            fs::read_to_string(dir.path().join("outside.txt")).unwrap(),
            "line 1\n"
        );
    }
}
