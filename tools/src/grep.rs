//! `grep`: regex search over the workspace with ripgrep's crates
//! (`grep-regex`, `grep-searcher`, `ignore`).
//!
//! - **Walk**: `.gitignore` (even outside a git repository), `.ignore` and
//!   hidden files are skipped, as ripgrep does, and only ignore files inside
//!   the workspace count; binary files are skipped.
//!   Files are searched in path order, so results are stable. The walk and
//!   the search stop when the call is cancelled or times out.
//! - **Value** [`GrepValue`]: every match up to an acquisition cap of
//!   [`MAX_MATCHES`], plus `truncated` when the search stopped there. This
//!   is what a program calling the tool gets.
//! - **Render**: `Found N matches`, then the first [`SHOWN_MATCHES`] grouped
//!   by file (`Line n: text`), then how many are not shown.
//! - **Meta** [`GrepMeta`]: `{shape:"matches", files, truncated, total}`, the
//!   shown matches with lines cut to 200 chars, and trimmed further until its
//!   JSON is at most [`MAX_META_BYTES`]: meta stays small whatever the search found.
//! - **Cards**: a `generic` call card of kind `search`; a `search` result
//!   card built with [`SearchResult::matches`], which derives `truncated`
//!   from `total`, so the card cannot claim to be complete when it is not.
//!   When the acquisition cap stopped the search, `total` is a lower bound
//!   and the card's title says so (`10,000+ matches`).

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::card::{ResultCard, SearchFile, SearchMatch, SearchResult};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolKind, ToolResult, tool};

use crate::blocking::Stop;
use crate::text::{cap_chars, ellipsize, plural, thousands};
use crate::walk::{self, Flow};
use crate::workspace::{OpenFor, Workspace};

/// The acquisition cap: the search stops after this many matches.
pub const MAX_MATCHES: usize = 10_000;
/// How many matches `render` shows.
pub const SHOWN_MATCHES: usize = 100;
/// Longest line kept in the value, in chars.
pub const MAX_LINE_CHARS: usize = 2000;
/// Longest line kept in meta, in chars.
pub const META_LINE_CHARS: usize = 200;
/// Largest meta, in bytes of JSON.
pub const MAX_META_BYTES: usize = 16 * 1024;

/// Arguments of `grep`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrepArgs {
    /// A regular expression (Rust `regex` syntax), e.g. `fn\s+main`.
    pub pattern: String,
    /// A file or directory to search, relative to the workspace root. Default: the whole workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Only search files whose path matches this glob, e.g. `*.rs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// Match case-insensitively.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub case_insensitive: bool,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepMatch {
    /// The file, relative to the workspace root.
    pub path: String,
    /// 1-based line number.
    pub line_number: u64,
    /// The line, without its ending, capped at 2000 chars.
    pub line: String,
}

/// The value of `grep`: every match found, up to the cap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepValue {
    /// The matches, in path and line order.
    pub matches: Vec<GrepMatch>,
    /// Whether the search stopped at the cap, so more matches exist.
    pub truncated: bool,
}

/// The meta of `grep`: the shown matches, bounded in size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepMeta {
    /// Always `"matches"`.
    pub shape: String,
    /// The matches shown, grouped by file.
    pub files: Vec<SearchFile>,
    /// Whether fewer matches are shown than were found.
    pub truncated: bool,
    /// Matches found (a lower bound when `capped`).
    pub total: u64,
    /// The search stopped at the acquisition cap: `total` is a lower bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
}

/// Searches file contents inside its workspace (`Default`: the current
/// directory).
#[derive(Debug, Clone, Default)]
pub struct GrepTool {
    workspace: Workspace,
}

impl GrepTool {
    /// A `grep` confined to `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        GrepTool { workspace }
    }
}

/// Search file contents with a regular expression (ripgrep's engine).
/// Honours .gitignore and .ignore, skips hidden and binary files. Returns
/// matching lines grouped by file; narrow with `path` or `glob` (e.g. `*.rs`).
#[tool(
    name = "grep",
    title = "Search file contents",
    kind = search,
    read_only,
    idempotent,
    timeout_ms = 30000,
    blocking,
    builtin
)]
impl GrepTool {
    fn execute(&self, args: GrepArgs, cx: &ToolContext<'_>) -> Result<GrepValue, ToolError> {
        self.run(args, &Stop::of(cx), &|searched, found| {
            cx.report_progress(searched, None, Some(&progress_message(searched, found)));
        })
    }

