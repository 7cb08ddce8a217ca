//! A workspace root that the file tools and `bash` are confined to.
//!
//! Every path a model sends is resolved against the root one component at a
//! time, following symlinks by hand:
//!
//! - `..` that would climb above the root, an absolute path that does not
//!   lie under the root, and a symlink whose target leaves the root are
//!   refused with code [`OUTSIDE_WORKSPACE`];
//! - resolution never looks at anything outside the root: it stats and reads
//!   links only inside it, so whether a path outside the root exists, and
//!   what it is, cannot be learned from any answer (a missing and an
//!   existing path outside get the same code and the same message);
//! - a symlink is followed only while its target stays inside the root, read
//!   as written (an absolute target must start with the root; a relative one
//!   must not climb above it), even when a detour outside would lead back in;
//! - paths shown back (in values, content and cards) are relative to the
//!   root, with `/` separators.
//!
//! The check is done when the path is resolved; a process that swaps a
//! directory for a symlink between the check and the use can still escape.
//! Use an OS sandbox when the workspace itself is hostile.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use toolprism::ToolError;

/// The error code of a path outside the workspace.
pub const OUTSIDE_WORKSPACE: &str = "OUTSIDE_WORKSPACE";
/// The error code of a path inside the workspace that does not exist.
pub const NOT_FOUND: &str = "NOT_FOUND";
/// The error code of a path that cannot name a file (empty, NUL byte, a
/// symlink loop, `..` after a directory that does not exist).
pub const INVALID_PATH: &str = "INVALID_PATH";

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// Most symlinks followed while resolving one path (Linux's own limit).
const MAX_SYMLINKS: u32 = 40;

/// A canonical root directory.
///
/// `Default` is the current directory (what the built-in tools use when
/// made by `Registry::builtin()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The canonical root.
    root: PathBuf,
    /// The root as it was given, made absolute, when it differs from the
    /// canonical one (a root under a symlinked directory): absolute paths
    /// under it are accepted too.
    alias: Option<PathBuf>,
    /// Why there is no root: the current directory could not be read.
    unavailable: Option<Arc<str>>,
}

impl Default for Workspace {
    fn default() -> Self {
        Workspace::current_dir()
    }
}

