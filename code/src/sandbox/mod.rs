//! The JavaScript sandbox behind toolprism's Code Mode.
//!
//! A model writes one JavaScript program; [`run`] executes it in a fresh
//! embedded QuickJS runtime and context (through `rquickjs`) on an engine
//! thread of its own (threads are kept between runs, and make the next
//! run's runtime while they wait, but no runtime serves two runs). The
//! program is the body of an async function: top-level `await` and
//! `return` work. It reaches tools only through the global `tools`:
//! `await tools.search({ q: "x" })` becomes one [`Host::call`], and its JSON
//! result comes back as a JavaScript value; a failure rejects with a
//! `ToolCallError` (`toolName`, `code`, `message`). There is no file system,
//! network, environment, process, timer or module loader.
//!
//! The engine thread also polls the host's futures itself, inside the
//! caller's tokio runtime (see [`run`]): a nested call costs no thread hop,
//! and a host future ready on its first poll costs no task and no wake-up.
//!
//! Values cross the boundary as lossless JSON both ways (see
//! [`MAX_DEPTH`] and the crate's report for every refusal), and every
//! limit in [`Limits`] ends the run with its own [`ErrorKind`].
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::{Value, json};
//! use tokio_util::sync::CancellationToken;
//! use toolprism::code::sandbox::{Host, HostError, HostFuture, Limits, run};
//!
//! struct Echo;
//! impl Host for Echo {
//!     fn call(&self, name: String, args: Value, _cancel: CancellationToken) -> HostFuture {
//!         Box::pin(async move {
//!             match name.as_str() {
//!                 "echo" => Ok(args),
//!                 _ => Err(HostError::new("UNKNOWN_TOOL", format!("no tool named {name}"))),
//!             }
//!         })
//!     }
//!     fn concurrent(&self, _name: &str) -> bool { true }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let outcome = run(
//!     "const r = await tools.echo({ n: 2 }); console.log('got', r); return r.n * 21;",
//!     &Limits::default(),
//!     Arc::new(Echo),
//!     CancellationToken::new(),
//! ).await;
//! assert_eq!(outcome.logs, [r#"got {"n":2}"#]);
//! assert_eq!(outcome.result, Ok(Some(json!(42))));
//! # });
//! ```

pub mod codes;
mod convert;
mod engine;
mod host;
mod limits;
mod outcome;
mod run;
mod schedule;

pub use convert::MAX_DEPTH;
pub use host::{Host, HostError, HostFuture};
pub use limits::{Limits, MAX_STACK_BYTES};
pub use outcome::{ErrorKind, MESSAGE_CAP, MESSAGE_FLOOR, RunError, RunOutcome, SourceLocation};
pub use run::run;
