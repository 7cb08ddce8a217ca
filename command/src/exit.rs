//! How a run ends: a command's [`Status`] or [`Failure`] mapped to the exit
//! status scripts rely on (0 ok, 1 failed, 2 bad usage), and the one
//! `error: …` line on stderr that goes with a failure.

use std::io::{self, Write};
use std::process::ExitCode;

use toolprism_core::Registry;

use crate::text;

/// A command's exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Exit 0.
    Ok,
    /// Exit 1: the call returned an error result, or what the command ran
    /// failed.
    Failed,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> Self {
        match status {
            Status::Ok => ExitCode::SUCCESS,
            Status::Failed => ExitCode::from(1),
        }
    }
}

/// How a command ended when it did not run to its end.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Writing the output failed.
    Io(io::Error),
    /// The command line asked for something that cannot be (exit 2).
    Usage(String),
    /// What the command ran failed (exit 1).
    Failed(String),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

/// A tool name that is not registered: a usage error naming the tools.
pub(crate) fn unknown_tool(registry: &Registry, name: &str) -> Failure {
    let names: Vec<&str> = registry.definitions().map(|d| d.name.as_str()).collect();
    Failure::Usage(format!(
        "no tool \"{}\" is registered; the tools are: {}",
        text::ellipsize(name, 64),
        if names.is_empty() {
            "(none)".to_owned()
        } else {
            names.join(", ")
        }
    ))
}

/// The exit status of a command that ended with `outcome`, its output
/// flushed with `flushed`.
pub(crate) fn finish(outcome: Result<Status, Failure>, flushed: io::Result<()>) -> ExitCode {
    match outcome.and_then(|status| flushed.map(|()| status).map_err(Failure::from)) {
        Ok(status) => status.into(),
        // The reader went away (`| head`): nothing more to say.
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Io(e)) => failure(&format!("cannot write the output: {e}")),
        Err(Failure::Usage(message)) => usage(&message),
        Err(Failure::Failed(message)) => failure(&message),
    }
}

/// `error: …` on one line, exit 2.
pub(crate) fn usage(message: &str) -> ExitCode {
    error_line(message);
    ExitCode::from(2)
}

/// `error: …` on one line, exit 1.
pub(crate) fn failure(message: &str) -> ExitCode {
    error_line(message);
    ExitCode::from(1)
}

fn error_line(message: &str) {
    let _ = writeln!(io::stderr().lock(), "error: {}", text::one_line(message));
}

/// clap's help and version go to stdout (exit 0); its errors become one
/// line on stderr (exit 2), with clap's tip when it has one; a missing
/// subcommand prints the help on stderr (exit 2).
pub(crate) fn clap_error(e: &clap::Error, bin: &str) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = write!(io::stdout().lock(), "{}", e.render());
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = write!(io::stderr().lock(), "{}", e.render());
            ExitCode::from(2)
        }
        _ => usage(&format!(
            "{}; see '{bin} --help'",
            clap_message(&e.render().to_string())
        )),
    }
}

/// clap's error text on one line: the message and its tips, without the
/// usage that follows them.
fn clap_message(rendered: &str) -> String {
    let mut message = String::new();
    for line in rendered.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        if !message.is_empty() {
            message.push_str(if message.ends_with(':') { " " } else { "; " });
        }
        message.push_str(line);
    }
    if message.is_empty() {
        rendered.trim().to_owned()
    } else {
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_errors_fit_on_one_line() {
        let rendered = "error: unexpected argument '--jsn' found\n\n  tip: a similar argument exists: '--json'\n\nUsage: t list --json\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_message(rendered),
            "unexpected argument '--jsn' found; tip: a similar argument exists: '--json'"
        );
        let rendered = "error: the following required arguments were not provided:\n  <NAME>\n\nUsage: t call <NAME> [JSON]\n";
        assert_eq!(
            clap_message(rendered),
            "the following required arguments were not provided: <NAME>"
        );
    }
}
