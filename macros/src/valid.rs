//! Checks the model against the compile-time contract: K1 (`execute` and
//! `render` present, `execute`'s shape) and K9 (names) here, K2–K5 and K8
//! in [`crate::purity`]; K6 and K7 are type checks rustc makes on the
//! expansion, spanned at the user's types (`Checked<T, { check::args::<T>() }>`
//! and the parameter casts, see `expand`). Every problem is recorded in the
//! [`Ctxt`]; none stops the others.

use syn::{GenericArgument, PathArguments, ReturnType, Safety, Type};

use crate::ast::{self, ExecParam, Execute, Input, Kind, Output};
use crate::attr::Attrs;
use crate::ctxt::Ctxt;
use crate::names::{default_tool_name, tool_name_problem};
use crate::pretty::pretty;
use crate::purity::{self, Checked, Hints};

/// A tool that passed every check: what expansion needs.
pub(crate) struct Tool<'i, 'a> {
    pub(crate) input: &'i Input<'a>,
    pub(crate) name: String,
    pub(crate) execute: &'i Execute<'a>,
    pub(crate) args_ty: &'a Type,
    pub(crate) value_ty: &'a Type,
    /// `E` of `Result<T, E>`.
    pub(crate) err_ty: Option<&'a Type>,
    /// The meta type, when `presentation_meta` exists.
    pub(crate) meta: Option<MetaType<'a>>,
    pub(crate) projections: Vec<Checked<'a>>,
    /// `execute` is synchronous and `blocking` is set.
    pub(crate) blocking: bool,
}

pub(crate) struct MetaType<'a> {
    pub(crate) ty: &'a Type,
    /// `presentation_meta` returns `Option<ty>`.
    pub(crate) optional: bool,
}

pub(crate) fn validate<'i, 'a>(
    cx: &Ctxt,
    attrs: &Attrs,
    input: &'i Input<'a>,
) -> Option<Tool<'i, 'a>> {
    let item = input.original;
    if let Some((path, _)) = &item.trait_ {
        cx.error_spanned_by(
            path,
            "#[tool] goes on an inherent impl block (`impl ReadTool { fn execute(..) .. fn render(..) .. }`), not on a trait impl: it writes the `Tool` impl itself",
        );
    }
    let name = tool_name(cx, attrs, input);
    if let Some(span) = attrs.builtin
        && !item.generics.params.is_empty()
    {
        cx.error_at(
            span,
            "`builtin` needs a concrete tool type: `Registry::builtin()` makes builtin tools with `Default::default()`, and a generic impl names no single type; drop `builtin` and register it with `Registry::builder().tool(..)`",
        );
    }

    let execute = match &input.execute {
        Some(execute) => Some(execute),
        None => {
            cx.error_spanned_by(
                input.self_ty,
                "this tool has no `execute`: add `async fn execute(&self, args: MyArgs, cx: &ToolContext<'_>) -> Result<MyValue, ToolError>` (it may also be sync, take no `&self`, no `cx`, and return `MyValue` directly)",
            );
            None
        }
    };
    let (args_ty, value_ty, err_ty) = match execute {
        Some(execute) => check_execute(cx, execute, attrs.blocking),
        None => (None, None, None),
    };
    let meta =
        input
            .projection(Kind::PresentationMeta)
            .and_then(|p| match &p.original.sig.output {
                ReturnType::Type(_, ty) => Some(meta_type(ty)),
                ReturnType::Default => None,
            });
    let hints = Hints {
        args: args_ty.map_or_else(|| "MyArgs".to_owned(), pretty),
        value: value_ty.map_or_else(|| "MyValue".to_owned(), pretty),
        meta: meta
            .as_ref()
            .map_or_else(|| "NoMeta".to_owned(), |m| pretty(m.ty)),
    };

    if input.projection(Kind::Render).is_none() {
        cx.error_spanned_by(
            input.self_ty,
            format!(
                "this tool has no `render`: add `fn render(args: &{}, value: &{}) -> Vec<ContentBlock>`, which turns the value into what the model reads",
                hints.args, hints.value
            ),
        );
    }

    let projections = purity::check_projections(cx, input, &hints);

    if cx.has_errors() {
        return None;
    }
    Some(Tool {
        input,
        name: name?,
        execute: execute?,
        args_ty: args_ty?,
        value_ty: value_ty?,
        err_ty,
        meta,
        projections,
        blocking: attrs.blocking,
    })
}

fn tool_name(cx: &Ctxt, attrs: &Attrs, input: &Input<'_>) -> Option<String> {
    if let Some((name, _)) = &attrs.name {
        // Checked where it was parsed.
        return Some(name.clone());
    }
    let Some(ident) = input.type_ident else {
        cx.error_spanned_by(
            input.self_ty,
            "cannot derive a tool name from this type: set one with `#[tool(name = \"my_tool\")]`",
        );
        return None;
    };
    let name = default_tool_name(&ident.to_string());
    match tool_name_problem(&name) {
        None => Some(name),
        Some(problem) => {
            cx.error_spanned_by(
                ident,
                format!(
                    "the tool name \"{}\" derived from `{ident}` {problem}: a tool name has 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`; set one with `#[tool(name = \"...\")]`",
                    name.escape_debug()
                ),
            );
            None
        }
    }
}

fn meta_type(ty: &Type) -> MetaType<'_> {
    match option_inner(ty) {
        Some(inner) => MetaType {
            ty: inner,
            optional: true,
        },
        None => MetaType {
            ty,
            optional: false,
        },
    }
}

