//! A real `redis-server` for the tests and benches that need one: Debian's
//! (see [`debian_package`](crate::debian_package)), on a free loopback port,
//! without persistence, killed when dropped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` on `127.0.0.1`, answering `PING` once started.
///
/// ```no_run
/// let program = toolprism_testkit::debian_package("redis-server", "/usr/bin/redis-server")
///     .expect("Debian's redis-server");
/// let mut redis = toolprism_testkit::redis::RedisServer::start(&program);
/// let url = redis.url(); // redis://127.0.0.1:PORT
/// redis.stop(); // everything it held is gone
/// redis.resume(); // empty, on the same port
/// ```
#[derive(Debug)]
pub struct RedisServer {
    program: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts `program` on a free port and waits (20 s at most) until it
    /// answers.
    pub fn start(program: &Path) -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let mut redis = RedisServer {
            program: program.to_owned(),
            port,
            child: None,
        };
        redis.resume();
        redis
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts it (again, after [`stop`](Self::stop)) on its port, empty.
    pub fn resume(&mut self) {
        self.stop();
        let child = Command::new(&self.program)
            .args(["--bind", "127.0.0.1", "--port"])
            .arg(self.port.to_string())
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--protected-mode", "no", "--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                let mut answer = [0u8; 7];
                if stream.write_all(b"PING\r\n").is_ok()
                    && stream.read_exact(&mut answer).is_ok()
                    && &answer == b"+PONG\r\n"
                {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "redis-server never answered");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills it: everything it held is gone.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
