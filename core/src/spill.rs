//! Spill: content over a tool's budget goes to a file; the model reads a
//! head-and-tail preview and where the full text lives (C15 in `docs/contract.md`).
//!
//! The budget is the tool's ([`ToolInfo::spill`](crate::ToolInfo::spill),
//! the `spill = N | never` key of `#[tool]`), or else the registry's
//! ([`RegistryBuilder::spill_budget`](crate::RegistryBuilder::spill_budget),
//! [`DEFAULT_SPILL_BUDGET`](crate::DEFAULT_SPILL_BUDGET) unless set). It
//! counts the bytes of the content's text. Over budget, the full text is
//! written to a [`SpillStore`] and the content becomes one text block:
//!
//! ```text
//! <head of the text>
//!
//! (Omitted 80415 of 96000 bytes. The full result (96000 bytes) is stored at: <file>. Read that file in pages to see the rest.)
//!
//! <tail of the text>
//! ```
//!
//! The preview fits the budget (head two thirds, tail one third of what the
//! note leaves), cut at line ends when one is near.
//!
//! Spill touches content only, never value or meta. It runs after the
//! post-execute policies, on what the model would read. It skips nested
//! calls, errors, content that is not all text, and tools whose budget is
//! [`SpillBudget::Never`](crate::SpillBudget::Never) (`read`, to avoid
//! read → spill → read loops). If the file cannot be written, the original
//! content is kept and the failure is reported in
//! [`ToolOutcome::warnings`](crate::ToolOutcome::warnings).
//!
//! ```
//! use toolprism::spill::SpillStore;
//! use toolprism::{ContentBlock, NoMeta, Registry, Tool, ToolCall, ToolContext, ToolError, ToolInfo};
//!
//! #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
//! struct Args { lines: u32 }
//!
//! struct Count;
//! impl Tool for Count {
//!     type Args = Args;
//!     type Value = u32;
//!     type Meta = NoMeta;
//!     const INFO: ToolInfo = ToolInfo::new("count", "Count up, one number a line.");
//!     async fn execute(&self, args: Args, _: &ToolContext<'_>) -> Result<u32, ToolError> {
//!         Ok(args.lines)
//!     }
//!     fn render(_: &Args, n: &u32) -> Vec<ContentBlock> {
//!         vec![ContentBlock::text((1..=*n).map(|i| format!("{i}\n")).collect::<String>())]
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! let registry = Registry::builder()
//!     .tool(Count)
//!     .spill(SpillStore::new(dir.path().join("spill")).unwrap())
//!     .spill_budget(1024)
//!     .build()
//!     .unwrap();
//! let out = registry.call(ToolCall::new("1", "count", r#"{"lines":10000}"#)).await;
//! let preview = out.content()[0].as_text().unwrap();
//! assert!(preview.len() <= 1024);
//! assert!(preview.starts_with("1\n2\n3\n") && preview.ends_with("9999\n10000\n"));
//! assert!(preview.contains("(48894 bytes) is stored at: "));
//! // The value is untouched; the file holds the full text.
//! assert_eq!(out.value().unwrap(), 10000);
//! let file = std::fs::read_dir(dir.path().join("spill")).unwrap().next().unwrap().unwrap();
//! assert_eq!(std::fs::read_to_string(file.path()).unwrap().len(), 48894);
//! # });
//! ```

use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::content::ContentBlock;

/// A directory of spilled content, readable by its owner only.
#[derive(Debug)]
pub struct SpillStore {
    dir: PathBuf,
    seed: RandomState,
    counter: AtomicU64,
}