    fn render(args: &GrepArgs, value: &GrepValue) -> Vec<ContentBlock> {
        let total = value.matches.len();
        if total == 0 {
            return vec![ContentBlock::text(format!(
                "No matches found for /{}/",
                args.pattern
            ))];
        }
        let mut out = if value.truncated {
            format!(
                "Found {total}+ matches (the search stopped at {MAX_MATCHES}; narrow the pattern, path or glob)\n"
            )
        } else {
            format!("Found {}\n", plural(total as u64, "match", "matches"))
        };
        let mut current: Option<&str> = None;
        for m in value.matches.iter().take(SHOWN_MATCHES) {
            if current != Some(m.path.as_str()) {
                out.push_str(&format!("\n{}:\n", m.path));
                current = Some(&m.path);
            }
            out.push_str(&format!("  Line {}: {}\n", m.line_number, m.line));
        }
        if total > SHOWN_MATCHES {
            out.push_str(&format!(
                "\n(Showing the first {SHOWN_MATCHES} of {total}{} matches. Narrow the search to see the rest.)",
                if value.truncated { "+" } else { "" }
            ));
        }
        vec![ContentBlock::text(out.trim_end().to_owned())]
    }

    fn presentation_meta(_args: &GrepArgs, value: &GrepValue) -> GrepMeta {
        let mut shown = SHOWN_MATCHES.min(value.matches.len());
        loop {
            let meta = GrepMeta {
                shape: "matches".to_owned(),
                files: group(&value.matches[..shown]),
                truncated: value.matches.len() > shown,
                total: value.matches.len() as u64,
                capped: value.truncated,
            };
            let size = serde_json::to_vec(&meta).map_or(usize::MAX, |v| v.len());
            if size <= MAX_META_BYTES || shown == 0 {
                return meta;
            }
            shown /= 2;
        }
    }

    fn present_call(args: &GrepArgs) -> CallCard {
        let place = args.path.as_deref().unwrap_or(".");
        let filter = args
            .glob
            .as_deref()
            .map(|g| format!(" ({g})"))
            .unwrap_or_default();
        CallCard::generic(
            format!("Grep /{}/ in {place}{filter}", args.pattern),
            Some(ToolKind::Search),
            serde_json::to_value(args).ok(),
        )
    }

    fn present_result(args: &GrepArgs, result: &ToolResult<GrepMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref().filter(|_| !result.is_error)?;
        // Meta that claims fewer matches than it shows is not drawn as a search.
        let card = SearchResult::matches(meta.files.clone(), meta.total).ok()?;
        let count = if meta.capped {
            format!("{}+ matches", thousands(meta.total))
        } else {
            plural(meta.total, "match", "matches")
        };
        Some(ResultCard::Search(
            card.with_title(format!("{count} for /{}/", args.pattern)),
        ))
    }
}

/// Matches grouped by file, lines cut for meta.
fn group(matches: &[GrepMatch]) -> Vec<SearchFile> {
    let mut files: Vec<SearchFile> = Vec::new();
    for m in matches {
        let entry = SearchMatch::new(m.line_number, ellipsize(&m.line, META_LINE_CHARS));
        match files.last_mut() {
            Some(file) if file.path == m.path => file.matches.push(entry),
            _ => files.push(SearchFile::new(m.path.clone(), vec![entry])),
        }
    }
    files
}

impl GrepTool {
    /// The search itself, synchronous (see [`crate::blocking`]).
    /// Searches; `progress(files searched, matches found)` is called after
    /// every [`PROGRESS_EVERY`] files.
    fn run(
        &self,
        args: GrepArgs,
        stop: &Stop,
        progress: &dyn Fn(u64, usize),
    ) -> Result<GrepValue, ToolError> {
        let start = self
            .workspace
            .resolve_existing(args.path.as_deref().unwrap_or("."))?;
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive)
            .build(&args.pattern)
            .map_err(|e| {
                ToolError::new(format!(
                    "the pattern is not a valid regular expression: {e}"
                ))
                .with_code("INVALID_PATTERN")
            })?;
        let overrides = match &args.glob {
            None => None,
            Some(glob) => {
                let mut overrides = OverrideBuilder::new(&start);
                let invalid = |e: ignore::Error| {
                    ToolError::new(format!(
                        "the glob \"{}\" is not valid: {e}",
                        ellipsize(glob, 200)
                    ))
                    .with_code("INVALID_GLOB")
                };
                overrides.add(glob).map_err(invalid)?;
                Some(overrides.build().map_err(invalid)?)
            }
        };
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .build();
        let mut matches = Vec::new();
        let mut truncated = false;
        let mut searched = 0_u64;
        walk::files(&self.workspace, &start, overrides.as_ref(), stop, |entry| {
            searched += 1;
            if searched.is_multiple_of(PROGRESS_EVERY) {
                progress(searched, matches.len());
            }
            let path = self.workspace.display(entry.path());
            // Opened beneath the root with no symlink followed: a directory
            // swapped for a symlink during the walk is skipped, never read.
            // An unreadable file is skipped, as ripgrep does.
            let Ok(file) = self.workspace.open_resolved(entry.path(), OpenFor::Search) else {
                return Flow::Continue;
            };
            let _ = searcher.search_file(
                &matcher,
                &file,
                Lossy(|line_number, line| {
                    if stop.is_stopped() {
                        return Ok(false);
                    }
                    if matches.len() >= MAX_MATCHES {
                        truncated = true;
                        return Ok(false);
                    }
                    let line = line.trim_end_matches(['\n', '\r']);
                    let line = match cap_chars(line, MAX_LINE_CHARS) {
                        (l, false) => l.into_owned(),
                        (l, true) => format!("{l}…[line truncated]"),
                    };
                    matches.push(GrepMatch {
                        path: path.clone(),
                        line_number,
                        line,
                    });
                    Ok(true)
                }),
            );
            if truncated {
                Flow::Break
            } else {
                Flow::Continue
            }
        })?;
        stop.check()?;
        Ok(GrepValue { matches, truncated })
    }
}

