//! W11 in docs/contract.md: the built-in tools under one sandbox, tried as
//! a user would, with the real binary (`call`, `serve`) and judged from
//! outside it: what lands on disk, what reaches a listener, what a command
//! can read of the server. Every refusal has its `full-access` (or
//! `--allow-network`) control, which must see the effect, so no test
//! passes because a command never ran.

#![cfg(target_os = "linux")]

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_toolprism-examples");

/// A workspace, and a home directory outside every writable root (under
/// the target dir: `/tmp` is writable in workspace-write mode).
struct World {
    root: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let base = env!("CARGO_TARGET_TMPDIR");
        World {
            root: tempfile::tempdir_in(base).unwrap(),
            home: tempfile::tempdir_in(base).unwrap(),
        }
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    /// `toolprism-examples [GLOBAL…] call TOOL ARGS --json` in the world,
    /// with `HOME` outside the root and `env` added.
    fn call(&self, global: &[&str], tool: &str, args: Value, env: &[(&str, &str)]) -> Value {
        let out = self.command(global, tool, args, env);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "call {tool} printed no JSON ({e}):\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    fn command(&self, global: &[&str], tool: &str, args: Value, env: &[(&str, &str)]) -> Output {
        Command::new(BIN)
            .args(global)
            .arg("--root")
            .arg(self.root.path())
            .args(["call", tool, &args.to_string(), "--json"])
            .env("HOME", self.home())
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }

    fn bash(&self, global: &[&str], command: &str) -> Value {
        self.call(global, "bash", json!({ "command": command }), &[])
    }
}

fn text(out: &Value) -> String {
    out["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

const FULL: &[&str] = &["--sandbox", "full-access"];

#[test]
fn writes_outside_the_workspace_never_land_and_the_model_is_told() {
    let world = World::new();
    let home = world.home().display().to_string();
    std::fs::write(world.root.path().join("movable"), "m").unwrap();
    std::os::unix::fs::symlink(world.home(), world.root.path().join("to_home")).unwrap();
    let command = format!(
        "touch ~/touched; echo x > '{home}/redirected'; echo y > to_home/through_link; \
         mv movable ~/moved; python3 -c \"open('{home}/python', 'w').write('p')\"; \
         (nohup sh -c \"echo z > '{home}/background'\" >/dev/null 2>&1 &); sleep 0.3; \
         echo ok > inside.txt"
    );
    let effects = [
        "touched",
        "redirected",
        "through_link",
        "moved",
        "python",
        "background",
    ];
    let out = world.bash(&[], &command);
    for name in effects {
        assert!(!world.home().join(name).exists(), "{name} landed: {out:#}");
    }
    assert!(world.root.path().join("movable").exists());
    assert!(world.root.path().join("inside.txt").exists(), "{out:#}");
    let said = text(&out);
    assert!(
        said.contains("[sandbox: the sandbox may have stopped this command (workspace-write mode"),
        "{said}"
    );
    assert!(said.contains("do not try to work around it"), "{said}");
    assert_eq!(
        out["value"]["sandbox"]["mode"], "workspace-write",
        "{out:#}"
    );
    assert_eq!(
        out["meta"]["sandbox"],
        json!({"mode": "workspace-write", "network": false, "denied": true})
    );
    assert_eq!(
        out["resultCard"]["sandbox"],
        json!({"mode": "workspace-write", "network": false, "denied": true})
    );
    // The control: unconfined, every effect is seen.
    let out = world.bash(FULL, &command);
    for name in effects {
        assert!(world.home().join(name).exists(), "control: {name}: {out:#}");
    }
    assert!(!text(&out).contains("[sandbox:"), "{out:#}");
}

#[test]
fn touch_in_the_home_directory_leaves_no_file_and_says_why() {
    let world = World::new();
    let out = world.call(&[], "bash", json!({"command": "touch ~/x"}), &[]);
    assert!(!world.home().join("x").exists());
    let said = text(&out);
    assert!(
        said.contains("Permission denied") && said.contains("[sandbox:"),
        "{said}"
    );
}

#[test]
fn tcp_and_udp_to_loopback_never_arrive() {
    let world = World::new();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let command = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{}; \
         python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {}))\"",
        tcp.local_addr().unwrap().port(),
        udp.local_addr().unwrap().port()
    );
    let arrived = || {
        let mut buf = [0u8; 4];
        (tcp.accept().is_ok(), udp.recv(&mut buf).is_ok())
    };
    for global in [&[][..], &["--sandbox", "read-only"]] {
        let out = world.bash(global, &command);
        assert_eq!(arrived(), (false, false), "{global:?}: {out:#}");
        assert!(text(&out).contains("the network is off"), "{out:#}");
    }
    let out = world.bash(&["--allow-network"], &command);
    assert_eq!(arrived(), (true, true), "--allow-network: {out:#}");
    assert_eq!(out["resultCard"]["sandbox"]["network"], true);
    let out = world.bash(FULL, &command);
    assert_eq!(arrived(), (true, true), "control: {out:#}");
}

