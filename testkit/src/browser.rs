//! Headless Chromium for the tests that draw pages: the HTML renderer's
//! (`html/tests/it/html_browser.rs`), the showcase's session page
//! (`examples/tests/it/html_viewer.rs`) and the MCP card app's.
//!
//! The browser is Debian's `chromium` ([`crate::chromium`]
//! installs it when missing), driven by Python Playwright from a pinned
//! virtualenv ([`crate::python_env`]) through its
//! `executable_path`: Playwright's own browser download never runs (and
//! `PLAYWRIGHT_BROWSERS_PATH` points at an empty directory to be sure).
//! Playwright's pip wheel carries its driver, so the set-up compiles
//! nothing; a Rust CDP client would add a large crate graph to every
//! build for the same job.
//!
//! One browser per test binary: [`browser`] starts `driver.py` once and
//! hands out a lock on it; each request loads a page in a fresh browser
//! context (its own cookies, cache and storage) and records what the page
//! did. The driver exits when the test binary does (its stdin closes).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use serde_json::{Value, json};

/// The pinned driver: Playwright and its one dependency.
pub const REQUIREMENTS: [&str; 2] = ["playwright==1.65.2", "greenlet==3.5.6"];

const DRIVER: &str = include_str!("browser_driver.py");

/// A running driver with its browser.
#[derive(Debug)]
pub struct Browser {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    log: PathBuf,
    /// Chromium's version, as the browser reports it.
    pub version: String,
    /// How long set-up and launch took (venv, chromium, browser start).
    pub started_in: std::time::Duration,
}

/// What a page did while it was open.
#[derive(Debug)]
pub struct PageRun {
    /// Wall time from navigation to the `load` event, in ms.
    pub load_ms: f64,
    /// Each step's result, in order.
    pub results: Vec<Value>,
    /// Console messages: `{type, text}`.
    pub console: Vec<Value>,
    /// Uncaught page errors.
    pub page_errors: Vec<Value>,
    /// Every request the page's context made: `{url, method, resource_type}`.
    pub requests: Vec<Value>,
    /// Every dialog (alert, confirm, prompt) that opened.
    pub dialogs: Vec<Value>,
    /// Every Content-Security-Policy violation reported.
    pub csp_violations: Vec<Value>,
}

impl PageRun {
    /// Console messages of type `error`, and uncaught errors.
    pub fn errors(&self) -> Vec<String> {
        self.console
            .iter()
            .filter(|m| m["type"] == "error")
            .map(|m| m["text"].to_string())
            .chain(self.page_errors.iter().map(Value::to_string))
            .collect()
    }

    /// Requests other than the navigation to the page itself.
    pub fn requests_beyond(&self, page_url: &str) -> Vec<&Value> {
        self.requests
            .iter()
            .filter(|r| !(r["url"] == page_url && r["resource_type"] == "document"))
            .collect()
    }
}

/// A step of a page request.
#[derive(Debug)]
pub enum Step<'a> {
    /// Evaluate a JavaScript expression; its JSON value is the result.
    Eval(&'a str),
    /// Evaluate a JavaScript expression in the child frame of that name
    /// (an app in a sandboxed iframe, which the page cannot reach).
    FrameEval(&'a str, &'a str),
    /// Click the selector, then wait until the expression is true; the
    /// result is `{ms}`.
    Click(&'a str, &'a str),
    /// Save a screenshot (whole page or viewport).
    Screenshot(&'a Path, bool),
}

/// How a page is opened.
#[derive(Debug, Clone, Copy)]
pub struct Open {
    /// Scripts run (`false`: the page as read with scripts off).
    pub javascript: bool,
    /// The page's Content-Security-Policy is ignored.
    pub bypass_csp: bool,
    /// The viewport's width, in CSS pixels.
    pub width: u32,
    /// The viewport's height, in CSS pixels.
    pub height: u32,
    /// The device pixel ratio (2 for a sharp screenshot).
    pub scale: f64,
}

impl Default for Open {
    fn default() -> Self {
        Open {
            javascript: true,
            bypass_csp: false,
            width: 1280,
            height: 900,
            scale: 1.0,
        }
    }
}

/// The file's `file://` URL, as Chromium reports it.
pub fn file_url(path: &Path) -> String {
    let path = path.canonicalize().expect("the page exists");
    let mut url = String::from("file://");
    for byte in path.to_str().expect("a UTF-8 path").bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                url.push(byte as char)
            }
            _ => url.push_str(&format!("%{byte:02X}")),
        }
    }
    url
}

