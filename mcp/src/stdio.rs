//! MCP's stdio framing (one JSON-RPC message per line) over any byte
//! stream pair, with a protocol error for every line that is not a message.
//!
//! rmcp's own stdio transport drops a line that is not JSON and one over its
//! length limit without a word; this one answers both, so a client learns
//! what went wrong instead of waiting for a response that never comes:
//!
//! | line | answer |
//! |---|---|
//! | not JSON (or nested deeper than serde_json reads) | `-32700` parse error, no id |
//! | JSON, not a JSON-RPC message | `-32600` invalid request, with the line's `id` when it has a usable one |
//! | a notification rmcp does not know | nothing (JSON-RPC never answers a notification) |
//! | over the message limit | `-32600` invalid request, with the `id` when the line is at most 4 times the limit |
//! | blank, or with a UTF-8 byte order mark or `\r\n` | skipped, or read without them |
//!
//! A `tools/call` line carries the text of its arguments as sent
//! ([`Sent`]), and one whose arguments are what stops it from parsing (too
//! deep, a number no `f64` holds) is read with `{}` in their place, so the
//! registry judges the arguments (see [`crate::sent`]).
//!
//! A line over 4 times the limit is skipped as it streams in, never held
//! whole. Error answers are written by a task of their own, so a cancelled
//! `receive` (rmcp polls it inside `select!`) can never tear one.

use std::io;
use std::sync::Arc;

use rmcp::model::{
    ClientJsonRpcMessage, ErrorData, GetExtensions, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::sent::{Sent, locate, with_placeholder};

/// How many times the message limit a line may reach and still be read
/// whole, to answer with its id.
const ID_RECOVERY_FACTOR: usize = 4;

/// Capacity kept by the line buffer between messages; a larger one is
/// released after its line, so one big message does not pin its memory.
const KEPT_CAPACITY: usize = 64 * 1024;

/// The transport: a line reader on `R`, a shared writer on `W`.
pub(crate) struct LineTransport<R, W> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// Bytes of the current line skipped so far, once it outgrew what is kept.
    skipped: Option<usize>,
    max_message_bytes: usize,
    writer: Arc<Mutex<W>>,
}

/// One read of [`LineTransport::read_line`].
enum Line {
    /// A whole line is in `line` (with its `\n`).
    Whole,
    /// A line too long to keep, of this many bytes, was skipped.
    Skipped(usize),
    /// The stream ended or failed.
    End,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(crate) fn new(read: R, write: W, max_message_bytes: usize) -> Self {
        LineTransport {
            reader: BufReader::new(read),
            line: Vec::new(),
            skipped: None,
            max_message_bytes,
            writer: Arc::new(Mutex::new(write)),
        }
    }

    /// The most a line may be and still be held whole.
    fn keep_limit(&self) -> usize {
        self.max_message_bytes.saturating_mul(ID_RECOVERY_FACTOR)
    }

