//! Test helpers for tools: the run-time half of the purity check.
//!
//! `#[tool]` rejects projections whose signature or body visibly does I/O
//! or depends on something besides its inputs (see the attribute reference
//! on `toolprism::tool`, "What the compile-time checks cannot see"). That
//! check reads syntax, so it is best effort: a helper function in another
//! module can still read a file, a `OnceLock` cache can still change between
//! calls. [`check_projections`] covers the rest at run time, from a test:
//!
//! - it runs `render`, `presentation_meta`, `present_call` and
//!   `present_result` **twice each** on the same inputs and requires equal
//!   output (compared as JSON);
//! - it checks that meta is lossless JSON that reads back as the meta type,
//!   and that the cards drawn from what is persisted (raw argument text,
//!   content, meta) equal the live ones, as a replay would draw them;
//! - it feeds the presenters **malformed persisted data**: arguments
//!   missing fields or with wrong types, arguments that are not an object or
//!   not JSON, meta of the wrong shape, no meta, empty content, error
//!   results. Each must give a card, never a panic: inputs that no longer
//!   parse must give the generic card, and a presenter that panics is
//!   reported even though the registry would have hidden it behind the
//!   generic card.
//!
//! `execute` is never run: give the helper a value, as `execute` would
//! return it.
//!
//! ```
//! use toolprism::{CallCard, ContentBlock, ToolResult, ResultCard, tool, testing};
//!
//! #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
//! struct Args { path: String }
//!
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! struct Lines { lines: Vec<String> }
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Meta { count: usize }
//!
//! struct ReadTool;
//!
//! /// Read a file.
//! #[tool]
//! impl ReadTool {
//!     fn execute(args: Args) -> Lines {
//!         Lines { lines: vec![args.path] }
//!     }
//!     fn render(_: &Args, value: &Lines) -> Vec<ContentBlock> {
//!         vec![ContentBlock::text(value.lines.join("\n"))]
//!     }
//!     fn presentation_meta(_: &Args, value: &Lines) -> Meta {
//!         Meta { count: value.lines.len() }
//!     }
//!     fn present_call(args: &Args) -> CallCard {
//!         CallCard::generic(format!("Read {}", args.path), None, None)
//!     }
//!     fn present_result(_: &Args, result: &ToolResult<Meta>) -> Option<ResultCard> {
//!         let meta = result.meta.as_ref()?;
//!         Some(ResultCard::generic(Some(format!("{} lines", meta.count)), result.content.clone()))
//!     }
//! }
//!
//! let value = Lines { lines: vec!["a".into(), "b".into()] };
//! let report = testing::check_projections::<ReadTool>(serde_json::json!({"path": "a.txt"}), &value).unwrap();
//! assert_eq!(report.content, [ContentBlock::text("a\nb")]);
//! assert_eq!(report.meta, Some(serde_json::json!({"count": 2})));
//! assert_eq!(report.call_card.tag(), "generic");
//! assert!(report.malformed.iter().any(|case| case.input.contains("missing")));
//! ```
//!
//! A projection whose output changes between runs is caught:
//!
//! ```
//! use toolprism::{ContentBlock, tool, testing};
//!
//! #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
//! struct Args {}
//!
//! // The compile-time check sees `CALLS.fetch_add` in a projection body; it
//! // cannot see it behind a function in another module.
//! mod counter {
//!     use std::sync::atomic::{AtomicUsize, Ordering};
//!     pub static CALLS: AtomicUsize = AtomicUsize::new(0);
//!     pub fn next() -> usize { CALLS.fetch_add(1, Ordering::Relaxed) }
//! }
//!
//! struct Counter;
//!
//! /// Counts.
//! #[tool]
//! impl Counter {
//!     fn execute(_: Args) -> u32 { 0 }
//!     fn render(_: &Args, _: &u32) -> Vec<ContentBlock> {
//!         vec![ContentBlock::text(counter::next().to_string())]
//!     }
//! }
//!
//! let err = testing::check_projections::<Counter>(serde_json::json!({}), &0).unwrap_err();
//! assert!(err.problems()[0].starts_with("`render` is not pure"), "{err}");
//! ```
//!
//! Panics caught here still go through the panic hook, so a failing
//! presenter prints its panic message to stderr while the check goes on.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::card::{CallCard, ResultCard};
use crate::content::ContentBlock;
use crate::context::ToolContext;
use crate::definition::ToolInfo;
use crate::error::ToolError;
use crate::guard::guard;
use crate::lossless::to_lossless_value;
use crate::registry::Registry;
use crate::registry::arguments::{Arguments, read_arguments};
use crate::registry::compiled;
use crate::registry::present::read_meta;
use crate::result::ToolResult;
use crate::tool::Tool;

