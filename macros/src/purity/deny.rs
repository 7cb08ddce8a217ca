//! K5's deny list: the paths, methods and macros a projection's body may
//! not name, because they are I/O, clocks, randomness, threads or global
//! mutable state, each with what it is about and how to fix it. Data and
//! lookups only; [`super::body`] reports what they find.

/// What a problem is about, and how to fix it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Category {
    Files,
    Network,
    Processes,
    Environment,
    Threads,
    Os,
    Console,
    Clock,
    Randomness,
    Crate,
}

impl Category {
    pub(super) fn noun(self) -> &'static str {
        match self {
            Category::Files => "the file system",
            Category::Network => "the network",
            Category::Processes => "processes",
            Category::Environment => "the environment",
            Category::Threads => "threads",
            Category::Os => "the operating system",
            Category::Console => "the console",
            Category::Clock => "the clock",
            Category::Randomness => "randomness",
            Category::Crate => "I/O",
        }
    }

    pub(super) fn fix(self, projection: &str) -> String {
        match self {
            Category::Files => format!(
                "read or write files in `execute` and put what `{projection}` needs in the value"
            ),
            Category::Network => {
                "talk to the network in `execute` and put the answer in the value".to_owned()
            }
            Category::Processes => {
                "run commands in `execute` and put their output in the value".to_owned()
            }
            Category::Environment => format!(
                "read it in `execute` and put what `{projection}` needs in the value (a replay runs in another environment)"
            ),
            Category::Threads => format!(
                "`{projection}` runs inline and returns; spawn, sleep or wait only in `execute`"
            ),
            Category::Os => "do it in `execute` and put the outcome in the value".to_owned(),
            Category::Console => format!(
                "`{projection}` only builds its output: put the text there, or log from `execute`"
            ),
            Category::Clock => {
                "a replay would draw something else: read the time in `execute` and put it in the value"
                    .to_owned()
            }
            Category::Randomness => {
                "two runs would differ: draw random values in `execute` and put them in the value"
                    .to_owned()
            }
            Category::Crate => "use it in `execute` and put the result in the value".to_owned(),
        }
    }
}

/// Crates whose every use is I/O, scheduling or randomness.
const IO_CRATES: &[(&str, Category)] = &[
    ("tokio", Category::Crate),
    ("reqwest", Category::Crate),
    ("hyper", Category::Crate),
    ("ureq", Category::Crate),
    ("isahc", Category::Crate),
    ("surf", Category::Crate),
    ("async_std", Category::Crate),
    ("smol", Category::Crate),
    ("mio", Category::Crate),
    ("libc", Category::Crate),
    ("nix", Category::Crate),
    ("sqlx", Category::Crate),
    ("rusqlite", Category::Crate),
    ("redis", Category::Crate),
    ("walkdir", Category::Crate),
    ("notify", Category::Crate),
    ("rand", Category::Randomness),
    ("getrandom", Category::Randomness),
    ("fastrand", Category::Randomness),
];

/// Which category a path falls in, if it names I/O or non-determinism.
pub(super) fn classify(segments: &[String]) -> Option<Category> {
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    if let Some(&(_, category)) = IO_CRATES.iter().find(|(c, _)| s.first() == Some(c)) {
        return Some(category);
    }
    // `Instant::now`, `std::time::SystemTime::now`, `chrono::Utc::now`, ...
    if let [.., clock, now] = s[..]
        && matches!(
            clock,
            "Instant" | "SystemTime" | "Utc" | "Local" | "OffsetDateTime"
        )
        && now.starts_with("now")
    {
        return Some(Category::Clock);
    }
    // Constructors of I/O handles, however they were imported.
    if let [.., ty, f] = s[..] {
        let category = match (ty, f) {
            ("File", "open" | "create" | "create_new" | "options") | ("OpenOptions", "new") => {
                Some(Category::Files)
            }
            ("Command", "new") => Some(Category::Processes),
            ("TcpStream", "connect" | "connect_timeout")
            | ("TcpListener" | "UdpSocket" | "UnixListener" | "UnixDatagram", "bind")
            | ("UnixStream", "connect") => Some(Category::Network),
            _ => None,
        };
        if category.is_some() {
            return category;
        }
    }
    let (module, rest) = match s[..] {
        ["std", module, ref rest @ ..] => (module, rest),
        // A module imported with `use std::fs;` and the like.
        [module, ref rest @ ..] if !rest.is_empty() => (module, rest),
        _ => return None,
    };
    let from_std = s[0] == "std";
    let first = rest.first().copied();
    match module {
        "fs" => Some(Category::Files),
        "net" => match first {
            Some("TcpStream" | "TcpListener" | "UdpSocket" | "ToSocketAddrs") => {
                Some(Category::Network)
            }
            _ => None,
        },
        "process" => match first {
            Some("ExitCode" | "ExitStatus" | "Termination") => None,
            Some("Command" | "exit" | "abort" | "id" | "Child" | "Stdio") => {
                Some(Category::Processes)
            }
            _ if from_std => Some(Category::Processes),
            _ => None,
        },
        "env" => match first {
            Some("consts") => None,
            Some(
                "var" | "var_os" | "vars" | "vars_os" | "args" | "args_os" | "current_dir"
                | "set_current_dir" | "set_var" | "remove_var" | "home_dir" | "temp_dir"
                | "current_exe",
            ) => Some(Category::Environment),
            _ if from_std => Some(Category::Environment),
            _ => None,
        },
        "thread" => match first {
            Some(
                "spawn" | "sleep" | "scope" | "current" | "Builder" | "park" | "park_timeout"
                | "yield_now" | "sleep_ms",
            ) => Some(Category::Threads),
            _ if from_std => Some(Category::Threads),
            _ => None,
        },
        "io" => match first {
            Some("stdin" | "stdout" | "stderr" | "Stdin" | "Stdout" | "Stderr") => {
                Some(Category::Console)
            }
            _ => None,
        },
        "os" if from_std && rest.iter().any(|m| matches!(*m, "fs" | "net" | "process")) => {
            Some(Category::Os)
        }
        _ => None,
    }
}

