//! Telling, from a command's result, whether the sandbox likely stopped it.
//!
//! The kernel does not say: a write Landlock refuses fails with `EACCES`
//! ("Permission denied"), a socket seccomp refuses with `EPERM`
//! ("Operation not permitted"), and the command prints what it prints. So
//! this is a heuristic over the command's output and status: the messages
//! such refusals produce (in the words of the C library, Python, Node and
//! the common tools), or death by `SIGSYS`. It errs on the side of saying
//! so: the marker a tool shows says "may have been", never "was".

use crate::SandboxPolicy;

/// Phrases a refused write or socket prints, lowercase.
const PHRASES: &[&str] = &[
    "permission denied",
    "operation not permitted",
    "read-only file system",
    "eacces",
    "eperm",
    "erofs",
    "seccomp",
    "landlock",
    "failed to write",
    "cannot create",
    "network is unreachable",
];

/// Whether a command that ran under `policy` was likely stopped by it:
/// killed by `SIGSYS`, or it printed one of the phrases refusals produce
/// (on stderr, or on stdout when it failed). Never under `full-access`.
///
/// ```
/// use toolprism_sandbox::{SandboxMode, SandboxPolicy, likely_denied};
/// let policy = SandboxPolicy::default();
/// let stderr = "touch: cannot touch '/root/x': Permission denied\n";
/// assert!(likely_denied(&policy, Some(1), None, "", stderr));
/// assert!(!likely_denied(&policy, Some(0), None, "done\n", ""));
/// let full = SandboxPolicy::new(SandboxMode::FullAccess);
/// assert!(!likely_denied(&full, Some(1), None, "", stderr));
/// ```
pub fn likely_denied(
    policy: &SandboxPolicy,
    exit_code: Option<i32>,
    signal: Option<i32>,
    stdout: &str,
    stderr: &str,
) -> bool {
    if policy.mode() == crate::SandboxMode::FullAccess {
        return false;
    }
    if signal == Some(libc::SIGSYS) {
        return true;
    }
    let says = |text: &str| {
        let text = text.to_ascii_lowercase();
        PHRASES.iter().any(|p| text.contains(p))
    };
    says(stderr) || (exit_code != Some(0) && says(stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_refusals_are_recognised() {
        let policy = SandboxPolicy::default();
        for stderr in [
            "bash: /root/x: Permission denied",
            "PermissionError: [Errno 13] Permission denied: '/root/x'",
            "socket: Operation not permitted",
            "Error: EACCES: permission denied, open '/root/x'",
            "mv: cannot move 'a' to '/root/a': Read-only file system",
        ] {
            assert!(
                likely_denied(&policy, Some(1), None, "", stderr),
                "{stderr}"
            );
        }
        assert!(likely_denied(&policy, None, Some(libc::SIGSYS), "", ""));
        assert!(!likely_denied(
            &policy,
            Some(1),
            None,
            "",
            "No such file or directory"
        ));
        // On stdout only when the command failed.
        assert!(!likely_denied(
            &policy,
            Some(0),
            None,
            "permission denied",
            ""
        ));
        assert!(likely_denied(
            &policy,
            Some(2),
            None,
            "permission denied",
            ""
        ));
    }
}