#[test]
fn the_servers_secrets_are_out_of_reach() {
    let world = World::new();
    // The variable, the server's /proc environ (through the supervisor,
    // the command's parent, and the server, its grandparent), its memory.
    let command = "echo \"[$SOME_API_KEY]\"; server=$(awk '{print $4}' /proc/$PPID/stat); \
                   cat /proc/$PPID/environ /proc/$server/environ 2>&1 | tr '\\0' '\\n'; \
                   head -c 64 /proc/$server/mem 2>&1 | head -c 200";
    let env = [("SOME_API_KEY", "sk-123-secret")];
    let out = world.call(&[], "bash", json!({ "command": command }), &env);
    let seen = out["value"].to_string();
    assert!(!seen.contains("sk-123-secret"), "{seen}");
    assert!(seen.contains("[]"), "{seen}");
    // `--env` passes a name on purpose.
    let out = world.call(
        &["--env", "SOME_API_KEY"],
        "bash",
        json!({"command": "echo \"[$SOME_API_KEY]\""}),
        &env,
    );
    assert!(
        out["value"]["stdout"]["text"]
            .as_str()
            .unwrap()
            .contains("[sk-123-secret]"),
        "{out:#}"
    );
}

#[test]
fn the_servers_token_never_reaches_a_command() {
    let world = World::new();
    let token = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00";
    // `--env` of the token's own variable is refused before anything runs.
    let refused = Command::new(BIN)
        .args([
            "--env",
            "TP_TOKEN",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--token-env",
            "TP_TOKEN",
        ])
        .env("TP_TOKEN", token)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--env TP_TOKEN"));
    // Served with the token: a command sees neither the variable nor the
    // value anywhere in its environment.
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--token-env",
            "TP_TOKEN",
            "--root",
        ])
        .arg(world.root.path())
        .env("TP_TOKEN", token)
        .env("HOME", world.home())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let port = loop {
        let mut line = String::new();
        assert!(
            std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() > 0,
            "no address"
        );
        if let Some(rest) = line.split("http://127.0.0.1:").nth(1) {
            break rest.split('/').next().unwrap().parse::<u16>().unwrap();
        }
    };
    let said = mcp_call_bash(port, token, "env; echo \"[$TP_TOKEN]\"");
    let _ = child.kill();
    let _ = child.wait();
    assert!(said.contains("[]"), "{said}");
    assert!(
        !said.contains(token) && !said.contains("TP_TOKEN="),
        "{said}"
    );
}

