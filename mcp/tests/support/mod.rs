//! What the `mcp*` tests share: the test server process
//! (`tests/support/server.rs`, built as the example `mcp_test_server`), the pinned Python `mcp` client, and
//! readers for what they leave behind.

#![allow(dead_code)]

pub(crate) mod oauth_server;
pub(crate) mod raw;
pub(crate) mod tls;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;
use toolprism_testkit::PythonEnv;

/// The pinned Python `mcp` client (see `toolprism_testkit::MCP_CLIENT`).
pub(crate) use toolprism_testkit::MCP_CLIENT as PYTHON_PACKAGES;

/// Installs the process's TLS provider (ring, as the library's own TLS in
/// `import/http.rs`): rmcp's HTTP client builds reqwest on rustls without
/// one, and panics if none is installed. Every test that makes such a
/// client calls this first, whichever runs first.
pub(crate) fn tls_provider() {
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The virtualenv holding [`PYTHON_PACKAGES`], made on first use.
pub(crate) fn python() -> PythonEnv {
    static ENV: OnceLock<PythonEnv> = OnceLock::new();
    ENV.get_or_init(|| toolprism_testkit::python_env("mcp-client", PYTHON_PACKAGES))
        .clone()
}

/// A script in `tests/support/`.
pub(crate) fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support")
        .join(name)
}

/// The test server executable, built by `cargo test` with the examples;
/// built here when missing or older than the library or its source (a run
/// that named only some test targets).
pub(crate) fn server_exe() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| example_exe("mcp_test_server", "tests/support/server.rs"))
        .clone()
}

/// The conformance suite's fixture server (`tests/support/conformance_server.rs`).
pub(crate) fn conformance_server_exe() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        example_exe(
            "mcp_conformance_server",
            "tests/support/conformance_server.rs",
        )
    })
    .clone()
}

/// The client of the conformance suite's client scenarios
/// (`tests/support/conformance_client.rs`).
pub(crate) fn conformance_client_exe() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        example_exe(
            "mcp_conformance_client",
            "tests/support/conformance_client.rs",
        )
    })
    .clone()
}

/// Example `name` of this crate (its source at `source`), built when
/// missing or stale.
fn example_exe(name: &str, source: &str) -> PathBuf {
    let test_exe = std::env::current_exe().expect("the test's own path");
    // <target>/<profile>/deps/<test> → <target>/<profile>/examples/
    let deps = test_exe
        .parent()
        .expect("tests run from <target>/<profile>/deps");
    let profile_dir = deps
        .parent()
        .expect("tests run from <target>/<profile>/deps");
    let exe = profile_dir.join("examples").join(name);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(source);
    let newest_input = std::fs::read_dir(deps)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            (name.starts_with("libtoolprism_mcp-") || name.starts_with("libtoolprism_core-"))
                && name.ends_with(".rlib")
        })
        .map(|e| e.path())
        .chain([source])
        .filter_map(|p| p.metadata().and_then(|m| m.modified()).ok())
        .max();
    let built = exe.metadata().and_then(|m| m.modified()).ok();
    let fresh = matches!((built, newest_input), (Some(b), Some(i)) if b >= i);
    if !fresh {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", "toolprism-mcp", "--example", name]);
        // The variables cargo set for this test (CARGO_MANIFEST_DIR,
        // CARGO_PKG_NAME, …) are not the outer build's: build scripts that
        // watch them (ring's) would run again, and the next outer build
        // would undo it.
        for (key, _) in std::env::vars_os() {
            if let Some(key) = key.to_str()
                && key.starts_with("CARGO_")
                && key != "CARGO_HOME"
                && key != "CARGO_TARGET_DIR"
            {
                build.env_remove(key);
            }
        }
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        if let Some(target) = profile_dir.parent() {
            build.arg("--target-dir").arg(target);
        }
        let status = build.status().expect("run cargo to build the test server");
        assert!(status.success(), "building {name} failed");
    }
    exe
}

/// A test server process serving Streamable HTTP on a free loopback port;
/// killed on drop.
pub(crate) struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    stderr: Arc<Mutex<String>>,
}

impl HttpServer {
    /// Starts the test server with `extra` arguments after `--http
    /// 127.0.0.1:0`.
    pub(crate) fn start(extra: &[&str]) -> HttpServer {
        HttpServer::launch("127.0.0.1:0", extra, &[])
    }

    /// Starts `exe` with `extra` arguments after `--http 127.0.0.1:0`.
    pub(crate) fn start_exe(exe: &Path, extra: &[&str]) -> HttpServer {
        HttpServer::launch_exe(exe, "127.0.0.1:0", extra, &[])
    }

    /// Starts the server with `extra` arguments after `--http addr`, and
    /// `env` in its environment.
    pub(crate) fn launch(addr: &str, extra: &[&str], env: &[(&str, &str)]) -> HttpServer {
        HttpServer::launch_exe(&server_exe(), addr, extra, env)
    }

    /// Starts `exe` with `extra` arguments after `--http addr`, and `env`
    /// in its environment.
    pub(crate) fn launch_exe(
        exe: &Path,
        addr: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> HttpServer {
        let mut child = Command::new(exe)
            .args(["--http", addr])
            .args(extra)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the test server");
        let mut lines = BufReader::new(child.stderr.take().expect("piped stderr"));
        let mut first = String::new();
        lines
            .read_line(&mut first)
            .expect("read the server's stderr");
        let url = first
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the server did not announce its address: {first:?}"))
            .to_owned();
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut rest = String::new();
            let mut buf = [0u8; 4096];
            loop {
                match lines.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        rest.push_str(&String::from_utf8_lossy(&buf[..n]));
                        *sink.lock().unwrap() = rest.clone();
                    }
                }
            }
        });
        HttpServer { child, url, stderr }
    }

    /// `HOST:PORT` of [`url`](Self::url).
    pub(crate) fn addr(&self) -> &str {
        raw::authority(&self.url)
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server wrote to stderr after its address.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Whether the process is still running.
    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a Python script of `tests/support/` with `args`; its stdout must be
/// one JSON object.
pub(crate) fn run_python(script_name: &str, args: &[&str]) -> Value {
    run_python_with(script_name, args, &[])
}

/// [`run_python`] with `env` in the script's environment (for tokens: an
/// argument would show in `ps`).
pub(crate) fn run_python_with(script_name: &str, args: &[&str], env: &[(&str, &str)]) -> Value {
    let output = python()
        .command([script(script_name).as_os_str()])
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{script_name} {args:?} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("{script_name} did not print one JSON object ({e}):\n{stdout}\nstderr:\n{stderr}")
    })
}

/// The events of a session log, waiting up to `timeout` until `until`
/// holds for them (the server writes them as calls end).
pub(crate) fn log_events(
    path: &Path,
    timeout: Duration,
    until: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + timeout;
    loop {
        let events: Vec<Value> = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        if until(&events) || Instant::now() >= deadline {
            return events;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The resident set size of process `pid`, in KiB, from `/proc`.
pub(crate) fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc status")
}
