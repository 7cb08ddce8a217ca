//! Opening paths beneath the root's descriptor, never following a symlink.
//!
//! [`Workspace`](crate::Workspace) resolves a model's path by name (its
//! messages and its rules for symlinks inside the root live there); the
//! path it returns contains no symlink. What opens that path is here: from
//! a descriptor of the root held since the workspace was made, with no
//! symlink followed on the way, so a directory swapped for a symlink
//! between the resolution and the open makes the open fail instead of
//! leading it out of the root.
//!
//! - **Linux 5.6+**: one `openat2` with `RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`: the kernel walks the
//!   path and refuses any symlink, `..` above the root, or magic link.
//! - **Elsewhere, or where `openat2` is refused** (an older kernel, a
//!   container's seccomp profile): the same walk by hand, one `openat` per
//!   component with `O_NOFOLLOW`, each relative to the directory opened
//!   before it.
//! - **Creating** (the file tools' writes): the parents are walked, and
//!   made, one component at a time with `mkdirat` and `openat(O_NOFOLLOW)`,
//!   and the file is opened with `O_NOFOLLOW` relative to its parent's
//!   descriptor.
//!
//! A failure because a symlink was met is [`is_swapped`]; the caller says
//! the path changed and does nothing.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicBool, Ordering};

/// Opens the directory `root` (the root's descriptor).
pub(crate) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    let name = cstring(root.as_os_str().as_bytes())?;
    // SAFETY: `name` is a valid C string for the call's duration.
    let fd = unsafe {
        libc::open(
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    owned(fd)
}

/// Opens `rel` (relative, with no `..`) beneath `root` with `flags`, no
/// symlink followed. An empty `rel` opens the root itself.
pub(crate) fn open(root: BorrowedFd<'_>, rel: &Path, flags: libc::c_int) -> io::Result<File> {
    let parts = parts(rel)?;
    if parts.is_empty() {
        return reopen_root(root, flags);
    }
    #[cfg(target_os = "linux")]
    if OPENAT2.load(Ordering::Relaxed) {
        let joined = cstring(rel.as_os_str().as_bytes())?;
        match openat2(root, &joined, flags) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) => {
                if e.raw_os_error() == Some(libc::ENOSYS) {
                    OPENAT2.store(false, Ordering::Relaxed);
                }
            }
            other => return other.map(File::from),
        }
    }
    let (last, dirs) = parts.split_last().expect("not empty");
    let parent = walk(root, dirs, false)?;
    let parent = parent.as_ref().map_or(root, |p| p.as_fd());
    openat(parent, last, flags | libc::O_NOFOLLOW, 0).map(File::from)
}

/// Opens `rel` beneath `root` for writing (`O_WRONLY | O_TRUNC`, and
/// `O_CREAT` when `create`), making its missing parent directories when
/// `create`, no symlink followed anywhere.
pub(crate) fn open_for_write(root: BorrowedFd<'_>, rel: &Path, create: bool) -> io::Result<File> {
    let parts = parts(rel)?;
    let Some((last, dirs)) = parts.split_last() else {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    };
    let parent = walk(root, dirs, create)?;
    let parent = parent.as_ref().map_or(root, |p| p.as_fd());
    let mut flags = libc::O_WRONLY | libc::O_TRUNC | libc::O_NOFOLLOW;
    if create {
        flags |= libc::O_CREAT;
    }
    openat(parent, last, flags, 0o666).map(File::from)
}

/// Whether `e` says a symlink (or a way out) was met where none may be:
/// the path changed since it was resolved.
pub(crate) fn is_swapped(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EXDEV))
}

/// The directories of `dirs`, walked from `root` with `O_NOFOLLOW` (made
/// when missing and `create`); `None` for `root` itself.
fn walk(root: BorrowedFd<'_>, dirs: &[CString], create: bool) -> io::Result<Option<OwnedFd>> {
    let mut cur: Option<OwnedFd> = None;
    for name in dirs {
        let at = cur.as_ref().map_or(root, |c| c.as_fd());
        let next = match openat(at, name, DIR_FLAGS, 0) {
            Err(e) if create && e.raw_os_error() == Some(libc::ENOENT) => {
                // SAFETY: `at` is an open directory, `name` a C string.
                let made = unsafe { libc::mkdirat(at.as_raw_fd(), name.as_ptr(), 0o777) };
                if made != 0 {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(e);
                    }
                }
                openat(at, name, DIR_FLAGS, 0)?
            }
            other => other?,
        };
        cur = Some(next);
    }
    Ok(cur)
}

#[cfg(target_os = "linux")]
const DIR_FLAGS: libc::c_int = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
#[cfg(not(target_os = "linux"))]
const DIR_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;

