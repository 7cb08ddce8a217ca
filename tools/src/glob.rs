//! `glob`: find files by path pattern (`globset` over an `ignore` walk).
//!
//! - **Matching**: a pattern with a `/` matches the path relative to the
//!   search root (`src/**/*.rs`); one without matches the file name at any
//!   depth (`*.toml`). `*` never crosses a `/`; `**` does.
//! - **Walk**: honours `.gitignore` and `.ignore` files inside the workspace
//!   only, skips hidden files; paths come back sorted.
//!   The walk stops when the call is cancelled or times out.
//! - **Value** [`GlobValue`]: `{root, paths, truncated}`, every path up to
//!   [`MAX_PATHS`].
//! - **Render**: the first [`SHOWN_PATHS`] paths, and how many are not shown.
//! - **Meta** [`GlobMeta`]: `{shape:"paths", paths, truncated, total}`, the shown paths.
//! - **Cards**: a `generic` call card of kind `search`; a `search` result
//!   card of shape `paths` built with [`SearchResult::paths`].

use globset::GlobBuilder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::{ResultCard, SearchResult};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolKind, ToolResult, tool};

use crate::blocking::Stop;
use crate::text::{plural, thousands};
use crate::walk::{self, Flow};
use crate::workspace::{OpenFor, Workspace};

/// The acquisition cap: the walk stops after this many paths.
pub const MAX_PATHS: usize = 10_000;
/// How many paths `render` and meta show.
pub const SHOWN_PATHS: usize = 100;

/// Arguments of `glob`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GlobArgs {
    /// A glob: `*.rs` matches file names at any depth, `src/**/*.rs` matches paths.
    pub pattern: String,
    /// The directory to search, relative to the workspace root. Default: the whole workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// The value of `glob`: every matching file, up to the cap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobValue {
    /// The directory searched, relative to the workspace root.
    pub root: String,
    /// Matching files, relative to the workspace root, sorted.
    pub paths: Vec<String>,
    /// Whether the walk stopped at the cap, so more paths exist.
    pub truncated: bool,
}

/// The meta of `glob`: the shown paths and the total.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobMeta {
    /// Always `"paths"`.
    pub shape: String,
    /// The paths shown.
    pub paths: Vec<String>,
    /// Whether fewer paths are shown than were found.
    pub truncated: bool,
    /// Paths found (a lower bound when `capped`).
    pub total: u64,
    /// The walk stopped at the acquisition cap: `total` is a lower bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
}

/// Finds files by pattern inside its workspace (`Default`: the current
/// directory).
#[derive(Debug, Clone, Default)]
pub struct GlobTool {
    workspace: Workspace,
}

impl GlobTool {
    /// A `glob` confined to `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        GlobTool { workspace }
    }
}

/// Find files by glob pattern. `*.rs` matches file names at any depth;
/// `src/**/*.rs` matches paths from the search root. Honours .gitignore and
/// .ignore, skips hidden files. Returns sorted paths relative to the workspace.
#[tool(
    name = "glob",
    title = "Find files",
    kind = search,
    read_only,
    idempotent,
    timeout_ms = 30000,
    blocking,
    builtin
)]
impl GlobTool {
    fn execute(&self, args: GlobArgs, cx: &ToolContext<'_>) -> Result<GlobValue, ToolError> {
        self.run(args, &Stop::of(cx))
    }

    fn render(args: &GlobArgs, value: &GlobValue) -> Vec<ContentBlock> {
        let total = value.paths.len();
        if total == 0 {
            return vec![ContentBlock::text(format!(
                "No files match \"{}\" in {}",
                args.pattern, value.root
            ))];
        }
        let mut out = String::new();
        for path in value.paths.iter().take(SHOWN_PATHS) {
            out.push_str(path);
            out.push('\n');
        }
        if value.truncated {
            out.push_str(&format!(
                "\n(Showing {} of {total}+ files: the walk stopped at {MAX_PATHS}. Use a narrower pattern or path.)",
                total.min(SHOWN_PATHS)
            ));
        } else if total > SHOWN_PATHS {
            out.push_str(&format!(
                "\n(Showing {SHOWN_PATHS} of {total} files. Use a narrower pattern or path.)"
            ));
        } else {
            out.push_str(&format!("\n({})", plural(total as u64, "file", "files")));
        }
        vec![ContentBlock::text(out)]
    }

    fn presentation_meta(_args: &GlobArgs, value: &GlobValue) -> GlobMeta {
        let shown: Vec<String> = value.paths.iter().take(SHOWN_PATHS).cloned().collect();
        GlobMeta {
            shape: "paths".to_owned(),
            truncated: value.paths.len() > shown.len(),
            total: value.paths.len() as u64,
            paths: shown,
            capped: value.truncated,
        }
    }

    fn present_call(args: &GlobArgs) -> CallCard {
        CallCard::generic(
            format!(
                "Glob {} in {}",
                args.pattern,
                args.path.as_deref().unwrap_or(".")
            ),
            Some(ToolKind::Search),
            serde_json::to_value(args).ok(),
        )
    }

    fn present_result(args: &GlobArgs, result: &ToolResult<GlobMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref().filter(|_| !result.is_error)?;
        let card = SearchResult::paths(meta.paths.clone(), meta.total).ok()?;
        let count = if meta.capped {
            format!("{}+ files", thousands(meta.total))
        } else {
            plural(meta.total, "file", "files")
        };
        Some(ResultCard::Search(
            card.with_title(format!("{count} matching {}", args.pattern)),
        ))
    }
}

