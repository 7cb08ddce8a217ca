//! # toolprism-tools
//!
//! The built-in tools of [`toolprism`] for a coding agent: read, search and
//! change files confined to a workspace, run shell commands that cannot
//! outlive their call, fetch URLs, and query SQLite read-only. Each tool
//! returns one canonical value and draws a card from toolprism's closed
//! vocabulary.
//!
//! | tool | feature | value (what a program gets) | card |
//! |---|---|---|---|
//! | `read` | `fs` | a window of numbered lines | `read` |
//! | `grep` | `fs` | every match up to 10,000 | `search` (matches) |
//! | `glob` | `fs` | every path up to 10,000 | `search` (paths) |
//! | `edit` | `fs` | the file before and after | `diff` |
//! | `write` | `fs` | the file before (if any) and after | `diff` |
//! | `bash` | `shell` | exit code or signal, both streams (16 KiB each) | `terminal` |
//! | `web_fetch` | `web` (`https` for TLS) | status and capped body | `web` (fetch) |
//! | `sql_query` | `sql` | columns, the first 50 rows, the total | `generic` |
//!
//! ## Features
//!
//! Each group is a feature, so a program pays only for what it uses:
//!
//! - `fs` (default): [`read`], [`grep`], [`glob`], [`edit`], [`write`](mod@write), on
//!   ripgrep's crates (`ignore`, `grep-regex`, `grep-searcher`, `globset`)
//!   and `similar` for diffs.
//! - `shell` (default): [`bash`] (Unix), on `libc`.
//! - `web`: [`web_fetch`] over `http://`, on `ureq` with its default
//!   features off.
//! - `https`: `web` plus TLS on rustls with the `ring` provider and
//!   Mozilla's roots (`webpki-roots`); no OpenSSL, no system library.
//! - `sql`: [`sql_query`], on `rusqlite` with SQLite bundled (compiled from C).
//!
//! **Default: `fs` and `shell`**, the tools every coding agent needs, whose
//! dependencies are pure Rust and build quickly. `web`/`https` and `sql`
//! are opt-in: each compiles a C library (`ring`'s assembly and C for
//! `https`, all of SQLite for `sql`), which multiplies the cold build of
//! this crate (see the crate README for measured figures), and
//! `sql_query` needs a database path, so it cannot be made with `Default`
//! anyway.
//!
//! ## Registering the tools
//!
//! `read`, `grep`, `glob`, `edit`, `write`, `bash` and `web_fetch` are
//! `#[tool(builtin)]`: [`toolprism::Registry::builtin`] finds those of the
//! enabled features, each made with `Default` (confined to the current
//! directory). `builtin` relies on link-time registration, and the linker
//! drops a crate that the program never names: call [`link`] once (or name
//! anything else from this crate) before `Registry::builtin()`. Or skip the
//! registration machinery altogether with [`register`] or [`register_in`],
//! which add the same tools to any builder:
//!
//! ```
//! # #[cfg(all(feature = "fs", feature = "shell"))] {
//! use toolprism::Registry;
//! use toolprism_tools::Workspace;
//!
//! let dir = std::env::temp_dir();
//! let registry = toolprism_tools::register_in(Registry::builder(), &Workspace::new(&dir).unwrap())
//!     .build()
//!     .unwrap();
//! assert!(registry.definition("read").is_some());
//! assert!(registry.definition("bash").is_some());
//! # }
//! ```
//!
//! ## The walls
//!
//! - **Paths** ([`Workspace`]): every path is resolved inside the workspace
//!   root, symlinks followed by hand; `..` above the root, absolute paths
//!   elsewhere and symlinks that lead out are refused, and nothing outside
//!   the root is ever looked at, so a missing and an existing path outside
//!   get the same answer.
//! - **Ignore files** ([`grep`], [`glob`]): only `.gitignore` and `.ignore`
//!   files inside the root count; nothing in a parent directory, no global
//!   git excludes.
//! - **Processes** ([`bash`]): nothing a command starts outlives its call,
//!   `setsid`, double forks and `nohup` included (Linux; see
//!   [`bash`] for what holds elsewhere).
//! - **Redirects** ([`web_fetch`]): each is checked before it is followed,
//!   and only `http://` (and `https://` with TLS) is; a redirect to
//!   `file:`, `ftp:`, `data:` or another scheme is `REDIRECT_REFUSED`.
//! - **SQL** ([`sql_query`]): read-only by construction, decided by SQLite
//!   while it compiles the statement.
//!
//! ## Blocking work
//!
//! The file tools, `sql_query` and `web_fetch` do synchronous I/O on
//! tokio's blocking pool, never on the runtime's workers, and the long ones
//! (the `grep` and `glob` walks, reading a huge file, a SQLite statement, a
//! download) check between steps whether the call is still awaited, so a
//! timeout or a cancellation ends them too. Call the registry from a tokio
//! runtime with its time driver enabled (`#[tokio::main]` does).

