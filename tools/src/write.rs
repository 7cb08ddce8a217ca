//! `write`: create a file, or overwrite one, with the given content.
//!
//! - **Value** [`WriteValue`]: `{path, operation: create|update, before|null, after}`.
//! - **Render**: what was done, and a unified diff for an update.
//! - **Meta** [`WriteMeta`]: `{operation, diffs}`: hunks with 3 lines of
//!   context for an update, none for a creation (the whole file is new; the
//!   arguments already hold it).
//! - **Cards**: a `diff` call card from the arguments (`oldText: null`, the
//!   new content); a `diff` result card from meta, falling back to the
//!   arguments for a creation.
//! - Parent directories are created. Confined to the tool's [`Workspace`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::{DiffCall, DiffResult, FileDiff, Location, ResultCard};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolResult, tool};

use crate::blocking::Stop;
use crate::diff::{DiffMeta, diff_meta, unified};
use crate::edit::diff_title;
use crate::text::plural;
use crate::workspace::{OpenFor, Want, Workspace};
use std::io::{Read, Write};

/// Arguments of `write`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WriteArgs {
    /// The file, relative to the workspace root. Parent directories are created.
    pub path: String,
    /// The whole new content of the file.
    pub content: String,
}

/// Whether the file was new.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Operation {
    /// The file did not exist.
    Create,
    /// The file existed and was overwritten.
    Update,
}

/// The value of `write`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteValue {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Created or updated.
    pub operation: Operation,
    /// The whole file before, `null` when it was created (or was not UTF-8 text).
    pub before: Option<String>,
    /// The whole file after.
    pub after: String,
}

/// The meta of `write`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteMeta {
    /// Created or updated.
    pub operation: Operation,
    /// Hunks of an update; empty for a creation.
    #[serde(flatten)]
    pub diff: DiffMeta,
}

/// Writes files inside its workspace (`Default`: the current
/// directory).
#[derive(Debug, Clone, Default)]
pub struct WriteTool {
    workspace: Workspace,
}

impl WriteTool {
    /// A `write` confined to `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        WriteTool { workspace }
    }
}

/// Create a file or overwrite it with `content`. Parent directories are
/// created. To change part of a file, prefer edit.
#[tool(
    name = "write",
    title = "Write file",
    kind = edit,
    destructive,
    idempotent,
    timeout_ms = 10000,
    blocking,
    builtin
)]
impl WriteTool {
    fn execute(&self, args: WriteArgs, cx: &ToolContext<'_>) -> Result<WriteValue, ToolError> {
        self.run(args, &Stop::of(cx))
    }

    fn render(_args: &WriteArgs, value: &WriteValue) -> Vec<ContentBlock> {
        let size = format!(
            "{}, {}",
            plural(value.after.lines().count() as u64, "line", "lines"),
            plural(value.after.len() as u64, "byte", "bytes")
        );
        let text = match (&value.operation, &value.before) {
            (Operation::Create, _) => format!("Created {} ({size}).", value.path),
            (Operation::Update, Some(before)) if before == &value.after => {
                format!("Wrote {} ({size}): unchanged.", value.path)
            }
            (Operation::Update, Some(before)) => format!(
                "Updated {} ({size}).\n\n{}",
                value.path,
                unified(&value.path, before, &value.after)
            ),
            (Operation::Update, None) => format!(
                "Overwrote {} ({size}); it was not UTF-8 text before.",
                value.path
            ),
        };
        vec![ContentBlock::text(text)]
    }

    fn presentation_meta(_args: &WriteArgs, value: &WriteValue) -> WriteMeta {
        let diff = match &value.before {
            Some(before) => diff_meta(&value.path, before, &value.after),
            None => DiffMeta {
                diffs: Vec::new(),
                omitted_hunks: 0,
            },
        };
        WriteMeta {
            operation: value.operation,
            diff,
        }
    }

    fn present_call(args: &WriteArgs) -> CallCard {
        // The content is the whole file after the write: it starts at line 1.
        let diff = FileDiff::new(&args.path, None, &args.content).with_starts(None, Some(1));
        CallCard::Diff(
            DiffCall::new(format!("Write {}", args.path), vec![diff])
                .with_locations(vec![Location::new(&args.path)]),
        )
    }

    fn present_result(args: &WriteArgs, result: &ToolResult<WriteMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref().filter(|_| !result.is_error)?;
        let (verb, diffs) = match meta.operation {
            Operation::Create => (
                "Created",
                vec![FileDiff::new(&args.path, None, &args.content).with_starts(None, Some(1))],
            ),
            Operation::Update => ("Updated", meta.diff.diffs.clone()),
        };
        Some(ResultCard::Diff(
            DiffResult::new(diffs).with_title(diff_title(verb, &args.path, &meta.diff)),
        ))
    }
}

