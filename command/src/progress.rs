//! A progress bar on stderr, drawn only when stderr is a terminal.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often the bar is redrawn at most.
const EVERY: Duration = Duration::from_millis(100);
/// The bar's width in cells.
const CELLS: usize = 24;

/// Whether a progress bar would be seen: stderr is a terminal that can
/// move its cursor back (not `TERM=dumb`).
pub(crate) fn on_terminal() -> bool {
    io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// One line on stderr, redrawn in place, erased by [`Bar::finish`].
pub(crate) struct Bar {
    label: String,
    drawn: Option<Instant>,
}

impl Bar {
    pub(crate) fn new(label: impl Into<String>) -> Self {
        Bar {
            label: label.into(),
            drawn: None,
        }
    }

    /// Draws `done` of `total` (a bar when the total is known) and a note,
    /// at most every 100 ms; `force` draws now.
    pub(crate) fn update(&mut self, done: u64, total: Option<u64>, note: &str, force: bool) {
        let now = Instant::now();
        if !force && self.drawn.is_some_and(|at| now.duration_since(at) < EVERY) {
            return;
        }
        self.drawn = Some(now);
        let line = match total {
            Some(total) if total > 0 => {
                let fraction = (done.min(total) as f64) / (total as f64);
                let full = ((fraction * CELLS as f64).round() as usize).min(CELLS);
                format!(
                    "{} [{}{}] {:>3}% {note}",
                    self.label,
                    "█".repeat(full),
                    "░".repeat(CELLS - full),
                    (fraction * 100.0).floor() as u32
                )
            }
            _ => format!("{} {done} {note}", self.label),
        };
        let mut err = io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{}", line.trim_end());
        let _ = err.flush();
    }

    /// Erases the bar, if it was drawn.
    pub(crate) fn finish(&mut self) {
        if self.drawn.take().is_some() {
            let mut err = io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `1.5 MB`, `812 kB`, `96 B`.
pub(crate) fn bytes(n: u64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        n if n >= 1_000 => format!("{} kB", n / 1_000),
        n => format!("{n} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(bytes(96), "96 B");
        assert_eq!(bytes(812_400), "812 kB");
        assert_eq!(bytes(12_345_678), "12.3 MB");
    }
}
