//! The client of `call` (W8 and W9 in `docs/contract.md`): the person at
//! the terminal. Every `call` registers one, so a tool's logs, forms and
//! approvals reach whoever ran the command, on stderr, and stdout keeps
//! only the call's own output (one JSON object with `--json`).
//!
//! - `log`: one line per message at or above `--log-level` (default
//!   `info`, as MCP's `logging/setLevel`): `level logger: data`, every
//!   control character shown escaped.
//! - `elicit`: only when stdin and stderr are both terminals. The form's
//!   message, then each field ([`form`](crate::form)) asked on its own
//!   line, its default shown in brackets; a bad answer is said and asked
//!   again; an empty line takes the default; a line `:decline` declines
//!   the form; end of input (Ctrl-D) cancels it. Otherwise the client
//!   cannot elicit (`CLIENT_UNAVAILABLE`): a script is never left waiting.
//! - `approve`: `… Allow `edit` to run with {…}? [y/N]`, on a terminal
//!   only; `y` or `yes` approves, anything else denies, and the end of
//!   input (Ctrl-D) dismisses the question. With `--yes`,
//!   every approval is given without asking, and said on stderr.
//!   Otherwise the client cannot be asked, and the call is `NOT_APPROVED`.
//! - `sample`: a terminal has no model: `CLIENT_UNAVAILABLE`.

use std::io::{self, BufRead, IsTerminal, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::form::Form;
use super::progress::Bar;
use super::text::{clean, ellipsize, one_line};
use toolprism_core::client::{
    ApprovalAnswer, ApprovalRequest, Client, ClientError, ClientFuture, ElicitRequest,
    ElicitResponse, LogLevel, SampleRequest, SampleResponse,
};

/// The line that declines a form.
pub(crate) const DECLINE: &str = ":decline";

/// Chars of the arguments shown in an approval's question.
const ARGUMENTS_SHOWN: usize = 120;
/// Chars of a tool's question shown before it.
const QUESTION_SHOWN: usize = 200;

/// The person at the terminal, as the client of one `call`.
pub(crate) struct Terminal {
    level: LogLevel,
    yes: bool,
    interactive: bool,
    bar: Option<Arc<Mutex<Bar>>>,
    /// One question at a time: calls a program makes may ask together.
    turn: tokio::sync::Mutex<()>,
}

impl Terminal {
    /// Logs at or above `level`; approves everything when `yes`; asks only
    /// when stdin and stderr are terminals. `bar`, the call's progress bar,
    /// is erased before anything is written.
    pub(crate) fn new(level: LogLevel, yes: bool, bar: Option<Arc<Mutex<Bar>>>) -> Self {
        Terminal {
            level,
            yes,
            interactive: io::stdin().is_terminal() && io::stderr().is_terminal(),
            bar,
            turn: tokio::sync::Mutex::new(()),
        }
    }

    /// Writes `text` to stderr as is (a prompt ends without a newline),
    /// the progress bar erased first.
    fn write(&self, text: &str) {
        if let Some(bar) = &self.bar {
            bar.lock().unwrap_or_else(PoisonError::into_inner).finish();
        }
        let mut err = io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    }

    /// Why this terminal cannot ask: `what` (`elicitation`, `approval`).
    fn unavailable(what: &str) -> ClientError {
        ClientError::Unavailable(format!(
            "{what}: stdin and stderr are not both a terminal, so nobody can be asked"
        ))
    }

    async fn fill(&self, request: &ElicitRequest) -> Result<ElicitResponse, ClientError> {
        let form = Form::parse(&request.requested_schema).map_err(|e| {
            ClientError::Failed(format!("the form cannot be asked on a terminal: {e}"))
        })?;
        let _turn = self.turn.lock().await;
        let mut asking = Asking::new(self);
        let mut intro = String::new();
        for (i, line) in request.message.lines().enumerate() {
            let mark = if i == 0 { "?" } else { " " };
            intro.push_str(&format!("{mark} {}\n", clean(line)));
        }
        intro.push_str(&format!(
            "  (an empty answer takes the [default]; `{DECLINE}` declines the form; Ctrl-D cancels it)\n"
        ));
        self.write(&intro);
        let mut content = Map::new();
        for field in &form.fields {
            let mut head = String::new();
            if let Some(description) = &field.description {
                head.push_str(&format!(
                    "  {}: {}\n",
                    clean(field.label()),
                    one_line(description)
                ));
            }
            for (i, choice) in field.choices().iter().enumerate() {
                head.push_str(&format!(
                    "    {}) {}\n",
                    i + 1,
                    clean(choice.title.as_deref().unwrap_or(&choice.value))
                ));
            }
            let default = field
                .shown_default()
                .map(|d| format!(" [{}]", one_line(&d)))
                .unwrap_or_default();
            let question = format!(
                "  {} ({}){default}: ",
                clean(field.label()),
                clean(&field.hint())
            );
            self.write(&head);
            loop {
                self.write(&question);
                match asking.line().await {
                    Typed::End => return Ok(asking.ended(ElicitResponse::Cancel)),
                    Typed::Line(line) if line.trim() == DECLINE => {
                        return Ok(asking.ended(ElicitResponse::Decline));
                    }
                    Typed::Line(line) => match field.answer(&line) {
                        Ok(answer) => {
                            if let Some(value) = answer {
                                content.insert(field.name.clone(), value);
                            }
                            break;
                        }
                        Err(why) => self.write(&format!("    ✗ {}; try again\n", clean(&why))),
                    },
                    Typed::NotUtf8 => self.write("    ✗ the answer is not UTF-8; try again\n"),
                    Typed::Failed(e) => {
                        return Err(ClientError::Failed(format!("cannot read stdin: {e}")));
                    }
                }
            }
        }
        if form.fields.is_empty() {
            self.write("  (nothing to fill in: Enter sends the form) ");
            match asking.line().await {
                Typed::End => return Ok(asking.ended(ElicitResponse::Cancel)),
                Typed::Line(line) if line.trim() == DECLINE => {
                    return Ok(asking.ended(ElicitResponse::Decline));
                }
                _ => {}
            }
        }
        Ok(asking.ended(ElicitResponse::Accept(Value::Object(content))))
    }

    async fn ask(&self, request: &ApprovalRequest) -> Result<ApprovalAnswer, ClientError> {
        let arguments = ellipsize(&one_line(&request.arguments.to_string()), ARGUMENTS_SHOWN);
        let mut line = ellipsize(&one_line(&request.question), QUESTION_SHOWN);
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&format!(
            "Allow `{}` to run with {arguments}?",
            clean(&request.tool)
        ));
        if self.yes {
            self.write(&format!("approved (--yes): {line}\n"));
            return Ok(ApprovalAnswer::Approve);
        }
        if !self.interactive {
            return Err(Terminal::unavailable("approval"));
        }
        let _turn = self.turn.lock().await;
        let mut asking = Asking::new(self);
        self.write(&format!("{line} [y/N] "));
        let answer = match asking.line().await {
            Typed::Line(answer) => {
                matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes").into()
            }
            // Ctrl-D: the question dismissed, not answered.
            Typed::End => ApprovalAnswer::Dismiss,
            Typed::NotUtf8 => ApprovalAnswer::Deny,
            Typed::Failed(e) => {
                return Err(ClientError::Failed(format!("cannot read stdin: {e}")));
            }
        };
        Ok(asking.ended(answer))
    }
}