impl SpillStore {
    /// A store in `dir`, created (mode 0700 on Unix) if missing.
    ///
    /// The directory holds what tools produced, so on Unix it must be the
    /// current user's own and no one else's: an existing directory owned by
    /// this user with a wider mode (say 0755) is tightened to 0700; a
    /// directory owned by another user, or a symlink, is refused, since
    /// whoever controls it could read or swap the files.
    pub fn new(dir: impl Into<PathBuf>) -> io::Result<Self> {
        let dir = dir.into();
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir)?;
        #[cfg(unix)]
        owner_only(&dir)?;
        Ok(SpillStore {
            dir,
            seed: RandomState::new(),
            counter: AtomicU64::new(0),
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `text` to a new file whose name is random (never derived from
    /// a tool's input), readable and writable by the owner only.
    pub fn write(&self, text: &str) -> io::Result<PathBuf> {
        loop {
            let mut hasher = self.seed.build_hasher();
            hasher.write_u64(self.counter.fetch_add(1, Ordering::Relaxed));
            hasher.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            let path = self.dir.join(format!("spill-{:016x}.txt", hasher.finish()));
            let mut options = fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(&path) {
                Ok(mut file) => {
                    let written = file
                        .write_all(text.as_bytes())
                        .and_then(|()| file.sync_data());
                    if let Err(e) = written {
                        // Leave no partial copy behind.
                        drop(file);
                        let _ = fs::remove_file(&path);
                        return Err(e);
                    }
                    return Ok(path);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Makes sure `dir` is a real directory of the current user's, mode 0700.
#[cfg(unix)]
fn owner_only(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "the spill directory {} is a symlink or not a directory; give a real directory",
                dir.display()
            ),
        ));
    }
    let me = current_uid(dir)?;
    if meta.uid() != me {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the spill directory {} belongs to another user (uid {}); use a directory of your own",
                dir.display(),
                meta.uid()
            ),
        ));
    }
    if meta.mode() & 0o777 != 0o700 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The current user's id, read from a file this process creates in `dir`
/// (the standard library has no `geteuid`, and this crate uses no `unsafe`).
#[cfg(unix)]
fn current_uid(dir: &Path) -> io::Result<u32> {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile_in(dir)?;
    let uid = fs::metadata(&probe).map(|m| m.uid());
    let _ = fs::remove_file(&probe);
    uid
}

#[cfg(unix)]
fn tempfile_in(dir: &Path) -> io::Result<PathBuf> {
    let seed = RandomState::new();
    for attempt in 0u64..16 {
        let mut hasher = seed.build_hasher();
        hasher.write_u64(attempt);
        let path = dir.join(format!(".owner-probe-{:016x}", hasher.finish()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(
        "could not create a probe file in the spill directory",
    ))
}

/// Spills `content` when its text is over `budget` bytes: the full text
/// goes to a new file of `store`, and `content` becomes one text block with
/// a head and a tail of it, and between them how much was omitted, the full
/// size and where the file is. The preview fits the budget when the budget
/// has room for the note; when the note alone is over the budget, the
/// preview is the note only.
///
/// Left alone: content within budget, content with a non-text block, and
/// content that a preview would not make shorter. On a failed write the
/// content is left whole and the problem returned.
pub(crate) fn spill_content(
    store: &SpillStore,
    content: &mut Vec<ContentBlock>,
    budget: usize,
) -> Result<(), String> {
    let mut total = 0usize;
    for block in content.iter() {
        match block {
            ContentBlock::Text { text } => total += text.len(),
            // Spilling is for text: a block of another kind stays whole.
            _ => return Ok(()),
        }
    }
    // Blocks are joined with a newline, as in the spilled file.
    total += content.len().saturating_sub(1);
    if total <= budget {
        return Ok(());
    }
    let full = crate::content::content_text(content);
    // Room for the longest path the store writes, so the check holds for
    // the real one.
    if note(
        full.len(),
        full.len(),
        &store.dir.join("spill-0000000000000000.txt"),
    )
    .len()
        >= full.len()
    {
        return Ok(());
    }
    let path = store.write(&full).map_err(|e| {
        format!(
            "spill failed, the full content was kept: could not write to {}: {e}",
            store.dir.display()
        )
    })?;
    *content = vec![ContentBlock::text(preview(&full, budget, &path))];
    Ok(())
}

/// What goes between the head and the tail.
fn note(omitted: usize, total: usize, path: &Path) -> String {
    format!(
        "\n\n(Omitted {omitted} of {total} bytes. The full result ({total} bytes) is stored at: {path}. Read that file in pages to see the rest.)\n\n",
        path = path.display(),
    )
}

/// Head and tail of `full`, two thirds and one third of what the budget
/// leaves besides the note, with the note between them.
fn preview(full: &str, budget: usize, path: &Path) -> String {
    let room = budget.saturating_sub(note(full.len(), full.len(), path).len());
    let head_end = line_cut(full, room * 2 / 3, false);
    let tail_start = line_cut(full, full.len() - room / 3, true).max(head_end);
    let mut out = String::with_capacity(budget.max(256));
    out.push_str(&full[..head_end]);
    out.push_str(&note(tail_start - head_end, full.len(), path));
    out.push_str(&full[tail_start..]);
    out
}

/// A cut near `at` on a char boundary, moved to a line boundary when one is
/// close (within a quarter of the piece kept): backwards for a head, forwards
/// for a tail. The piece kept never grows past `at`.
fn line_cut(s: &str, at: usize, forward: bool) -> usize {
    let mut at = at.min(s.len());
    if forward {
        at = s.ceil_char_boundary(at);
        let slack = (s.len() - at) / 4;
        match s[at..].find('\n') {
            Some(i) if i <= slack => at + i + 1,
            _ => at,
        }
    } else {
        at = s.floor_char_boundary(at);
        let slack = at / 4;
        match s[..at].rfind('\n') {
            Some(i) if at - i <= slack => i + 1,
            _ => at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_budget_text_spills_to_an_owner_only_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path().join("s")).unwrap();
        let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let mut content = vec![ContentBlock::text(text.clone())];
        spill_content(&store, &mut content, 1000).unwrap();
        let preview = content[0].as_text().unwrap();
        assert!(preview.len() <= 1000, "{}", preview.len());
        assert!(preview.len() > 900, "{}", preview.len());
        assert!(preview.contains(&format!("of {} bytes", text.len())));
        assert!(preview.starts_with("line 0\n"));
        assert!(preview.trim_end().ends_with("line 1999"));
        let path = preview
            .split("stored at: ")
            .nth(1)
            .unwrap()
            .split(". Read")
            .next()
            .unwrap();
        assert_eq!(fs::read_to_string(path).unwrap(), text);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(path).unwrap().permissions().mode() & 0o777,
                0o600
            );
            assert_eq!(
                fs::metadata(store.dir()).unwrap().permissions().mode() & 0o777,
                0o700
            );
        }
    }

    #[test]
    fn previews_fit_the_budget_and_cut_on_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path()).unwrap();
        let texts = [
            "é".repeat(3000),
            (0..2000).map(|i| format!("{i}\n")).collect::<String>(),
            "x".repeat(10_000),
        ];
        for text in texts {
            for budget in [400, 401, 402, 1000, 1001, 4000] {
                let mut content = vec![ContentBlock::text(text.clone())];
                spill_content(&store, &mut content, budget).unwrap();
                let preview = content[0].as_text().unwrap();
                assert!(preview.len() <= budget, "{} > {budget}", preview.len());
                let (head, rest) = preview.split_once("\n\n(Omitted ").unwrap();
                let tail = rest.split_once(".)\n\n").unwrap().1;
                assert!(text.starts_with(head) && text.ends_with(tail));
                assert!(!head.is_empty() && !tail.is_empty());
            }
        }
    }

