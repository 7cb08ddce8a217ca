//! Code Mode for [toolprism](https://docs.rs/toolprism): the model writes
//! one program against the registry's tools, typed from their output
//! schemas, and a sandbox runs it. Use it through `toolprism` (feature
//! `code`) as `toolprism::code`.
//!
//! A model that calls tools one by one drags every intermediate result
//! through its context. In Code Mode it sends one `run_code` call instead:
//! a JavaScript program whose `await tools.read({path})` is a call of the
//! registry (the whole pipeline: policies, both schema checks, timeouts)
//! resolving to the tool's canonical value. The values stay inside the
//! program; only what it logs and returns comes back. The model learns the
//! tools from an SDK, TypeScript declarations generated from every tool's
//! input and output schema ([`sdk()`]), which is `run_code`'s description.
//!
//! ```
//! use toolprism::code::CodeMode;
//! use toolprism::{Mode, Registry, ToolCall};
//! # use toolprism::{ContentBlock, tool};
//! # #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
//! # struct Args { n: i64 }
//! # struct Double;
//! # /// Doubles n.
//! # #[tool(read_only)]
//! # impl Double {
//! #     fn execute(args: Args) -> i64 { args.n * 2 }
//! #     fn render(_: &Args, v: &i64) -> Vec<ContentBlock> { vec![ContentBlock::text(v.to_string())] }
//! # }
//!
//! let registry = Registry::builder().tool(Double).code_mode(Mode::Code).build().unwrap();
//! // The model is offered only `run_code`; its description is the SDK.
//! let run_code = registry.definition("run_code").unwrap();
//! assert!(run_code.description.contains("interface ToolArgsMap"));
//! assert!(run_code.description.contains("\"double\": {"));
//!
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let program = r#"{"description": "double twice", "code": "const a = await tools.double({n: 2}); return await tools.double({n: a});"}"#;
//! let out = registry.call(ToolCall::new("c1", "run_code", program)).await;
//! assert_eq!(out.value().unwrap()["result"], 8);
//! assert_eq!(out.nested_calls().len(), 2); // one card each, under the program's
//! # });
//! ```
//!
//! # What a program can and cannot do
//!
//! It runs in QuickJS (through `rquickjs`), a fresh runtime and context per
//! run on an engine thread of its own, with no file system, network,
//! environment, process, timers or modules: the global `tools` is its only way out. Modern
//! JavaScript works (async/await, classes, destructuring, `Map`, `JSON`…).
//! Values cross the boundary as lossless JSON both ways: `-0`, `NaN`, `±∞`,
//! `undefined`, holes, cycles, functions, symbols, BigInt and objects that
//! are not plain objects or arrays are refused with a clear error before
//! any tool runs, and an integer a JavaScript number cannot hold exactly is
//! refused, never rounded. A program may tamper with any global or
//! prototype; `tools`, `ToolCallError` and the conversion of values do not
//! depend on them. This is a boundary against the model's mistakes, not a
//! security boundary against a hostile host.
//!
//! Calls of tools marked read-only overlap up to
//! [`Limits::max_concurrent`] (10); any other call runs alone, after the
//! calls before it and before the ones after it, in the order made.
//!
//! # Limits
//!
//! Each run is held to [`Limits`], each with its own error code in the
//! result: `COMPUTE_LIMIT` (time in the interpreter, so a hot loop dies
//! even while a slow tool is pending), `WALL_LIMIT`, `MEMORY_LIMIT` (the
//! JavaScript heap), `STACK_LIMIT`, `CALL_LIMIT` (the number of nested
//! calls), `OUTPUT_LIMIT` (the ledger of logs plus the returned value;
//! 4 MiB by default, above what any model's context holds, so only a
//! runaway program meets it). And `SYNTAX_ERROR`, `EXCEPTION` (an uncaught
//! error, with its line and column in the program), `INVALID_RESULT` (a
//! returned value that is not lossless JSON), `STALLED` (awaiting what
//! nothing can settle), `ABORTED` (the call was cancelled: the program and
//! every pending nested call stop, and nothing runs or is logged after).
//! Every one is an error result for the model; the process and the
//! registry go on serving.
//!
//! # Build profile
//!
//! QuickJS is C, compiled by the `rquickjs-sys` crate at the optimization
//! level of the profile. In a debug build that is `-O0`, where each
//! JavaScript call takes several times the native stack: a program that
//! recurses 5,000 deep fits the default [`Limits::stack_bytes`] in a release
//! build but meets `STACK_LIMIT` in a debug one, and runs several times
//! slower. One section in your workspace's `Cargo.toml` gives debug builds
//! the release engine, for about 35 s more CPU in a cold build (QuickJS
//! compiles in 12 s at `-O0`, 48 s at `-O2`, on a 2-core machine):
//!
//! ```toml
//! [profile.dev.package.rquickjs-sys]
//! opt-level = 2
//! ```
//!
//! # Cards and the log
//!
//! `run_code`'s value is `{logs, result?}`; its content is the logs, then
//! the result. Each nested call is logged (content, error code and meta,
//! never the value) tied to the `run_code` call, and listed on its outcome
//! ([`ToolOutcome::nested_calls`](toolprism_core::ToolOutcome::nested_calls)),
//! so the session page, replay and the terminal draw one card per nested
//! call under the program's, live and replayed alike.
#![forbid(unsafe_code)]

