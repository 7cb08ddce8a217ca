//! A tool of your own, registered next to the built-in tools.
//!
//! `line_count` counts the lines of the files under a directory. It reuses
//! `toolprism_tools::Workspace`, so its paths are confined exactly as the
//! built-in tools' are, and it sits in the same registry as `read`, `grep`,
//! `glob`, `edit`, `write` and `bash`.
//!
//! ```sh
//! cargo run -p toolprism-examples --example own_tool
//! ```

use toolprism::{ContentBlock, Registry, ToolCall, ToolContext, ToolError, tool};
use toolprism_tools::Workspace;

/// Arguments of `line_count`.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct LineCountArgs {
    /// A directory relative to the workspace root. Default: the root.
    #[serde(default)]
    path: Option<String>,
}

/// Lines per file, and the sum.
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct LineCount {
    /// `(file, lines)`, sorted by file.
    files: Vec<(String, u64)>,
    /// All lines.
    total: u64,
}

/// Counts lines of the files directly under a directory of its workspace.
#[derive(Debug, Clone)]
struct LineCountTool {
    workspace: Workspace,
}

/// Count the lines of every file directly under a directory.
#[tool(kind = read, read_only, idempotent)]
impl LineCountTool {
    async fn execute(
        &self,
        args: LineCountArgs,
        _cx: &ToolContext<'_>,
    ) -> Result<LineCount, ToolError> {
        // The same confinement as the built-in tools: `..`, absolute paths
        // elsewhere and symlinks out are refused.
        let dir = self
            .workspace
            .resolve_existing(args.path.as_deref().unwrap_or("."))?;
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| e.to_string())? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_file() {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                files.push((self.workspace.display(&path), text.lines().count() as u64));
            }
        }
        files.sort();
        let total = files.iter().map(|(_, n)| n).sum();
        Ok(LineCount { files, total })
    }

    fn render(_args: &LineCountArgs, value: &LineCount) -> Vec<ContentBlock> {
        let mut text: String = value
            .files
            .iter()
            .map(|(file, n)| format!("{n:>6} {file}\n"))
            .collect();
        text.push_str(&format!("{:>6} total", value.total));
        vec![ContentBlock::text(text)]
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "three\n").unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();

    // The built-in tools confined to the workspace, and ours next to them.
    let registry = toolprism_tools::register_in(Registry::builder(), &workspace)
        .tool(LineCountTool {
            workspace: workspace.clone(),
        })
        .build()
        .unwrap();
    let names: Vec<&str> = registry.definitions().map(|d| d.name.as_str()).collect();
    println!("tools: {}", names.join(", "));
    assert!(names.contains(&"line_count") && names.contains(&"read"));

    let out = registry.call(ToolCall::new("c1", "line_count", "{}")).await;
    println!("{}", toolprism::content_text(out.content()));
    assert_eq!(out.value_as::<LineCount>().unwrap().total, 3);

    // A built-in tool reads a file our tool counted.
    let out = registry
        .call(ToolCall::new("c2", "read", r#"{"path":"a.txt"}"#))
        .await;
    assert_eq!(out.result_card().unwrap().tag(), "read");

    // Confinement holds for our tool as for the built-in ones.
    let out = registry
        .call(ToolCall::new("c3", "line_count", r#"{"path":"../"}"#))
        .await;
    assert_eq!(out.error().unwrap().code.as_str(), "OUTSIDE_WORKSPACE");
    println!("{}", toolprism::content_text(out.content()));
}

// Built as a test by `cargo test` (`test = true` in Cargo.toml): running the
// program is the test.
#[cfg(test)]
#[test]
fn the_example_runs() {
    main();
}
