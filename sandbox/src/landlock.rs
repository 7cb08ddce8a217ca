//! Landlock through its three system calls, with the structures and
//! constants of the kernel's UAPI header `linux/landlock.h`.
//!
//! Only what the sandbox uses is here: the file rights up to ABI 3, the
//! scopes of ABI 6, path-beneath rules. The network is left to seccomp
//! (no `LANDLOCK_ACCESS_NET_*` right is handled), and
//! `LANDLOCK_ACCESS_FS_IOCTL_DEV` (ABI 5, `1 << 15`) is not handled either:
//! the file rights are pinned at ABI 3, whatever the running kernel has.
//!
//! [`Ruleset::create`] and [`Ruleset::add_path_beneath`] run in the server,
//! before the fork; [`Ruleset::restrict_self`], in the child between fork
//! and exec, issues two system calls and nothing else: no allocation, no
//! lock.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `LANDLOCK_ACCESS_FS_EXECUTE` (ABI 1): execute a file.
pub(crate) const ACCESS_FS_EXECUTE: u64 = 1 << 0;
/// `LANDLOCK_ACCESS_FS_WRITE_FILE` (ABI 1): open a file with write access.
pub(crate) const ACCESS_FS_WRITE_FILE: u64 = 1 << 1;
/// `LANDLOCK_ACCESS_FS_READ_FILE` (ABI 1): open a file with read access.
pub(crate) const ACCESS_FS_READ_FILE: u64 = 1 << 2;
/// `LANDLOCK_ACCESS_FS_READ_DIR` (ABI 1): open a directory or list its
/// content.
pub(crate) const ACCESS_FS_READ_DIR: u64 = 1 << 3;
/// `LANDLOCK_ACCESS_FS_REMOVE_DIR` (ABI 1): remove an empty directory or
/// rename one.
pub(crate) const ACCESS_FS_REMOVE_DIR: u64 = 1 << 4;
/// `LANDLOCK_ACCESS_FS_REMOVE_FILE` (ABI 1): unlink (or rename) a file.
pub(crate) const ACCESS_FS_REMOVE_FILE: u64 = 1 << 5;
/// `LANDLOCK_ACCESS_FS_MAKE_CHAR` (ABI 1): create (or rename or link) a
/// character device.
pub(crate) const ACCESS_FS_MAKE_CHAR: u64 = 1 << 6;
/// `LANDLOCK_ACCESS_FS_MAKE_DIR` (ABI 1): create (or rename) a directory.
pub(crate) const ACCESS_FS_MAKE_DIR: u64 = 1 << 7;
/// `LANDLOCK_ACCESS_FS_MAKE_REG` (ABI 1): create (or rename or link) a
/// regular file.
pub(crate) const ACCESS_FS_MAKE_REG: u64 = 1 << 8;
/// `LANDLOCK_ACCESS_FS_MAKE_SOCK` (ABI 1): create (or rename or link) a
/// Unix domain socket.
pub(crate) const ACCESS_FS_MAKE_SOCK: u64 = 1 << 9;
/// `LANDLOCK_ACCESS_FS_MAKE_FIFO` (ABI 1): create (or rename or link) a
/// named pipe.
pub(crate) const ACCESS_FS_MAKE_FIFO: u64 = 1 << 10;
/// `LANDLOCK_ACCESS_FS_MAKE_BLOCK` (ABI 1): create (or rename or link) a
/// block device.
pub(crate) const ACCESS_FS_MAKE_BLOCK: u64 = 1 << 11;
/// `LANDLOCK_ACCESS_FS_MAKE_SYM` (ABI 1): create (or rename or link) a
/// symbolic link.
pub(crate) const ACCESS_FS_MAKE_SYM: u64 = 1 << 12;
/// `LANDLOCK_ACCESS_FS_REFER` (ABI 2): link or rename a file from or to a
/// different directory (reparent it). Not handled, such a move is always
/// refused; handled, it needs this right on both sides.
pub(crate) const ACCESS_FS_REFER: u64 = 1 << 13;
/// `LANDLOCK_ACCESS_FS_TRUNCATE` (ABI 3): truncate a file with
/// `truncate(2)`, `ftruncate(2)`, `creat(2)` or `open(2)` with `O_TRUNC`.
pub(crate) const ACCESS_FS_TRUNCATE: u64 = 1 << 14;

