use toolprism::{ContentBlock, PostDecision, PostExecute, Registry};

// Replacing content keeps value and meta; replacing the value projects
// content and meta again. There is no decision doing both (C10 in `docs/contract.md`).
fn redact(_: &PostExecute<'_>) -> PostDecision {
    PostDecision::ReplaceContent(
        vec![ContentBlock::text("[redacted]")],
        serde_json::json!({ "text": "[redacted]" }),
    )
}

fn main() {
    let _ = Registry::builder().post_execute(redact);
}
