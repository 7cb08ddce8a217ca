//! Parse → validate → generate. Generation cannot fail: everything it
//! needs was checked by [`crate::valid`].

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::{ItemImpl, Type};

use crate::ast::{ExecParam, Input, Kind, Role};
use crate::attr::{self, Attrs, Spill};
use crate::ctxt::Ctxt;
use crate::purity::Checked;
use crate::valid::{self, Tool};
use crate::{doc, fallback};

/// The whole attribute: `#[tool(args)] input`.
pub(crate) fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let attrs = attr::parse(&cx, args);
    let item = match syn::parse2::<ItemImpl>(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            cx.error_at(
                Span::call_site(),
                "#[tool] goes on an impl block: `#[tool] impl ReadTool { async fn execute(..) .. fn render(..) .. }`",
            );
            let errors = cx.check().expect_err("an error was just recorded");
            return fallback::expand(errors, &attrs, None, input);
        }
    };
    let model = Input::from_syn(&item);
    let tool = valid::validate(&cx, &attrs, &model);
    match (cx.check(), tool) {
        (Ok(()), Some(tool)) => {
            let generated = generate(&attrs, &tool);
            quote!(#input #generated)
        }
        (Err(errors), _) => fallback::expand(errors, &attrs, Some(&model), input),
        (Ok(()), None) => unreachable!("validation failed without an error"),
    }
}

/// The path of the runtime crate: `crate = ...` or `::toolprism`.
pub(crate) fn krate(attrs: &Attrs) -> TokenStream {
    match &attrs.krate {
        Some(path) => path.to_token_stream(),
        None => quote!(::toolprism),
    }
}

