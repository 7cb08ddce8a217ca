//! Linux: Landlock for files (and, from ABI 6, signals and abstract
//! sockets), seccomp for the network.
//!
//! - **Files.** The ruleset handles every file right of Landlock ABI 3
//!   (Linux 6.2): execute, read and write files, read directories, remove,
//!   make every kind of node, `refer` (link or rename across directories)
//!   and truncate. It is created as a *hard requirement*: on a kernel that
//!   cannot enforce all of them the preparation fails, and the call is not
//!   run. Reads and execution are granted beneath `/`; every right beneath
//!   each writable root; read and write on `/dev/null`. ABI 3 is pinned
//!   here, never derived from the running kernel, so a newer kernel never
//!   changes what a policy means.
//! - **Scopes.** On a kernel with ABI 6 (Linux 6.12), signals and abstract
//!   Unix sockets are scoped too: the confined process cannot signal the
//!   server (or the supervisor that reaps it) and cannot reach an abstract
//!   socket outside. Below ABI 6 this part is left out, and
//!   [`Enforcement::scoped`] says so.
//! - **Landlock and ptrace.** A process in a Landlock domain cannot trace a
//!   process outside it, which also keeps `/proc/<server>/environ` and
//!   `/proc/<server>/mem` from it.
//! - **Network.** A seccomp filter (compiled by `seccompiler`) answers
//!   `EPERM` to `socket` and `socketpair` of any family but `AF_UNIX`, to
//!   `connect`, `bind`, `listen`, `accept`, `accept4`, `sendmmsg`, and to
//!   `sendto` with a destination address; `io_uring` is refused in every
//!   confined mode (it makes sockets without `socket`). No IP socket can
//!   exist, so TCP and UDP are both refused. On x86-64, the x32 system-call
//!   numbers are refused before the rules (they would not match them), and
//!   any other architecture's calls kill the process.
//! - **`no_new_privs`** is set (right before `landlock_restrict_self`), so
//!   no set-user-id program regains what was taken.
//!
//! Landlock is spoken to through its system calls ([`crate::landlock`]).

use std::collections::BTreeMap;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::confine::{Enforcement, Unavailable};
use crate::landlock::{self, Ruleset};
use crate::{SandboxMode, SandboxPolicy};

/// The file rights handled: every one of Landlock ABI 3.
const FILES: u64 = landlock::ACCESS_FS_ABI3;
/// The rights granted everywhere: read, list, execute.
const READ: u64 = landlock::ACCESS_FS_READ_ABI3;
/// The rights granted on a writable file that is not a directory (and on
/// `/dev/null`).
const FILE: u64 = landlock::ACCESS_FS_FILE_ABI3;
/// The scopes, added where the kernel has them (ABI 6).
const SCOPES: u64 = landlock::SCOPE_ABI6;
/// The ABI of the scopes.
const SCOPES_ABI: u32 = 6;

/// What [`Prepared::enter`] applies in the child.
pub(crate) struct Prepared {
    ruleset: Option<Ruleset>,
    filter: BpfProgram,
}

impl Prepared {
    pub(crate) fn new(
        policy: &SandboxPolicy,
        root: &Path,
    ) -> Result<(Prepared, Enforcement), Unavailable> {
        let writable = policy
            .writable_roots(root)
            .expect("a confining mode has writable roots");
        let scoped = scopes_supported();
        let (ruleset, writable) = ruleset(&writable, scoped, policy.mode())?;
        let filter = filter(!policy.network())?;
        protect_this_process();
        Ok((
            Prepared {
                ruleset: Some(ruleset),
                filter,
            },
            Enforcement {
                writable: Some(writable),
                landlock_abi: Some(3),
                scoped,
                network_off: !policy.network(),
            },
        ))
    }