impl WriteTool {
    /// The work itself, synchronous (see [`crate::blocking`]); too short to
    /// check `stop`.
    fn run(&self, args: WriteArgs, _stop: &Stop) -> Result<WriteValue, ToolError> {
        self.workspace.check_writes("write")?;
        // What is there now (nothing, a file, a directory), then the write:
        // each opened beneath the root with no symlink followed, the path
        // resolved again if it changed in between.
        let (path, before) = self
            .workspace
            .opened(&args.path, Want::ForWrite, |resolved| {
                match self.workspace.open_resolved(resolved, OpenFor::Read) {
                    Ok(file) => read_all(file).map(Some),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(e),
                }
            })?;
        let shown = self.workspace.display(&path);
        let (operation, before) = match before {
            Some(Existing::Dir) => {
                return Err(
                    ToolError::new(format!("\"{shown}\" is a directory, not a file"))
                        .with_code("IS_A_DIRECTORY"),
                );
            }
            Some(Existing::File(bytes)) => (Operation::Update, String::from_utf8(bytes).ok()),
            None => (Operation::Create, None),
        };
        let (_, mut file) = self
            .workspace
            .opened(&args.path, Want::ForWrite, |resolved| {
                self.workspace
                    .open_resolved(resolved, OpenFor::Write { create: true })
            })?;
        file.write_all(args.content.as_bytes())
            .map_err(|e| format!("cannot write \"{shown}\": {e}"))?;
        Ok(WriteValue {
            path: shown,
            operation,
            before,
            after: args.content,
        })
    }
}

/// What a path held before a write.
pub(crate) enum Existing {
    /// A directory.
    Dir,
    /// A file, with its bytes.
    File(Vec<u8>),
}

/// Reads an opened path: a directory says so, a file gives its bytes.
pub(crate) fn read_all(mut file: std::fs::File) -> std::io::Result<Existing> {
    if file.metadata()?.is_dir() {
        return Ok(Existing::Dir);
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(Existing::File(bytes))
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
        fs::write(ws.join("old.txt"), "a\nb\nc\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join("evil.txt"), ws.join("link")).unwrap();
        let registry = Registry::builder()
            .tool(WriteTool::new(Workspace::new(&ws).unwrap()))
            .build()
            .unwrap();
        (dir, registry)
    }

    async fn call(registry: &Registry, args: serde_json::Value) -> ToolOutcome {
        registry
            .call(ToolCall::new("c", "write", args.to_string()))
            .await
    }

    #[tokio::test]
    async fn creates_with_parents_and_falls_back_to_the_args_on_the_card() {
        let (dir, registry) = setup();
        let out = call(
            &registry,
            serde_json::json!({"path": "notes/new/plan.md", "content": "# Plan\n"}),
        )
        .await;
        assert!(!out.is_error(), "{out:?}");
        assert_eq!(
            fs::read_to_string(dir.path().join("ws/notes/new/plan.md")).unwrap(),
            "# Plan\n"
        );
        let v = out.value_as::<WriteValue>().unwrap();
        assert_eq!(
            (v.operation, v.before.as_deref()),
            (Operation::Create, None)
        );
        assert_eq!(
            out.meta().unwrap(),
            &serde_json::json!({"operation": "create", "diffs": []})
        );
        let ResultCard::Diff(card) = out.result_card().unwrap() else {
            panic!()
        };
        assert_eq!(card.diffs[0].old_text, None);
        assert_eq!(card.diffs[0].new_text, "# Plan\n");
        assert_eq!(
            out.content()[0].as_text(),
            Some("Created notes/new/plan.md (1 line, 7 bytes).")
        );
    }

    #[tokio::test]
    async fn updates_with_hunks() {
        let (_d, registry) = setup();
        let out = call(
            &registry,
            serde_json::json!({"path": "old.txt", "content": "a\nB\nc\n"}),
        )
        .await;
        let v = out.value_as::<WriteValue>().unwrap();
        assert_eq!(v.before.as_deref(), Some("a\nb\nc\n"));
        let ResultCard::Diff(card) = out.result_card().unwrap() else {
            panic!()
        };
        assert_eq!(card.diffs.len(), 1);
        assert_eq!(card.diffs[0].old_text.as_deref(), Some("a\nb\nc\n"));
        assert_eq!(card.diffs[0].new_text, "a\nB\nc\n");
        assert_eq!(card.title.as_deref(), Some("Updated old.txt"));
    }

    #[tokio::test]
    async fn bad_input_is_a_clear_error_result() {
        let (dir, registry) = setup();
        for path in ["../evil.txt", "link", "/tmp/evil.txt"] {
            let out = call(&registry, serde_json::json!({"path": path, "content": "x"})).await;
            assert_eq!(
                out.error().unwrap().code.as_str(),
                "OUTSIDE_WORKSPACE",
                "{path}"
            );
            assert_eq!(out.result_card().unwrap().tag(), "generic");
        }
        assert!(!dir.path().join("evil.txt").exists());
        let out = call(&registry, serde_json::json!({"path": ".", "content": "x"})).await;
        assert_eq!(out.error().unwrap().code.as_str(), "IS_A_DIRECTORY");
    }
}