/// What [`check_projections`] observed, for further assertions.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProjectionReport {
    /// What `render` returned.
    pub content: Vec<ContentBlock>,
    /// What `presentation_meta` returned, as persisted JSON.
    pub meta: Option<Value>,
    /// The call card the registry draws (the generic card without `present_call`).
    pub call_card: CallCard,
    /// The result card the registry draws for the successful result.
    pub result_card: ResultCard,
    /// Each malformed input fed to the presenters, and the card it gave.
    pub malformed: Vec<MalformedCase>,
}

/// One malformed input fed to a presenter, and what came out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MalformedCase {
    /// What was fed, e.g. `present_result with meta of the wrong shape ("x")`.
    pub input: String,
    /// The tag of the card drawn.
    pub card: &'static str,
}

/// Every problem [`check_projections`] found, one sentence each.
#[derive(Clone, PartialEq, Eq)]
pub struct ProjectionError {
    problems: Vec<String>,
}

impl ProjectionError {
    /// The problems, in the order found.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for ProjectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} problem(s) with the projections:",
            self.problems.len()
        )?;
        for problem in &self.problems {
            write!(f, "\n- {problem}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ProjectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for ProjectionError {}

/// Checks a tool's projections at run time: determinism, lossless meta,
/// live = replayed cards, and total presenters. See the [module
/// docs](self).
///
/// `args` are the arguments as the model would send them; `value` is what
/// `execute` would return for them. Returns what was observed, or every
/// problem found.
pub fn check_projections<T: Tool>(
    args: Value,
    value: &T::Value,
) -> Result<ProjectionReport, ProjectionError> {
    let mut problems = Vec::new();
    let name = T::INFO.name;
    let typed_args = T::Args::deserialize(&args).map_err(|e| ProjectionError {
        problems: vec![format!(
            "the arguments given to check_projections do not deserialize as `{}`: {e}",
            std::any::type_name::<T::Args>()
        )],
    })?;
    let args_text = args.to_string();

    // render, twice.
    let content = twice("render", &mut problems, || T::render(&typed_args, value));
    let content = content.unwrap_or_default();

    // presentation_meta, twice; lossless; reads back.
    let meta = twice(
        "presentation_meta",
        &mut problems,
        || match T::presentation_meta(&typed_args, value) {
            None => Ok(None),
            Some(meta) => to_lossless_value(&meta, "meta")
                .map(Some)
                .map_err(|e| e.to_string()),
        },
    );
    let meta = match meta {
        Some(Ok(meta)) => meta,
        Some(Err(e)) => {
            problems.push(format!(
                "`presentation_meta` returned meta that is not lossless JSON: {e}"
            ));
            None
        }
        None => None,
    };
    if let Some(json) = &meta
        && let Err(e) = T::Meta::deserialize(json)
    {
        problems.push(format!(
            "the meta `presentation_meta` returned does not read back as `{}` ({e}): `present_result` would never see it",
            std::any::type_name::<T::Meta>()
        ));
    }

    // present_call, twice.
    let call = twice("present_call", &mut problems, || {
        T::present_call(&typed_args)
    });

    // present_result, twice, on the result as persisted and read back.
    let persisted = ToolResult {
        content: content.clone(),
        is_error: false,
        meta: meta.clone(),
    };
    let result = match typed_result::<T>(&persisted) {
        Some(typed) => twice("present_result", &mut problems, || {
            T::present_result(&typed_args, &typed)
        }),
        None => None,
    };

    // The registry's view: cards drawn from what is persisted.
    let registry = match Registry::builder().tool(Probe::<T>(PhantomData)).build() {
        Ok(registry) => registry,
        Err(e) => {
            problems.push(e.to_string());
            return Err(ProjectionError { problems });
        }
    };
    let call_card = registry.present_call(name, &args_text);
    if let Some(Some(live)) = &call
        && &call_card != live
    {
        problems.push(format!(
            "`present_call` drew a different card from the persisted arguments than from the live ones: live {}, replayed {}",
            brief(live),
            brief(&call_card)
        ));
    }
    let mut replayed = persisted.clone();
    let result_card = registry.present_result(name, &args_text, &mut replayed);
    if let Some(Some(live)) = &result
        && &result_card != live
    {
        problems.push(format!(
            "`present_result` drew a different card from the persisted result than from the live one: live {}, replayed {}",
            brief(live),
            brief(&result_card)
        ));
    }
    if replayed != persisted {
        problems.push("drawing the result card changed the persisted result".to_owned());
    }

    let malformed = malformed::<T>(&registry, &args, &persisted, &mut problems);

    if problems.is_empty() {
        Ok(ProjectionReport {
            content,
            meta,
            call_card,
            result_card,
            malformed,
        })
    } else {
        Err(ProjectionError { problems })
    }
}

/// Runs `f` twice; records a panic or a difference between the two outputs.
fn twice<R: serde::Serialize>(
    projection: &str,
    problems: &mut Vec<String>,
    mut f: impl FnMut() -> R,
) -> Option<R> {
    let first = match guard(&mut f) {
        Ok(out) => out,
        Err(panic) => {
            problems.push(format!(
                "`{projection}` panicked on the given arguments and value: {panic}"
            ));
            return None;
        }
    };
    let second = match guard(&mut f) {
        Ok(out) => out,
        Err(panic) => {
            problems.push(format!(
                "`{projection}` is not pure: it returned on the first run and panicked on the second: {panic}"
            ));
            return None;
        }
    };
    let (a, b) = (serde_json::to_value(&first), serde_json::to_value(&second));
    match (a, b) {
        (Ok(a), Ok(b)) if a == b => Some(first),
        (Ok(a), Ok(b)) => {
            problems.push(format!(
                "`{projection}` is not pure: two runs on the same inputs returned different output: first {}, then {}",
                brief(&a),
                brief(&b)
            ));
            None
        }
        (Err(e), _) | (_, Err(e)) => {
            problems.push(format!(
                "the output of `{projection}` does not serialize: {e}"
            ));
            None
        }
    }
}

/// The typed view of a persisted result, as `present_result` gets it
/// (through the registry's own meta reader); `None` when its meta does not
/// read back.
fn typed_result<T: Tool>(result: &ToolResult) -> Option<ToolResult<T::Meta>> {
    let meta = read_meta::<T>(result.meta.as_ref()).ok()?;
    Some(ToolResult {
        content: result.content.clone(),
        is_error: result.is_error,
        meta,
    })
}

/// Feeds the presenters malformed persisted data.
fn malformed<T: Tool>(
    registry: &Registry,
    args: &Value,
    persisted: &ToolResult,
    problems: &mut Vec<String>,
) -> Vec<MalformedCase> {
    let name = T::INFO.name;
    let mut cases = Vec::new();

    // Arguments that no longer parse, or only just.
    let mut bad_args: Vec<(String, String)> = vec![
        (
            "arguments missing every field ({})".to_owned(),
            "{}".to_owned(),
        ),
        ("arguments that are an array".to_owned(), "[]".to_owned()),
        (
            "arguments that are a string".to_owned(),
            "\"text\"".to_owned(),
        ),
        ("arguments that are null".to_owned(), "null".to_owned()),
        ("arguments that are not JSON".to_owned(), "{\"".to_owned()),
        ("empty arguments".to_owned(), String::new()),
    ];
    if let Value::Object(fields) = args {
        for (key, field) in fields.iter().take(16) {
            let mut wrong = fields.clone();
            wrong.insert(key.clone(), wrong_type(field));
            bad_args.push((
                format!("arguments with `{key}` of the wrong type"),
                Value::Object(wrong).to_string(),
            ));
            let mut missing = fields.clone();
            missing.remove(key);
            bad_args.push((
                format!("arguments missing `{key}`"),
                Value::Object(missing).to_string(),
            ));
        }
    }
    for (what, text) in &bad_args {
        let parsed = parse_args::<T>(text);
        if let Some(typed) = &parsed
            && let Err(panic) = guard(|| T::present_call(typed))
        {
            problems.push(format!(
                "`present_call` panicked on {what}: {panic}; presenters must be total: return a generic card instead"
            ));
        }
        let card = registry.present_call(name, text);
        if parsed.is_none() && card.tag() != "generic" {
            problems.push(format!(
                "the call card for {what} should be the generic card, not `{}`",
                card.tag()
            ));
        }
        cases.push(MalformedCase {
            input: format!("present_call with {what}"),
            card: card.tag(),
        });

        let card = registry.present_result(name, text, &mut persisted.clone());
        check_result_card(&mut cases, problems, what, card.tag(), parsed.is_none());
    }

    // Persisted results the presenter must survive, with good arguments.
    let args_text = args.to_string();
    let error = ToolResult::<Value>::error("boom");
    let results: Vec<(String, ToolResult)> = vec![
        (
            "meta of the wrong shape (\"x\")".to_owned(),
            with_meta(persisted, Some(json!("x"))),
        ),
        (
            "meta of the wrong shape (42)".to_owned(),
            with_meta(persisted, Some(json!(42))),
        ),
        (
            "meta of the wrong shape ([])".to_owned(),
            with_meta(persisted, Some(json!([]))),
        ),
        (
            "meta of the wrong shape ({})".to_owned(),
            with_meta(persisted, Some(json!({}))),
        ),
        ("no meta".to_owned(), with_meta(persisted, None)),
        (
            "empty content".to_owned(),
            ToolResult {
                content: Vec::new(),
                ..persisted.clone()
            },
        ),
        ("an error result (isError: true)".to_owned(), error.clone()),
        (
            "an error result with meta".to_owned(),
            with_meta(&error, persisted.meta.clone()),
        ),
        (
            "an error result with empty content".to_owned(),
            ToolResult {
                content: Vec::new(),
                ..error
            },
        ),
    ];
    let typed_args = parse_args::<T>(&args_text);
    for (what, result) in results {
        let typed = typed_result::<T>(&result);
        if let (Some(typed_args), Some(typed)) = (&typed_args, &typed)
            && let Err(panic) = guard(|| T::present_result(typed_args, typed))
        {
            problems.push(format!(
                "`present_result` panicked on {what}: {panic}; presenters must be total: return `None` (the generic card) instead"
            ));
        }
        let card = registry.present_result(name, &args_text, &mut result.clone());
        check_result_card(&mut cases, problems, &what, card.tag(), typed.is_none());
    }
    cases
}

/// Records a `present_result` case; when its input cannot be read back,
/// the card must be the generic one.
fn check_result_card(
    cases: &mut Vec<MalformedCase>,
    problems: &mut Vec<String>,
    what: &str,
    tag: &'static str,
    unreadable: bool,
) {
    if unreadable && tag != "generic" {
        problems.push(format!(
            "the result card for {what} should be the generic card, not `{tag}`"
        ));
    }
    cases.push(MalformedCase {
        input: format!("present_result with {what}"),
        card: tag,
    });
}

/// The arguments as the registry reads them (JSON, input schema,
/// deserialize), or `None` where it would draw the generic card.
fn parse_args<T: Tool>(text: &str) -> Option<T::Args> {
    let compiled = compiled::<T>().ok()?;
    read_arguments::<T>(
        T::INFO.name,
        &compiled,
        Arguments::Text(text.into()),
        None,
        false,
    )
    .ok()
    .map(|(_, args)| args)
}

fn with_meta(result: &ToolResult, meta: Option<Value>) -> ToolResult {
    ToolResult {
        meta,
        ..result.clone()
    }
}

/// A value of another JSON type than `value`.
fn wrong_type(value: &Value) -> Value {
    match value {
        Value::String(_) => json!(12345),
        Value::Number(_) => json!("not a number"),
        Value::Bool(_) => json!("yes"),
        Value::Array(_) => json!({ "not": "an array" }),
        Value::Object(_) => json!([1, 2, 3]),
        Value::Null => json!(0),
    }
}

/// JSON of a value, cut to a readable length.
fn brief(value: &impl serde::Serialize) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|e| format!("<{e}>"));
    crate::text::cap(&text, 200).into_owned()
}

/// Stands in for `T` in a registry: the same name, types and projections,
/// and an `execute` that is never called.
struct Probe<T>(PhantomData<fn() -> T>);

impl<T: Tool> Tool for Probe<T> {
    type Args = T::Args;
    type Value = T::Value;
    type Meta = T::Meta;
    const INFO: ToolInfo = T::INFO;

    fn execute(
        &self,
        _args: T::Args,
        _cx: &ToolContext<'_>,
    ) -> impl Future<Output = Result<T::Value, ToolError>> + Send {
        std::future::ready(Err(ToolError::new(
            "toolprism::testing does not run execute",
        )))
    }

    fn render(args: &T::Args, value: &T::Value) -> Vec<ContentBlock> {
        T::render(args, value)
    }

    fn presentation_meta(args: &T::Args, value: &T::Value) -> Option<T::Meta> {
        T::presentation_meta(args, value)
    }

    fn present_call(args: &T::Args) -> Option<CallCard> {
        T::present_call(args)
    }

    fn present_result(args: &T::Args, result: &ToolResult<T::Meta>) -> Option<ResultCard> {
        T::present_result(args, result)
    }
}