/// The test binary's browser, started on first use.
pub fn browser() -> MutexGuard<'static, Browser> {
    static BROWSER: OnceLock<Mutex<Browser>> = OnceLock::new();
    BROWSER
        .get_or_init(|| Mutex::new(Browser::start()))
        .lock()
        // A test that failed while holding it left it between requests.
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Browser {
    fn start() -> Browser {
        let started = Instant::now();
        let chromium = crate::chromium();
        let env = crate::python_env("html-playwright", &REQUIREMENTS);
        let dir = crate::target_dir().join("testkit").join("html");
        let no_browsers = dir.join("no-playwright-browsers");
        std::fs::create_dir_all(&no_browsers).expect("create target/testkit/html");
        let script = dir.join("driver.py");
        std::fs::write(&script, DRIVER).expect("write the driver");
        let log = dir.join(format!("driver-{}.log", std::process::id()));
        let stderr = std::fs::File::create(&log).expect("create the driver log");
        let mut child = env
            .command([&script])
            .env("TOOLPRISM_CHROMIUM", &chromium)
            .env("PLAYWRIGHT_BROWSERS_PATH", &no_browsers)
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start the browser driver");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut browser = Browser {
            child,
            stdin,
            stdout,
            log,
            version: String::new(),
            started_in: started.elapsed(),
        };
        let hello = browser.read();
        browser.version = hello["version"].as_str().unwrap_or("?").to_owned();
        browser.started_in = started.elapsed();
        eprintln!(
            "[html] Chromium {} ready in {:.1} s (set-up included)",
            browser.version,
            browser.started_in.as_secs_f64()
        );
        browser
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap_or(0);
        if n == 0 {
            let status = self.child.try_wait().ok().flatten();
            panic!(
                "the browser driver ended ({status:?}); its log {}:\n{}",
                self.log.display(),
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
        }
        let answer: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the driver said {line:?}, not JSON: {e}"));
        if answer["ok"] != true {
            panic!(
                "the browser driver failed: {}\nits log {}:\n{}",
                answer["error"],
                self.log.display(),
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
        }
        answer
    }

    /// Opens the page at `url`, runs `steps`, and says what the page did.
    pub fn run(&mut self, url: &str, open: Open, steps: &[Step<'_>]) -> PageRun {
        let steps: Vec<Value> = steps
            .iter()
            .map(|step| match step {
                Step::Eval(js) => json!({ "eval": js }),
                Step::FrameEval(frame, js) => json!({ "frame": frame, "frame_eval": js }),
                Step::Click(selector, until) => json!({ "click": selector, "until": until }),
                Step::Screenshot(path, full) => {
                    json!({ "screenshot": path.display().to_string(), "full_page": full })
                }
            })
            .collect();
        let request = json!({
            "url": url,
            "javascript": open.javascript,
            "bypass_csp": open.bypass_csp,
            "viewport": { "width": open.width, "height": open.height },
            "scale": open.scale,
            "steps": steps,
        });
        writeln!(self.stdin, "{request}").expect("write to the browser driver");
        self.stdin.flush().expect("flush to the browser driver");
        let mut answer = self.read();
        let mut take = |key: &str| match answer[key].take() {
            Value::Array(items) => items,
            _ => Vec::new(),
        };
        PageRun {
            results: take("results"),
            console: take("console"),
            page_errors: take("page_errors"),
            requests: take("requests"),
            dialogs: take("dialogs"),
            csp_violations: take("csp_violations"),
            load_ms: answer["load_ms"].as_f64().unwrap_or(f64::NAN),
        }
    }
}
