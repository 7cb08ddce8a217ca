//! Test set-up shared by toolprism's own tests, so that `cargo test
//! --workspace` on a fresh machine installs what the tests need by itself:
//!
//! - [`python_env`]: a virtualenv under `target/testkit/` with pinned PyPI
//!   packages, created on first use and reused while its requirements stay
//!   the same;
//! - [`npm_packages`]: pinned npm packages under `target/testkit/`;
//! - [`chromium`]: Debian's `chromium`, installed with `apt-get` when
//!   missing (a browser's own download fails on the project's machines);
//!   [`debian_package`] does the same for any Debian package (the replica
//!   tests' `redis-server` and `haproxy`);
//! - [`http`]: a loopback HTTP server with fixed routes and redirects, plain
//!   or over a stream the test wraps (TLS);
//! - [`redis`]: a `redis-server` on a free loopback port, killed on drop.
//!
//! Each set-up takes an exclusive file lock, so tests running in parallel
//! threads or processes (cargo-nextest) wait for one another instead of
//! installing twice, and writes a `ready` marker last, so a set-up cut
//! short is done again on the next run.
#![forbid(unsafe_code)]

pub mod browser;
pub mod harness;
pub mod http;
pub mod redis;

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace's target directory: `$CARGO_TARGET_DIR` when set, else
/// `target/` at the workspace root.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        let dir = PathBuf::from(dir);
        return if dir.is_absolute() {
            dir
        } else {
            workspace_root().join(dir)
        };
    }
    workspace_root().join("target")
}

/// The workspace root (this crate's parent directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the testkit crate lives inside the workspace")
        .to_path_buf()
}

/// The workspace's settings for dependencies, read from its `Cargo.toml`:
/// each `key = value` of a `[profile.dev.package.<name>]` section, as
/// `(section, key, value)` (`"\"*\""`, `"debug"`, `"false"`).
///
/// A crate a test builds outside the workspace, in the workspace's target
/// directory, gets the same settings ([`dependency_profile_toml`] or
/// [`dependency_profile_config`]), so its dependencies are the artifacts
/// the workspace already compiled, not a second build of each. Read from
/// the manifest, they cannot drift from it.
pub fn dependency_profile() -> Vec<(String, String, String)> {
    let manifest = fs::read_to_string(workspace_root().join("Cargo.toml"))
        .expect("the workspace's Cargo.toml is readable");
    let mut settings = Vec::new();
    let mut section: Option<String> = None;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line
                .strip_prefix("[profile.dev.package.")
                .and_then(|rest| rest.strip_suffix(']'))
                .map(str::to_owned);
        } else if let (Some(package), Some((key, value)), false) =
            (&section, line.split_once('='), line.starts_with('#'))
        {
            settings.push((
                package.clone(),
                key.trim().to_owned(),
                value.trim().to_owned(),
            ));
        }
    }
    assert!(
        !settings.is_empty(),
        "the workspace's Cargo.toml has no [profile.dev.package.*] section"
    );
    settings
}

/// [`dependency_profile`] as the sections of a `Cargo.toml`.
pub fn dependency_profile_toml() -> String {
    let mut text = String::new();
    let mut last = None;
    for (package, key, value) in dependency_profile() {
        if last.as_ref() != Some(&package) {
            text.push_str(&format!("[profile.dev.package.{package}]\n"));
            last = Some(package);
        }
        text.push_str(&format!("{key} = {value}\n"));
    }
    text
}

/// [`dependency_profile`] as `cargo --config` arguments.
pub fn dependency_profile_config() -> Vec<String> {
    dependency_profile()
        .into_iter()
        .flat_map(|(package, key, value)| {
            [
                "--config".to_owned(),
                format!("profile.dev.package.{package}.{key}={value}"),
            ]
        })
        .collect()
}

/// The Python `mcp` client and everything it pulls in, pinned: `mcp` 2.3.0
/// is the newest release and the first line (2.x) that speaks
/// `2026-07-28`; with `mode="legacy"` the same client negotiates
/// `2025-11-25` through `initialize`.
pub const MCP_CLIENT: &[&str] = &[
    "mcp==2.3.0",
    "mcp-types==2.3.0",
    "annotated-types==0.8.0",
    "anyio==4.16.0",
    "attrs==26.1.0",
    "cffi==2.1.1",
    "click==8.5.1",
    "cryptography==50.0.2",
    "h11==0.16.0",
    "httpcore2==2.16.2",
    "httpx2==2.16.2",
    "idna==3.20",
    "jsonschema==4.26.0",
    "jsonschema-specifications==2025.9.1",
    "opentelemetry-api==1.45.2",
    "pycparser==3.12",
    "pydantic==2.14.4",
    "pydantic_core==2.50.5",
    "PyJWT==2.15.1",
    "python-multipart==0.0.34",
    "referencing==0.37.0",
    "rpds-py==2026.9.1",
    "sse-starlette==3.7.0",
    "starlette==1.10.0",
    "truststore==0.10.5",
    "typing-inspection==0.4.5",
    "typing_extensions==4.16.0",
    "uvicorn==0.54.0",
];

/// A Python virtualenv made by [`python_env`].
#[derive(Debug, Clone)]
pub struct PythonEnv {
    dir: PathBuf,
}

impl PythonEnv {
    /// The virtualenv's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Its `python` executable.
    pub fn python(&self) -> PathBuf {
        self.dir.join("bin").join("python")
    }

    /// A command running its `python` with `args`.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut command = Command::new(self.python());
        command.args(args).env("PYTHONDONTWRITEBYTECODE", "1");
        command
    }
}

