//! The policy: a mode, extra writable roots, the network, the environment.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// How much a confined process may change.
///
/// The order is the order of width: `ReadOnly < WorkspaceWrite < FullAccess`.
///
/// ```
/// use toolprism_sandbox::SandboxMode;
/// let mode: SandboxMode = "read-only".parse().unwrap();
/// assert_eq!(mode, SandboxMode::ReadOnly);
/// assert_eq!(SandboxMode::default().as_str(), "workspace-write");
/// assert!(SandboxMode::FullAccess > SandboxMode::WorkspaceWrite);
/// let err = "danger".parse::<SandboxMode>().unwrap_err();
/// assert!(err.to_string().contains("read-only, workspace-write or full-access"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum SandboxMode {
    /// Read and execute everywhere; write nothing but `/dev/null`.
    ReadOnly,
    /// Also write under the workspace root, the temp directories (`$TMPDIR`,
    /// `/tmp`, `/dev/shm`) and the extra writable roots. The default.
    #[default]
    WorkspaceWrite,
    /// Nothing confined: files and network as the server itself. Only ever
    /// chosen explicitly.
    FullAccess,
}

impl SandboxMode {
    /// Every mode, narrowest first.
    pub const ALL: [SandboxMode; 3] = [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::FullAccess,
    ];

    /// The mode's name: `read-only`, `workspace-write` or `full-access`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::FullAccess => "full-access",
        }
    }

    /// Whether the file tools may write in this mode.
    pub fn writes_files(self) -> bool {
        self != SandboxMode::ReadOnly
    }

    /// What the mode lets a command write, in words a model reads.
    pub fn writes(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "writing any file is refused",
            SandboxMode::WorkspaceWrite => {
                "writing outside the workspace and the temp directories is refused"
            }
            SandboxMode::FullAccess => "nothing is confined",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is not one of the three.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMode(String);

impl fmt::Display for UnknownMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown sandbox mode `{}`: use read-only, workspace-write or full-access",
            self.0.escape_debug()
        )
    }
}

impl std::error::Error for UnknownMode {}

impl FromStr for SandboxMode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SandboxMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == s)
            .ok_or_else(|| UnknownMode(s.chars().take(64).collect()))
    }
}

/// One policy for every built-in tool: what the processes they start may
/// write, whether they reach the network, which variables of the server's
/// environment they see. The file tools read the same mode (`read-only`
/// refuses their writes).
///
/// The default is `workspace-write` with the network off and the base
/// environment ([`BASE_ENV`](crate::BASE_ENV)).
///
/// ```
/// use toolprism_sandbox::{SandboxMode, SandboxPolicy};
/// let policy = SandboxPolicy::default()
///     .allow_write("/var/cache/build")
///     .pass_env("CARGO_HOME");
/// assert_eq!(policy.mode(), SandboxMode::WorkspaceWrite);
/// assert!(!policy.network());
/// assert_eq!(policy.summary(), "workspace-write, network off");
/// let wider = policy.widened(SandboxMode::FullAccess, false);
/// assert!(wider.network(), "full access confines nothing");
/// assert!(wider.is_wider_than(&policy));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxPolicy {
    mode: SandboxMode,
    writable: Vec<PathBuf>,
    network: bool,
    env: Vec<String>,
    withheld: Vec<String>,
}

impl SandboxPolicy {
    /// A policy in `mode`, the network off, no extra writable root.
    pub fn new(mode: SandboxMode) -> Self {
        SandboxPolicy {
            mode,
            ..SandboxPolicy::default()
        }
    }

    /// The mode.
    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// With another mode, the rest kept.
    pub fn with_mode(mut self, mode: SandboxMode) -> Self {
        self.mode = mode;
        self
    }

    /// Also lets processes write under `path` in `workspace-write` mode (a
    /// cache such as `~/.cargo` or `~/.npm`). A relative path is taken from
    /// the current directory. It does not widen `read-only`, and the file
    /// tools stay inside the workspace root.
    pub fn allow_write(mut self, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let path = std::path::absolute(&path).unwrap_or(path);
        if !self.writable.contains(&path) {
            self.writable.push(path);
        }
        self
    }

    /// Whether processes may reach the network (`false` by default). In
    /// `full-access` mode they always may.
    pub fn allow_network(mut self, allow: bool) -> Self {
        self.network = allow;
        self
    }

    /// Passes the server's variable `name` to the processes, beside the base
    /// environment.
    pub fn pass_env(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !self.env.contains(&name) {
            self.env.push(name);
        }
        self
    }