    /// Reads up to the next `\n`. Cancel-safe: every byte taken from the
    /// reader is recorded in `self` before the next `.await`, so a dropped
    /// call resumes where it stopped.
    async fn read_line(&mut self) -> Line {
        let keep = self.keep_limit();
        loop {
            let (taken, ended) = {
                let available = match self.reader.fill_buf().await {
                    Ok([]) => return Line::End,
                    Ok(bytes) => bytes,
                    Err(_) => return Line::End,
                };
                let newline = available.iter().position(|&b| b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                if let Some(skipped) = &mut self.skipped {
                    *skipped += take;
                } else if self.line.len() + take > keep {
                    self.skipped = Some(self.line.len() + take);
                    self.release_line();
                } else {
                    self.line.extend_from_slice(&available[..take]);
                }
                (take, newline.is_some())
            };
            self.reader.consume(taken);
            if ended {
                return match self.skipped.take() {
                    Some(bytes) => Line::Skipped(bytes),
                    None => Line::Whole,
                };
            }
        }
    }

    /// Empties the line buffer, giving back a large allocation.
    fn release_line(&mut self) {
        self.line.clear();
        if self.line.capacity() > KEPT_CAPACITY {
            self.line.shrink_to(KEPT_CAPACITY);
        }
    }

    /// Writes `message` from a task of its own.
    fn answer(&self, message: ServerJsonRpcMessage) {
        let writer = self.writer.clone();
        tokio::spawn(async move {
            let _ = write_message(&writer, &message).await;
        });
    }

    fn too_large(&self, bytes: usize, id: Option<RequestId>) {
        let limit = self.max_message_bytes;
        self.answer(ServerJsonRpcMessage::error(
            ErrorData::invalid_request(
                format!(
                    "the message is {bytes} bytes, over this server's limit of {limit} bytes; send a smaller one"
                ),
                Some(json!({ "bytes": bytes, "limit": limit })),
            ),
            id,
        ));
    }
}

/// This process's stdin and stdout as pipes on the runtime's I/O driver:
/// reads and writes wait on readiness in the runtime's own thread instead
/// of being handed to a blocking thread each (two thread hops per message
/// with `tokio::io::stdin()` and `stdout()`). `None` unless both are pipes
/// and the runtime has I/O enabled. Both are made non-blocking (the flag
/// belongs to the open pipe, which this process shares with nobody but
/// its children, and the tools start theirs with stdin from `/dev/null`)
/// until the [`Blocking`] guard returned with them is dropped.
#[cfg(unix)]
pub(crate) fn pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
    Blocking,
)> {
    use tokio::net::unix::pipe;

    // Registering panics in a runtime without I/O (`enable_io`): that case
    // keeps tokio's stdio.
    if !runtime_has_io() {
        return None;
    }
    let (stdin, stdout) = Blocking::duplicates()?;
    // Each end is set back to blocking by this guard once it was made
    // non-blocking, whatever happens next; one that is not a pipe (a
    // terminal, a file) is refused before its flag is touched, and left
    // as it was.
    let mut guard = Blocking {
        stdin: false,
        stdout: false,
    };
    let read = pipe::Receiver::from_owned_fd(stdin).ok()?;
    guard.stdin = true;
    let write = pipe::Sender::from_owned_fd(stdout).ok()?;
    guard.stdout = true;
    Some((read, write, guard))
}

/// Sets stdin and stdout back to blocking when dropped, each if [`pipes`]
/// made it non-blocking.
#[cfg(unix)]
pub(crate) struct Blocking {
    stdin: bool,
    stdout: bool,
}

#[cfg(unix)]
impl Blocking {
    /// Descriptors of the same open stdin and stdout (the blocking flag
    /// is theirs, so setting it on a duplicate sets it for fds 0 and 1).
    fn duplicates() -> Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
        use std::os::fd::AsFd;
        let stdin = io::stdin().as_fd().try_clone_to_owned().ok()?;
        let stdout = io::stdout().as_fd().try_clone_to_owned().ok()?;
        Some((stdin, stdout))
    }
}

#[cfg(unix)]
impl Drop for Blocking {
    fn drop(&mut self) {
        let Some((stdin, stdout)) = Blocking::duplicates() else {
            return;
        };
        let made = [(stdin, self.stdin), (stdout, self.stdout)];
        for fd in made.into_iter().filter_map(|(fd, made)| made.then_some(fd)) {
            // `set_nonblocking` is `ioctl(FIONBIO)`, which sets the flag of
            // any descriptor, a pipe's included; std has no pipe type to
            // call it on, and this needs no runtime (the guard may be
            // dropped outside one).
            let _ = std::os::unix::net::UnixStream::from(fd).set_nonblocking(false);
        }
    }
}

/// Built to abort on panic, the check cannot be made: tokio's stdio then.
#[cfg(all(unix, not(panic = "unwind")))]
fn runtime_has_io() -> bool {
    false
}

/// Whether the current runtime has an I/O driver, found without the panic
/// a registration would raise when it has none (tokio has no other way to
/// ask; its message still reaches stderr through the panic hook).
#[cfg(all(unix, panic = "unwind"))]
fn runtime_has_io() -> bool {
    std::panic::catch_unwind(|| {
        // A socket pair, registered and dropped.
        std::os::unix::net::UnixStream::pair()
            .and_then(|(a, _b)| {
                a.set_nonblocking(true)?;
                tokio::net::UnixStream::from_std(a)
            })
            .is_ok()
    })
    .unwrap_or(false)
}

