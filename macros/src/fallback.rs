//! What is emitted when the checks fail: the errors, the user's impl block
//! unchanged (so `ReadTool::render(..)` elsewhere still resolves), and a stub
//! `Tool` impl (so `Registry::builder().tool(ReadTool)` elsewhere does not
//! add an error of its own). Only the real errors show.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Input;
use crate::attr::Attrs;

pub(crate) fn expand(
    errors: syn::Error,
    attrs: &Attrs,
    input: Option<&Input<'_>>,
    original: TokenStream,
) -> TokenStream {
    let errors = errors.into_compile_error();
    let stub = input.and_then(|input| stub(attrs, input));
    quote! {
        // The checks failed, so nothing calls these methods: do not add
        // "never used" warnings to the real errors.
        #[allow(dead_code)]
        #original
        #errors
        #stub
    }
}

fn stub(attrs: &Attrs, input: &Input<'_>) -> Option<TokenStream> {
    let item = input.original;
    if item.trait_.is_some() || !item.generics.params.is_empty() {
        return None;
    }
    let krate = crate::expand::krate(attrs);
    let private = quote!(#krate::__private);
    let self_ty = input.self_ty;
    let name = match &attrs.name {
        Some((name, _)) if crate::names::tool_name_problem(name).is_none() => name.clone(),
        _ => "invalid".to_owned(),
    };
    Some(quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::Tool for #self_ty
            where
                #private::check::Checked<#self_ty, { #private::check::tool::<#self_ty>() }>:
                    #private::core::marker::Send + #private::core::marker::Sync + 'static,
            {
                type Args = #private::Unchecked;
                type Value = #private::Unchecked;
                type Meta = #krate::NoMeta;
                const INFO: #krate::ToolInfo = #krate::ToolInfo::new(#name, "");

                fn execute(
                    &self,
                    __args: Self::Args,
                    _: &#krate::ToolContext<'_>,
                ) -> impl #private::core::future::Future<
                    Output = #private::core::result::Result<Self::Value, #krate::ToolError>,
                > + #private::core::marker::Send {
                    async move { match __args {} }
                }

                fn render(
                    __args: &Self::Args,
                    _: &Self::Value,
                ) -> #private::std::vec::Vec<#krate::ContentBlock> {
                    match *__args {}
                }
            }
        };
    })
}
