//! `replay LOG…`: a session log's cards drawn again in the terminal, with
//! the presenters registered now. Several logs (the replicas of one
//! server each write their own) are drawn as one session, their events in
//! the order they were written, each result joined to its call by call id.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::progress::{self, Bar};
use super::terminal::{Style, draw_call, draw_result};
use super::text::{one_line, plural, thousands};
use super::{Failure, Status};
use toolprism_core::Registry;
use toolprism_core::log::LogEvents;
use toolprism_core::replay::{Replay, ReplayItem, ReplayProblem, Replayed, ReplayedEntry};
use toolprism_html::{Session, session_page};

/// Options of `replay`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReplayArgs {
    /// The session log: JSON Lines, as `toolprism::log::SessionLog` writes it.
    /// Several logs of one session (one per server process behind a load
    /// balancer) are read as one: events in the order they were written
    #[arg(value_name = "LOG", required = true, num_args = 1..)]
    logs: Vec<PathBuf>,
    /// Write the session as one self-contained HTML page to OUT instead of
    /// drawing it in the terminal (a one-line summary is printed).
    #[arg(long, value_name = "OUT")]
    html: Option<PathBuf>,
}

/// A log smaller than this replays too fast for a progress bar to help.
pub(crate) const PROGRESS_MIN_BYTES: u64 = 256 * 1024;

/// A reader that counts the bytes consumed, for the progress bar.
struct Counting<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.read.set(self.read.get() + amt as u64);
    }
}

pub(crate) fn run(
    registry: &Registry,
    args: &ReplayArgs,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let mut files = Vec::with_capacity(args.logs.len());
    let mut total = 0;
    for log in &args.logs {
        let shown = log.display();
        let file = File::open(log).map_err(|e| Failure::Usage(format!("{shown}: {e}")))?;
        let meta = file
            .metadata()
            .map_err(|e| Failure::Usage(format!("{shown}: {e}")))?;
        if meta.is_dir() {
            return Err(Failure::Usage(format!(
                "{shown} is a directory; give the session log's file"
            )));
        }
        if let Some(page) = &args.html
            && let (Ok(a), Ok(b)) = (log.canonicalize(), page.canonicalize())
            && a == b
        {
            return Err(Failure::Usage(format!(
                "--html {}: that is the session log itself; write the page to another path",
                page.display()
            )));
        }
        total += meta.len();
        files.push(file);
    }
    // A log of calls a model made in a provider's dialect (`agent`,
    // `call --dialect`) names it: each is read as the live call read it.
    for dialect in toolprism_provider::dialect::Dialect::ALL {
        registry.add_dialect(std::sync::Arc::new(dialect));
    }
    let names: Vec<String> = args
        .logs
        .iter()
        .map(|log| log.display().to_string())
        .collect();
    let label = names.join(" + ");
    let read = Rc::new(Cell::new(0));
    let readers: Vec<LogEvents<Counting<BufReader<File>>>> = files
        .into_iter()
        .map(|file| {
            LogEvents::new(Counting {
                inner: BufReader::with_capacity(1 << 16, file),
                read: Rc::clone(&read),
            })
        })
        .collect();
    let many = readers.len() > 1;
    let replay = if many {
        Replay::merged(readers, registry)
    } else {
        let Some(events) = readers.into_iter().next() else {
            return Err(Failure::Usage("give the session log to replay".to_owned()));
        };
        Replay::from_events(events, registry)
    };
    let mut bar = (progress::on_terminal() && total >= PROGRESS_MIN_BYTES)
        .then(|| Bar::new(format!("replaying {}", one_line(&label))));
    let mut entries: Vec<ReplayedEntry> = Vec::new();
    let mut problems: Vec<ReplayProblem> = Vec::new();
    for item in replay {
        match item {
            Ok(ReplayItem::Entry(entry)) => entries.push(*entry),
            Ok(ReplayItem::Problem(problem)) => problems.push(problem),
            Err(e) => {
                drop(bar);
                return Err(Failure::Failed(format!(
                    "{label}: read failed after {} bytes: {e}",
                    read.get()
                )));
            }
        }
        if let Some(bar) = &mut bar {
            let note = format!(
                "{} / {} · {} calls",
                progress::bytes(read.get()),
                progress::bytes(total),
                thousands(entries.len() as u64)
            );
            bar.update(read.get(), Some(total), &note, false);
        }
    }
    if let Some(mut bar) = bar {
        bar.finish();
    }
    if many {
        entries.sort_by_key(|e| (e.time_ms.unwrap_or(0), e.log, e.call_line));
    } else {
        entries.sort_by_key(|e| e.call_line);
    }
    let replayed = Replayed::new(entries, problems);
    let sources = many.then_some(names.as_slice());
    match &args.html {
        None => draw(out, &replayed.entries, &replayed.problems, &label, sources)?,
        Some(page) => write_page(out, &replayed, &args.logs, page)?,
    }
    Ok(Status::Ok)
}

