//! The toolprism showcase: `cargo run` at the workspace root. See
//! `--help` and the [`toolprism_examples::showcase`] module.

use std::io::Write;
use std::process::ExitCode;

use toolprism_examples::showcase::{self, Command, HELP};
use toolprism_examples::tools::render_panic::PANIC_TEXT;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        return toolprism_examples::serve::main(std::env::args().skip(2));
    }
    let options = match showcase::parse_args(std::env::args().skip(1)) {
        Ok(Command::Help) => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Run(options)) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    // The render-panic scenario panics on purpose and the runtime turns the
    // panic into an error result; keep that one panic's message off the
    // terminal. Every other panic is reported as usual.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if !message.contains(PANIC_TEXT) {
            default_hook(info);
        }
    }));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let (mut out, mut report) = (stdout.lock(), stderr.lock());
    let result = runtime.block_on(showcase::run(&options, &mut out, &mut report));
    let _ = out.flush();
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            let _ = writeln!(report, "error: {e}");
            ExitCode::FAILURE
        }
    }
}
