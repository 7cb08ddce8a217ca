//! The panic hook: one line on stderr per panic, so a panic in a tool (which
//! also ends its call as an error result, C9) or in the command line does
//! not flood the terminal with Rust's report.

use std::io::{self, Write};

use crate::text;

/// Installs the hook, unless `RUST_BACKTRACE` asks for Rust's own report.
pub(crate) fn install_hook() {
    if std::env::var_os("RUST_BACKTRACE").is_some() {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic with a payload that is not text");
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let thread = std::thread::current();
        let _ = writeln!(
            io::stderr().lock(),
            "panic in thread '{}'{at}: {}",
            thread.name().unwrap_or("unnamed"),
            text::ellipsize(&text::one_line(message), 300)
        );
    }));
}