/// Every file right of ABI 1.
const ACCESS_FS_ABI1: u64 = ACCESS_FS_EXECUTE
    | ACCESS_FS_WRITE_FILE
    | ACCESS_FS_READ_FILE
    | ACCESS_FS_READ_DIR
    | ACCESS_FS_REMOVE_DIR
    | ACCESS_FS_REMOVE_FILE
    | ACCESS_FS_MAKE_CHAR
    | ACCESS_FS_MAKE_DIR
    | ACCESS_FS_MAKE_REG
    | ACCESS_FS_MAKE_SOCK
    | ACCESS_FS_MAKE_FIFO
    | ACCESS_FS_MAKE_BLOCK
    | ACCESS_FS_MAKE_SYM;
/// Every file right of ABI 3 (Linux 6.2): ABI 1's, `REFER` and `TRUNCATE`.
pub(crate) const ACCESS_FS_ABI3: u64 = ACCESS_FS_ABI1 | ACCESS_FS_REFER | ACCESS_FS_TRUNCATE;
/// The rights of ABI 3 that read: execute, read files, read directories.
pub(crate) const ACCESS_FS_READ_ABI3: u64 =
    ACCESS_FS_EXECUTE | ACCESS_FS_READ_FILE | ACCESS_FS_READ_DIR;
/// The rights of ABI 3 that apply to a file that is not a directory (the
/// kernel refuses a rule on such a file with any other right, `EINVAL`).
pub(crate) const ACCESS_FS_FILE_ABI3: u64 =
    ACCESS_FS_EXECUTE | ACCESS_FS_WRITE_FILE | ACCESS_FS_READ_FILE | ACCESS_FS_TRUNCATE;

/// `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET` (ABI 6): no connecting to an
/// abstract Unix socket created outside the domain.
pub(crate) const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
/// `LANDLOCK_SCOPE_SIGNAL` (ABI 6): no signal to a process outside the
/// domain.
pub(crate) const SCOPE_SIGNAL: u64 = 1 << 1;
/// Every scope of ABI 6 (Linux 6.12).
pub(crate) const SCOPE_ABI6: u64 = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;

/// `LANDLOCK_CREATE_RULESET_VERSION`: the flag of `landlock_create_ruleset`
/// (with no attribute and a size of 0) that returns the highest ABI the
/// kernel supports instead of a ruleset.
const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1 << 0;
/// `LANDLOCK_RULE_PATH_BENEATH` (`enum landlock_rule_type`): a rule of
/// `struct landlock_path_beneath_attr`.
const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

/// `struct landlock_ruleset_attr`: what a ruleset handles. The kernel reads
/// as many bytes as it is told and requires any it does not know to be
/// zero; [`attr_size`] tells it only the fields of the running ABI.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct landlock_ruleset_attr {
    /// The file rights handled (ABI 1): refused unless a rule grants them.
    handled_access_fs: u64,
    /// The network rights handled (ABI 4). Always 0 here.
    handled_access_net: u64,
    /// The scopes (ABI 6).
    scoped: u64,
}

/// `struct landlock_path_beneath_attr`, packed as the kernel declares it
/// (`__attribute__((packed))`: 12 bytes, not 16).
#[allow(non_camel_case_types)]
#[repr(C, packed)]
#[derive(Debug, Clone, Copy)]
struct landlock_path_beneath_attr {
    /// The rights granted beneath the file hierarchy.
    allowed_access: u64,
    /// A descriptor of the hierarchy's root (opened with `O_PATH`).
    parent_fd: i32,
}

/// The number of bytes of [`landlock_ruleset_attr`] a kernel of `abi`
/// knows: `handled_access_fs` before ABI 4, `handled_access_net` from ABI
/// 4, `scoped` from ABI 6.
fn attr_size(abi: u32) -> usize {
    match abi {
        ..4 => 8,
        4..6 => 16,
        _ => size_of::<landlock_ruleset_attr>(),
    }
}