    /// # Safety
    /// See [`Confinement::enter`](crate::Confinement::enter).
    pub(crate) unsafe fn enter(&mut self) -> io::Result<()> {
        let Some(ruleset) = self.ruleset.take() else {
            return Ok(());
        };
        // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only sets a flag on
        // descriptors this process owns; it fails harmlessly before 5.11.
        unsafe {
            libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
        }
        drop_capabilities();
        // prctl(PR_SET_NO_NEW_PRIVS) and landlock_restrict_self, nothing
        // else; then whether the kernel's ABI enforces every right and scope
        // handled (arithmetic). The ruleset's descriptor is closed when it
        // drops, at the end of this function.
        if let Err(errno) = ruleset.restrict_self() {
            return Err(tagged(Stage::Landlock, errno));
        }
        if !ruleset.fully_enforced() {
            return Err(tagged(Stage::NotEnforced, 0));
        }
        // seccompiler 0.5.0's apply_filter: prctl and seccomp on the
        // prepared program, nothing else.
        if let Err(e) = seccompiler::apply_filter(&self.filter) {
            let errno = match &e {
                seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => {
                    e.raw_os_error().unwrap_or(0)
                }
                _ => 0,
            };
            return Err(tagged(Stage::Seccomp, errno));
        }
        Ok(())
    }
}

/// The capabilities a confined process never keeps, even as root: the
/// ones that would reach around the sandbox (load a module, trace or read
/// another process's memory, raw I/O, make device nodes, administer the
/// system or the network, change the MAC policy, use BPF).
const DROPPED_CAPABILITIES: &[libc::c_int] = &[
    16, // CAP_SYS_MODULE
    19, // CAP_SYS_PTRACE
    17, // CAP_SYS_RAWIO
    21, // CAP_SYS_ADMIN
    22, // CAP_SYS_BOOT
    12, // CAP_NET_ADMIN
    13, // CAP_NET_RAW
    27, // CAP_MKNOD
    32, // CAP_MAC_OVERRIDE
    33, // CAP_MAC_ADMIN
    38, // CAP_PERFMON
    39, // CAP_BPF
    25, // CAP_SYS_TIME
    34, // CAP_SYSLOG
];

/// Drops [`DROPPED_CAPABILITIES`] from the bounding set (so `exec` cannot
/// grant them back, root included) and clears the ambient set. Without
/// `CAP_SETPCAP` (any unprivileged process) there is nothing to drop, and
/// the calls fail harmlessly.
fn drop_capabilities() {
    for &cap in DROPPED_CAPABILITIES {
        // SAFETY: prctl with integer arguments changes only this process.
        unsafe {
            libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0);
        }
    }
    // SAFETY: as above.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
}

/// Makes this process (the server) non-dumpable, once: a process of the
/// same user then cannot read its memory or its environment through
/// `/proc` (`environ`, `mem`, `maps`), nor trace it. Landlock's own
/// ptrace rule does not cover every such read on every kernel. It is what
/// `ssh-agent` does to keep its keys; the server gives up its core dumps.
fn protect_this_process() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: prctl with integer arguments changes only this process.
        unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
    });
}

/// Whether the kernel has Landlock's scopes (ABI 6), probed once: a
/// ruleset with the scopes alone is made (and closed).
fn scopes_supported() -> bool {
    static SCOPES_SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SCOPES_SUPPORTED.get_or_init(|| {
        landlock::abi()
            .is_ok_and(|abi| abi >= SCOPES_ABI && Ruleset::create(abi, 0, SCOPES).is_ok())
    })
}

/// The kernel's Landlock ABI, or why there is none.
fn kernel_abi() -> Result<u32, &'static str> {
    match landlock::abi() {
        Ok(version) => Ok(version),
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => Err(
            "Landlock is built into this kernel but not enabled (add `landlock` to the `lsm=` boot parameter)",
        ),
        Err(_) => Err(
            "this kernel has no Landlock (it needs Linux 6.2 or later, built with CONFIG_SECURITY_LANDLOCK)",
        ),
    }
}

