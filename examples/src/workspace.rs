//! A workspace root that file tools are confined to.
//!
//! Every path a model sends is resolved against the root and checked after
//! resolving symlinks: `..` that climbs out, an absolute path elsewhere, and
//! a symlink (even a dangling one) that leads out are refused with an error
//! the model can act on. Paths shown back (in values, content and cards) are
//! relative to the root, with `/` separators.
//!
//! The check is done when the path is resolved; a process that swaps a
//! directory for a symlink between the check and the use can still escape.
//! Use an OS sandbox when the workspace itself is hostile.

use std::io;
use std::path::{Component, Path, PathBuf};

use toolprism::ToolError;

/// The error code of a path outside the workspace.
pub const OUTSIDE_WORKSPACE: &str = "OUTSIDE_WORKSPACE";
/// The error code of a path that does not exist.
pub const NOT_FOUND: &str = "NOT_FOUND";

/// A canonical root directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// A workspace at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Workspace { root })
    }

    /// The current directory as a workspace (what `Default` gives the
    /// built-in tools), or `.` if it cannot be read.
    pub fn current_dir() -> Self {
        std::env::current_dir()
            .ok()
            .and_then(|dir| Workspace::new(dir).ok())
            .unwrap_or_else(|| Workspace {
                root: PathBuf::from("."),
            })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` as the model should see it: relative to the root, `/`-separated,
    /// `.` for the root itself.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => path.display().to_string(),
        }
    }

    fn joined(&self, path: &str) -> Result<PathBuf, ToolError> {
        if path.is_empty() {
            return Err(ToolError::new(
                "the path is empty; pass a path relative to the workspace root, e.g. \"src/main.rs\"",
            )
            .with_code("INVALID_PATH"));
        }
        if path.contains('\0') {
            return Err(ToolError::new("the path contains a NUL byte").with_code("INVALID_PATH"));
        }
        Ok(self.root.join(path))
    }

    fn outside(&self, path: &str, why: &str) -> ToolError {
        ToolError::new(format!(
            "the path \"{}\" {why}, outside the workspace root; use a path inside the workspace, relative to its root (e.g. \"src/main.rs\")",
            path.escape_debug()
        ))
        .with_code(OUTSIDE_WORKSPACE)
    }

    fn check_inside(&self, path: &str, canonical: PathBuf) -> Result<PathBuf, ToolError> {
        if canonical.starts_with(&self.root) {
            Ok(canonical)
        } else if Path::new(path).is_absolute() {
            Err(self.outside(path, "is absolute and lies"))
        } else if Path::new(path)
            .components()
            .any(|c| c == Component::ParentDir)
        {
            Err(self.outside(path, "climbs out with `..`"))
        } else {
            Err(self.outside(path, "leads through a symlink"))
        }
    }

    /// Resolves a path that must exist (a file or a directory).
    pub fn resolve_existing(&self, path: &str) -> Result<PathBuf, ToolError> {
        let joined = self.joined(path)?;
        match joined.canonicalize() {
            Ok(canonical) => self.check_inside(path, canonical),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling symlink, or a path through one, may point out:
                // say so rather than "not found" when it does.
                if joined.symlink_metadata().is_ok() {
                    return Err(self.outside(path, "is a dangling symlink and may lead"));
                }
                Err(ToolError::new(format!(
                    "\"{}\" does not exist in the workspace; use glob to find the right path",
                    path.escape_debug()
                ))
                .with_code(NOT_FOUND))
            }
            Err(e) => Err(ToolError::new(format!(
                "cannot resolve \"{}\": {e}",
                path.escape_debug()
            ))),
        }
    }

    /// Resolves a file path that may not exist yet (for writing). The
    /// deepest existing ancestor is resolved and checked; what follows it
    /// must be plain names. A symlink at the path itself, dangling or not,
    /// is followed and checked too.
    pub fn resolve_for_write(&self, path: &str) -> Result<PathBuf, ToolError> {
        let joined = self.joined(path)?;
        if joined.symlink_metadata().is_ok() {
            // It exists (possibly as a symlink): its target must be inside.
            return match joined.canonicalize() {
                Ok(canonical) => self.check_inside(path, canonical),
                Err(_) => Err(self.outside(path, "is a dangling symlink and may lead")),
            };
        }
        let mut existing = joined.as_path();
        let mut rest = Vec::new();
        loop {
            match existing.symlink_metadata() {
                Ok(_) => break,
                Err(_) => {
                    let Some(name) = existing.file_name() else {
                        return Err(self.outside(path, "climbs out with `..` and may lie"));
                    };
                    rest.push(name.to_owned());
                    existing = match existing.parent() {
                        Some(parent) => parent,
                        None => return Err(self.outside(path, "may lie")),
                    };
                }
            }
        }
        // Components after the existing ancestor must be plain names:
        // `file_name` skips `..` only at the end, so check the whole tail.
        let tail = joined.strip_prefix(existing).unwrap_or(Path::new(""));
        if tail
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(self.outside(path, "climbs out with `..`"));
        }
        let base = match existing.canonicalize() {
            Ok(base) => self.check_inside(path, base)?,
            Err(_) => {
                return Err(self.outside(path, "goes through a dangling symlink and may lead"));
            }
        };
        let mut out = base;
        for name in rest.into_iter().rev() {
            out.push(name);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("ws/src")).unwrap();
        fs::write(dir.path().join("ws/src/a.txt"), "a").unwrap();
        fs::write(dir.path().join("secret.txt"), "s").unwrap();
        let ws = Workspace::new(dir.path().join("ws")).unwrap();
        (dir, ws)
    }

    #[test]
    fn inside_paths_resolve_and_display_relative() {
        let (_d, ws) = setup();
        let p = ws.resolve_existing("src/a.txt").unwrap();
        assert_eq!(ws.display(&p), "src/a.txt");
        let p = ws.resolve_existing("src/../src/a.txt").unwrap();
        assert_eq!(ws.display(&p), "src/a.txt");
        let abs = ws.root().join("src/a.txt");
        assert!(ws.resolve_existing(abs.to_str().unwrap()).is_ok());
        assert_eq!(ws.display(ws.root()), ".");
    }

    #[test]
    fn escapes_are_refused() {
        let (dir, ws) = setup();
        let e = ws.resolve_existing("../secret.txt").unwrap_err();
        assert_eq!(e.code().as_str(), OUTSIDE_WORKSPACE);
        assert!(e.message().contains("`..`"), "{}", e.message());
        let abs = dir.path().join("secret.txt");
        let e = ws.resolve_existing(abs.to_str().unwrap()).unwrap_err();
        assert!(e.message().contains("absolute"), "{}", e.message());
        std::os::unix::fs::symlink(&abs, ws.root().join("link")).unwrap();
        let e = ws.resolve_existing("link").unwrap_err();
        assert!(e.message().contains("symlink"), "{}", e.message());
        let e = ws.resolve_for_write("link").unwrap_err();
        assert_eq!(e.code().as_str(), OUTSIDE_WORKSPACE);
        std::os::unix::fs::symlink(dir.path().join("nope"), ws.root().join("dangling")).unwrap();
        assert_eq!(
            ws.resolve_for_write("dangling")
                .unwrap_err()
                .code()
                .as_str(),
            OUTSIDE_WORKSPACE
        );
        assert_eq!(
            ws.resolve_existing("dangling").unwrap_err().code().as_str(),
            OUTSIDE_WORKSPACE
        );
        std::os::unix::fs::symlink(dir.path(), ws.root().join("up")).unwrap();
        assert_eq!(
            ws.resolve_for_write("up/new/file.txt")
                .unwrap_err()
                .code()
                .as_str(),
            OUTSIDE_WORKSPACE
        );
        assert_eq!(
            ws.resolve_for_write("new/../../x.txt")
                .unwrap_err()
                .code()
                .as_str(),
            OUTSIDE_WORKSPACE
        );
    }

    #[test]
    fn new_files_resolve_inside() {
        let (_d, ws) = setup();
        let p = ws.resolve_for_write("src/new/deep/file.txt").unwrap();
        assert_eq!(ws.display(&p), "src/new/deep/file.txt");
        let e = ws.resolve_existing("src/missing.txt").unwrap_err();
        assert_eq!(e.code().as_str(), NOT_FOUND);
        assert!(ws.resolve_existing("").is_err());
    }
}
