//! What `render`, the presenters and `execute`'s error type must be: each
//! output passes through a function whose bound names what to return.

use crate::{CallCard, ContentBlock, ResultCard, ToolError};

/// What `render` returns.
#[diagnostic::on_unimplemented(
    message = "`render` must return `Vec<ContentBlock>`, not `{Self}`",
    label = "the content the model reads",
    note = "wrap text as `vec![ContentBlock::text(..)]`"
)]
pub trait RenderOutput {
    /// The content.
    fn into_content(self) -> Vec<ContentBlock>;
}

impl RenderOutput for Vec<ContentBlock> {
    fn into_content(self) -> Vec<ContentBlock> {
        self
    }
}

/// Checks and passes on `render`'s output.
pub fn render_output<R: RenderOutput>(output: R) -> Vec<ContentBlock> {
    output.into_content()
}

/// What a presenter returns: `Card` itself or `Option<Card>` (`None` draws
/// the generic card).
macro_rules! card_output {
    (
        $(#[doc = $doc:literal])*
        $name:ident, $card:ty,
        message = $message:literal,
        label = $label:literal $(,)?
    ) => {
        $(#[doc = $doc])*
        #[diagnostic::on_unimplemented(
            message = $message,
            label = $label,
            note = "`None` draws the generic card"
        )]
        pub trait $name {
            /// The card, if any.
            fn into_card(self) -> Option<$card>;
        }

        impl $name for $card {
            fn into_card(self) -> Option<$card> {
                Some(self)
            }
        }

        impl $name for Option<$card> {
            fn into_card(self) -> Option<$card> {
                self
            }
        }
    };
}

card_output! {
    /// What `present_call` returns.
    CallCardOutput, CallCard,
    message = "`present_call` must return `CallCard` or `Option<CallCard>`, not `{Self}`",
    label = "the call card",
}

card_output! {
    /// What `present_result` returns.
    ResultCardOutput, ResultCard,
    message = "`present_result` must return `ResultCard` or `Option<ResultCard>`, not `{Self}`",
    label = "the result card",
}

/// Checks and passes on `present_call`'s output.
pub fn call_card<R: CallCardOutput>(output: R) -> Option<CallCard> {
    output.into_card()
}

/// Checks and passes on `present_result`'s output.
pub fn result_card<R: ResultCardOutput>(output: R) -> Option<ResultCard> {
    output.into_card()
}

/// What `approval` returns: the question to ask, or none.
#[diagnostic::on_unimplemented(
    message = "`approval` must return `Option<String>` (the question to ask a person, or `None`), not `{Self}`",
    label = "whether this call needs approval",
    note = "return `Some(format!(\"Run {{}}?\", args.command))` to ask, `None` to run without asking"
)]
pub trait ApprovalOutput {
    /// The question, if any.
    fn into_question(self) -> Option<String>;
}

impl ApprovalOutput for Option<String> {
    fn into_question(self) -> Option<String> {
        self
    }
}

/// Checks and passes on `approval`'s output.
pub fn approval_output<R: ApprovalOutput>(output: R) -> Option<String> {
    output.into_question()
}

/// The error type of `execute`'s `Result<T, E>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error type: it does not implement `Display`",
    label = "the error type of `execute`",
    note = "`execute` may return `Result<T, E>` for any `E: Display` (its text becomes the error message), or `Result<T, ToolError>` to set a code"
)]
pub trait IntoToolError {
    /// The error as a `ToolError`.
    fn into_tool_error(self) -> ToolError;
}

#[diagnostic::do_not_recommend]
impl<E: ::core::fmt::Display> IntoToolError for E {
    fn into_tool_error(self) -> ToolError {
        ToolError::new(self.to_string())
    }
}

impl IntoToolError for ToolError {
    fn into_tool_error(self) -> ToolError {
        self
    }
}

/// Converts `execute`'s error, checking its type.
pub fn into_tool_error<E: IntoToolError>(error: E) -> ToolError {
    error.into_tool_error()
}