    /// Never passes the variable `name`, even when it is in the base
    /// environment or was named with [`pass_env`](Self::pass_env): the
    /// variable that holds the server's own token, say.
    pub fn withhold_env(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !self.withheld.contains(&name) {
            self.withheld.push(name);
        }
        self
    }

    /// The extra writable roots, as given.
    pub fn extra_writable(&self) -> &[PathBuf] {
        &self.writable
    }

    /// Whether the network is on for the processes.
    pub fn network(&self) -> bool {
        self.network || self.mode == SandboxMode::FullAccess
    }

    /// The variables passed beside the base environment.
    pub fn passed_env(&self) -> &[String] {
        &self.env
    }

    /// The variables never passed.
    pub fn withheld_env(&self) -> &[String] {
        &self.withheld
    }

    /// Where a process may write under this policy, with `root` the
    /// workspace root: nothing in `read-only` (but `/dev/null`, always
    /// granted), the root, the temp directories and the extra roots in
    /// `workspace-write`; `None` in `full-access` (everywhere).
    pub fn writable_roots(&self, root: &Path) -> Option<Vec<PathBuf>> {
        let mut roots = Vec::new();
        match self.mode {
            SandboxMode::FullAccess => return None,
            SandboxMode::ReadOnly => {}
            SandboxMode::WorkspaceWrite => {
                roots.push(root.to_path_buf());
                if let Some(tmp) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) {
                    let tmp = PathBuf::from(tmp);
                    if tmp.is_absolute() {
                        roots.push(tmp);
                    }
                }
                roots.push(PathBuf::from("/tmp"));
                roots.push(PathBuf::from("/dev/shm"));
                roots.extend(self.writable.iter().cloned());
            }
        }
        let mut unique: Vec<PathBuf> = Vec::with_capacity(roots.len());
        for root in roots {
            if !unique.contains(&root) {
                unique.push(root);
            }
        }
        Some(unique)
    }

    /// This policy widened by an approved request: the wider of the two
    /// modes, and the network on if either has it. Writable roots and the
    /// environment stay.
    pub fn widened(&self, mode: SandboxMode, network: bool) -> SandboxPolicy {
        SandboxPolicy {
            mode: self.mode.max(mode),
            network: self.network || network,
            ..self.clone()
        }
    }

    /// Whether this policy allows something `other` does not.
    pub fn is_wider_than(&self, other: &SandboxPolicy) -> bool {
        self.mode > other.mode || (self.network() && !other.network())
    }

    /// The mode and the network in a few words: `workspace-write, network off`.
    pub fn summary(&self) -> String {
        format!(
            "{}, network {}",
            self.mode,
            if self.network() { "on" } else { "off" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_and_order_by_width() {
        for mode in SandboxMode::ALL {
            assert_eq!(mode.as_str().parse::<SandboxMode>().unwrap(), mode);
            assert_eq!(mode.to_string(), mode.as_str());
        }
        assert!(SandboxMode::ReadOnly < SandboxMode::WorkspaceWrite);
        let long = "x".repeat(10_000);
        assert!(long.parse::<SandboxMode>().unwrap_err().to_string().len() < 200);
    }

    #[test]
    fn writable_roots_follow_the_mode() {
        let root = Path::new("/work/ws");
        let policy = SandboxPolicy::default()
            .allow_write("/cache")
            .allow_write("/cache");
        let roots = policy.writable_roots(root).unwrap();
        assert_eq!(roots[0], root);
        assert!(roots.contains(&PathBuf::from("/tmp")));
        assert_eq!(
            roots.iter().filter(|r| **r == Path::new("/cache")).count(),
            1
        );
        let read_only = policy.clone().with_mode(SandboxMode::ReadOnly);
        assert_eq!(read_only.writable_roots(root), Some(Vec::new()));
        assert_eq!(
            policy
                .with_mode(SandboxMode::FullAccess)
                .writable_roots(root),
            None
        );
    }

    #[test]
    fn widening_never_narrows() {
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite).allow_network(true);
        let same = policy.widened(SandboxMode::ReadOnly, false);
        assert_eq!(same, policy);
        assert!(!same.is_wider_than(&policy));
        let read_only = SandboxPolicy::new(SandboxMode::ReadOnly);
        assert!(
            read_only
                .widened(SandboxMode::ReadOnly, true)
                .is_wider_than(&read_only)
        );
    }
}