impl Workspace {
    /// A workspace at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let given = root.as_ref();
        let canonical = given.canonicalize()?;
        if !canonical.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", canonical.display()),
            ));
        }
        let alias = std::path::absolute(given)
            .ok()
            .filter(|a| a != &canonical)
            .filter(|a| !a.components().any(|c| c == Component::ParentDir));
        Ok(Workspace {
            root: canonical,
            alias,
            unavailable: None,
        })
    }

    /// The current directory as a workspace. When it cannot be read (it was
    /// removed, or is not accessible), every path is refused with an error
    /// that says so.
    pub fn current_dir() -> Self {
        match std::env::current_dir().and_then(Workspace::new) {
            Ok(workspace) => workspace,
            Err(e) => Workspace {
                root: PathBuf::new(),
                alias: None,
                unavailable: Some(format!("the current directory cannot be read: {e}").into()),
            },
        }
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

    /// Resolves a path that must exist (a file or a directory).
    pub fn resolve_existing(&self, path: &str) -> Result<PathBuf, ToolError> {
        self.resolve(path, Want::Existing)
    }

    /// Resolves a file path that may not exist yet (for writing). What
    /// exists is resolved as in [`resolve_existing`](Self::resolve_existing);
    /// from the first component that does not exist on, the rest must be
    /// plain names, which are appended as they are.
    pub fn resolve_for_write(&self, path: &str) -> Result<PathBuf, ToolError> {
        self.resolve(path, Want::ForWrite)
    }

    fn resolve(&self, path: &str, want: Want) -> Result<PathBuf, ToolError> {
        if let Some(why) = &self.unavailable {
            return Err(ToolError::new(format!("there is no workspace root: {why}")));
        }
        if path.is_empty() {
            return Err(ToolError::new(
                "the path is empty; pass a path relative to the workspace root, e.g. \"src/main.rs\"",
            )
            .with_code(INVALID_PATH));
        }
        if path.len() > MAX_PATH_BYTES {
            return Err(ToolError::new(format!(
                "the path is {} bytes long; a path has at most {MAX_PATH_BYTES}",
                path.len()
            ))
            .with_code(INVALID_PATH));
        }
        if path.contains('\0') {
            return Err(ToolError::new("the path contains a NUL byte").with_code(INVALID_PATH));
        }
        let given = Path::new(path);
        let mut pending: VecDeque<Part> = VecDeque::new();
        if given.has_root() {
            let Some(rest) = self.under_root(given) else {
                return Err(outside(path, Why::Absolute));
            };
            push_parts(&mut pending, rest, Origin::Path);
        } else {
            push_parts(&mut pending, given, Origin::Path);
        }

        let mut cur = self.root.clone();
        let mut links = 0;
        while let Some(part) = pending.pop_front() {
            let name = match part.kind {
                PartKind::Up => {
                    if cur == self.root {
                        return Err(outside(path, part.origin.why()));
                    }
                    cur.pop();
                    continue;
                }
                PartKind::Name(name) => name,
            };
            let next = cur.join(&name);
            match next.symlink_metadata() {
                Ok(meta) if meta.file_type().is_symlink() => {
                    links += 1;
                    if links > MAX_SYMLINKS {
                        return Err(ToolError::new(format!(
                            "\"{}\" goes through more than {MAX_SYMLINKS} symlinks (a loop?)",
                            quoted(path)
                        ))
                        .with_code(INVALID_PATH));
                    }
                    let target = next.read_link().map_err(|e| cannot(path, &e))?;
                    let mut parts = VecDeque::new();
                    if target.has_root() {
                        let Some(rest) = self.under_root(&target) else {
                            return Err(outside(path, Why::Symlink));
                        };
                        cur = self.root.clone();
                        push_parts(&mut parts, rest, Origin::Symlink);
                    } else {
                        push_parts(&mut parts, &target, Origin::Symlink);
                    }
                    parts.extend(pending);
                    pending = parts;
                }
                Ok(_) => cur = next,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    pending.push_front(Part {
                        kind: PartKind::Name(name),
                        origin: part.origin,
                    });
                    return self.missing(path, want, cur, pending);
                }
                Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
                    return Err(ToolError::new(format!(
                        "\"{}\" goes through a file as if it were a directory",
                        quoted(path)
                    ))
                    .with_code(match want {
                        Want::Existing => NOT_FOUND,
                        Want::ForWrite => INVALID_PATH,
                    }));
                }
                Err(e) => return Err(cannot(path, &e)),
            }
        }
        Ok(cur)
    }

    /// `cur` (inside the root) has no entry named by the first of `rest`.
    fn missing(
        &self,
        path: &str,
        want: Want,
        cur: PathBuf,
        rest: VecDeque<Part>,
    ) -> Result<PathBuf, ToolError> {
        // Whether the rest would climb above the root is a property of the
        // text alone: say so before saying "not found".
        let mut depth = cur.strip_prefix(&self.root).map_or(0, |r| {
            i64::try_from(r.components().count()).unwrap_or(i64::MAX)
        });
        for part in &rest {
            match part.kind {
                PartKind::Up => depth -= 1,
                PartKind::Name(_) => depth += 1,
            }
            if depth < 0 {
                return Err(outside(path, part.origin.why()));
            }
        }
        match want {
            Want::Existing => Err(ToolError::new(format!(
                "\"{}\" does not exist in the workspace; use glob to find the right path",
                quoted(path)
            ))
            .with_code(NOT_FOUND)),
            Want::ForWrite => {
                let mut out = cur;
                for part in rest {
                    match part.kind {
                        PartKind::Name(name) => out.push(name),
                        PartKind::Up => {
                            return Err(ToolError::new(format!(
                                "\"{}\" uses `..` after a directory that does not exist; write the path without it",
                                quoted(path)
                            ))
                            .with_code(INVALID_PATH));
                        }
                    }
                }
                Ok(out)
            }
        }
    }

    /// What follows the root (or its alias) in an absolute path, read as text.
    fn under_root<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(&self.root).ok().or_else(|| {
            self.alias
                .as_deref()
                .and_then(|alias| path.strip_prefix(alias).ok())
        })
    }
}

#[derive(Debug, Clone, Copy)]
enum Want {
    Existing,
    ForWrite,
}

/// Where a component came from: the model's path, or a symlink's target.
#[derive(Debug, Clone, Copy)]
enum Origin {
    Path,
    Symlink,
}

impl Origin {
    fn why(self) -> Why {
        match self {
            Origin::Path => Why::ParentDir,
            Origin::Symlink => Why::Symlink,
        }
    }
}

#[derive(Debug)]
enum PartKind {
    Name(OsString),
    Up,
}

#[derive(Debug)]
struct Part {
    kind: PartKind,
    origin: Origin,
}