impl GlobTool {
    /// The walk itself, synchronous (see [`crate::blocking`]).
    fn run(&self, args: GlobArgs, stop: &Stop) -> Result<GlobValue, ToolError> {
        let start = self
            .workspace
            .resolve_existing(args.path.as_deref().unwrap_or("."))?;
        if !start.is_dir() {
            return Err(ToolError::new(format!(
                "\"{}\" is not a directory; pass a directory as `path`",
                self.workspace.display(&start)
            ))
            .with_code("NOT_A_DIRECTORY"));
        }
        let matcher = GlobBuilder::new(&args.pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                ToolError::new(format!("the pattern is not a valid glob: {e}"))
                    .with_code("INVALID_GLOB")
            })?
            .compile_matcher();
        let by_name = !args.pattern.contains('/');
        let mut paths = Vec::new();
        let mut truncated = false;
        walk::files(&self.workspace, &start, None, stop, |entry| {
            let hit = if by_name {
                matcher.is_match(entry.file_name())
            } else {
                entry
                    .path()
                    .strip_prefix(&start)
                    .is_ok_and(|rel| matcher.is_match(rel))
            };
            if !hit {
                return Flow::Continue;
            }
            // Still there beneath the root, with no symlink on the way: a
            // directory swapped for a symlink during the walk lists nothing.
            if self
                .workspace
                .open_resolved(entry.path(), OpenFor::Probe)
                .is_err()
            {
                return Flow::Continue;
            }
            if paths.len() >= MAX_PATHS {
                truncated = true;
                return Flow::Break;
            }
            paths.push(self.workspace.display(entry.path()));
            Flow::Continue
        })?;
        paths.sort();
        Ok(GlobValue {
            root: self.workspace.display(&start),
            paths,
            truncated,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use toolprism::{Registry, ToolCall, ToolOutcome};

    fn setup() -> (tempfile::TempDir, Registry) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        for f in [
            "Cargo.toml",
            "src/main.rs",
            "src/util/str.rs",
            "docs/guide.md",
            "target/debug/build.rs",
            ".secret/key.rs",
        ] {
            let p = ws.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "x").unwrap();
        }
        for i in 0..150 {
            fs::create_dir_all(ws.join("gen")).unwrap();
            fs::write(ws.join(format!("gen/f{i:03}.rs")), "x").unwrap();
        }
        fs::write(ws.join(".gitignore"), "target/\n").unwrap();
        let registry = Registry::builder()
            .tool(GlobTool::new(Workspace::new(ws).unwrap()))
            .build()
            .unwrap();
        (dir, registry)
    }

    async fn call(registry: &Registry, args: serde_json::Value) -> ToolOutcome {
        registry
            .call(ToolCall::new("c", "glob", args.to_string()))
            .await
    }

    #[tokio::test]
    async fn names_and_paths_match_and_ignored_files_do_not() {
        let (_d, registry) = setup();
        let out = call(&registry, serde_json::json!({"pattern": "src/**/*.rs"})).await;
        assert_eq!(
            out.value_as::<GlobValue>().unwrap().paths,
            ["src/main.rs", "src/util/str.rs"]
        );
        let out = call(
            &registry,
            serde_json::json!({"pattern": "*.rs", "path": "src"}),
        )
        .await;
        assert_eq!(
            out.value_as::<GlobValue>().unwrap().paths,
            ["src/main.rs", "src/util/str.rs"]
        );
        let out = call(&registry, serde_json::json!({"pattern": "src/*.rs"})).await;
        assert_eq!(out.value_as::<GlobValue>().unwrap().paths, ["src/main.rs"]);
        let ResultCard::Search(card) = out.result_card().unwrap() else {
            panic!()
        };
        assert!(!card.truncated());
        assert_eq!(card.title(), Some("1 file matching src/*.rs"));
    }

    #[tokio::test]
    async fn many_paths_are_all_in_the_value_and_truncated_on_the_card() {
        let (_d, registry) = setup();
        let out = call(&registry, serde_json::json!({"pattern": "*.rs"})).await;
        let value = out.value_as::<GlobValue>().unwrap();
        assert_eq!(value.paths.len(), 152);
        assert!(!value.paths.iter().any(|p| p.starts_with("target/")));
        assert!(!value.paths.iter().any(|p| p.starts_with(".secret/")));
        let text = out.content()[0].as_text().unwrap();
        assert!(text.contains("(Showing 100 of 152 files."), "{text}");
        let ResultCard::Search(card) = out.result_card().unwrap() else {
            panic!()
        };
        assert!(card.truncated());
        assert_eq!(card.total(), 152);
        assert_eq!(card.shape().shown(), 100);
    }

    #[tokio::test]
    async fn bad_input_is_a_clear_error_result() {
        let (_d, registry) = setup();
        let out = call(&registry, serde_json::json!({"pattern": "[z"})).await;
        assert_eq!(out.error().unwrap().code.as_str(), "INVALID_GLOB");
        let out = call(
            &registry,
            serde_json::json!({"pattern": "*", "path": "Cargo.toml"}),
        )
        .await;
        assert_eq!(out.error().unwrap().code.as_str(), "NOT_A_DIRECTORY");
        let out = call(&registry, serde_json::json!({"pattern": "*", "path": "/"})).await;
        assert_eq!(out.error().unwrap().code.as_str(), "OUTSIDE_WORKSPACE");
        let out = call(&registry, serde_json::json!({"pattern": "*.zig"})).await;
        assert!(!out.is_error());
        assert_eq!(
            out.content()[0].as_text().unwrap(),
            "No files match \"*.zig\" in ."
        );
    }
}