/// The file rights a kernel of `abi` can handle, among those this module
/// names (ABI 3's).
fn access_fs_of(abi: u32) -> u64 {
    match abi {
        0 => 0,
        1 => ACCESS_FS_ABI1,
        2 => ACCESS_FS_ABI1 | ACCESS_FS_REFER,
        _ => ACCESS_FS_ABI3,
    }
}

/// The scopes a kernel of `abi` can handle.
fn scopes_of(abi: u32) -> u64 {
    if abi >= 6 { SCOPE_ABI6 } else { 0 }
}

/// Whether a kernel of `abi` enforces every right of `handled_fs` and every
/// scope of `scoped`. Arithmetic only: safe between fork and exec.
pub(crate) fn enforces(abi: u32, handled_fs: u64, scoped: u64) -> bool {
    handled_fs & !access_fs_of(abi) == 0 && scoped & !scopes_of(abi) == 0
}

/// The highest Landlock ABI of the running kernel:
/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`.
/// Fails with `ENOSYS` where the kernel has no Landlock and `EOPNOTSUPP`
/// where it is built in but not enabled.
pub(crate) fn abi() -> io::Result<u32> {
    // SAFETY: with LANDLOCK_CREATE_RULESET_VERSION the kernel reads no
    // memory (the attribute is NULL and its size 0) and opens nothing.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<landlock_ruleset_attr>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(u32::try_from(version).unwrap_or(0))
}

/// Opens `path` with `O_PATH | O_CLOEXEC` (following symbolic links, as
/// `open` does): a descriptor that names a hierarchy for a rule, through
/// which nothing can be read or written.
pub(crate) fn open_path(path: &Path) -> io::Result<OwnedFd> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    loop {
        // SAFETY: c_path is NUL-terminated and outlives the call; these
        // flags take no mode argument.
        let fd = unsafe { libc::open(c_path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd >= 0 {
            // SAFETY: fd was just opened here and nothing else owns it.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// A ruleset made by the kernel, not yet enforced. Its descriptor is
/// close-on-exec (the kernel always opens it so) and closed when it drops.
#[derive(Debug)]
pub(crate) struct Ruleset {
    fd: OwnedFd,
    abi: u32,
    handled_fs: u64,
    scoped: u64,
}

impl Ruleset {
    /// Creates a ruleset handling `handled_fs` and `scoped` on a kernel of
    /// `abi` (from [`abi`]). Fails with `EINVAL`, before any system call,
    /// if that ABI does not enforce all of them.
    pub(crate) fn create(abi: u32, handled_fs: u64, scoped: u64) -> io::Result<Ruleset> {
        if !enforces(abi, handled_fs, scoped) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let attr = landlock_ruleset_attr {
            handled_access_fs: handled_fs,
            handled_access_net: 0,
            scoped,
        };
        // SAFETY: attr is a live landlock_ruleset_attr, and the size passed
        // is at most its size; flags 0 creates a ruleset.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &raw const attr,
                attr_size(abi),
                0u32,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel returned a new descriptor, owned by no one else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
        Ok(Ruleset {
            fd,
            abi,
            handled_fs,
            scoped,
        })
    }

    /// Grants `allowed` beneath the hierarchy `parent` names (a descriptor
    /// from [`open_path`]; the caller closes it after). `allowed` must be
    /// among the handled rights, and only file rights for a file that is
    /// not a directory: the kernel refuses anything else (`EINVAL`).
    pub(crate) fn add_path_beneath(&self, parent: BorrowedFd<'_>, allowed: u64) -> io::Result<()> {
        let rule = landlock_path_beneath_attr {
            allowed_access: allowed,
            parent_fd: parent.as_raw_fd(),
        };
        // SAFETY: rule is a live landlock_path_beneath_attr (packed, as the
        // kernel reads it), the ruleset descriptor is open; flags must be 0.
        let done = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                self.fd.as_raw_fd(),
                LANDLOCK_RULE_PATH_BENEATH,
                &raw const rule,
                0u32,
            )
        };
        if done != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Whether the kernel this ruleset was made on enforces every right and
    /// scope it handles (what `create` already checked). Arithmetic only.
    pub(crate) fn fully_enforced(&self) -> bool {
        enforces(self.abi, self.handled_fs, self.scoped)
    }

    /// Sets `no_new_privs` (`prctl(PR_SET_NO_NEW_PRIVS)`, which an
    /// unprivileged process needs to restrict itself), then enforces the
    /// ruleset on the calling thread (`landlock_restrict_self`, flags 0),
    /// and so on every process it starts. Only these two system calls: safe
    /// between fork and exec. Fails with the errno of the one refused.
    pub(crate) fn restrict_self(&self) -> Result<(), i32> {
        let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
        // SAFETY: prctl with integer arguments changes only this process.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(errno());
        }
        // SAFETY: the ruleset descriptor is open; flags 0.
        let done =
            unsafe { libc::syscall(libc::SYS_landlock_restrict_self, self.fd.as_raw_fd(), 0u32) };
        if done != 0 {
            return Err(errno());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structures_have_the_kernels_layout() {
        assert_eq!(size_of::<landlock_ruleset_attr>(), 24);
        assert_eq!(size_of::<landlock_path_beneath_attr>(), 12);
        assert_eq!(std::mem::align_of::<landlock_path_beneath_attr>(), 1);
        assert_eq!((attr_size(1), attr_size(3)), (8, 8));
        assert_eq!((attr_size(4), attr_size(5)), (16, 16));
        assert_eq!((attr_size(6), attr_size(7)), (24, 24));
    }

    #[test]
    fn the_rights_are_those_of_the_uapi() {
        assert_eq!(ACCESS_FS_ABI3, (1 << 15) - 1);
        assert_eq!(ACCESS_FS_READ_ABI3 & !ACCESS_FS_ABI3, 0);
        assert_eq!(ACCESS_FS_FILE_ABI3 & !ACCESS_FS_ABI3, 0);
        assert!(enforces(3, ACCESS_FS_ABI3, 0));
        assert!(!enforces(2, ACCESS_FS_ABI3, 0), "TRUNCATE is ABI 3");
        assert!(!enforces(1, ACCESS_FS_ABI1 | ACCESS_FS_REFER, 0));
        assert!(!enforces(5, ACCESS_FS_ABI3, SCOPE_SIGNAL));
        assert!(enforces(6, ACCESS_FS_ABI3, SCOPE_ABI6));
        assert!(!enforces(9, 1 << 15, 0), "IOCTL_DEV is never handled here");
    }

    /// This machine's kernel is the one the sandbox's tests need.
    #[test]
    fn this_kernel_has_abi_3_and_makes_a_ruleset() {
        let abi = abi().expect("this machine's kernel must have Landlock");
        assert!(abi >= 3, "ABI {abi}");
        let scoped = if abi >= 6 { SCOPE_ABI6 } else { 0 };
        let ruleset = Ruleset::create(abi, ACCESS_FS_ABI3, scoped).unwrap();
        assert!(ruleset.fully_enforced());
        // SAFETY: F_GETFD on a descriptor this test owns.
        let flags = unsafe { libc::fcntl(ruleset.fd.as_raw_fd(), libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        let slash = open_path(Path::new("/")).unwrap();
        ruleset
            .add_path_beneath(std::os::fd::AsFd::as_fd(&slash), ACCESS_FS_READ_ABI3)
            .unwrap();
        // A file gets file rights only, as the kernel says.
        let null = open_path(Path::new("/dev/null")).unwrap();
        let refused = ruleset
            .add_path_beneath(std::os::fd::AsFd::as_fd(&null), ACCESS_FS_ABI3)
            .unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(libc::EINVAL));
        // A right the ruleset does not handle is refused too.
        let small = Ruleset::create(abi, ACCESS_FS_READ_FILE, 0).unwrap();
        let refused = small
            .add_path_beneath(std::os::fd::AsFd::as_fd(&slash), ACCESS_FS_WRITE_FILE)
            .unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(libc::EINVAL));
        assert_eq!(
            Ruleset::create(2, ACCESS_FS_ABI3, 0)
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EINVAL)
        );
    }
}