/// Appends the walkable components of a relative path (`.` dropped).
fn push_parts(out: &mut VecDeque<Part>, path: &Path, origin: Origin) {
    for component in path.components() {
        let kind = match component {
            Component::Normal(name) => PartKind::Name(name.to_owned()),
            Component::ParentDir => PartKind::Up,
            Component::CurDir | Component::RootDir | Component::Prefix(_) => continue,
        };
        out.push_back(Part { kind, origin });
    }
}

/// Why a path is outside: decided from the text of the path and from what
/// lies inside the root, never from what lies outside it.
#[derive(Debug, Clone, Copy)]
enum Why {
    Absolute,
    ParentDir,
    Symlink,
}

fn outside(path: &str, why: Why) -> ToolError {
    let how = match why {
        Why::Absolute => "is absolute and does not lie under the workspace root",
        Why::ParentDir => "climbs out of the workspace root with `..`",
        Why::Symlink => "leads through a symlink out of the workspace root",
    };
    ToolError::new(format!(
        "the path \"{}\" {how}; use a path inside the workspace, relative to its root (e.g. \"src/main.rs\")",
        quoted(path)
    ))
    .with_code(OUTSIDE_WORKSPACE)
}

/// The path as messages show it: escaped, and cut when long (a message
/// never echoes a huge input).
fn quoted(path: &str) -> String {
    crate::text::ellipsize(&path.escape_debug().to_string(), 300)
}

