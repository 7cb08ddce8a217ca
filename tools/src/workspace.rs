//! A workspace root that the file tools and `bash` are confined to, and the
//! sandbox policy they all read.
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
//! **Race-free opening.** The resolved path holds no symlink. The tools
//! open it from a descriptor of the root taken when the workspace was made,
//! component by component with no symlink followed (`openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` on Linux, `openat` with
//! `O_NOFOLLOW` one component at a time elsewhere). A process that swaps a
//! directory of the root for a symlink between the check and the open makes
//! the open fail ([`PATH_CHANGED`] when it happens twice in a row), never
//! lead it out of the root; renaming or replacing the root itself does not
//! move the workspace either.
//!
//! **The sandbox.** A workspace carries the [`SandboxPolicy`] of every
//! built-in tool made from it (`workspace-write` with the network off by
//! default): `bash` confines its processes to it, and `write` and `edit`
//! refuse with [`SANDBOX_DENIED`] in `read-only` mode.
//!
//! [`SANDBOX_DENIED`]: toolprism_sandbox::SANDBOX_DENIED

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use toolprism::ToolError;
use toolprism_sandbox::{SANDBOX_DENIED, SandboxPolicy};

/// The error code of a path outside the workspace.
pub const OUTSIDE_WORKSPACE: &str = "OUTSIDE_WORKSPACE";
/// The error code of a path inside the workspace that does not exist.
pub const NOT_FOUND: &str = "NOT_FOUND";
/// The error code of a path that cannot name a file (empty, NUL byte, a
/// symlink loop, `..` after a directory that does not exist).
pub const INVALID_PATH: &str = "INVALID_PATH";
/// The error code of a path that changed while it was opened: a symlink
/// appeared in it between its resolution and its open, twice in a row.
/// Nothing was read or written.
pub const PATH_CHANGED: &str = "PATH_CHANGED";

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// Most symlinks followed while resolving one path (Linux's own limit).
const MAX_SYMLINKS: u32 = 40;

/// A canonical root directory, opened, and the sandbox policy of the tools
/// made from it.
///
/// `Default` is the current directory under the default policy
/// (`workspace-write`, network off): what the built-in tools use when made
/// by `Registry::builtin()`.
///
/// ```
/// use toolprism_tools::Workspace;
/// use toolprism_tools::sandbox::{SandboxMode, SandboxPolicy};
/// let dir = tempfile::tempdir().unwrap();
/// let ws = Workspace::new(dir.path()).unwrap()
///     .with_sandbox(SandboxPolicy::new(SandboxMode::ReadOnly));
/// assert_eq!(ws.sandbox().mode(), SandboxMode::ReadOnly);
/// ```
#[derive(Clone)]
pub struct Workspace {
    /// The canonical root.
    root: PathBuf,
    /// The root as it was given, made absolute, when it differs from the
    /// canonical one (a root under a symlinked directory): absolute paths
    /// under it are accepted too.
    alias: Option<PathBuf>,
    /// Why there is no root: the current directory could not be read.
    unavailable: Option<Arc<str>>,
    /// The root, opened when the workspace was made: every open starts here.
    #[cfg(unix)]
    dir: Option<Arc<OwnedFd>>,
    /// The policy of every tool made from this workspace.
    sandbox: Arc<SandboxPolicy>,
}

impl fmt::Debug for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .field("alias", &self.alias)
            .field("unavailable", &self.unavailable)
            .field("sandbox", &self.sandbox)
            .finish()
    }
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
            && self.alias == other.alias
            && self.unavailable == other.unavailable
            && self.sandbox == other.sandbox
    }
}