fn generate(attrs: &Attrs, tool: &Tool<'_, '_>) -> TokenStream {
    let krate = krate(attrs);
    let private = quote!(#krate::__private);
    let item = tool.input.original;
    let self_ty = tool.input.self_ty;
    let generic = !item.generics.params.is_empty();
    let (impl_generics, _, where_clause) = item.generics.split_for_impl();

    let args_ty = tool.args_ty.to_token_stream();
    let value_ty = tool.value_ty.to_token_stream();
    let meta_ty = match &tool.meta {
        Some(meta) => meta.ty.to_token_stream(),
        None => quote!(#krate::NoMeta),
    };

    let info = info(attrs, tool, &krate, &private);
    let execute = execute(tool, &krate, &private);
    let projections = tool
        .projections
        .iter()
        .map(|p| projection(tool, p, &krate, &private));

    let builtin = attrs.builtin.map(|span| {
        let register = quote_spanned!(span=> #private::register_builtin::<#self_ty>);
        quote! {
            #private::inventory::submit! {
                #private::Builtin {
                    name: <#self_ty as #krate::Tool>::INFO.name,
                    register: #register,
                }
            }
        }
    });

    let items = quote! {
        #info
        #execute
        #(#projections)*
    };
    let plain = quote! {
        #[automatically_derived]
        impl #impl_generics #krate::Tool for #self_ty #where_clause {
            type Args = #args_ty;
            type Value = #value_ty;
            type Meta = #meta_ty;
            #items
        }
    };
    // K6. A concrete tool names its types through `Checked<T, { check }>`:
    // the check reports a missing bound once, at the user's type, and turns
    // the type into an error so that rustc does not report it again against
    // `Tool`'s bounds or where the tool is registered (see
    // `runtime/src/__private/check.rs`). The tool type is checked the same
    // way in the where clause. A generic tool's bounds are its own where
    // clause: a constant cannot name its type parameters. Rustdoc is shown
    // the plain impl.
    let tool_impl = if generic {
        plain
    } else {
        let checked = |ty: &dyn ToTokens, check: &str| {
            let check = syn::Ident::new(check, Span::call_site());
            quote!(#private::check::Checked<#ty, { #private::check::#check::<#ty>() }>)
        };
        let checked_args = checked(&args_ty, "args");
        let checked_value = checked(&value_ty, "value");
        let checked_meta = match &tool.meta {
            Some(meta) => checked(meta.ty, "meta"),
            None => meta_ty,
        };
        let checked_tool = checked(self_ty, "tool");
        let predicates = where_clause.map(|w| {
            let p = &w.predicates;
            quote!(#p,)
        });
        quote! {
            #[cfg(not(doc))]
            #[automatically_derived]
            impl #krate::Tool for #self_ty
            where
                #predicates
                #checked_tool: #private::core::marker::Send
                    + #private::core::marker::Sync
                    + 'static,
            {
                type Args = #checked_args;
                type Value = #checked_value;
                type Meta = #checked_meta;
                #items
            }

            #[cfg(doc)]
            #plain
        }
    };

    quote! {
        const _: () = {
            #tool_impl
            #builtin
        };
    }
}

fn info(
    attrs: &Attrs,
    tool: &Tool<'_, '_>,
    krate: &TokenStream,
    private: &TokenStream,
) -> TokenStream {
    let name = &tool.name;
    let doc = doc::doc_string(&tool.input.docs, private);
    // `ToolInfo` is `#[non_exhaustive]`: the expansion, in the user's
    // crate, builds it with the public `const fn`s, every fact set.
    let (description, title) = match &attrs.title {
        Some(title) => (
            quote!(#private::doc_text(__DOC)),
            quote!(.with_title(#title)),
        ),
        None => (quote!(#private::doc_description(__DOC)), quote!()),
    };
    let doc_title = match &attrs.title {
        Some(_) => quote!(__INFO),
        None => quote! {
            match #private::doc_title(__DOC) {
                #private::core::option::Option::Some(title) => __INFO.with_title(title),
                #private::core::option::Option::None => __INFO,
            }
        },
    };
    let kind = syn::Ident::new(attrs.kind.unwrap_or("Other"), Span::call_site());
    let (read_only, destructive, idempotent, open_world, blocking) = (
        attrs.read_only,
        attrs.destructive,
        attrs.idempotent,
        attrs.open_world,
        attrs.blocking,
    );
    let timeout = attrs
        .timeout_ms
        .map(|ms| quote!(.with_timeout(#private::core::time::Duration::from_millis(#ms))));
    let icon = attrs.icon.as_ref().map(|icon| quote!(.with_icon(#icon)));
    let approval = attrs
        .approval
        .as_ref()
        .map(|question| quote!(.with_approval(#question)));
    let task = syn::Ident::new(attrs.task.unwrap_or("Forbidden"), Span::call_site());
    let spill = match attrs.spill {
        Spill::Default => quote!(#krate::SpillBudget::Default),
        Spill::Never => quote!(#krate::SpillBudget::Never),
        Spill::Bytes(bytes) => {
            let bytes = proc_macro2::Literal::u64_unsuffixed(bytes);
            quote!(#krate::SpillBudget::Bytes(#bytes))
        }
    };
    quote! {
        const INFO: #krate::ToolInfo = {
            const __DOC: &'static str = #doc;
            const __INFO: #krate::ToolInfo = #krate::ToolInfo::new(#name, #description)
                #title
                #icon
                .with_kind(#krate::ToolKind::#kind)
                .with_annotations(
                    #krate::ToolAnnotations::NONE
                        .with_read_only(#read_only)
                        .with_destructive(#destructive)
                        .with_idempotent(#idempotent)
                        .with_open_world(#open_world),
                )
                #timeout
                .with_spill(#spill)
                .with_blocking(#blocking)
                #approval
                .with_task(#krate::TaskSupport::#task);
            #doc_title
        };
    }
}

fn execute(tool: &Tool<'_, '_>, krate: &TokenStream, private: &TokenStream) -> TokenStream {
    let self_ty = tool.input.self_ty;
    let execute = tool.execute;
    let sig = &execute.original.sig;
    let receiver = execute.receiver.map(|_| quote!(self,));
    let params = execute.params.iter().map(|p| match p {
        ExecParam::Args(_) => quote!(__args),
        ExecParam::Context(_) => quote!(__cx),
    });
    let call = quote!(<#self_ty>::execute(#receiver #(#params),*));
    let call = match sig.asyncness {
        Some(_) => quote!(#call.await),
        None => call,
    };
    let result = match tool.err_ty {
        Some(err_ty) => quote! {
            match __value {
                #private::core::result::Result::Ok(__value) => #private::core::result::Result::Ok(__value),
                #private::core::result::Result::Err(__error) => #private::core::result::Result::Err(
                    #private::into_tool_error::<#err_ty>(__error)
                ),
            }
        },
        None => quote!(#private::core::result::Result::Ok(__value)),
    };
    // Spanned at the user's `execute`, so a future that is not `Send` is
    // reported there.
    let span = sig.ident.span();
    let output = quote_spanned! {span=>
        impl #private::core::future::Future<
            Output = #private::core::result::Result<Self::Value, #krate::ToolError>,
        > + #private::core::marker::Send
    };
    if !tool.blocking {
        return quote! {
            fn execute(
                &self,
                __args: Self::Args,
                __cx: &#krate::ToolContext<'_>,
            ) -> #output {
                async move {
                    let __value = #call;
                    #result
                }
            }
        };
    }
    // `blocking`: the registry runs `execute_blocking` on tokio's blocking
    // pool; `execute` runs it inline, for whoever calls it directly.
    quote! {
        fn execute_blocking(
            &self,
            __args: Self::Args,
            __cx: &#krate::ToolContext<'_>,
        ) -> #private::core::result::Result<Self::Value, #krate::ToolError> {
            let __value = #call;
            #result
        }

        fn execute(
            &self,
            __args: Self::Args,
            __cx: &#krate::ToolContext<'_>,
        ) -> #output {
            async move { <Self as #krate::Tool>::execute_blocking(self, __args, __cx) }
        }
    }
}

fn projection(
    tool: &Tool<'_, '_>,
    checked: &Checked<'_>,
    krate: &TokenStream,
    private: &TokenStream,
) -> TokenStream {
    let self_ty = tool.input.self_ty;
    let ret = checked.ret;
    let casts = checked
        .kind
        .roles()
        .iter()
        .zip(&checked.params)
        .map(|(role, referent)| {
            let referent = if mentions_named_lifetime(referent) {
                quote!(_)
            } else {
                referent.to_token_stream()
            };
            match role {
                Role::Args => quote!(#private::args_param::<Self::Args, #referent>(__args)),
                Role::Value => quote!(#private::value_param::<Self::Value, #referent>(__value)),
                Role::Result => quote!(
                    #private::result_param::<#krate::ToolResult<Self::Meta>, #referent>(__result)
                ),
            }
        });
    let name = syn::Ident::new(checked.kind.name(), Span::call_site());
    let call = quote!(<#self_ty>::#name(#(#casts),*));
    match checked.kind {
        Kind::Render => quote! {
            fn render(
                __args: &Self::Args,
                __value: &Self::Value,
            ) -> #private::std::vec::Vec<#krate::ContentBlock> {
                #private::render_output::<#ret>(#call)
            }
        },
        Kind::PresentationMeta => {
            let optional = tool.meta.as_ref().is_some_and(|m| m.optional);
            let body = if optional {
                call
            } else {
                quote!(#private::core::option::Option::Some(#call))
            };
            quote! {
                fn presentation_meta(
                    __args: &Self::Args,
                    __value: &Self::Value,
                ) -> #private::core::option::Option<Self::Meta> {
                    #body
                }
            }
        }
        Kind::PresentCall => quote! {
            fn present_call(
                __args: &Self::Args,
            ) -> #private::core::option::Option<#krate::CallCard> {
                #private::call_card::<#ret>(#call)
            }
        },
        Kind::Approval => quote! {
            fn approval(
                __args: &Self::Args,
            ) -> #private::core::option::Option<#private::std::string::String> {
                #private::approval_output::<#ret>(#call)
            }
        },
        Kind::PresentResult => quote! {
            fn present_result(
                __args: &Self::Args,
                __result: &#krate::ToolResult<Self::Meta>,
            ) -> #private::core::option::Option<#krate::ResultCard> {
                #private::result_card::<#ret>(#call)
            }
        },
    }
}

/// Whether a type names a lifetime other than `'static` and `'_`, which
/// would not exist outside the user's function.
fn mentions_named_lifetime(ty: &Type) -> bool {
    fn scan(tokens: TokenStream) -> bool {
        let mut after_quote = false;
        for tt in tokens {
            match tt {
                TokenTree::Punct(p) if p.as_char() == '\'' => after_quote = true,
                TokenTree::Ident(i) if after_quote => {
                    if i != "static" {
                        return true;
                    }
                    after_quote = false;
                }
                TokenTree::Group(g) => {
                    if scan(g.stream()) {
                        return true;
                    }
                    after_quote = false;
                }
                _ => after_quote = false,
            }
        }
        false
    }
    scan(ty.to_token_stream())
}

#[cfg(test)]
mod tests {
    use proc_macro2::{TokenStream, TokenTree};
    use quote::quote;

    fn input() -> TokenStream {
        quote! {
            /// Read a file.
            impl ReadTool {
                async fn execute(&self, args: ReadArgs, cx: &ToolContext<'_>) -> ::core::result::Result<ReadValue, ToolError> {
                    todo!()
                }
                fn render(args: &ReadArgs, value: &ReadValue) -> ::std::vec::Vec<ContentBlock> {
                    ::std::vec::Vec::new()
                }
                fn presentation_meta(args: &ReadArgs, value: &ReadValue) -> ::core::option::Option<ReadMeta> {
                    ::core::option::Option::None
                }
                fn present_call(args: &ReadArgs) -> CallCard {
                    todo!()
                }
                fn present_result(args: &ReadArgs, result: &ToolResult<ReadMeta>) -> ::core::option::Option<ResultCard> {
                    ::core::option::Option::None
                }
            }
        }
    }

    /// A blocking tool: a synchronous `execute`.
    fn blocking_input() -> TokenStream {
        quote! {
            /// Count lines.
            impl CountTool {
                fn execute(args: CountArgs, cx: &ToolContext<'_>) -> ::core::result::Result<Count, ::std::io::Error> {
                    todo!()
                }
                fn render(args: &CountArgs, value: &Count) -> ::std::vec::Vec<ContentBlock> {
                    ::std::vec::Vec::new()
                }
            }
        }
    }

    /// The tokens the attribute adds after the user's impl block.
    fn generated(args: TokenStream) -> Vec<TokenTree> {
        generated_for(args, input())
    }

    fn generated_for(args: TokenStream, input: TokenStream) -> Vec<TokenTree> {
        let skip = input.clone().into_iter().count();
        super::tool(args, input).into_iter().skip(skip).collect()
    }

    /// Identifiers of the prelude that appear without a `::` path before them.
    fn bare_prelude_names(tokens: &[TokenTree], found: &mut Vec<String>) {
        const PRELUDE: &[&str] = &[
            "Some", "None", "Ok", "Err", "Option", "Result", "Vec", "String", "Box", "Send",
            "Sync", "Clone", "Default", "Future", "Into", "From", "ToString",
        ];
        for (i, tt) in tokens.iter().enumerate() {
            match tt {
                TokenTree::Group(g) => {
                    let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                    bare_prelude_names(&inner, found);
                }
                TokenTree::Ident(ident) if PRELUDE.contains(&ident.to_string().as_str()) => {
                    let qualified = i > 0
                        && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == ':');
                    if !qualified {
                        found.push(ident.to_string());
                    }
                }
                _ => {}
            }
        }
    }

    #[test]
    fn generated_code_names_everything_by_absolute_path() {
        let tokens = generated(quote!(builtin, kind = read, timeout_ms = 5, spill = never));
        let mut bare = Vec::new();
        bare_prelude_names(&tokens, &mut bare);
        assert!(bare.is_empty(), "names relying on the prelude: {bare:?}");
    }

    #[test]
    fn blocking_generates_execute_blocking_by_absolute_path() {
        let tokens = generated_for(quote!(blocking), blocking_input());
        let mut bare = Vec::new();
        bare_prelude_names(&tokens, &mut bare);
        assert!(bare.is_empty(), "names relying on the prelude: {bare:?}");
        let text: TokenStream = tokens.into_iter().collect();
        let text = text.to_string();
        assert!(text.contains("fn execute_blocking"), "{text}");
        assert!(text.contains("with_blocking (true)"), "{text}");
        assert!(
            text.contains(
                "< Self as :: toolprism :: Tool > :: execute_blocking (self , __args , __cx)"
            ),
            "execute runs execute_blocking inline: {text}"
        );
    }

    #[test]
    fn blocking_needs_a_synchronous_execute() {
        let out = super::tool(quote!(blocking), input()).to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("remove `async`"), "{out}");
    }

    #[test]
    fn the_crate_path_reaches_every_item() {
        let tokens: TokenStream = generated(quote!(crate = ::tp, builtin))
            .into_iter()
            .collect();
        let text = tokens.to_string();
        assert!(!text.contains(":: toolprism"), "{text}");
        assert!(text.contains(":: tp :: __private"), "{text}");
        assert!(text.contains("impl :: tp :: Tool for ReadTool"), "{text}");
        assert!(text.contains("# [automatically_derived]"), "{text}");
        assert!(text.starts_with("const _ : () ="), "{text}");
    }

    #[test]
    fn errors_come_with_the_impl_and_a_stub() {
        let input = input();
        let out = super::tool(quote!(read_olny), input.clone()).to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("did you mean `read_only`?"), "{out}");
        assert!(
            out.contains(&input.to_string()),
            "the user's impl is emitted unchanged"
        );
        assert!(out.contains("__private :: Unchecked"), "{out}");
    }
}