#![deny(unsafe_code)]

#[cfg(feature = "shell")]
#[cfg(unix)]
pub mod bash;
#[cfg(all(unix, any(feature = "fs", feature = "shell")))]
#[allow(unsafe_code)]
mod beneath;
#[cfg(any(feature = "fs", feature = "web", feature = "sql"))]
mod blocking;
#[cfg(feature = "fs")]
mod diff;
#[cfg(feature = "fs")]
pub mod edit;
#[cfg(feature = "fs")]
pub mod glob;
#[cfg(feature = "fs")]
pub mod grep;
#[cfg(feature = "fs")]
pub mod read;
#[cfg(feature = "sql")]
pub mod sql_query;
mod text;
#[cfg(feature = "fs")]
mod walk;
#[cfg(feature = "web")]
pub mod web_fetch;
#[cfg(any(feature = "fs", feature = "shell"))]
pub mod workspace;
#[cfg(feature = "fs")]
pub mod write;

#[cfg(all(feature = "shell", unix))]
pub use bash::BashTool;
#[cfg(feature = "fs")]
pub use edit::EditTool;
#[cfg(feature = "fs")]
pub use glob::GlobTool;
#[cfg(feature = "fs")]
pub use grep::GrepTool;
#[cfg(feature = "fs")]
pub use read::ReadTool;
#[cfg(feature = "sql")]
pub use sql_query::SqlQueryTool;
/// The sandbox policy every built-in tool reads (crate `toolprism-sandbox`):
/// set it on the [`Workspace`] the tools are made from.
#[cfg(any(feature = "fs", feature = "shell"))]
pub use toolprism_sandbox as sandbox;
#[cfg(feature = "web")]
pub use web_fetch::WebFetchTool;
#[cfg(any(feature = "fs", feature = "shell"))]
pub use workspace::Workspace;
#[cfg(feature = "fs")]
pub use write::WriteTool;

use toolprism::RegistryBuilder;

/// Makes sure this crate is linked into the program, so that
/// [`toolprism::Registry::builtin`] finds its `builtin` tools. Call it once
/// before `Registry::builtin()` in a program that names nothing else from
/// this crate. It does nothing else.
///
/// ```
/// toolprism_tools::link();
/// let registry = toolprism::Registry::builtin().build().unwrap();
/// # #[cfg(feature = "fs")]
/// assert!(registry.definition("read").is_some());
/// ```
#[inline(never)]
pub fn link() {
    std::hint::black_box(());
}

/// Adds every built-in tool of the enabled features (not `sql_query`,
/// which needs a database) to `builder`, the file tools and `bash`
/// confined to the current directory: the same tools as
/// [`toolprism::Registry::builtin`], without relying on link-time
/// registration. Do not combine with `Registry::builtin()`: the names would
/// be registered twice.
pub fn register(builder: RegistryBuilder) -> RegistryBuilder {
    #[cfg(any(feature = "fs", feature = "shell"))]
    let builder = register_in(builder, &Workspace::current_dir());
    #[cfg(all(feature = "web", not(any(feature = "fs", feature = "shell"))))]
    let builder = builder.tool(WebFetchTool::new());
    builder
}