impl Eq for Workspace {}

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
        #[cfg(unix)]
        let dir = Some(Arc::new(crate::beneath::open_root(&canonical)?));
        Ok(Workspace {
            root: canonical,
            alias,
            unavailable: None,
            #[cfg(unix)]
            dir,
            sandbox: Arc::default(),
        })
    }

    /// The same root under `policy`: what `bash` may do, and whether
    /// `write` and `edit` may write at all.
    pub fn with_sandbox(mut self, policy: SandboxPolicy) -> Self {
        self.sandbox = Arc::new(policy);
        self
    }

    /// The sandbox policy of the tools made from this workspace.
    pub fn sandbox(&self) -> &SandboxPolicy {
        &self.sandbox
    }

    /// Refuses with [`SANDBOX_DENIED`] when the policy lets no file tool
    /// write (`read-only` mode).
    #[cfg_attr(not(feature = "fs"), allow(dead_code))]
    pub(crate) fn check_writes(&self, tool: &str) -> Result<(), ToolError> {
        if self.sandbox.mode().writes_files() {
            return Ok(());
        }
        Err(ToolError::new(format!(
            "{tool} cannot change files: the sandbox is in {} mode, where writing any file is refused; do not try another way (bash is confined the same way), tell the user what you would change",
            self.sandbox.mode()
        ))
        .with_code(SANDBOX_DENIED))
    }

    /// Opens an existing path for reading (a file, or a directory), beneath
    /// the root with no symlink followed: the resolved path and the file.
    pub fn open_existing(&self, path: &str) -> Result<(PathBuf, File), ToolError> {
        self.opened(path, Want::Existing, |resolved| {
            self.open_resolved(resolved, OpenFor::Read)
        })
    }

    /// Resolves `path` as `want` says, then runs `open` on the result; when
    /// the open meets a symlink that the resolution did not see (the path
    /// changed in between), resolves again once, then gives up with
    /// [`PATH_CHANGED`].
    pub(crate) fn opened<T>(
        &self,
        path: &str,
        want: Want,
        mut open: impl FnMut(&Path) -> io::Result<T>,
    ) -> Result<(PathBuf, T), ToolError> {
        for _ in 0..2 {
            let resolved = self.resolve(path, want)?;
            match open(&resolved) {
                Ok(t) => return Ok((resolved, t)),
                Err(e) if is_swapped(&e) => continue,
                Err(e) => return Err(self.open_error(&resolved, &e)),
            }
        }
        Err(ToolError::new(format!(
            "\"{}\" changed while it was being opened (a symlink appeared in it); nothing was read or written",
            quoted(path)
        ))
        .with_code(PATH_CHANGED))
    }

    fn open_error(&self, resolved: &Path, e: &io::Error) -> ToolError {
        let shown = self.display(resolved);
        match e.kind() {
            io::ErrorKind::NotFound => ToolError::new(format!(
                "\"{shown}\" does not exist in the workspace; use glob to find the right path"
            ))
            .with_code(NOT_FOUND),
            _ => ToolError::new(format!("cannot open \"{shown}\": {e}")),
        }
    }

    /// Opens a resolved path (inside the root, with no symlink) beneath the
    /// root's descriptor.
    pub(crate) fn open_resolved(&self, resolved: &Path, how: OpenFor) -> io::Result<File> {
        #[cfg(unix)]
        {
            let dir = self
                .dir
                .as_ref()
                .ok_or_else(|| io::Error::other("no workspace root"))?;
            let rel = resolved
                .strip_prefix(&self.root)
                .map_err(|_| io::Error::from_raw_os_error(libc::EXDEV))?;
            match how {
                OpenFor::Read => crate::beneath::open(dir.as_fd(), rel, libc::O_RDONLY),
                OpenFor::Dir => {
                    crate::beneath::open(dir.as_fd(), rel, libc::O_RDONLY | libc::O_DIRECTORY)
                }
                OpenFor::Search => {
                    crate::beneath::open(dir.as_fd(), rel, libc::O_RDONLY | libc::O_NONBLOCK)
                }
                #[cfg(target_os = "linux")]
                OpenFor::Probe => crate::beneath::open(dir.as_fd(), rel, libc::O_PATH),
                #[cfg(not(target_os = "linux"))]
                OpenFor::Probe => {
                    crate::beneath::open(dir.as_fd(), rel, libc::O_RDONLY | libc::O_NONBLOCK)
                }
                OpenFor::Write { create } => {
                    crate::beneath::open_for_write(dir.as_fd(), rel, create)
                }
            }
        }
        #[cfg(not(unix))]
        {
            match how {
                OpenFor::Read | OpenFor::Dir | OpenFor::Search | OpenFor::Probe => {
                    File::open(resolved)
                }
                OpenFor::Write { create } => {
                    if create {
                        if let Some(parent) = resolved.parent() {
                            std::fs::create_dir_all(parent)?;
                        }
                    }
                    std::fs::OpenOptions::new()
                        .write(true)
                        .truncate(true)
                        .create(create)
                        .open(resolved)
                }
            }
        }
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
                #[cfg(unix)]
                dir: None,
                sandbox: Arc::default(),
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

    pub(crate) fn resolve(&self, path: &str, want: Want) -> Result<PathBuf, ToolError> {
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

/// What a resolution is for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Want {
    /// The path must exist.
    Existing,
    /// The path may not exist yet.
    ForWrite,
}

/// How a resolved path is opened.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OpenFor {
    /// Reading (a file, or a directory).
    Read,
    /// A directory, for reading or as a working directory.
    #[cfg_attr(not(feature = "shell"), allow(dead_code))]
    Dir,
    /// A file found by a walk, to search: never blocks on a FIFO.
    #[cfg_attr(not(feature = "fs"), allow(dead_code))]
    Search,
    /// Only whether the path is still there beneath the root, no symlink
    /// on the way (a walk's entry, before it is shown).
    #[cfg_attr(not(feature = "fs"), allow(dead_code))]
    Probe,
    /// Writing, truncated; made (with its parents) when `create`.
    #[cfg_attr(not(feature = "fs"), allow(dead_code))]
    Write { create: bool },
}

#[cfg(unix)]
fn is_swapped(e: &io::Error) -> bool {
    crate::beneath::is_swapped(e)
}

#[cfg(not(unix))]
fn is_swapped(_e: &io::Error) -> bool {
    false
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
