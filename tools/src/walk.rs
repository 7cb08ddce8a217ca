//! The file walk `grep` and `glob` share: ripgrep's `ignore` crate, told to
//! read nothing outside the workspace.
//!
//! - `.gitignore` (even outside a git repository) and `.ignore` files are
//!   honoured, hidden files and directories are skipped, symlinks are not
//!   followed, entries come in file-name order.
//! - Only ignore files **inside the root** count: no ignore file from a
//!   parent directory of the root, no global git excludes
//!   (`core.excludesFile`), no `.git/info/exclude` (which a `.git` file of a
//!   worktree may place anywhere). What a search finds inside the root
//!   depends on the files inside the root only.
//! - A search below the root (`path`) sees the same ignore rules as a search
//!   from the root would: the walk starts at the root and keeps only the way
//!   down to `path` and what lies under it. A `path` that those rules ignore
//!   (or a hidden one) is searched anyway, as ripgrep does with a path it is
//!   given, with the ignore files found from there down.
//! - The walk checks [`Stop`] at every entry.

use std::path::{Path, PathBuf};

use ignore::overrides::Override;
use ignore::{DirEntry, WalkBuilder};
use toolprism::ToolError;

use crate::blocking::Stop;
use crate::workspace::Workspace;

/// What the visitor wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on walking.
    Continue,
    /// Stop the walk.
    Break,
}

/// Calls `visit` with every file under `start` (a path inside `workspace`,
/// already resolved), in file-name order.
pub(crate) fn files(
    workspace: &Workspace,
    start: &Path,
    overrides: Option<&Override>,
    stop: &Stop,
    mut visit: impl FnMut(&DirEntry) -> Flow,
) -> Result<(), ToolError> {
    let root = workspace.root();
    let mut from_root = builder(root, overrides);
    if start != root {
        let start = start.to_path_buf();
        from_root
            .filter_entry(move |e| start.starts_with(e.path()) || e.path().starts_with(&start));
    }
    match run(from_root, start, stop, &mut visit)? {
        Reached::Yes => Ok(()),
        // The rules from the root hide `start` itself: walk it as given.
        Reached::No => run(builder(start, overrides), start, stop, &mut visit).map(|_| ()),
    }
}

enum Reached {
    Yes,
    No,
}

fn builder(from: &Path, overrides: Option<&Override>) -> WalkBuilder {
    let mut walk = WalkBuilder::new(from);
    walk.parents(false)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    if let Some(overrides) = overrides {
        walk.overrides(overrides.clone());
    }
    walk
}

fn run(
    walk: WalkBuilder,
    start: &Path,
    stop: &Stop,
    visit: &mut impl FnMut(&DirEntry) -> Flow,
) -> Result<Reached, ToolError> {
    let mut reached = Reached::No;
    let start: PathBuf = start.to_path_buf();
    for entry in walk.build() {
        stop.check()?;
        // An unreadable directory or file is skipped, as ripgrep does.
        let Ok(entry) = entry else { continue };
        if !entry.path().starts_with(&start) {
            continue;
        }
        reached = Reached::Yes;
        if entry.file_type().is_some_and(|t| t.is_file()) && visit(&entry) == Flow::Break {
            break;
        }
    }
    Ok(reached)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn found(ws: &Workspace, start: &str) -> Vec<String> {
        let start = ws.resolve_existing(start).unwrap();
        let mut out = Vec::new();
        files(ws, &start, None, &Stop::never(), |e| {
            out.push(ws.display(e.path()));
            Flow::Continue
        })
        .unwrap();
        out
    }

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// Ignore files above the root, git's global excludes (from `HOME` and
    /// `XDG_CONFIG_HOME`) and an `info/exclude` reached through a `.git`
    /// file change nothing inside. The environment is set for a child
    /// process that runs [`walk_in_a_hostile_home`].
    #[test]
    fn nothing_outside_the_root_steers_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        let outer = dir.path();
        write(outer, ".ignore", "*.txt\n");
        write(outer, ".gitignore", "*.md\nsrc/\n");
        write(outer, "gitdir/info/exclude", "*.toml\n");
        write(outer, ".git/info/exclude", "*.cfg\n");
        let home = outer.join("home");
        write(&home, ".config/git/ignore", "*.json\n");
        write(&home, "excludes", "*.yaml\n");
        write(
            &home,
            ".gitconfig",
            &format!(
                "[core]\n\texcludesFile = {}\n",
                home.join("excludes").display()
            ),
        );
        let root = outer.join("ws");
        write(
            &root,
            ".git",
            &format!("gitdir: {}\n", outer.join("gitdir").display()),
        );
        for f in [
            "a.txt", "b.md", "src/c.rs", "d.toml", "e.cfg", "f.json", "g.yaml",
        ] {
            write(&root, f, "x\n");
        }
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "walk::tests::walk_in_a_hostile_home",
                "--test-threads=1",
            ])
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("TOOLPRISM_WALK_ROOT", &root)
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Run by [`nothing_outside_the_root_steers_the_walk`] in a child
    /// process; does nothing when run on its own.
    #[test]
    fn walk_in_a_hostile_home() {
        let Some(root) = std::env::var_os("TOOLPRISM_WALK_ROOT") else {
            return;
        };
        let ws = Workspace::new(root).unwrap();
        assert_eq!(
            found(&ws, "."),
            [
                "a.txt", "b.md", "d.toml", "e.cfg", "f.json", "g.yaml", "src/c.rs"
            ]
        );
        assert_eq!(found(&ws, "src"), ["src/c.rs"]);
    }

    #[test]
    fn rules_from_the_root_apply_below_it_and_a_named_path_is_searched() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".gitignore", "*.log\nbuild/\n");
        write(root, "src/.ignore", "gen/\n!keep.log\n");
        for f in [
            "a.log",
            "src/b.log",
            "src/keep.log",
            "src/x.rs",
            "src/gen/g.rs",
            "build/out.rs",
            ".hidden/h.rs",
        ] {
            write(root, f, "x\n");
        }
        let ws = Workspace::new(root).unwrap();
        assert_eq!(found(&ws, "."), ["src/keep.log", "src/x.rs"]);
        assert_eq!(found(&ws, "src"), ["src/keep.log", "src/x.rs"]);
        // Named explicitly, an ignored or hidden path is searched.
        assert_eq!(found(&ws, "build"), ["build/out.rs"]);
        assert_eq!(found(&ws, "src/gen"), ["src/gen/g.rs"]);
        assert_eq!(found(&ws, ".hidden"), [".hidden/h.rs"]);
        assert_eq!(found(&ws, "a.log"), ["a.log"]);
        assert_eq!(found(&ws, "src/x.rs"), ["src/x.rs"]);
    }

    #[test]
    fn a_raised_stop_ends_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.txt", "x");
        let ws = Workspace::new(dir.path()).unwrap();
        let stop = Stop::never();
        stop.raise();
        let e = files(&ws, ws.root(), None, &stop, |_| Flow::Continue).unwrap_err();
        assert_eq!(e.code().as_str(), "ABORTED");
    }
}
