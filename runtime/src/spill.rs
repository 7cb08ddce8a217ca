//! Spill: content over a tool's budget goes to a file; the model reads a
//! head-and-tail preview and where the full text lives (DESIGN C15).
//!
//! Spill touches content only, never value or meta. It skips nested calls,
//! errors, content that is not all text, and tools whose budget is
//! [`SpillBudget::Never`](crate::SpillBudget::Never) (`read`, to avoid
//! read → spill → read loops). If the file cannot be written, the original
//! content is kept and the failure is reported in
//! [`ToolOutcome::warnings`](crate::ToolOutcome::warnings).
//!
//! ```
//! use toolprism::spill::SpillStore;
//! let dir = tempfile::tempdir().unwrap();
//! let store = SpillStore::new(dir.path().join("spill")).unwrap();
//! let registry = toolprism::Registry::builder().spill(store).spill_budget(4096).build().unwrap();
//! # let _ = registry;
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
    pub fn new(dir: impl Into<PathBuf>) -> io::Result<Self> {
        let dir = dir.into();
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir)?;
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
                    file.write_all(text.as_bytes())?;
                    file.sync_data()?;
                    return Ok(path);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Spills `content` when its text is over `budget` bytes. On a failed write
/// the content is left whole and the problem returned.
pub(crate) fn spill_content(
    store: &SpillStore,
    content: &mut Vec<ContentBlock>,
    budget: usize,
) -> Result<(), String> {
    let mut total = 0usize;
    for block in content.iter() {
        match block {
            ContentBlock::Text { text } => total += text.len(),
            ContentBlock::Image { .. } => return Ok(()),
        }
    }
    total += content.len().saturating_sub(1);
    if total <= budget {
        return Ok(());
    }
    let full = crate::content::content_text(content);
    let path = store.write(&full).map_err(|e| {
        format!(
            "spill failed, the full content was kept: could not write to {}: {e}",
            store.dir.display()
        )
    })?;
    *content = vec![ContentBlock::text(preview(&full, budget, &path))];
    Ok(())
}

/// Head and tail of `full`, within `budget`, with the note between them.
fn preview(full: &str, budget: usize, path: &Path) -> String {
    let head_end = line_cut(full, budget / 4, false);
    let tail_start = line_cut(full, full.len() - budget / 8, true).max(head_end);
    let head = &full[..head_end];
    let tail = &full[tail_start..];
    let omitted = tail_start - head_end;
    format!(
        "{head}\n\n(Omitted {omitted} of {total} bytes. The full result ({total} bytes) is stored at: {path}. Read that file in pages to see the rest.)\n\n{tail}",
        total = full.len(),
        path = path.display(),
    )
}

/// A cut near `at` on a char boundary, moved to a line boundary when one is
/// close (within a quarter of the way): backwards for a head, forwards for a tail.
fn line_cut(s: &str, at: usize, forward: bool) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    let slack = (at / 4).max(1);
    if forward {
        match s[at..].find('\n') {
            Some(i) if i <= slack => at + i + 1,
            _ => at,
        }
    } else {
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
        assert!(preview.len() < 1000 + 300, "{}", preview.len());
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