fn unavailable_files(detail: impl std::fmt::Display) -> Unavailable {
    let why = match kernel_abi() {
        Ok(abi) if abi < 3 => format!(
            "this kernel's Landlock is ABI {abi}, and confining writes needs ABI 3 (Linux 6.2 or later)"
        ),
        Ok(_) => format!("the Landlock ruleset could not be built: {detail}"),
        Err(why) => why.to_owned(),
    };
    Unavailable::new(why)
}

/// The ruleset: reads everywhere, every right beneath the writable roots
/// that exist, `/dev/null`. Returns the roots granted. Every descriptor of
/// a root is closed once its rule is added; the ruleset's own is
/// close-on-exec.
fn ruleset(
    roots: &[PathBuf],
    scoped: bool,
    mode: SandboxMode,
) -> Result<(Ruleset, Vec<PathBuf>), Unavailable> {
    // Beneath a writable root, every right but making device nodes (a
    // block device made in the workspace would open the disk itself).
    let writable = FILES & !(landlock::ACCESS_FS_MAKE_CHAR | landlock::ACCESS_FS_MAKE_BLOCK);
    let scopes = if scoped { SCOPES } else { 0 };
    // Every right handled is a hard requirement: a kernel whose ABI cannot
    // enforce them all (below ABI 3) gets no ruleset, and nothing runs.
    let abi = kernel_abi().map_err(Unavailable::new)?;
    if !landlock::enforces(abi, FILES, scopes) {
        return Err(unavailable_files(format_args!(
            "ABI {abi} does not enforce every right handled"
        )));
    }
    let created = Ruleset::create(abi, FILES, scopes)
        .map_err(|e| unavailable_files(format_args!("landlock_create_ruleset: {e}")))?;
    let add = |path: &Path, access: u64| -> Result<(), Unavailable> {
        let fd = landlock::open_path(path)
            .map_err(|e| unavailable_files(format_args!("{}: {e}", path.display())))?;
        created.add_path_beneath(fd.as_fd(), access).map_err(|e| {
            unavailable_files(format_args!("landlock_add_rule {}: {e}", path.display()))
        })
    };
    add(Path::new("/"), READ)?;
    add(Path::new("/dev/null"), FILE)?;
    let mut granted = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        let Ok(meta) = std::fs::metadata(root) else {
            // The workspace root must exist; a temp dir or an extra root
            // that does not is simply not granted.
            if i == 0 && mode == SandboxMode::WorkspaceWrite {
                return Err(Unavailable::new(format!(
                    "the workspace root {} cannot be read",
                    root.display()
                )));
            }
            continue;
        };
        let access = if meta.is_dir() { writable } else { FILE };
        let Ok(fd) = landlock::open_path(root) else {
            continue;
        };
        created.add_path_beneath(fd.as_fd(), access).map_err(|e| {
            unavailable_files(format_args!("landlock_add_rule {}: {e}", root.display()))
        })?;
        granted.push(root.clone());
    }
    Ok((created, granted))
}

