//! The showcase's own tools and policies, next to the built-in tools of
//! `toolprism-tools`: a third party's tool with no presenters, a tool whose
//! `render` panics, and two post-execute policies for `sql_query`.

pub mod policies;
pub mod render_panic;
pub mod third_party;

pub use policies::{ask_before_changes, mask_phone_numbers_in_content, redact_phone_column};
pub use render_panic::FlakyRenderTool;
pub use third_party::AcmeTicketTool;
