//! The model of a `#[tool] impl` block: which method is `execute`, which are
//! projections, and the shapes of their signatures. Building it cannot fail;
//! [`crate::valid`] decides what is wrong with it. Every node keeps the
//! original syntax for spans.

use syn::{
    Expr, FnArg, GenericArgument, GenericParam, Ident, ImplItem, ImplItemFn, ItemImpl, Meta,
    PatType, PathArguments, Receiver, ReturnType, Type,
};

pub(crate) struct Input<'a> {
    pub(crate) original: &'a ItemImpl,
    pub(crate) self_ty: &'a Type,
    /// The last segment of the self type's path (`ReadTool`), for the default name.
    pub(crate) type_ident: Option<&'a Ident>,
    /// The values of the impl block's `#[doc = ...]` attributes, in order.
    pub(crate) docs: Vec<&'a Expr>,
    pub(crate) execute: Option<Execute<'a>>,
    /// The projections present, in source order.
    pub(crate) projections: Vec<Projection<'a>>,
    /// Every method, for following calls from projections into helpers.
    pub(crate) methods: Vec<&'a ImplItemFn>,
}

pub(crate) struct Execute<'a> {
    pub(crate) original: &'a ImplItemFn,
    pub(crate) receiver: Option<&'a Receiver>,
    pub(crate) params: Vec<ExecParam<'a>>,
    pub(crate) output: Output<'a>,
}

#[derive(Clone, Copy)]
pub(crate) enum ExecParam<'a> {
    /// The tool's arguments.
    Args(&'a PatType),
    /// `&ToolContext`.
    Context(&'a PatType),
}

pub(crate) enum Output<'a> {
    /// No `-> T`.
    Missing,
    /// `-> T`.
    Value(&'a Type),
    /// `-> Result<T, E>` (any path whose last segment is `Result` with two type arguments).
    Result { ok: &'a Type, err: &'a Type },
    /// `-> Result<T>`: an alias whose error type the macro cannot see.
    ResultAlias(&'a Type),
}

/// The projections: pure functions of the arguments and the value or the
/// persisted result.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Render,
    PresentationMeta,
    PresentCall,
    PresentResult,
    /// Whether a call needs a person's approval, from its arguments.
    Approval,
}

/// What a projection parameter must be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Role {
    Args,
    Value,
    Result,
}

impl Kind {
    pub(crate) const ALL: [Kind; 5] = [
        Kind::Render,
        Kind::PresentationMeta,
        Kind::PresentCall,
        Kind::PresentResult,
        Kind::Approval,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Render => "render",
            Kind::PresentationMeta => "presentation_meta",
            Kind::PresentCall => "present_call",
            Kind::PresentResult => "present_result",
            Kind::Approval => "approval",
        }
    }

    /// Its parameters, in order.
    pub(crate) fn roles(self) -> &'static [Role] {
        match self {
            Kind::Render | Kind::PresentationMeta => &[Role::Args, Role::Value],
            Kind::PresentCall | Kind::Approval => &[Role::Args],
            Kind::PresentResult => &[Role::Args, Role::Result],
        }
    }

    fn from_ident(ident: &Ident) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| ident == k.name())
    }
}

impl Role {
    pub(crate) fn param_name(self) -> &'static str {
        match self {
            Role::Args => "args",
            Role::Value => "value",
            Role::Result => "result",
        }
    }
}

pub(crate) struct Projection<'a> {
    pub(crate) kind: Kind,
    pub(crate) original: &'a ImplItemFn,
}

impl<'a> Input<'a> {
    pub(crate) fn from_syn(item: &'a ItemImpl) -> Self {
        let docs = item
            .attrs
            .iter()
            .filter_map(|attr| match &attr.meta {
                Meta::NameValue(nv) if nv.path.is_ident("doc") => Some(&nv.value),
                _ => None,
            })
            .collect();
        let methods: Vec<&ImplItemFn> = item
            .items
            .iter()
            .filter_map(|i| match i {
                ImplItem::Fn(f) => Some(f),
                _ => None,
            })
            .collect();
        let execute = methods
            .iter()
            .find(|f| f.sig.ident == "execute")
            .map(|f| Execute::from_syn(f));
        let projections = methods
            .iter()
            .filter_map(|f| {
                Kind::from_ident(&f.sig.ident).map(|kind| Projection { kind, original: f })
            })
            .collect();
        Input {
            original: item,
            self_ty: &item.self_ty,
            type_ident: last_ident(&item.self_ty),
            docs,
            execute,
            projections,
            methods,
        }
    }

    pub(crate) fn projection(&self, kind: Kind) -> Option<&Projection<'a>> {
        self.projections.iter().find(|p| p.kind == kind)
    }
}

impl<'a> Execute<'a> {
    fn from_syn(f: &'a ImplItemFn) -> Self {
        let mut receiver = None;
        let mut params = Vec::new();
        for input in &f.sig.inputs {
            match input {
                FnArg::Receiver(r) => receiver = Some(r),
                FnArg::Typed(pt) if is_context(&pt.ty) => params.push(ExecParam::Context(pt)),
                FnArg::Typed(pt) => params.push(ExecParam::Args(pt)),
            }
        }
        let output = match &f.sig.output {
            ReturnType::Default => Output::Missing,
            ReturnType::Type(_, ty) => classify_output(ty),
        };
        Execute {
            original: f,
            receiver,
            params,
            output,
        }
    }
}

fn classify_output(ty: &Type) -> Output<'_> {
    let Type::Path(path) = peel(ty) else {
        return Output::Value(ty);
    };
    let Some(last) = path.path.segments.last() else {
        return Output::Value(ty);
    };
    if last.ident != "Result" || path.qself.is_some() {
        return Output::Value(ty);
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return Output::Value(ty);
    };
    let types: Vec<&Type> = args
        .args
        .iter()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match types[..] {
        [ok, err] => Output::Result { ok, err },
        [_] => Output::ResultAlias(ty),
        _ => Output::Value(ty),
    }
}

/// The type without invisible groups and parentheses.
pub(crate) fn peel(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Group(g) => ty = &g.elem,
            Type::Paren(p) => ty = &p.elem,
            _ => return ty,
        }
    }
}

/// The last path segment's ident of a path type.
pub(crate) fn last_ident(ty: &Type) -> Option<&Ident> {
    match peel(ty) {
        Type::Path(p) => p.path.segments.last().map(|s| &s.ident),
        _ => None,
    }
}

/// `&ToolContext`, `&ToolContext<'_>`, `&toolprism::ToolContext`, ...: a
/// shared reference to a type whose last path segment is `ToolContext`.
pub(crate) fn is_context(ty: &Type) -> bool {
    match peel(ty) {
        Type::Reference(r) => r.mutability.is_none() && names_context(&r.elem),
        _ => false,
    }
}

/// Whether the type is `ToolContext` itself (by any path), however referenced.
pub(crate) fn names_context(ty: &Type) -> bool {
    match peel(ty) {
        Type::Reference(r) => names_context(&r.elem),
        ty => last_ident(ty).is_some_and(|i| i == "ToolContext"),
    }
}

/// The first type or const parameter of a function (lifetimes are fine).
pub(crate) fn type_or_const_param(f: &ImplItemFn) -> Option<&GenericParam> {
    f.sig
        .generics
        .params
        .iter()
        .find(|p| !matches!(p, GenericParam::Lifetime(_)))
}
