use toolprism::{ContentBlock, PostDecision, PostExecute, Registry};

// A post-execute decision is exactly one of `Accept`, `ReplaceContent`,
// `ReplaceValue` and `Block` (C10 in `docs/contract.md`): none carries new content and a
// new value together, so content and meta can always be projected again
// from the one value.
fn redact(_: &PostExecute<'_>) -> PostDecision {
    PostDecision::ReplaceValue {
        value: serde_json::json!({ "text": "[redacted]" }),
        content: vec![ContentBlock::text("[redacted]")],
    }
}

fn main() {
    let _ = Registry::builder().post_execute(redact);
}
