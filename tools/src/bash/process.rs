//! Starting a command so that everything it starts can be killed, and
//! killing it.
//!
//! `bash -c <command>` is not our child: our child is a small **supervisor**,
//! forked from the `Command` before `exec`, which forks `bash` (the command)
//! and then only reaps children until none is left. It writes the command's
//! wait status to a pipe when the command ends, and exits when the last
//! process below it is gone. It runs no Rust code beyond a few system calls
//! and holds no file descriptor but that pipe, so the output pipes close
//! when the command's processes are gone.
//!
//! What this guarantees on each system is in the [`bash`](super) module docs.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio};

use std::time::Duration;
#[cfg(target_os = "linux")]
use std::time::Instant;
use toolprism_sandbox::Confinement;

/// How long [`ProcessTree::kill_all`] keeps killing a tree that keeps
/// growing before it gives up.
pub(crate) const KILL_PATIENCE: Duration = Duration::from_secs(5);

/// The supervisor and everything below it. Dropping it kills them all.
#[derive(Debug)]
pub(crate) struct ProcessTree {
    /// The supervisor while it is not reaped yet.
    supervisor: Option<Child>,
    pid: i32,
}

/// A command that was started.
#[derive(Debug)]
pub(crate) struct Started {
    pub(crate) tree: ProcessTree,
    pub(crate) stdout: ChildStdout,
    pub(crate) stderr: ChildStderr,
    /// Yields the command's wait status (4 bytes) when it ends, then EOF.
    pub(crate) status: io::PipeReader,
}

/// What to start: the command, where, with which environment, confined how.
#[derive(Debug)]
pub(crate) struct Launch<'a> {
    /// The command line, for `bash -c`.
    pub(crate) command: &'a str,
    /// The working directory, opened (beneath the workspace root).
    pub(crate) cwd: OwnedFd,
    /// The whole environment of the command.
    pub(crate) env: Vec<(OsString, OsString)>,
    /// Entered by the command's process before it executes `bash`.
    pub(crate) confinement: Confinement,
}

impl ProcessTree {
    /// Starts `bash -c <command>` under a supervisor, in the opened working
    /// directory, with exactly the given environment, confined; stdin
    /// closed, stdout and stderr piped.
    pub(crate) fn spawn(launch: Launch<'_>) -> io::Result<Started> {
        let (status, status_writer) = io::pipe()?;
        let status_fd = status_writer.as_raw_fd();
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(launch.command)
            .env_clear()
            .envs(launch.env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // The descriptor stays open in this process until `spawn` returns;
        // the child enters it with `fchdir` (it is close-on-exec).
        sys::supervise_before_exec(
            &mut cmd,
            status_fd,
            launch.cwd.as_raw_fd(),
            launch.confinement,
        );
        let mut child = cmd.spawn()?;
        drop(status_writer);
        let pid = i32::try_from(child.id()).map_err(io::Error::other)?;
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            unreachable!("stdout and stderr are piped")
        };
        Ok(Started {
            tree: ProcessTree {
                supervisor: Some(child),
                pid,
            },
            stdout,
            stderr,
            status,
        })
    }

    /// Kills every process the command started and reaps the supervisor.
    /// Synchronous, so it can run in `Drop`; a no-op once done.
    pub(crate) fn kill_all(&mut self) {
        let Some(mut supervisor) = self.supervisor.take() else {
            return;
        };
        self.kill_below();
        // With nothing left below it, the supervisor exits on its own; on
        // other systems it was in the killed group.
        let _ = supervisor.wait();
    }

