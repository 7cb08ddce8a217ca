//! # toolprism-sandbox
//!
//! One sandbox policy for toolprism's built-in tools, and its enforcement
//! by the kernel for the processes they start.
//!
//! - [`SandboxPolicy`]: a [`SandboxMode`] (`read-only`, `workspace-write`,
//!   the default, or `full-access`), extra writable roots, the network
//!   (off by default), and which of the server's variables a process sees.
//!   The file tools read the same mode (`read-only` refuses their writes),
//!   so the tools can never fence different roots.
//! - [`Confinement`]: the policy made ready for one process in the server
//!   ([`Confinement::prepare`]), then entered in the child between `fork`
//!   and `exec` ([`Confinement::enter`]), never in a thread of the server.
//!   Every child and background process of the confined one inherits it.
//!   Where the kernel cannot enforce the policy, preparing fails
//!   ([`Unavailable`]) and nothing must run: it fails closed.
//! - [`environment`]: the chosen environment a process starts from
//!   ([`BASE_ENV`], `LC_*`, the names passed), never the server's whole one.
//! - [`likely_denied`]: whether a command's result looks like the sandbox
//!   stopped it, so the model can be told.
//!
//! ## What is enforced where
//!
//! | | Linux, Landlock ABI ≥ 3 (6.2+) and seccomp | Linux, older | other systems |
//! |---|---|---|---|
//! | `read-only` | writes refused but `/dev/null`; network off | unavailable | unavailable |
//! | `workspace-write` | writes only beneath the root, `$TMPDIR`, `/tmp`, `/dev/shm`, the extra roots, `/dev/null`; network off | unavailable | unavailable |
//! | `full-access` | nothing confined | nothing confined | nothing confined |
//!
//! On Linux 6.12 and later (Landlock ABI 6), signals and abstract Unix
//! sockets are scoped as well: a confined process cannot signal the server.
//! What is **not** confined: reads (a process reads what the server can
//! read, `/etc` included), and `.git` inside the root is writable like the
//! rest of it. See the [Linux module](Confinement) docs for the exact rules.
//!
//! ```
//! use toolprism_sandbox::{Confinement, SandboxPolicy};
//! use std::os::unix::process::CommandExt;
//!
//! let root = tempfile::tempdir().unwrap();
//! let policy = SandboxPolicy::default();
//! match Confinement::prepare(&policy, root.path()) {
//!     Ok(mut confinement) => {
//!         let mut cmd = std::process::Command::new("sh");
//!         cmd.args(["-c", "echo hi > inside.txt; echo no > /root/outside.txt"])
//!             .current_dir(root.path())
//!             .env_clear()
//!             .envs(toolprism_sandbox::environment(&policy, std::env::vars_os()));
//!         // SAFETY: `enter` is made for `pre_exec`: it only issues system calls.
//!         unsafe { cmd.pre_exec(move || confinement.enter()) };
//!         let status = cmd.status().unwrap();
//!         assert!(!status.success(), "the write outside was refused");
//!         assert!(root.path().join("inside.txt").exists());
//!     }
//!     // Not Linux 6.2+: the command must not run.
//!     Err(why) => eprintln!("sandbox unavailable: {why}"),
//! }
//! ```

#![deny(unsafe_code)]

mod confine;
mod denial;
mod environment;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod landlock;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod linux;
mod policy;

pub use confine::{Confinement, Enforcement, FORCE_UNAVAILABLE_ENV, Unavailable};
pub use denial::likely_denied;
pub use environment::{BASE_ENV, environment};
pub use policy::{SandboxMode, SandboxPolicy, UnknownMode};

/// The error code of a call the sandbox refuses (a write by a file tool in
/// `read-only` mode).
pub const SANDBOX_DENIED: &str = "SANDBOX_DENIED";
/// The error code of a call that cannot run confined here, and so does not
/// run.
pub const SANDBOX_UNAVAILABLE: &str = "SANDBOX_UNAVAILABLE";
