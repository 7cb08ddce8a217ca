//! K2, K3, K4 and K8: a projection's signature. It takes no receiver, only
//! shared references to the tool's own types (K2, K3), is a plain safe
//! non-generic `fn` (K4), and `present_result` reads the persisted result,
//! never the value (K8). That the referenced types are the tool's own (K7)
//! is checked by rustc, through the expansion.

use quote::ToTokens;
use syn::{FnArg, ReturnType, Safety, Type};

use super::{Checked, Hints};
use crate::ast::{self, Kind, Projection, Role};
use crate::ctxt::Ctxt;
use crate::pretty::pretty;

/// K2, K3, K4, K8 and the return type of one projection.
pub(super) fn check<'a>(
    cx: &Ctxt,
    projection: &Projection<'a>,
    hints: &Hints,
) -> Option<Checked<'a>> {
    let kind = projection.kind;
    let name = kind.name();
    let f = projection.original;
    let sig = &f.sig;
    let mut ok = true;
    let mut fail = |tokens: &dyn ToTokens, message: String| {
        ok = false;
        cx.error_spanned_by(tokens.to_token_stream(), message);
    };

    // K4
    if let Some(token) = &sig.asyncness {
        fail(
            token,
            format!(
                "`{name}` cannot be `async`: projections run inline after `execute`; do the waiting in `execute` and put the result in the value"
            ),
        );
    }
    if let Safety::Unsafe(token) = &sig.safety {
        fail(
            token,
            format!(
                "`{name}` cannot be `unsafe`: a projection is a safe, pure function of its inputs; remove `unsafe`"
            ),
        );
    }
    if let Some(abi) = &sig.abi {
        fail(
            abi,
            format!("`{name}` cannot be `extern`: declare it as a plain Rust `fn`"),
        );
    }
    if let Some(param) = ast::type_or_const_param(f) {
        fail(
            param,
            format!(
                "`{name}` cannot be generic: it takes this tool's own types; write `{}`",
                signature(kind, hints)
            ),
        );
    }

    // K2, K3, K8
    let roles = kind.roles();
    let mut params = Vec::new();
    let mut typed = 0;
    for input in &sig.inputs {
        let pt = match input {
            FnArg::Receiver(receiver) => {
                let sees = if kind == Kind::Approval {
                    "only the arguments"
                } else if kind == Kind::PresentCall || kind == Kind::PresentResult {
                    "only the arguments and the persisted result"
                } else {
                    "only the arguments and the value"
                };
                fail(
                    receiver,
                    format!(
                        "`{name}` cannot take `self`: a tool's state may hold I/O handles (clients, pools, files), so projections get {sees}; remove the receiver and write `{}`",
                        signature(kind, hints)
                    ),
                );
                continue;
            }
            FnArg::Typed(pt) => pt,
        };
        let Some(&role) = roles.get(typed) else {
            let why = handle_hint(&pt.ty).unwrap_or("projections get nothing else");
            fail(
                pt,
                format!(
                    "`{name}` takes exactly `{}`; remove `{}`: {why}",
                    params_text(kind, hints),
                    pretty(pt)
                ),
            );
            typed += 1;
            continue;
        };
        typed += 1;
        match check_param(name, role, &pt.ty, hints) {
            Ok(referent) => params.push(referent),
            Err((tokens, message)) => fail(&tokens, message),
        }
    }
    if typed < roles.len() {
        let missing: Vec<String> = roles[typed..]
            .iter()
            .map(|r| format!("`{}: &{}`", r.param_name(), role_type(*r, hints)))
            .collect();
        ok = false;
        cx.error_at(
            sig.paren_token.span.join(),
            format!(
                "`{name}` takes `{}`; add the missing {}",
                params_text(kind, hints),
                missing.join(" and ")
            ),
        );
    }

    let ret = match &sig.output {
        ReturnType::Type(_, ty) if matches!(ast::peel(ty), Type::ImplTrait(_)) => {
            ok = false;
            cx.error_spanned_by(
                ty,
                format!("`{name}` must name its return type: {}", return_hint(kind)),
            );
            None
        }
        ReturnType::Type(_, ty) => Some(&**ty),
        ReturnType::Default => {
            ok = false;
            cx.error_spanned_by(
                &sig.ident,
                format!("`{name}` must return something: {}", return_hint(kind)),
            );
            None
        }
    };
    if !ok {
        return None;
    }
    Some(Checked {
        kind,
        params,
        ret: ret?,
    })
}