    #[cfg(target_os = "linux")]
    fn kill_below(&self) {
        let started = Instant::now();
        let mut pause = Duration::from_micros(200);
        loop {
            let below = linux::descendants(self.pid);
            if below.is_empty() || started.elapsed() > KILL_PATIENCE {
                return;
            }
            for process in &below {
                sys::kill_exactly(process.pid, || {
                    linux::start_time(process.pid) == Some(process.start_time)
                });
            }
            // The supervisor reaps them; their children come up to it.
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn kill_below(&self) {
        sys::kill_group(self.pid);
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Reads the command's wait status from the supervisor's pipe: `None` when
/// the supervisor ended without writing one.
pub(crate) fn read_status(mut pipe: io::PipeReader) -> Option<ExitStatus> {
    let mut raw = [0u8; 4];
    pipe.read_exact(&mut raw).ok()?;
    Some(ExitStatus::from_raw(i32::from_ne_bytes(raw)))
}

/// `/proc`, read to find a process's descendants.
#[cfg(target_os = "linux")]
pub(crate) mod linux {
    use std::collections::HashMap;

    /// A process seen in `/proc`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) struct Seen {
        pub(crate) pid: i32,
        pub(crate) start_time: u64,
    }

    /// `(ppid, start time)` from `/proc/<pid>/stat`.
    fn stat(pid: i32) -> Option<(i32, u64)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name, in parentheses, may hold anything: parse after
        // its last `)`. Then: state ppid pgrp session tty_nr tpgid flags
        // minflt cminflt majflt cmajflt utime stime cutime cstime priority
        // nice num_threads itrealvalue starttime.
        let rest = &text[text.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ppid = fields.get(1)?.parse().ok()?;
        let start_time = fields.get(19)?.parse().ok()?;
        Some((ppid, start_time))
    }

    /// The start time of `pid`, if it exists.
    pub(crate) fn start_time(pid: i32) -> Option<u64> {
        stat(pid).map(|(_, start)| start)
    }

    /// Every process below `root` (not `root` itself), zombies included.
    pub(crate) fn descendants(root: i32) -> Vec<Seen> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut children: HashMap<i32, Vec<Seen>> = HashMap::new();
        for entry in dir.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            if let Some((ppid, start_time)) = stat(pid) {
                children
                    .entry(ppid)
                    .or_default()
                    .push(Seen { pid, start_time });
            }
        }
        let mut out = Vec::new();
        let mut queue = vec![root];
        while let Some(parent) = queue.pop() {
            for child in children.remove(&parent).unwrap_or_default() {
                queue.push(child.pid);
                out.push(child);
            }
        }
        out
    }
}

/// The system calls, each with why it is sound.
#[allow(unsafe_code)]
mod sys {
    use std::os::fd::RawFd;
    use std::process::Command;

    use super::{CommandExt, Confinement, io};

    /// Makes the forked child a supervisor before `Command` execs: it forks
    /// the process that goes on to exec `bash`, and itself never returns.
    /// That process enters `cwd` and the confinement first.
    pub(super) fn supervise_before_exec(
        cmd: &mut Command,
        status_fd: RawFd,
        cwd: RawFd,
        mut confinement: Confinement,
    ) {
        // SAFETY: the closure runs in the child between fork and exec, where
        // only async-signal-safe functions may be called. It calls only
        // `prctl`, `signal`, `fork`, `close`, `close_range` (via `syscall`),
        // `waitpid`, `write`, `fchdir` and `_exit`, and the confinement's
        // `enter` (system calls on what was prepared before the fork, its
        // contract); it allocates nothing, takes no lock, and touches no
        // memory but its stack and what the closure captured.
        unsafe {
            cmd.pre_exec(move || supervise(status_fd, cwd, &mut confinement));
        }
    }