/// Files searched between two progress reports.
const PROGRESS_EVERY: u64 = 500;

fn progress_message(searched: u64, found: usize) -> String {
    format!(
        "{} searched, {} so far",
        plural(searched, "file", "files"),
        plural(found as u64, "match", "matches")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use toolprism::{Registry, ToolCall, ToolOutcome};

    fn setup() -> (tempfile::TempDir, Registry) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        fs::create_dir_all(ws.join("src")).unwrap();
        fs::create_dir_all(ws.join("target")).unwrap();
        fs::write(ws.join("src/a.rs"), "fn main() {}\nlet needle = 1;\n").unwrap();
        fs::write(ws.join("src/b.txt"), "Needle in text\n").unwrap();
        fs::write(ws.join("target/gen.rs"), "needle ignored\n").unwrap();
        fs::write(ws.join(".hidden"), "needle hidden\n").unwrap();
        fs::write(ws.join("skip.log"), "needle ignored by .ignore\n").unwrap();
        fs::write(ws.join(".gitignore"), "target/\n").unwrap();
        fs::write(ws.join(".ignore"), "*.log\n").unwrap();
        fs::write(ws.join("bin.dat"), b"needle\0binary").unwrap();
        let many: String = (0..250).map(|i| format!("hay needle {i}\n")).collect();
        fs::write(ws.join("src/many.txt"), many).unwrap();
        let registry = Registry::builder()
            .tool(GrepTool::new(Workspace::new(ws).unwrap()))
            .build()
            .unwrap();
        (dir, registry)
    }

    async fn call(registry: &Registry, args: serde_json::Value) -> ToolOutcome {
        registry
            .call(ToolCall::new("c", "grep", args.to_string()))
            .await
    }

    #[tokio::test]
    async fn honours_ignore_files_and_groups_by_file() {
        let (_d, registry) = setup();
        let out = call(
            &registry,
            serde_json::json!({"pattern": "needle", "glob": "*.rs"}),
        )
        .await;
        let value = out.value_as::<GrepValue>().unwrap();
        assert_eq!(
            value.matches,
            vec![GrepMatch {
                path: "src/a.rs".into(),
                line_number: 2,
                line: "let needle = 1;".into()
            }]
        );
        assert_eq!(
            out.content()[0].as_text().unwrap(),
            "Found 1 match\n\nsrc/a.rs:\n  Line 2: let needle = 1;"
        );
        let ResultCard::Search(card) = out.result_card().unwrap() else {
            panic!()
        };
        assert!(!card.truncated());
        assert_eq!(card.total(), 1);

        let out = call(
            &registry,
            serde_json::json!({"pattern": "NEEDLE", "caseInsensitive": true, "path": "src/b.txt"}),
        )
        .await;
        assert_eq!(out.value_as::<GrepValue>().unwrap().matches.len(), 1);
    }

    #[tokio::test]
    async fn value_keeps_every_match_while_render_meta_and_card_show_a_bounded_part() {
        let (_d, registry) = setup();
        let out = call(&registry, serde_json::json!({"pattern": "needle"})).await;
        let value = out.value_as::<GrepValue>().unwrap();
        // 1 in a.rs + 250 in many.txt; target/, .hidden, *.log and binary skipped.
        assert_eq!(value.matches.len(), 251);
        assert!(!value.truncated);
        let text = out.content()[0].as_text().unwrap();
        assert!(text.starts_with("Found 251 matches"));
        assert!(text.contains("(Showing the first 100 of 251 matches."));
        assert!(!text.contains("hay needle 150"));
        let meta: GrepMeta = serde_json::from_value(out.meta().unwrap().clone()).unwrap();
        assert_eq!(meta.total, 251);
        assert!(meta.truncated);
        let ResultCard::Search(card) = out.result_card().unwrap() else {
            panic!()
        };
        assert!(card.truncated());
        assert_eq!(card.total(), 251);
        assert_eq!(card.title(), Some("251 matches for /needle/"));
    }

    #[test]
    fn meta_is_bounded_in_bytes() {
        let value = GrepValue {
            matches: (0..100)
                .map(|i| GrepMatch {
                    path: format!("dir/{}/file{i}.txt", "d".repeat(150)),
                    line_number: i,
                    line: "z".repeat(2000),
                })
                .collect(),
            truncated: false,
        };
        let args = GrepArgs {
            pattern: "z".into(),
            path: None,
            glob: None,
            case_insensitive: false,
        };
        let meta = GrepTool::presentation_meta(&args, &value);
        assert!(serde_json::to_vec(&meta).unwrap().len() <= MAX_META_BYTES);
        assert!(meta.truncated);
        assert_eq!(meta.total, 100);
        let shown: usize = meta.files.iter().map(|f| f.matches.len()).sum();
        assert!(shown > 0 && shown < 100);
    }

    #[tokio::test]
    async fn the_acquisition_cap_stops_the_search_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let many: String = (0..(MAX_MATCHES + 50)).map(|i| format!("x{i}\n")).collect();
        fs::write(dir.path().join("big.txt"), many).unwrap();
        let registry = Registry::builder()
            .tool(GrepTool::new(Workspace::new(dir.path()).unwrap()))
            .build()
            .unwrap();
        let out = call(&registry, serde_json::json!({"pattern": "x"})).await;
        let value = out.value_as::<GrepValue>().unwrap();
        assert_eq!(value.matches.len(), MAX_MATCHES);
        assert!(value.truncated);
        let ResultCard::Search(card) = out.result_card().unwrap() else {
            panic!()
        };
        assert!(card.truncated());
        assert_eq!(card.title(), Some("10,000+ matches for /x/"));
    }

    /// A long search reports its progress to the caller's sink: every 500
    /// files, with what it found so far.
    #[tokio::test]
    async fn a_long_search_reports_progress() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..1_200 {
            let text = if i % 100 == 0 { "needle\n" } else { "hay\n" };
            fs::write(dir.path().join(format!("f{i:04}.txt")), text).unwrap();
        }
        let registry = Registry::builder()
            .tool(GrepTool::new(Workspace::new(dir.path()).unwrap()))
            .build()
            .unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = seen.clone();
        let options = toolprism::CallOptions::new().with_progress(move |p| {
            sink.lock().unwrap().push(p.clone());
        });
        let out = registry
            .call_with(
                ToolCall::new("c", "grep", r#"{"pattern":"needle"}"#),
                &options,
            )
            .await;
        assert_eq!(out.value_as::<GrepValue>().unwrap().matches.len(), 12);
        let seen = seen.lock().unwrap();
        let done: Vec<u64> = seen.iter().map(|p| p.done).collect();
        assert_eq!(done, [500, 1000]);
        assert!(seen.iter().all(|p| p.total.is_none()));
        let message = seen[0].message.as_deref().unwrap();
        assert!(message.starts_with("500 files searched, "), "{message}");
    }

    #[tokio::test]
    async fn bad_input_is_a_clear_error_result() {
        let (_d, registry) = setup();
        let out = call(&registry, serde_json::json!({"pattern": "("})).await;
        assert_eq!(out.error().unwrap().code.as_str(), "INVALID_PATTERN");
        assert!(out.error().unwrap().message.contains("regular expression"));
        assert_eq!(out.result_card().unwrap().tag(), "generic");
        let out = call(
            &registry,
            serde_json::json!({"pattern": "x", "path": "../"}),
        )
        .await;
        assert_eq!(out.error().unwrap().code.as_str(), "OUTSIDE_WORKSPACE");
        let out = call(&registry, serde_json::json!({"pattern": "x", "glob": "a{"})).await;
        assert_eq!(out.error().unwrap().code.as_str(), "INVALID_GLOB");
        let out = call(&registry, serde_json::json!({"pattern": "zzz_nothing"})).await;
        assert!(!out.is_error());
        assert_eq!(
            out.content()[0].as_text().unwrap(),
            "No matches found for /zzz_nothing/"
        );
        let ResultCard::Search(card) = out.result_card().unwrap() else {
            panic!()
        };
        assert_eq!((card.total(), card.truncated()), (0, false));
    }
}