/// Methods that ask the file system (on `Path`) or read the clock.
pub(super) fn method_category(method: &str) -> Option<Category> {
    match method {
        "exists" | "try_exists" | "is_file" | "is_dir" | "is_symlink" | "canonicalize"
        | "read_dir" | "read_link" | "symlink_metadata" => Some(Category::Files),
        "elapsed" => Some(Category::Clock),
        _ => None,
    }
}

/// Methods that read or change global mutable state when called on a `static`.
pub(super) const STATE_METHODS: &[&str] = &[
    "fetch_add",
    "fetch_sub",
    "fetch_and",
    "fetch_or",
    "fetch_xor",
    "fetch_nand",
    "fetch_max",
    "fetch_min",
    "fetch_update",
    "store",
    "swap",
    "compare_exchange",
    "compare_exchange_weak",
    "load",
    "lock",
    "try_lock",
    "read",
    "try_read",
    "write",
    "try_write",
    "borrow",
    "borrow_mut",
    "set",
    "get_or_init",
    "get_or_try_init",
    "with",
    "with_borrow",
    "with_borrow_mut",
    "replace",
    "take",
    "get_mut",
];

/// `SCREAMING_SNAKE`: the name of a `static` (or a `const`).
pub(super) fn is_screaming(ident: &str) -> bool {
    ident.len() > 1
        && ident.chars().any(|c| c.is_ascii_uppercase())
        && ident
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The console functions, called bare after `use std::io::stdout;`.
pub(super) fn is_console_function(name: &str) -> bool {
    matches!(name, "stdin" | "stdout" | "stderr")
}

/// A macro a projection may not use: what it is, and how to fix it.
pub(super) fn denied_macro(name: &str, projection: &str) -> Option<(String, String)> {
    match name {
        "print" | "println" | "eprint" | "eprintln" => Some((
            format!("`{name}!` (the console)"),
            Category::Console.fix(projection),
        )),
        "dbg" => Some((
            "`dbg!` (it writes to stderr)".to_owned(),
            "remove it, or inspect the value in a test".to_owned(),
        )),
        "thread_local" => Some((
            "`thread_local!` state".to_owned(),
            "a projection's output must depend only on its inputs; put what it needs in the value"
                .to_owned(),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(path: &str) -> Option<Category> {
        let segments: Vec<String> = path.split("::").map(str::to_owned).collect();
        classify(&segments)
    }

    #[test]
    fn classifies_paths() {
        assert_eq!(c("std::fs::read_to_string"), Some(Category::Files));
        assert_eq!(c("fs::read_to_string"), Some(Category::Files));
        assert_eq!(c("File::open"), Some(Category::Files));
        assert_eq!(c("std::net::TcpStream::connect"), Some(Category::Network));
        assert_eq!(c("std::net::IpAddr"), None);
        assert_eq!(c("std::process::Command::new"), Some(Category::Processes));
        assert_eq!(c("Command::new"), Some(Category::Processes));
        assert_eq!(c("std::process::ExitCode"), None);
        assert_eq!(c("std::env::var"), Some(Category::Environment));
        assert_eq!(c("env::var"), Some(Category::Environment));
        assert_eq!(c("std::env::consts::OS"), None);
        assert_eq!(c("std::thread::spawn"), Some(Category::Threads));
        assert_eq!(c("std::io::stdout"), Some(Category::Console));
        assert_eq!(c("std::io::Write"), None);
        assert_eq!(c("Instant::now"), Some(Category::Clock));
        assert_eq!(c("std::time::SystemTime::now"), Some(Category::Clock));
        assert_eq!(c("std::time::Duration::from_secs"), None);
        assert_eq!(c("tokio::spawn"), Some(Category::Crate));
        assert_eq!(c("reqwest::get"), Some(Category::Crate));
        assert_eq!(c("rand::random"), Some(Category::Randomness));
        assert_eq!(c("String::new"), None);
        assert_eq!(c("format"), None);
        assert_eq!(c("my::process::step"), None);
    }

    #[test]
    fn screaming() {
        assert!(is_screaming("COUNTER"));
        assert!(is_screaming("MAX_2"));
        assert!(!is_screaming("Counter"));
        assert!(!is_screaming("X"));
        assert!(!is_screaming("_"));
    }
}