/// The session as an HTML page at `page`, and one line saying so.
fn write_page(
    out: &mut dyn Write,
    replayed: &Replayed,
    logs: &[PathBuf],
    page: &Path,
) -> Result<(), Failure> {
    let title = logs
        .iter()
        .map(|log| {
            log.file_name().map_or_else(
                || log.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .collect::<Vec<_>>()
        .join(" + ");
    let source = logs
        .iter()
        .map(|log| log.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    let session = Session::new(title, replayed).with_source(source);
    let counts = session.counts();
    std::fs::write(page, session_page(&session))
        .map_err(|e| Failure::Failed(format!("--html {}: {e}", page.display())))?;
    let mut summary = plural(counts.calls as u64, "call", "calls");
    if counts.problems > 0 {
        summary.push_str(&format!(
            ", {}",
            plural(counts.problems as u64, "problem", "problems")
        ));
    }
    writeln!(
        out,
        "wrote {} ({summary})",
        one_line(&page.display().to_string())
    )?;
    Ok(())
}

/// Every entry and problem, in the order of their lines in the log (the
/// order of the calls, for several logs, each problem before the entries),
/// then a summary. `sources`: the names of several logs read as one.
fn draw(
    out: &mut dyn Write,
    entries: &[ReplayedEntry],
    problems: &[ReplayProblem],
    log: &str,
    sources: Option<&[String]>,
) -> io::Result<()> {
    let style = Style::default();
    let problem_count = problems.len() as u64;
    let mut problems = problems.iter().peekable();
    if let Some(sources) = sources {
        for problem in problems.by_ref() {
            draw_problem_in(out, problem, sources)?;
        }
    }
    for (i, entry) in entries.iter().enumerate() {
        while let Some(problem) = problems.next_if(|p| p.line < entry.call_line) {
            draw_problem(out, problem)?;
        }
        let mut head = format!("#{} {} · {}", i + 1, entry.call_id, entry.name);
        if let Some(name) = sources.and_then(|sources| sources.get(entry.log)) {
            head.push_str(&format!(" · in {name}"));
        }
        if entry.nested {
            match &entry.parent_call_id {
                Some(parent) => head.push_str(&format!(" · nested in {parent}")),
                None => head.push_str(" · nested"),
            }
        }
        if let Some(code) = &entry.error_code {
            head.push_str(&format!(" · ✗ {code}"));
        } else if entry.is_error {
            head.push_str(" · ✗ error");
        }
        writeln!(out, "{}", one_line(&head))?;
        indented(out, &draw_call(&entry.call_card, style))?;
        if let Some(approval) = &entry.approval {
            let asked = format!(
                "asked {}: {}",
                approval.decision.as_str(),
                approval.question
            );
            writeln!(out, "  {}", one_line(&asked))?;
        }
        match &entry.result_card {
            Some(card) => indented(out, &draw_result(card, style))?,
            None => writeln!(
                out,
                "  (no result in the log: the session ended before it came)"
            )?,
        }
    }
    for problem in problems {
        draw_problem(out, problem)?;
    }
    let nested = entries.iter().filter(|e| e.nested).count() as u64;
    let missing = entries.iter().filter(|e| e.result_card.is_none()).count() as u64;
    let mut summary = plural(entries.len() as u64, "call", "calls");
    if nested > 0 {
        summary.push_str(&format!(" ({nested} nested)"));
    }
    if missing > 0 {
        summary.push_str(&format!(", {missing} without a result"));
    }
    if problem_count > 0 {
        summary.push_str(&format!(
            ", {}",
            plural(problem_count, "problem", "problems")
        ));
    }
    writeln!(out, "─── {summary} · {}", one_line(log))?;
    Ok(())
}

fn draw_problem(out: &mut dyn Write, problem: &ReplayProblem) -> io::Result<()> {
    writeln!(out, "! {}", one_line(&problem.to_string()))
}

/// A problem of one of several logs, naming the log.
fn draw_problem_in(
    out: &mut dyn Write,
    problem: &ReplayProblem,
    sources: &[String],
) -> io::Result<()> {
    let name = sources.get(problem.log).map_or("?", String::as_str);
    writeln!(out, "! {}", one_line(&format!("{name} {problem}")))
}

fn indented(out: &mut dyn Write, text: &str) -> io::Result<()> {
    for line in text.lines() {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}