fn cannot(path: &str, e: &io::Error) -> ToolError {
    ToolError::new(format!("cannot resolve \"{}\": {e}", quoted(path)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("ws/src")).unwrap();
        fs::write(dir.path().join("ws/src/a.txt"), "a").unwrap();
        fs::write(dir.path().join("secret.txt"), "s").unwrap();
        let ws = Workspace::new(dir.path().join("ws")).unwrap();
        (dir, ws)
    }

    fn code(r: Result<PathBuf, ToolError>) -> String {
        r.unwrap_err().code().as_str().to_owned()
    }

    #[test]
    fn inside_paths_resolve_and_display_relative() {
        let (_d, ws) = setup();
        let p = ws.resolve_existing("src/a.txt").unwrap();
        assert_eq!(ws.display(&p), "src/a.txt");
        let p = ws.resolve_existing("src/../src/./a.txt").unwrap();
        assert_eq!(ws.display(&p), "src/a.txt");
        let abs = ws.root().join("src/a.txt");
        assert_eq!(ws.resolve_existing(abs.to_str().unwrap()).unwrap(), abs);
        assert_eq!(ws.display(ws.root()), ".");
        assert_eq!(ws.resolve_existing(".").unwrap(), ws.root());
        // Symlinks that stay inside are followed, relative or absolute.
        symlink("src", ws.root().join("rel")).unwrap();
        symlink(ws.root().join("src/a.txt"), ws.root().join("abs")).unwrap();
        assert_eq!(
            ws.display(&ws.resolve_existing("rel/a.txt").unwrap()),
            "src/a.txt"
        );
        assert_eq!(
            ws.display(&ws.resolve_existing("abs").unwrap()),
            "src/a.txt"
        );
        symlink("../src/a.txt", ws.root().join("src/up")).unwrap();
        assert_eq!(
            ws.display(&ws.resolve_existing("src/up").unwrap()),
            "src/a.txt"
        );
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
        symlink(&abs, ws.root().join("link")).unwrap();
        let e = ws.resolve_existing("link").unwrap_err();
        assert!(e.message().contains("symlink"), "{}", e.message());
        assert_eq!(code(ws.resolve_for_write("link")), OUTSIDE_WORKSPACE);
        symlink(dir.path().join("nope"), ws.root().join("dangling")).unwrap();
        assert_eq!(code(ws.resolve_for_write("dangling")), OUTSIDE_WORKSPACE);
        assert_eq!(code(ws.resolve_existing("dangling")), OUTSIDE_WORKSPACE);
        symlink(dir.path(), ws.root().join("up")).unwrap();
        assert_eq!(
            code(ws.resolve_for_write("up/new/file.txt")),
            OUTSIDE_WORKSPACE
        );
        assert_eq!(
            code(ws.resolve_for_write("new/../../x.txt")),
            OUTSIDE_WORKSPACE
        );
        assert_eq!(
            code(ws.resolve_existing("new/../../x.txt")),
            OUTSIDE_WORKSPACE
        );
        assert_eq!(
            code(ws.resolve_existing("src/../../ws/src/a.txt")),
            OUTSIDE_WORKSPACE
        );
        // A relative symlink that climbs out, even to come back in.
        symlink("../ws/src", ws.root().join("detour")).unwrap();
        assert_eq!(code(ws.resolve_existing("detour/a.txt")), OUTSIDE_WORKSPACE);
    }

    /// Outside the root, a missing path and an existing one get the same
    /// code and the same message, whichever way the path leaves.
    #[test]
    fn outside_the_root_existence_is_not_observable() {
        let (dir, ws) = setup();
        fs::create_dir(dir.path().join("there")).unwrap();
        fs::write(dir.path().join("there/f"), "x").unwrap();
        symlink(dir.path().join("there"), ws.root().join("l_a")).unwrap();
        symlink(dir.path().join("nothere"), ws.root().join("l_b")).unwrap();
        let base = dir.path().display().to_string();
        for (a, b) in [
            ("../there/f".to_owned(), "../nothe/f".to_owned()),
            (format!("{base}/there/f"), format!("{base}/nothe/f")),
            ("l_a/f".to_owned(), "l_b/f".to_owned()),
            ("l_a".to_owned(), "l_b".to_owned()),
            ("src/../../there".to_owned(), "src/../../nothe".to_owned()),
        ] {
            for resolve in [Workspace::resolve_existing, Workspace::resolve_for_write] {
                let ea = resolve(&ws, &a).unwrap_err();
                let eb = resolve(&ws, &b).unwrap_err();
                assert_eq!(ea.code().as_str(), OUTSIDE_WORKSPACE, "{a}");
                assert_eq!(ea.code(), eb.code(), "{a} / {b}");
                assert_eq!(ea.message().replace(&a, "P"), eb.message().replace(&b, "P"));
            }
        }
    }

    #[test]
    fn new_files_resolve_inside() {
        let (_d, ws) = setup();
        let p = ws.resolve_for_write("src/new/deep/file.txt").unwrap();
        assert_eq!(ws.display(&p), "src/new/deep/file.txt");
        assert_eq!(code(ws.resolve_existing("src/missing.txt")), NOT_FOUND);
        assert_eq!(code(ws.resolve_existing("src/a.txt/x")), NOT_FOUND);
        assert_eq!(code(ws.resolve_for_write("src/a.txt/x")), INVALID_PATH);
        assert_eq!(code(ws.resolve_for_write("src/new/../x")), INVALID_PATH);
        assert_eq!(code(ws.resolve_existing("")), INVALID_PATH);
        assert_eq!(code(ws.resolve_existing("a\0b")), INVALID_PATH);
        // A dangling symlink inside, to a place inside: writing creates the target.
        symlink("src/later.txt", ws.root().join("later")).unwrap();
        assert_eq!(
            ws.display(&ws.resolve_for_write("later").unwrap()),
            "src/later.txt"
        );
        assert_eq!(code(ws.resolve_existing("later")), NOT_FOUND);
        symlink("loop2", ws.root().join("loop1")).unwrap();
        symlink("loop1", ws.root().join("loop2")).unwrap();
        assert_eq!(code(ws.resolve_existing("loop1")), INVALID_PATH);
    }

    #[test]
    fn a_huge_path_is_refused_without_being_echoed() {
        let (_d, ws) = setup();
        let huge = "a/".repeat(500_000);
        for r in [ws.resolve_existing(&huge), ws.resolve_for_write(&huge)] {
            let e = r.unwrap_err();
            assert!(e.message().len() < 1000, "{}", e.message().len());
        }
        assert_eq!(code(ws.resolve_existing(&huge)), INVALID_PATH);
        // Long, but not too long: still answered without echoing it all.
        let long = format!("{}missing", "../".repeat(1300));
        let e = ws.resolve_existing(&long).unwrap_err();
        assert_eq!(e.code().as_str(), OUTSIDE_WORKSPACE);
        assert!(e.message().len() < 1000);
        let long = format!("{}x", "b/".repeat(2000));
        let e = ws.resolve_existing(&long).unwrap_err();
        assert_eq!(e.code().as_str(), NOT_FOUND);
        assert!(e.message().len() < 1000);
    }

    #[test]
    fn a_root_reached_through_a_symlink_accepts_its_own_absolute_paths() {
        let (dir, ws) = setup();
        symlink(ws.root(), dir.path().join("alias")).unwrap();
        let aliased = Workspace::new(dir.path().join("alias")).unwrap();
        assert_eq!(aliased.root(), ws.root());
        let via_alias = dir.path().join("alias/src/a.txt");
        let p = aliased
            .resolve_existing(via_alias.to_str().unwrap())
            .unwrap();
        assert_eq!(aliased.display(&p), "src/a.txt");
    }
}