impl Client for Terminal {
    fn log(&self, level: LogLevel, logger: Option<&str>, data: &Value) {
        if level < self.level {
            return;
        }
        let text = match data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let line = match logger {
            Some(logger) => format!("{level} {logger}: {text}"),
            None => format!("{level}: {text}"),
        };
        self.write(&format!("{}\n", one_line(&line)));
    }

    fn sample(&self, _request: SampleRequest) -> ClientFuture<'_, SampleResponse> {
        Box::pin(async {
            Err(ClientError::Unavailable(
                "sampling: the command line's terminal has no model to ask".to_owned(),
            ))
        })
    }

    fn elicit(&self, request: ElicitRequest) -> ClientFuture<'_, ElicitResponse> {
        Box::pin(async move {
            if !self.interactive {
                return Err(Terminal::unavailable("elicitation"));
            }
            self.fill(&request).await
        })
    }

    fn approve(&self, request: ApprovalRequest) -> ClientFuture<'_, ApprovalAnswer> {
        Box::pin(async move { self.ask(&request).await })
    }
}

/// A question being asked. Dropped before it ends (the call timed out or
/// was cancelled while the person was typing), it ends the prompt's line,
/// so what is printed next starts on a line of its own.
struct Asking<'t> {
    terminal: &'t Terminal,
    open: bool,
}

impl<'t> Asking<'t> {
    fn new(terminal: &'t Terminal) -> Self {
        Asking {
            terminal,
            open: true,
        }
    }

    /// The next line typed. At its end, the prompt's line is ended by the
    /// person's Enter; at the end of input it is ended here.
    async fn line(&mut self) -> Typed {
        let typed = read_line().await;
        if matches!(typed, Typed::End) {
            self.terminal.write("\n");
        }
        typed
    }

    fn ended<T>(mut self, answer: T) -> T {
        self.open = false;
        answer
    }
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        if self.open {
            self.terminal.write("\n");
        }
    }
}

/// What reading one line of stdin gave.
#[derive(Debug)]
enum Typed {
    /// A line, without its line break.
    Line(String),
    /// The end of input (Ctrl-D at the start of a line).
    End,
    NotUtf8,
    Failed(io::Error),
}

/// The next line of stdin, read on a thread of its own: a blocking read
/// must not hold a worker of the runtime, and a question left unanswered
/// (the call timed out) must not keep the process from exiting, which a
/// task of tokio's blocking pool would. Lines are read one per request,
/// never ahead, so an answer typed is the answer to the question shown.
async fn read_line() -> Typed {
    static READER: OnceLock<mpsc::Sender<oneshot::Sender<Typed>>> = OnceLock::new();
    let reader = READER.get_or_init(|| {
        let (requests, asked) = mpsc::channel::<oneshot::Sender<Typed>>();
        // When no thread can be started, `asked` is dropped with the
        // closure, and every read below fails with a reason.
        let _ = std::thread::Builder::new()
            .name("stdin".into())
            .spawn(move || {
                for answer in asked {
                    let mut bytes = Vec::new();
                    let typed = match io::stdin().lock().read_until(b'\n', &mut bytes) {
                        Ok(0) => Typed::End,
                        Ok(_) => {
                            if bytes.ends_with(b"\n") {
                                bytes.pop();
                                if bytes.ends_with(b"\r") {
                                    bytes.pop();
                                }
                            }
                            String::from_utf8(bytes).map_or(Typed::NotUtf8, Typed::Line)
                        }
                        Err(e) => Typed::Failed(e),
                    };
                    let _ = answer.send(typed);
                }
            });
        requests
    });
    let (answer, typed) = oneshot::channel();
    if reader.send(answer).is_err() {
        return Typed::Failed(io::Error::other("the thread reading stdin is gone"));
    }
    typed
        .await
        .unwrap_or_else(|_| Typed::Failed(io::Error::other("the thread reading stdin is gone")))
}