mod run_code;
pub mod sandbox;
pub mod sdk;
mod text;
#[cfg(feature = "typescript")]
mod typescript;

pub use run_code::{MAX_RENDERED_RESULT, RunCode, RunCodeArgs, RunCodeValue};
pub use sandbox::Limits;

use toolprism_core::{Mode, Registry, RegistryBuilder, ToolDefinition};

/// What `run_code`'s description says before the SDK.
const INTRODUCTION: &str = "Runs one JavaScript program over the tools declared below, in a sandbox \
with no file system, network or timers: the program's `await tools.<name>(args)` calls a tool and \
resolves to its value; what the program logs and returns is your result. Use it to chain, loop \
over or combine tool calls in one step. Call it with both arguments: `code` (the program) and \
`description` (a few words for the person watching).";

/// Code Mode on a registry builder: registers `run_code` with the SDK of
/// every tool as its description, and the [mode](Mode) that says what the
/// model is offered.
pub trait CodeMode {
    /// Code Mode with the default [`Limits`]. `Mode::Native` registers
    /// nothing: the registry is as it was.
    fn code_mode(self, mode: Mode) -> RegistryBuilder;

    /// Code Mode with these limits for every run.
    fn code_mode_with(self, mode: Mode, limits: Limits) -> RegistryBuilder;
}

impl CodeMode for RegistryBuilder {
    fn code_mode(self, mode: Mode) -> RegistryBuilder {
        self.code_mode_with(mode, Limits::default())
    }

    fn code_mode_with(self, mode: Mode, limits: Limits) -> RegistryBuilder {
        if mode == Mode::Native {
            return self;
        }
        self.program(RunCode::new(limits), description).mode(mode)
    }
}

/// `run_code`'s description over these definitions.
fn description(defs: &[&ToolDefinition]) -> String {
    format!("{INTRODUCTION}\n\n```ts\n{}```\n", sdk_of(defs))
}

/// The SDK of the tools a program of `registry` may call: TypeScript
/// declarations from their input and output schemas, deterministic (the
/// same tools give the same bytes, in any order). The same text is
/// `run_code`'s description; `cargo run -- sdk` prints it.
///
/// ```
/// # use toolprism::{ContentBlock, tool};
/// # #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
/// # struct Args { n: i64 }
/// # struct Double;
/// # /// Doubles n.
/// # #[tool]
/// # impl Double {
/// #     fn execute(args: Args) -> i64 { args.n * 2 }
/// #     fn render(_: &Args, v: &i64) -> Vec<ContentBlock> { vec![ContentBlock::text(v.to_string())] }
/// # }
/// let registry = toolprism::Registry::builder().tool(Double).build().unwrap();
/// let text = toolprism::code::sdk(&registry);
/// assert!(text.contains("\"double\": number;"));
/// ```
pub fn sdk(registry: &Registry) -> String {
    let defs: Vec<&ToolDefinition> = registry.program_definitions().collect();
    sdk_of(&defs)
}

fn sdk_of(defs: &[&ToolDefinition]) -> String {
    let tools: Vec<sdk::SdkTool<'_>> = defs
        .iter()
        .map(|d| sdk::SdkTool {
            name: &d.name,
            description: &d.description,
            input_schema: &d.input_schema,
            output_schema: Some(&d.output_schema),
            read_only: d.annotations.read_only,
        })
        .collect();
    sdk::sdk(&tools)
}