/// K3 and K8 for one parameter; the referenced type when it is `&T`.
fn check_param<'a>(
    name: &str,
    role: Role,
    ty: &'a Type,
    hints: &Hints,
) -> Result<&'a Type, (proc_macro2::TokenStream, String)> {
    let expected = format!("&{}", role_type(role, hints));
    let param = role.param_name();
    if ast::names_context(ty) {
        return Err((
            ty.to_token_stream(),
            format!(
                "`{name}` cannot take the `ToolContext`: only `execute` gets the context (cancellation, nested calls); projections see only their inputs; remove this parameter"
            ),
        ));
    }
    let Type::Reference(r) = ast::peel(ty) else {
        let why = match (handle_hint(ty), ast::peel(ty)) {
            (Some(hint), _) => hint.to_owned(),
            (None, Type::ImplTrait(_)) => {
                "a projection cannot take a trait; it reads the tool's own types".to_owned()
            }
            (None, _) => "projections borrow their inputs".to_owned(),
        };
        return Err((
            ty.to_token_stream(),
            format!(
                "`{name}` takes `{param}: {expected}`, not `{}`: {why}",
                pretty(ty)
            ),
        ));
    };
    if let Some(m) = &r.mutability {
        let mut tokens = r.and_token.to_token_stream();
        if let Some(lifetime) = &r.lifetime {
            lifetime.to_tokens(&mut tokens);
        }
        m.to_tokens(&mut tokens);
        return Err((
            tokens,
            format!(
                "`{name}` takes shared references: write `{param}: {expected}`, not `&mut`; a projection cannot change its inputs"
            ),
        ));
    }
    match ast::peel(&r.elem) {
        Type::TraitObject(_) | Type::ImplTrait(_) => {
            return Err((
                ty.to_token_stream(),
                format!(
                    "`{name}` takes `{param}: {expected}`, the tool's own type, not a trait object like `{}`: projections cannot read from readers, writers or handles",
                    pretty(ty)
                ),
            ));
        }
        _ => {}
    }
    if let Some(hint) = handle_hint(&r.elem) {
        return Err((
            ty.to_token_stream(),
            format!(
                "`{name}` takes `{param}: {expected}`, not `{}`: {hint}",
                pretty(ty)
            ),
        ));
    }
    if role == Role::Result && ast::last_ident(&r.elem).is_none_or(|i| i != "ToolResult") {
        return Err((
            r.elem.to_token_stream(),
            format!(
                "`present_result` sees only what is persisted: take `result: &ToolResult<{}>`, not `{}`; the value is never stored, so a card drawn from it could not be redrawn on replay (read `result.content`, `result.is_error` and `result.meta`, and put what the card needs in the meta)",
                hints.meta,
                pretty(ty)
            ),
        ));
    }
    Ok(&r.elem)
}

/// Why a handle type cannot be a projection parameter.
fn handle_hint(ty: &Type) -> Option<&'static str> {
    let mut names = Vec::new();
    idents_in(ty, &mut names);
    names.iter().find_map(|name| {
        Some(match name.as_str() {
            "ToolContext" => "only `execute` gets the context",
            "File" | "OpenOptions" | "DirEntry" | "ReadDir" => {
                "a projection cannot touch files; read them in `execute` and put what you need in the value"
            }
            "TcpStream" | "TcpListener" | "UdpSocket" | "UnixStream" | "Client" | "Connection"
            | "Pool" => {
                "a projection cannot hold connections or clients; use them in `execute` and put the answer in the value"
            }
            "Child" | "Command" | "ChildStdout" | "ChildStdin" | "ChildStderr" => {
                "a projection cannot drive processes; run them in `execute`"
            }
            "Stdin" | "Stdout" | "Stderr" => "a projection cannot use the console",
            "Mutex" | "RwLock" | "RefCell" | "Cell" | "OnceLock" | "OnceCell" => {
                "a projection cannot share mutable state; its output depends only on its inputs"
            }
            "Sender" | "SyncSender" | "Receiver" => "a projection cannot talk to other tasks",
            "Read" | "Write" | "BufRead" | "Seek" | "AsyncRead" | "AsyncWrite" => {
                "a projection reads only its inputs and returns its output; it cannot read from or write to a stream"
            }
            atomic if atomic.starts_with("Atomic") => {
                "a projection cannot share mutable state; its output depends only on its inputs"
            }
            _ => return None,
        })
    })
}

fn idents_in(ty: &Type, out: &mut Vec<String>) {
    for tt in ty.to_token_stream() {
        collect_idents(tt, out);
    }
}

fn collect_idents(tt: proc_macro2::TokenTree, out: &mut Vec<String>) {
    match tt {
        proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
        proc_macro2::TokenTree::Group(g) => {
            for tt in g.stream() {
                collect_idents(tt, out);
            }
        }
        _ => {}
    }
}

fn role_type(role: Role, hints: &Hints) -> String {
    match role {
        Role::Args => hints.args.clone(),
        Role::Value => hints.value.clone(),
        Role::Result => format!("ToolResult<{}>", hints.meta),
    }
}

fn params_text(kind: Kind, hints: &Hints) -> String {
    let params: Vec<String> = kind
        .roles()
        .iter()
        .map(|r| format!("{}: &{}", r.param_name(), role_type(*r, hints)))
        .collect();
    format!("({})", params.join(", "))
}

fn return_hint(kind: Kind) -> &'static str {
    match kind {
        Kind::Render => "`-> Vec<ContentBlock>`",
        Kind::PresentationMeta => {
            "the meta type, e.g. `-> ReadMeta` (a small struct deriving `Serialize` and `Deserialize`)"
        }
        Kind::PresentCall => "`-> CallCard` (or `-> Option<CallCard>`)",
        Kind::PresentResult => "`-> ResultCard` (or `-> Option<ResultCard>`)",
        Kind::Approval => "`-> Option<String>` (the question to ask, or `None`)",
    }
}

fn signature(kind: Kind, hints: &Hints) -> String {
    let ret = match kind {
        Kind::Render => "Vec<ContentBlock>".to_owned(),
        Kind::PresentationMeta => {
            if hints.meta == "NoMeta" {
                "MyMeta".to_owned()
            } else {
                hints.meta.clone()
            }
        }
        Kind::PresentCall => "CallCard".to_owned(),
        Kind::PresentResult => "ResultCard".to_owned(),
        Kind::Approval => "Option<String>".to_owned(),
    };
    format!("fn {}{} -> {ret}", kind.name(), params_text(kind, hints))
}