fn reopen_root(root: BorrowedFd<'_>, flags: libc::c_int) -> io::Result<File> {
    openat(root, c".", flags, 0).map(File::from)
}

/// The normal components of `rel`, as C strings; `..`, a root or a NUL
/// byte is refused (the resolver never passes one).
fn parts(rel: &Path) -> io::Result<Vec<CString>> {
    let mut out = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(name) => out.push(cstring(name.as_bytes())?),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(io::Error::from_raw_os_error(libc::EXDEV));
            }
        }
    }
    Ok(out)
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn openat(
    at: BorrowedFd<'_>,
    name: &std::ffi::CStr,
    flags: libc::c_int,
    mode: libc::c_uint,
) -> io::Result<OwnedFd> {
    // SAFETY: `at` is an open descriptor and `name` a C string, both valid
    // for the call's duration.
    let fd = unsafe { libc::openat(at.as_raw_fd(), name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    owned(fd)
}

fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether `openat2` is worth trying (cleared once the kernel says ENOSYS).
#[cfg(target_os = "linux")]
static OPENAT2: AtomicBool = AtomicBool::new(true);

#[cfg(target_os = "linux")]
fn openat2(root: BorrowedFd<'_>, rel: &std::ffi::CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    /// `struct open_how` of `<linux/openat2.h>` (libc's is non-exhaustive).
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: `root` is open, `rel` a C string and `how` an `open_how` of
    // the size passed, all valid for the call's duration.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            rel.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    owned(fd as libc::c_int)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, OwnedFd) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/a")).unwrap();
        std::fs::write(dir.path().join("ws/a/f"), "inside").unwrap();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        std::fs::write(dir.path().join("out/f"), "outside").unwrap();
        let root = open_root(&dir.path().join("ws")).unwrap();
        (dir, root)
    }

    fn read(file: File) -> String {
        let mut s = String::new();
        (&file).read_to_string(&mut s).unwrap();
        s
    }

    /// Both ways of opening: `openat2`, and the walk by hand.
    fn each_way(mut check: impl FnMut()) {
        check();
        #[cfg(target_os = "linux")]
        {
            OPENAT2.store(false, Ordering::Relaxed);
            check();
            OPENAT2.store(true, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_symlink_anywhere_on_the_way_is_refused() {
        let (dir, root) = setup();
        symlink(dir.path().join("out"), dir.path().join("ws/link")).unwrap();
        symlink("a", dir.path().join("ws/inner")).unwrap();
        each_way(|| {
            assert_eq!(
                read(open(root.as_fd(), Path::new("a/f"), libc::O_RDONLY).unwrap()),
                "inside"
            );
            for rel in ["link/f", "inner/f", "link"] {
                let e = open(root.as_fd(), Path::new(rel), libc::O_RDONLY).unwrap_err();
                assert!(
                    is_swapped(&e) || e.raw_os_error() == Some(libc::ENOTDIR),
                    "{rel}: {e}"
                );
            }
            let e = open_for_write(root.as_fd(), Path::new("link/g"), true).unwrap_err();
            assert!(
                is_swapped(&e) || e.raw_os_error() == Some(libc::ENOTDIR),
                "{e}"
            );
            assert!(!dir.path().join("out/g").exists());
            assert!(open(root.as_fd(), Path::new("../out/f"), libc::O_RDONLY).is_err());
        });
    }

    #[test]
    fn writes_make_parents_and_refuse_a_final_symlink() {
        let (dir, root) = setup();
        let mut f = open_for_write(root.as_fd(), Path::new("new/deep/file.txt"), true).unwrap();
        f.write_all(b"x").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ws/new/deep/file.txt")).unwrap(),
            "x"
        );
        symlink(dir.path().join("out/f"), dir.path().join("ws/last")).unwrap();
        let e = open_for_write(root.as_fd(), Path::new("last"), true).unwrap_err();
        assert!(is_swapped(&e), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("out/f")).unwrap(),
            "outside"
        );
        // Without create, a missing file is not made.
        let e = open_for_write(root.as_fd(), Path::new("missing"), false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(
            open(
                root.as_fd(),
                Path::new(""),
                libc::O_RDONLY | libc::O_DIRECTORY
            )
            .is_ok()
        );
    }

    #[test]
    fn the_root_descriptor_outlives_a_rename_of_the_root() {
        let (dir, root) = setup();
        std::fs::rename(dir.path().join("ws"), dir.path().join("moved")).unwrap();
        symlink(dir.path().join("out"), dir.path().join("ws")).unwrap();
        assert_eq!(
            read(open(root.as_fd(), Path::new("a/f"), libc::O_RDONLY).unwrap()),
            "inside"
        );
    }
}