    /// Runs in the forked child; see [`supervise_before_exec`].
    fn supervise(status_fd: RawFd, cwd: RawFd, confinement: &mut Confinement) -> io::Result<()> {
        // SAFETY (whole function): see `supervise_before_exec`. Every call
        // is a plain system call on values owned by this process.
        unsafe {
            // Handlers inherited from the parent are its functions, which must
            // not run here; ignored signals would be inherited by bash; and
            // SIGCHLD must not be ignored or `waitpid` sees nothing.
            for signal in 1..32 {
                if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                    libc::signal(signal, libc::SIG_DFL);
                }
            }
            #[cfg(target_os = "linux")]
            if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            let command = libc::fork();
            if command < 0 {
                return Err(io::Error::last_os_error());
            }
            if command == 0 {
                // The command: into its directory and its sandbox, then
                // `Command` execs bash. The status pipe is close-on-exec. An
                // error here reaches `spawn` through `Command`'s own pipe.
                if libc::fchdir(cwd) != 0 {
                    return Err(io::Error::last_os_error());
                }
                return confinement.enter();
            }
            close_all_but(status_fd);
            let mut reported = false;
            loop {
                let mut status: libc::c_int = 0;
                let pid = libc::waitpid(-1, &mut status, 0);
                if pid == command && !reported {
                    reported = true;
                    let bytes = status.to_ne_bytes();
                    libc::write(status_fd, bytes.as_ptr().cast(), bytes.len());
                    libc::close(status_fd);
                }
                if pid < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    // ECHILD: nothing is left below.
                    libc::_exit(0);
                }
            }
        }
    }

    /// Closes every descriptor but `keep`: the output pipes (so they close
    /// when the command's processes are gone) and `Command`'s exec-error
    /// pipe (so `spawn` returns once bash has exec'd).
    ///
    /// # Safety
    /// Between fork and exec only; closes descriptors this process owns.
    unsafe fn close_all_but(keep: RawFd) {
        // SAFETY: see the function's contract.
        unsafe {
            #[cfg(target_os = "linux")]
            {
                let keep = keep as libc::c_uint;
                let low = if keep == 0 {
                    0
                } else {
                    libc::syscall(libc::SYS_close_range, 0, keep - 1, 0)
                };
                let high = libc::syscall(libc::SYS_close_range, keep + 1, libc::c_uint::MAX, 0);
                if low == 0 && high == 0 {
                    return;
                }
            }
            let max = match libc::sysconf(libc::_SC_OPEN_MAX) {
                n if n > 0 => n.min(65_536) as RawFd,
                _ => 1024,
            };
            for fd in 0..max {
                if fd != keep {
                    libc::close(fd);
                }
            }
        }
    }

    /// Sends `SIGKILL` to `pid` if `still_it()` says, after the process was
    /// pinned with a pidfd, that it is the process that was seen.
    #[cfg(target_os = "linux")]
    pub(super) fn kill_exactly(pid: i32, still_it: impl Fn() -> bool) {
        // SAFETY: pidfd_open, pidfd_send_signal, close and kill take plain
        // integers and a null pointer where the kernel accepts one; no memory
        // is shared with the kernel.
        unsafe {
            let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0);
            if fd >= 0 {
                if still_it() {
                    libc::syscall(
                        libc::SYS_pidfd_send_signal,
                        fd,
                        libc::SIGKILL,
                        std::ptr::null::<libc::siginfo_t>(),
                        0,
                    );
                }
                libc::close(fd as libc::c_int);
            } else if io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) && still_it()
            {
                // Kernels before 5.3: the pid could in theory be recycled
                // between the check and the kill.
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }

    /// Sends `SIGKILL` to the process group `pgid`.
    #[cfg(not(target_os = "linux"))]
    pub(super) fn kill_group(pgid: i32) {
        // SAFETY: killpg takes plain integers; a stale group gives ESRCH.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolprism_sandbox::{SandboxMode, SandboxPolicy};

    /// `command` in `dir`, under `mode`.
    fn launch<'a>(command: &'a str, dir: &std::path::Path, mode: SandboxMode) -> Launch<'a> {
        let policy = SandboxPolicy::new(mode);
        Launch {
            command,
            cwd: std::fs::File::open(dir).unwrap().into(),
            env: toolprism_sandbox::environment(&policy, std::env::vars_os()),
            confinement: Confinement::prepare(&policy, dir).unwrap(),
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_tree_holds_what_escapes_the_group_and_kill_all_ends_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut started = ProcessTree::spawn(launch(
            "setsid sleep 30 & (sleep 30 &) ; nohup sleep 30 >/dev/null 2>&1 & sleep 30",
            dir.path(),
            SandboxMode::WorkspaceWrite,
        ))
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while linux::descendants(started.tree.pid).len() < 5 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        // bash, its three sleeps and the escaped one: all below the supervisor.
        let below = linux::descendants(started.tree.pid);
        assert!(below.len() >= 5, "{below:?}");
        started.tree.kill_all();
        assert!(
            below
                .iter()
                .all(|p| linux::start_time(p.pid) != Some(p.start_time))
        );
        assert_eq!(
            read_status(started.status).and_then(|s| s.signal()),
            Some(libc::SIGKILL)
        );
    }

    #[test]
    fn the_status_is_the_commands_own() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [SandboxMode::FullAccess, SandboxMode::ReadOnly] {
            let mut started = ProcessTree::spawn(launch("exit 7", dir.path(), mode)).unwrap();
            assert_eq!(read_status(started.status).and_then(|s| s.code()), Some(7));
            started.tree.kill_all();
        }
    }

    #[test]
    fn the_command_starts_in_the_opened_directory_even_once_it_moved() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("here")).unwrap();
        let launched = launch("pwd", &dir.path().join("here"), SandboxMode::FullAccess);
        // Renamed after it was opened: the descriptor still names it.
        std::fs::rename(dir.path().join("here"), dir.path().join("moved")).unwrap();
        let mut started = ProcessTree::spawn(launched).unwrap();
        let mut out = String::new();
        started.stdout.read_to_string(&mut out).unwrap();
        started.tree.kill_all();
        assert!(out.trim_end().ends_with("/moved"), "{out}");
    }
}