/// Adds the workspace tools of the enabled features (`read`, `grep`,
/// `glob`, `edit`, `write`, `bash`) to `builder`, confined to `workspace`,
/// and `web_fetch` when the `web` feature is on.
#[cfg(any(feature = "fs", feature = "shell"))]
pub fn register_in(builder: RegistryBuilder, workspace: &Workspace) -> RegistryBuilder {
    #[cfg(feature = "fs")]
    let builder = builder
        .tool(ReadTool::new(workspace.clone()))
        .tool(GrepTool::new(workspace.clone()))
        .tool(GlobTool::new(workspace.clone()))
        .tool(EditTool::new(workspace.clone()))
        .tool(WriteTool::new(workspace.clone()));
    #[cfg(all(feature = "shell", unix))]
    let builder = builder.tool(BashTool::new(workspace.clone()));
    #[cfg(feature = "web")]
    let builder = builder.tool(WebFetchTool::new());
    let _ = workspace;
    builder
}

#[cfg(test)]
mod tests {
    use toolprism::Registry;

    /// Which tools each feature brings, through both ways of registering.
    #[test]
    fn builtin_and_register_agree_on_the_enabled_tools() {
        let mut expected = Vec::new();
        if cfg!(feature = "shell") {
            expected.push("bash");
        }
        if cfg!(feature = "fs") {
            expected.extend(["edit", "glob", "grep", "read"]);
        }
        if cfg!(feature = "web") {
            expected.push("web_fetch");
        }
        if cfg!(feature = "fs") {
            expected.push("write");
        }
        let builtin = Registry::builtin().build().unwrap();
        let mut names: Vec<&str> = builtin.definitions().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, expected);
        let registered = super::register(Registry::builder()).build().unwrap();
        let mut names: Vec<&str> = registered.definitions().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, expected);
    }

    #[cfg(all(feature = "fs", feature = "shell", feature = "web", feature = "sql"))]
    #[test]
    fn the_attribute_sets_each_tools_facts() {
        use super::*;
        use std::time::Duration;
        use toolprism::{Tool, ToolAnnotations, ToolKind};

        assert_eq!(ReadTool::INFO.name, "read");
        assert_eq!(ReadTool::INFO.title, Some("Read file"));
        assert!(
            ReadTool::INFO
                .description
                .starts_with("Read a text file as numbered lines")
        );
        assert_eq!(ReadTool::INFO.kind, ToolKind::Read);
        assert_eq!(ReadTool::INFO.spill, toolprism::SpillBudget::Never);
        assert_eq!(
            ReadTool::INFO.annotations,
            ToolAnnotations::NONE
                .with_read_only(true)
                .with_idempotent(true)
        );
        assert_eq!(ReadTool::INFO.timeout, Some(Duration::from_secs(5)));
        assert_eq!(GrepTool::INFO.kind, ToolKind::Search);
        assert_eq!(GlobTool::INFO.kind, ToolKind::Search);
        assert_eq!(BashTool::INFO.kind, ToolKind::Execute);
        // The tool's own timeout outlives the longest timeout a call may ask
        // for, so a command that runs long is reported by bash itself.
        assert!(BashTool::INFO.timeout.unwrap() > Duration::from_millis(bash::MAX_TIMEOUT_MS));
        assert_eq!(
            BashTool::INFO.annotations,
            ToolAnnotations::NONE
                .with_destructive(true)
                .with_open_world(true)
        );
        assert_eq!(EditTool::INFO.kind, ToolKind::Edit);
        assert_eq!(WriteTool::INFO.kind, ToolKind::Edit);
        assert_eq!(WebFetchTool::INFO.kind, ToolKind::Fetch);
        assert_eq!(
            WebFetchTool::INFO.annotations,
            ToolAnnotations::NONE
                .with_read_only(true)
                .with_open_world(true)
        );
        assert_eq!(SqlQueryTool::INFO.kind, ToolKind::Read);
        for description in [
            GrepTool::INFO.description,
            BashTool::INFO.description,
            SqlQueryTool::INFO.description,
        ] {
            assert!(!description.is_empty() && !description.contains("# "));
        }
    }

    #[cfg(feature = "fs")]
    #[test]
    fn definitions_carry_both_schemas() {
        let registry = Registry::builder()
            .tool(super::GrepTool::default())
            .build()
            .unwrap();
        let grep = registry.definition("grep").unwrap();
        assert_eq!(
            grep.input_schema["required"],
            serde_json::json!(["pattern"])
        );
        assert_eq!(grep.input_schema["additionalProperties"], false);
        assert!(grep.output_schema["properties"]["matches"].is_object());
    }
}