/// The seccomp program: `io_uring` always refused; with `network_off`, no
/// socket but `AF_UNIX`, no connect, bind, listen or accept, no `sendto`
/// with an address.
fn filter(network_off: bool) -> Result<BpfProgram, Unavailable> {
    let cannot = |e: seccompiler::BackendError| {
        Unavailable::new(format!("the seccomp filter could not be built: {e}"))
    };
    // SAFETY: prctl(PR_GET_SECCOMP) only reads this process's mode.
    if unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } < 0 {
        return Err(Unavailable::new(
            "this kernel has no seccomp (it needs CONFIG_SECCOMP_FILTER), so the network cannot be turned off",
        ));
    }
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        Unavailable::new(format!(
            "the network filter is built for x86_64, aarch64 and riscv64, and this machine is {}",
            std::env::consts::ARCH
        ))
    })?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(call, Vec::new());
    }
    if network_off {
        let not_unix = || -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
            Ok(vec![SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )?])?])
        };
        rules.insert(libc::SYS_socket, not_unix().map_err(cannot)?);
        rules.insert(libc::SYS_socketpair, not_unix().map_err(cannot)?);
        for call in [
            libc::SYS_connect,
            libc::SYS_bind,
            libc::SYS_listen,
            libc::SYS_accept,
            libc::SYS_accept4,
            libc::SYS_sendmmsg,
        ] {
            rules.insert(call, Vec::new());
        }
        let with_address = SeccompRule::new(vec![
            SeccompCondition::new(4, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)
                .map_err(cannot)?,
        ])
        .map_err(cannot)?;
        rules.insert(libc::SYS_sendto, vec![with_address]);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(cannot)?;
    let program: BpfProgram = filter.try_into().map_err(cannot)?;
    Ok(with_x32_refused(program, arch))
}

/// On x86-64, refuses the x32 numbering (bit 30 set) before the rules,
/// which match the 64-bit numbers only.
fn with_x32_refused(program: BpfProgram, arch: TargetArch) -> BpfProgram {
    if !matches!(arch, TargetArch::x86_64) {
        return program;
    }
    use seccompiler::sock_filter;
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x05 | 0x10;
    const JGE_K: u16 = 0x05 | 0x30;
    const RET_K: u16 = 0x06;
    const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    let op = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let mut out = vec![
        // 0: the architecture; not x86-64: on to the program, which kills.
        op(LD_W_ABS, 0, 0, 4),
        op(JEQ_K, 0, 3, AUDIT_ARCH_X86_64),
        // 2: the call number; x32: refused.
        op(LD_W_ABS, 0, 0, 0),
        op(JGE_K, 0, 1, X32_SYSCALL_BIT),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
    ];
    out.extend(program);
    out
}

/// Where entering failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Landlock = 1,
    NotEnforced = 2,
    Seccomp = 3,
}

/// Failures in the child come back through `Command::spawn` as a raw OS
/// error (the only thing it carries): a tag, the stage and the errno.
const TAG: i32 = 0x5A5A_0000;
const TAG_MASK: i32 = 0x7FFF_0000u32 as i32;

fn tagged(stage: Stage, errno: i32) -> io::Error {
    io::Error::from_raw_os_error(TAG | ((stage as i32) << 12) | (errno & 0xFFF))
}

pub(crate) fn decode(error: &io::Error) -> Option<Unavailable> {
    let raw = error.raw_os_error()?;
    if raw & TAG_MASK != TAG {
        return None;
    }
    let errno = raw & 0xFFF;
    let os = io::Error::from_raw_os_error(errno);
    let why = match (raw >> 12) & 0xF {
        1 => format!("the kernel refused the Landlock ruleset in the child: {os}"),
        2 => "the kernel did not fully enforce the Landlock ruleset in the child".to_owned(),
        3 => format!("the kernel refused the seccomp filter in the child: {os}"),
        _ => return None,
    };
    Some(Unavailable::new(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_errors_round_trip_and_others_are_left_alone() {
        let e = tagged(Stage::Seccomp, libc::EINVAL);
        assert!(decode(&e).unwrap().reason().contains("seccomp"));
        assert!(decode(&tagged(Stage::NotEnforced, 0)).is_some());
        assert!(decode(&io::Error::from_raw_os_error(libc::ENOENT)).is_none());
        assert!(decode(&io::Error::other("x")).is_none());
    }

    #[test]
    fn the_program_refuses_x32_first_on_x86_64() {
        let program = filter(true).unwrap();
        if cfg!(target_arch = "x86_64") {
            assert_eq!(program[3].k, 0x4000_0000);
        }
        assert!(program.len() > 20, "{}", program.len());
        assert!(
            program.len() < 4096,
            "BPF programs hold at most 4096 instructions"
        );
    }
}
