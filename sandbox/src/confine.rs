//! Confining a process the tools start: prepared in the server before the
//! fork, entered in the child between fork and exec.
//!
//! [`Confinement::prepare`] does every piece of work that allocates or can
//! fail for a reason worth a sentence (probing the kernel, opening the
//! writable roots, building the Landlock ruleset and compiling the seccomp
//! program). [`Confinement::enter`], in the child, only issues the system
//! calls that apply what was prepared, so it is sound in a child forked
//! from a multi-threaded process (`std::process::Command::pre_exec`).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::{SandboxMode, SandboxPolicy};

/// The variable that, set to a non-empty reason, makes every confining
/// [`Confinement::prepare`] fail as if the kernel could not enforce the
/// policy. A test seam: it can only ever make a call fail closed.
pub const FORCE_UNAVAILABLE_ENV: &str = "TOOLPRISM_SANDBOX_FORCE_UNAVAILABLE";

/// Why the policy cannot be enforced here: the call must not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    reason: String,
}

impl Unavailable {
    pub(crate) fn new(reason: impl Into<String>) -> Self {
        Unavailable {
            reason: reason.into(),
        }
    }

    /// Why, in one sentence (no remedy: the caller names the one that
    /// applies to it).
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Unavailable {}

/// What a prepared confinement enforces, for logs and messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enforcement {
    /// Where the process may write (`/dev/null` always); `None`: everywhere.
    pub writable: Option<Vec<PathBuf>>,
    /// The Landlock ABI the file rules are handled at, when files are confined.
    pub landlock_abi: Option<u8>,
    /// Whether signals and abstract Unix sockets are scoped to the sandbox
    /// (Landlock ABI 6, Linux 6.12): a confined process cannot signal the
    /// server or connect to an abstract socket outside.
    pub scoped: bool,
    /// Whether the seccomp filter turns the network off.
    pub network_off: bool,
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.writable, self.landlock_abi) {
            (Some(roots), Some(abi)) => {
                write!(f, "files: Landlock ABI {abi}, writable: /dev/null")?;
                for root in roots {
                    write!(f, ", {}", root.display())?;
                }
            }
            _ => f.write_str("files: not confined")?,
        }
        if self.scoped {
            f.write_str("; signals and abstract sockets: scoped (Landlock ABI 6)")?;
        }
        if self.network_off {
            f.write_str("; network: off (seccomp: Unix sockets only, no connect, bind or listen)")
        } else {
            f.write_str("; network: on")
        }
    }
}

/// A confinement prepared for one process.
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// use toolprism_sandbox::{Confinement, SandboxMode, SandboxPolicy};
/// let root = std::env::temp_dir();
/// let full = Confinement::prepare(&SandboxPolicy::new(SandboxMode::FullAccess), &root).unwrap();
/// assert!(!full.is_confined());
/// // On a kernel with Landlock ABI 3 or later (Linux 6.2+), workspace-write is enforced:
/// if let Ok(prepared) = Confinement::prepare(&SandboxPolicy::default(), &root) {
///     assert!(prepared.enforcement().network_off);
/// }
/// # }
/// ```
pub struct Confinement {
    enforcement: Enforcement,
    #[cfg(target_os = "linux")]
    kernel: Option<crate::linux::Prepared>,
}

impl fmt::Debug for Confinement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Confinement")
            .field("enforcement", &self.enforcement)
            .finish_non_exhaustive()
    }
}

impl Confinement {
    /// Prepares the confinement of `policy` for a process whose workspace
    /// root is `root` (an existing directory). In `full-access` mode it
    /// confines nothing and never fails. Otherwise it fails closed: where
    /// the kernel cannot enforce the policy (no Landlock ABI 3, no seccomp,
    /// another system than Linux), the error says why.
    pub fn prepare(policy: &SandboxPolicy, root: &Path) -> Result<Confinement, Unavailable> {
        if policy.mode() == SandboxMode::FullAccess {
            return Ok(Confinement {
                enforcement: Enforcement {
                    writable: None,
                    landlock_abi: None,
                    scoped: false,
                    network_off: false,
                },
                #[cfg(target_os = "linux")]
                kernel: None,
            });
        }
        if let Some(reason) = std::env::var_os(FORCE_UNAVAILABLE_ENV).filter(|r| !r.is_empty()) {
            return Err(Unavailable::new(format!(
                "the sandbox was made unavailable on purpose ({FORCE_UNAVAILABLE_ENV}={})",
                reason
                    .to_string_lossy()
                    .chars()
                    .take(200)
                    .collect::<String>()
            )));
        }
        Confinement::prepare_kernel(policy, root)
    }

    #[cfg(target_os = "linux")]
    fn prepare_kernel(policy: &SandboxPolicy, root: &Path) -> Result<Confinement, Unavailable> {
        let (kernel, enforcement) = crate::linux::Prepared::new(policy, root)?;
        Ok(Confinement {
            enforcement,
            kernel: Some(kernel),
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn prepare_kernel(_policy: &SandboxPolicy, _root: &Path) -> Result<Confinement, Unavailable> {
        Err(Unavailable::new(format!(
            "this build confines processes on Linux only (Landlock and seccomp), and this system is {}",
            std::env::consts::OS
        )))
    }

    /// Whether anything is confined (`false` in `full-access` mode).
    pub fn is_confined(&self) -> bool {
        self.enforcement.writable.is_some()
    }

    /// What is enforced.
    pub fn enforcement(&self) -> &Enforcement {
        &self.enforcement
    }

    /// Enters the confinement: marks every descriptor from 3 up
    /// close-on-exec (so no socket of the server reaches the program),
    /// sets `no_new_privs`, restricts the process with the Landlock ruleset
    /// and installs the seccomp filter. Once only; later calls do nothing.
    ///
    /// Its errors carry a code [`Confinement::spawn_error`] reads back from
    /// the error `Command::spawn` returns.
    ///
    /// # Safety
    ///
    /// Call it only in a child between `fork` and `exec`
    /// (`Command::pre_exec`), or in a process that means to confine itself
    /// for good. It allocates nothing and takes no lock: it issues
    /// `close_range`, `prctl`, `landlock_restrict_self` and `seccomp` on
    /// what [`prepare`](Self::prepare) built.
    #[allow(unsafe_code)]
    pub unsafe fn enter(&mut self) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        if let Some(kernel) = self.kernel.as_mut() {
            // SAFETY: the caller's contract, passed on.
            return unsafe { kernel.enter() };
        }
        Ok(())
    }

    /// Reads back why entering failed, from the error of
    /// `Command::spawn` when the child's [`enter`](Self::enter) failed;
    /// `None` for any other spawn error.
    pub fn spawn_error(error: &io::Error) -> Option<Unavailable> {
        #[cfg(target_os = "linux")]
        {
            crate::linux::decode(error)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = error;
            None
        }
    }
}