    #[test]
    fn a_budget_too_small_for_the_note_gives_the_note_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path()).unwrap();
        let text = "z".repeat(5000);
        let mut content = vec![ContentBlock::text(text.clone())];
        spill_content(&store, &mut content, 10).unwrap();
        let preview = content[0].as_text().unwrap();
        assert!(
            preview.starts_with("\n\n(Omitted 5000 of 5000 bytes."),
            "{preview}"
        );
        // Not worth it: the note would be longer than the content.
        let mut short = vec![ContentBlock::text("z".repeat(50))];
        spill_content(&store, &mut short, 10).unwrap();
        assert_eq!(short, vec![ContentBlock::text("z".repeat(50))]);
        assert_eq!(fs::read_dir(store.dir()).unwrap().count(), 1);
    }

    #[test]
    fn several_blocks_spill_as_one_text() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path()).unwrap();
        let mut content = vec![
            ContentBlock::text("a".repeat(600)),
            ContentBlock::text("b".repeat(600)),
        ];
        spill_content(&store, &mut content, 1000).unwrap();
        assert_eq!(content.len(), 1);
        let file = fs::read_dir(store.dir()).unwrap().next().unwrap().unwrap();
        let full = fs::read_to_string(file.path()).unwrap();
        assert_eq!(full, format!("{}\n{}", "a".repeat(600), "b".repeat(600)));
        // Exactly at budget (600 + 1 + 600 = 1201): stays.
        let mut at_budget = vec![
            ContentBlock::text("a".repeat(600)),
            ContentBlock::text("b".repeat(600)),
        ];
        spill_content(&store, &mut at_budget, 1201).unwrap();
        assert_eq!(at_budget.len(), 2);
    }

    #[test]
    fn within_budget_or_images_stay() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path()).unwrap();
        let mut small = vec![ContentBlock::text("short")];
        spill_content(&store, &mut small, 100).unwrap();
        assert_eq!(small, vec![ContentBlock::text("short")]);
        let mut image = vec![
            ContentBlock::text("x".repeat(500)),
            ContentBlock::image("image/png", ""),
        ];
        let before = image.clone();
        spill_content(&store, &mut image, 100).unwrap();
        assert_eq!(image, before);
    }

    #[test]
    fn a_failed_write_keeps_the_content() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path().join("gone")).unwrap();
        fs::remove_dir(store.dir()).unwrap();
        let mut content = vec![ContentBlock::text("y".repeat(5000))];
        let before = content.clone();
        let err = spill_content(&store, &mut content, 100).unwrap_err();
        assert!(err.contains("spill failed"), "{err}");
        assert_eq!(content, before);
    }
}