/// One `2026-07-28` `tools/call` of bash (one request, no session) over
/// Streamable HTTP with the bearer token: the whole answer.
fn mcp_call_bash(port: u16, token: &str, command: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": command},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {},
                  "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}}})
    .to_string();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: bash\r\nAuthorization: Bearer {token}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    std::io::Write::write_all(&mut stream, request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn read_only_writes_nothing_and_the_file_tools_are_denied() {
    let world = World::new();
    let file = world.root.path().join("f.txt");
    std::fs::write(&file, "one\n").unwrap();
    let ro = &["--sandbox", "read-only"][..];
    let out = world.bash(
        ro,
        "echo x > inside.txt; echo y >> f.txt; rm f.txt; mkdir d",
    );
    assert!(!world.root.path().join("inside.txt").exists(), "{out:#}");
    assert!(!world.root.path().join("d").exists());
    assert!(
        text(&out).contains("read-only mode: writing any file is refused"),
        "{out:#}"
    );
    for (tool, args) in [
        ("write", json!({"path": "f.txt", "content": "two\n"})),
        ("write", json!({"path": "new.txt", "content": "two\n"})),
        (
            "edit",
            json!({"path": "f.txt", "oldText": "one", "newText": "two"}),
        ),
    ] {
        let out = world.call(ro, tool, args, &[]);
        assert_eq!(out["isError"], true, "{out:#}");
        assert_eq!(out["error"]["code"], "SANDBOX_DENIED", "{out:#}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\n");
    assert!(!world.root.path().join("new.txt").exists());
    // Reads still work; the default mode writes.
    assert_eq!(
        world.call(ro, "read", json!({"path": "f.txt"}), &[])["isError"],
        false
    );
    let out = world.call(
        &[],
        "write",
        json!({"path": "f.txt", "content": "two\n"}),
        &[],
    );
    assert_eq!(out["isError"], false, "{out:#}");
}

#[test]
fn a_programs_nested_bash_runs_in_the_same_sandbox() {
    let world = World::new();
    let program = json!({
        "code": "const r = await tools.bash({ command: 'touch ~/nested; echo done' }); return r.sandbox;",
        "description": "touch a file in the home directory"
    });
    let out = world.call(&[], "run_code", program.clone(), &[]);
    assert!(!world.home().join("nested").exists(), "{out:#}");
    assert_eq!(out["value"]["result"]["mode"], "workspace-write", "{out:#}");
    assert_eq!(out["value"]["result"]["denied"], true, "{out:#}");
    let out = world.call(FULL, "run_code", program, &[]);
    assert!(world.home().join("nested").exists(), "control: {out:#}");
}

#[test]
fn where_the_sandbox_is_unavailable_nothing_runs() {
    let world = World::new();
    let seam = [("TOOLPRISM_SANDBOX_FORCE_UNAVAILABLE", "a test")];
    let out = world.call(&[], "bash", json!({"command": "touch ran"}), &seam);
    assert_eq!(out["error"]["code"], "SANDBOX_UNAVAILABLE", "{out:#}");
    assert!(!world.root.path().join("ran").exists());
    let said = text(&out);
    assert!(
        said.contains("Nothing ran") && said.contains("--sandbox full-access"),
        "{said}"
    );
    // full-access asks nothing of the kernel.
    let out = world.call(FULL, "bash", json!({"command": "touch ran"}), &seam);
    assert_eq!(out["isError"], false, "{out:#}");
    assert!(world.root.path().join("ran").exists());
}

#[test]
fn git_and_builds_inside_the_root_still_work() {
    // The crate is a workspace of its own: the root may lie inside
    // another workspace (this repository's `target/` in CI).
    let world = World::new();
    let command = "set -e; git init -q .; printf 'print(6 * 7)\\n' > m.py; python3 -m py_compile m.py; \
                   python3 m.py; git add m.py; \
                   git -c user.name=t -c user.email=t@example.invalid commit -qm one; git log --oneline | wc -l; \
                   mkdir -p crate/src; printf '[package]\\nname = \"c\"\\nversion = \"0.1.0\"\\nedition = \"2021\"\\n[workspace]\\n' > crate/Cargo.toml; \
                   printf 'fn main() { println!(\"built\"); }\\n' > crate/src/main.rs; \
                   cd crate && CARGO_HOME=\"$PWD/../.cargo-home\" cargo run -q --offline";
    let out = world.call(
        &["--env", "RUSTUP_HOME", "--env", "RUSTUP_TOOLCHAIN"],
        "bash",
        json!({"command": command, "timeoutMs": 120000}),
        &[("RUSTUP_HOME", &rustup_home())],
    );
    let stdout = out["value"]["stdout"]["text"].as_str().unwrap_or_default();
    assert_eq!(out["value"]["exitCode"], 0, "{out:#}");
    assert_eq!(stdout, "42\n1\nbuilt\n", "{out:#}");
}

/// Where rustup keeps the toolchains (read only: a build reads them).
fn rustup_home() -> String {
    std::env::var("RUSTUP_HOME")
        .unwrap_or_else(|_| format!("{}/.rustup", std::env::var("HOME").unwrap_or_default()))
}

#[test]
fn escalation_is_asked_of_the_user_over_mcp_with_the_python_client() {
    let world = World::new();
    let python = toolprism_testkit::python_env("mcp-client", toolprism_testkit::MCP_CLIENT);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/escalate.py");
    let output = python
        .command([script, BIN, "serve", "--approvals", "--root"])
        .arg(world.root.path())
        .env("HOME", world.home())
        .output()
        .unwrap();
    let mut report = String::new();
    output
        .stdout
        .as_slice()
        .read_to_string(&mut report)
        .unwrap();
    assert!(
        output.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_str(&report).unwrap();
    // Offered only where the user can be asked.
    assert_eq!(report["offered"], true, "{report:#}");
    // Confined first: refused, and told it may ask.
    assert_eq!(report["confined"]["denied"], true, "{report:#}");
    assert!(
        report["confined"]["text"]
            .as_str()
            .unwrap()
            .contains("`escalate`"),
        "{report:#}"
    );
    // Approved: the one call ran with full access; the question named it.
    let asked = report["approved"]["asked"].as_str().unwrap();
    assert!(
        asked.contains("full-access") && asked.contains("the user asked for it"),
        "{asked}"
    );
    assert_eq!(report["approved"]["isError"], false, "{report:#}");
    assert!(world.home().join("approved").exists(), "{report:#}");
    // Declined: NOT_APPROVED, nothing ran.
    assert_eq!(report["declined"]["code"], "NOT_APPROVED", "{report:#}");
    assert!(!world.home().join("declined").exists());
    // The next call is confined again.
    assert!(!world.home().join("after").exists(), "{report:#}");

    // Without --approvals the field is not offered at all.
    let listed = Command::new(BIN)
        .args(["schema", "--tool", "bash"])
        .output()
        .unwrap();
    let definition: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let properties = &definition["inputSchema"]["properties"];
    assert!(properties.get("command").is_some(), "{definition:#}");
    assert!(properties.get("escalate").is_none(), "{definition:#}");
}