/// `T` of `Option<T>`.
fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ast::peel(ty) else {
        return None;
    };
    let last = p.path.segments.last()?;
    if last.ident != "Option" || p.qself.is_some() {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.iter().collect::<Vec<_>>()[..] {
        [GenericArgument::Type(inner)] => Some(inner),
        _ => None,
    }
}

/// K1: `execute`'s shape. Returns the args, value and error types found.
fn check_execute<'a>(
    cx: &Ctxt,
    execute: &Execute<'a>,
    blocking: bool,
) -> (Option<&'a Type>, Option<&'a Type>, Option<&'a Type>) {
    let f = execute.original;
    let sig = &f.sig;
    if blocking && let Some(token) = &sig.asyncness {
        cx.error_spanned_by(
            token,
            "a `blocking` tool's `execute` is a plain `fn`, run on tokio's blocking pool: remove `async` and call the blocking APIs directly (`std::fs`, `std::thread::sleep`, a synchronous client); or remove `blocking` and keep `async fn execute`, which must `.await` for a timeout or a cancellation to end it",
        );
    }
    if let Some(param) = ast::type_or_const_param(f) {
        cx.error_spanned_by(
            param,
            "`execute` cannot be generic: the registry calls it with one arguments type; name the concrete types",
        );
    }
    if let Safety::Unsafe(token) = &sig.safety {
        cx.error_spanned_by(
            token,
            "`execute` cannot be `unsafe`: the registry calls it with whatever arguments the model sends; make it a safe fn",
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(
            abi,
            "`execute` cannot be `extern`: declare it as a plain Rust `fn` (or `async fn`)",
        );
    }
    if let Some(receiver) = execute.receiver {
        let shared = matches!(&receiver.kind, syn::ReceiverKind::Reference(_, _, None))
            && receiver.mutability.is_none();
        if !shared {
            let found = match &receiver.kind {
                syn::ReceiverKind::Reference(_, _, Some(_)) => {
                    "`&mut self`: one tool value serves concurrent calls; keep mutable state behind a `Mutex` or an atomic"
                }
                _ => "`self` by value: the registry keeps the tool and calls it many times",
            };
            cx.error_spanned_by(
                receiver,
                format!("`execute` takes `&self` (or no receiver), not {found}"),
            );
        }
    }

    let mut args_ty = None;
    let mut context_seen = false;
    let mut context_misused = false;
    for param in &execute.params {
        match *param {
            ExecParam::Context(pt) => {
                if context_seen {
                    cx.error_spanned_by(
                        pt,
                        "`execute` takes the `ToolContext` once; remove this parameter",
                    );
                }
                context_seen = true;
            }
            ExecParam::Args(pt) if ast::names_context(&pt.ty) => {
                context_misused = true;
                cx.error_spanned_by(
                    &pt.ty,
                    "take the context by shared reference: `cx: &ToolContext<'_>`",
                );
            }
            ExecParam::Args(pt) => {
                if let Some(first) = args_ty {
                    cx.error_spanned_by(
                        pt,
                        format!(
                            "`execute` takes one arguments parameter, a struct with every argument as a field; `{}` is a second one: make it a field of `{}`",
                            pretty(pt),
                            pretty(first)
                        ),
                    );
                    continue;
                }
                match ast::peel(&pt.ty) {
                    Type::Reference(r) => cx.error_spanned_by(
                        &pt.ty,
                        format!(
                            "`execute` takes its arguments by value: write `{}: {}`; the registry deserializes fresh arguments for every call",
                            pretty(&pt.pat),
                            pretty(&r.elem)
                        ),
                    ),
                    Type::ImplTrait(_) | Type::TraitObject(_) => cx.error_spanned_by(
                        &pt.ty,
                        "the arguments type cannot be a trait: name a struct deriving `serde::Deserialize`, `schemars::JsonSchema` and `Clone`",
                    ),
                    _ => {}
                }
                args_ty = Some(&*pt.ty);
            }
        }
    }
    if args_ty.is_none() && !context_misused {
        cx.error_at(
            sig.paren_token.span.join(),
            "`execute` has no arguments parameter: add one, e.g. `args: MyArgs`, a struct deriving `serde::Deserialize`, `schemars::JsonSchema` and `Clone` (an empty struct for a tool without arguments)",
        );
    }

    let (value_ty, err_ty) = match &execute.output {
        Output::Missing => {
            cx.error_spanned_by(
                &sig.ident,
                "`execute` must return the tool's value: add `-> MyValue` or `-> Result<MyValue, ToolError>`",
            );
            (None, None)
        }
        Output::ResultAlias(ty) => {
            cx.error_spanned_by(
                ty,
                "write both type arguments, `Result<T, E>`: the macro reads the value type `T` and the error type `E` from the signature and cannot see through a one-argument `Result` alias",
            );
            (None, None)
        }
        Output::Value(ty) => (check_value_type(cx, ty), None),
        Output::Result { ok, err } => (check_value_type(cx, ok), Some(*err)),
    };
    (args_ty, value_ty, err_ty)
}

fn check_value_type<'a>(cx: &Ctxt, ty: &'a Type) -> Option<&'a Type> {
    match ast::peel(ty) {
        Type::ImplTrait(_) => {
            cx.error_spanned_by(
                ty,
                "`execute` returns the value itself: name its type (write `async fn execute(..) -> MyValue` rather than returning `impl Future` or `impl Trait`)",
            );
            None
        }
        Type::Reference(_) => {
            cx.error_spanned_by(
                ty,
                "`execute` returns an owned value, not a reference: the value outlives the call",
            );
            None
        }
        _ => Some(ty),
    }
}