/// The line without its `\n`, a `\r` before it, a UTF-8 byte order mark,
/// or surrounding blanks.
fn trimmed(line: &[u8]) -> &[u8] {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    line.trim_ascii()
}

/// The fields of a JSON-RPC message a failed parse is answered from.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<Value>,
}

/// A usable JSON-RPC id (a string or an integer) of `value`.
fn request_id(value: Option<Value>) -> Option<RequestId> {
    match value? {
        Value::String(s) => Some(RequestId::String(s.into())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}

/// The id of a line that is JSON-RPC on the outside, if it has one; every
/// other member is skipped without being kept.
fn recover_id(line: &[u8]) -> Option<RequestId> {
    envelope(line).and_then(|e| request_id(e.id))
}

/// The envelope of a JSON object (serde would also read a struct from an
/// array, which is no JSON-RPC message).
fn envelope(line: &[u8]) -> Option<Envelope> {
    if line.first() != Some(&b'{') {
        return None;
    }
    serde_json::from_slice::<Envelope>(line).ok()
}

/// The answer to a line that does not parse as a client message, or `None`
/// for a notification (never answered).
fn answer_to(line: &[u8], error: &serde_json::Error) -> Option<ServerJsonRpcMessage> {
    if error.is_syntax() || error.is_eof() {
        return Some(ServerJsonRpcMessage::error(
            ErrorData::parse_error(format!("the message is not JSON: {error}"), None),
            None,
        ));
    }
    let (id, method) = match envelope(line) {
        Some(Envelope { id, method }) => (id, method),
        None => (None, None),
    };
    if id.is_none() && method.as_ref().is_some_and(Value::is_string) {
        return None;
    }
    Some(ServerJsonRpcMessage::error(
        ErrorData::invalid_request(format!("not a valid JSON-RPC request: {error}"), None),
        request_id(id),
    ))
}

/// A line read as a client message; a `tools/call` carries its arguments'
/// text as sent, and is read with `{}` in their place when they are what
/// stops it from parsing.
fn read_message(line: &[u8]) -> Result<ClientJsonRpcMessage, serde_json::Error> {
    let parsed = serde_json::from_slice::<ClientJsonRpcMessage>(line);
    let Some((text, located)) = std::str::from_utf8(line)
        .ok()
        .and_then(|text| Some((text, locate(text)?)))
    else {
        return parsed;
    };
    let sent = Sent(text[located.arguments.clone()].into());
    let mut message = match parsed {
        Ok(message) => message,
        Err(e) => {
            serde_json::from_str(&with_placeholder(text, located.arguments)).map_err(|_| e)?
        }
    };
    if let JsonRpcMessage::Request(request) = &mut message {
        request.request.extensions_mut().insert(sent);
    }
    Ok(message)
}

/// Serializes `message` and writes it as one line, under the lock.
async fn write_message<W: AsyncWrite + Unpin>(
    writer: &Mutex<W>,
    message: &ServerJsonRpcMessage,
) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(message)?;
    bytes.push(b'\n');
    let mut writer = writer.lock().await;
    writer.write_all(&bytes).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move { write_message(&writer, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Line::End => return None,
                Line::Skipped(bytes) => {
                    self.too_large(bytes, None);
                    continue;
                }
                Line::Whole => {}
            }
            let line = trimmed(&self.line);
            if line.is_empty() {
                self.line.clear();
                continue;
            }
            if line.len() > self.max_message_bytes {
                let (bytes, id) = (line.len(), recover_id(line));
                self.release_line();
                self.too_large(bytes, id);
                continue;
            }
            let parsed = read_message(line);
            let answer = parsed.as_ref().err().and_then(|e| answer_to(line, e));
            self.release_line();
            match (parsed, answer) {
                (Ok(message), _) => return Some(message),
                (Err(_), Some(answer)) => self.answer(answer),
                (Err(_), None) => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut writer = self.writer.lock().await;
        writer.flush().await?;
        writer.shutdown().await
    }
}

#[cfg(all(test, unix, panic = "unwind"))]
mod tests {
    use super::runtime_has_io;

    #[test]
    fn a_runtime_without_io_keeps_tokios_stdio() {
        let with_io = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        assert!(with_io.block_on(async { runtime_has_io() }));
        let without_io = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        assert!(!without_io.block_on(async { runtime_has_io() }));
    }
}