/// A virtualenv named `name` under `target/testkit/` holding exactly the
/// pinned `requirements` (`"package==1.2.3"`), created with the machine's
/// `python3` on first use. Panics with the installer's output when the
/// set-up fails: a test that needs it cannot run without it.
pub fn python_env(name: &str, requirements: &[&str]) -> PythonEnv {
    for requirement in requirements {
        assert!(
            requirement.contains("=="),
            "pin every Python package with `==`: {requirement}"
        );
    }
    let dir = target_dir().join("testkit").join(format!("venv-{name}"));
    let stamp = requirements.join("\n");
    once(&dir, &stamp, |dir| {
        let _ = fs::remove_dir_all(dir);
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
        run(Command::new(&python).arg("-m").arg("venv").arg(dir))?;
        let pip = dir.join("bin").join("pip");
        run(Command::new(&pip)
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(requirements))
    });
    PythonEnv { dir }
}

/// A directory under `target/testkit/` whose `node_modules` holds exactly
/// the pinned npm `packages` (`"name@1.2.3"`), installed with the
/// machine's `npm` on first use. Returns the directory (run `npx` or
/// `node_modules/.bin/…` from it).
pub fn npm_packages(name: &str, packages: &[&str]) -> PathBuf {
    for package in packages {
        let version = package.rsplit_once('@');
        assert!(
            matches!(version, Some((n, v)) if !n.is_empty() && v.chars().next().is_some_and(|c| c.is_ascii_digit())),
            "pin every npm package to an exact version, `name@1.2.3`: {package}"
        );
    }
    let dir = target_dir().join("testkit").join(format!("npm-{name}"));
    let stamp = packages.join("\n");
    once(&dir, &stamp, |dir| {
        let _ = fs::remove_dir_all(dir);
        fs::create_dir_all(dir)?;
        fs::write(
            dir.join("package.json"),
            "{\"name\":\"toolprism-testkit\",\"private\":true}\n",
        )?;
        run(Command::new("npm")
            .current_dir(dir)
            .args([
                "install",
                "--save-exact",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ])
            .args(packages))
    });
    dir
}

/// Debian's Chromium, `/usr/bin/chromium`, installed with `apt-get`
/// (after `apt-get update`) when missing.
pub fn chromium() -> PathBuf {
    debian_package("chromium", "/usr/bin/chromium")
        .unwrap_or_else(|e| panic!("could not install Debian's chromium: {e}"))
}

/// The program at `program` (an absolute path), from Debian's `package`:
/// as it is when present, else installed with `apt-get install -y
/// --no-install-recommends` (after `apt-get update` when the package lists
/// do not have it yet). One install at a time, across threads and
/// processes (`target/testkit/apt.lock`), so two tests never meet dpkg's
/// own lock. `Err` says why it could not be installed (no `apt-get`, not
/// root, no network, no such package), with the installer's output; a
/// test that cannot run without it decides whether to fail or to skip
/// saying so.
///
/// ```no_run
/// let redis = toolprism_testkit::debian_package("redis-server", "/usr/bin/redis-server")
///     .expect("Debian's redis-server");
/// assert!(redis.is_file());
/// ```
pub fn debian_package(package: &str, program: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(program);
    assert!(
        path.is_absolute(),
        "give the program's absolute path: {program}"
    );
    if path.exists() {
        return Ok(path);
    }
    let lock_dir = target_dir().join("testkit");
    fs::create_dir_all(&lock_dir).map_err(|e| format!("create target/testkit: {e}"))?;
    let lock = File::create(lock_dir.join("apt.lock")).map_err(|e| format!("the apt lock: {e}"))?;
    lock.lock().map_err(|e| format!("lock the apt lock: {e}"))?;
    if path.exists() {
        return Ok(path);
    }
    let env = [("DEBIAN_FRONTEND", "noninteractive")];
    let install = || {
        run(Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", package])
            .envs(env))
    };
    install()
        .or_else(|_| {
            run(Command::new("apt-get").arg("update").envs(env))?;
            install()
        })
        .map_err(|e| format!("apt-get could not install Debian's {package}: {e}"))?;
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "apt-get installed {package}, but {program} is not there"
        ))
    }
}

/// Runs `setup` on `dir` unless `dir/ready` holds `stamp`; under a lock.
fn once(dir: &Path, stamp: &str, setup: impl FnOnce(&Path) -> io::Result<()>) {
    let parent = dir.parent().expect("a set-up directory has a parent");
    fs::create_dir_all(parent).expect("create target/testkit");
    let lock_path = dir.with_extension("lock");
    let lock = File::create(&lock_path)
        .unwrap_or_else(|e| panic!("create the lock {}: {e}", lock_path.display()));
    lock.lock()
        .unwrap_or_else(|e| panic!("lock {}: {e}", lock_path.display()));
    let ready = dir.join("ready");
    if fs::read_to_string(&ready).is_ok_and(|s| s == stamp) {
        return;
    }
    if let Err(e) = setup(dir) {
        panic!("test set-up of {} failed: {e}", dir.display());
    }
    fs::write(&ready, stamp).expect("write the set-up marker");
}

/// Runs a command to completion; its output becomes the error when it fails.
fn run(command: &mut Command) -> io::Result<()> {
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("could not start {:?}: {e}", command.get_program()),
        )
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "{:?} failed ({status}):\n{}\n{}",
            command,
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dependency_profile_is_the_workspaces() {
        let settings = dependency_profile();
        assert!(settings.contains(&("\"*\"".into(), "debug".into(), "false".into())));
        let toml = dependency_profile_toml();
        assert!(
            toml.starts_with("[profile.dev.package.\"*\"]\ndebug = false\n"),
            "{toml}"
        );
        let config = dependency_profile_config();
        assert_eq!(config[0], "--config");
        assert!(config.contains(&"profile.dev.package.\"*\".debug=false".to_owned()));
    }
}
