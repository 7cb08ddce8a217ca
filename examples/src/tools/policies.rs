//! Two post-execute policies for `sql_query`, side by side: one replaces
//! the **value**, the other only the **content**; and the pre-execute
//! policy of `serve --approvals`, [`ask_before_changes`], which asks the
//! user before `edit`, `write` and `bash` run.
//!
//! [`redact_phone_column`] replaces the value without its `phone` column, so
//! content and meta, projected again from the new value, lose it too, and
//! so does a program reading the value. [`mask_phone_numbers_in_content`]
//! replaces only the content: the model no longer reads the numbers, but the
//! value a program gets still holds them. That is presentation, not
//! confidentiality. The redaction matches column names: `SELECT phone AS
//! tel` gets past it; a real deployment would hide the column in the
//! database itself (a view) as well.

use toolprism::{ContentBlock, PostDecision, PostExecute, PreDecision, PreExecute};
use toolprism_tools::sql_query::SqlQueryValue;

/// Pre-execute policy of the showcase's `--approvals` (W9 in
/// `docs/contract.md`): `edit` and `write` ask the user before they change
/// a file, `bash` before it runs a command, with a question that names the
/// path or the command (cut at 200 characters). Over MCP the question is
/// an elicitation; a client that cannot be asked gets `NOT_APPROVED`, and
/// the tool does not run. Every other tool runs unasked.
///
/// ```
/// use toolprism::{PreDecision, PreExecute};
/// use toolprism_examples::tools::ask_before_changes;
/// let arguments = serde_json::json!({"path": "src/main.rs", "oldText": "a", "newText": "b"});
/// let call = PreExecute::new("edit", "c1", &arguments);
/// assert_eq!(ask_before_changes(&call), PreDecision::ask("Let the agent edit src/main.rs?"));
/// let call = PreExecute::new("read", "c1", &arguments);
/// assert_eq!(ask_before_changes(&call), PreDecision::Allow);
/// ```
pub fn ask_before_changes(call: &PreExecute<'_>) -> PreDecision {
    let field = |name: &str| {
        let text = call.arguments[name].as_str().unwrap_or_default();
        match text.char_indices().nth(200) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text.to_owned(),
        }
    };
    match call.tool {
        "edit" => PreDecision::ask(format!("Let the agent edit {}?", field("path"))),
        "write" => PreDecision::ask(format!("Let the agent write {}?", field("path"))),
        "bash" => PreDecision::ask(format!("Let the agent run `{}`?", field("command"))),
        _ => PreDecision::Allow,
    }
}

/// Post-execute policy: removes every `phone` column from `sql_query`
/// values by **replacing the value**. The runtime validates the new value
/// and projects content and meta from it again, so the numbers leave the
/// value a program receives, the content the model reads and the meta the
/// log keeps. Other tools, failures and results without such a column are
/// accepted unchanged.
pub fn redact_phone_column(result: &PostExecute<'_>) -> PostDecision {
    if result.tool != "sql_query" {
        return PostDecision::Accept;
    }
    let Some(mut value) = result.value_as::<SqlQueryValue>() else {
        return PostDecision::Accept;
    };
    let phone: Vec<usize> = value
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.eq_ignore_ascii_case("phone"))
        .map(|(i, _)| i)
        .collect();
    if phone.is_empty() {
        return PostDecision::Accept;
    }
    for &i in phone.iter().rev() {
        value.columns.remove(i);
        for row in &mut value.rows {
            if i < row.len() {
                row.remove(i);
            }
        }
    }
    PostDecision::replace_value(&value).unwrap_or_else(|e| {
        PostDecision::block(format!("the redacted result could not be built: {e}"))
    })
}

/// Post-execute policy, for contrast: masks phone numbers (`+` then at least
/// ten digits and dashes) in the **content** of `sql_query` results only.
/// The model no longer reads them; the value, which a program calling the
/// tool receives, still holds them.
pub fn mask_phone_numbers_in_content(result: &PostExecute<'_>) -> PostDecision {
    if result.tool != "sql_query" || result.result.is_error {
        return PostDecision::Accept;
    }
    let content = result
        .result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => ContentBlock::text(mask_phones(text)),
            other => other.clone(),
        })
        .collect();
    PostDecision::ReplaceContent(content)
}

fn mask_phones(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('+') {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let run = tail
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(tail.len());
        let digits = tail[..run].chars().filter(char::is_ascii_digit).count();
        if digits >= 10 {
            out.push_str("[phone]");
            rest = &tail[run..];
        } else {
            out.push('+');
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::{CUSTOMERS, build_customers, phone_of};
    use toolprism::{Registry, ToolCall, ToolOutcome};
    use toolprism_tools::SqlQueryTool;

    fn db() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.db");
        build_customers(&path, CUSTOMERS).unwrap();
        (dir, path)
    }

    async fn call(registry: &Registry, sql: &str) -> ToolOutcome {
        registry
            .call(ToolCall::new(
                "c",
                "sql_query",
                serde_json::json!({ "sql": sql }).to_string(),
            ))
            .await
    }

    /// Content replacement is presentation: the value a program receives
    /// keeps the phone numbers. Value replacement removes them from value,
    /// content and meta alike.
    #[tokio::test]
    async fn redaction_by_content_leaves_the_value_redaction_by_value_does_not() {
        let (_d, path) = db();
        let sql = "SELECT id, name, phone FROM customers ORDER BY id LIMIT 3";
        let phone = phone_of(2);

        let content_only = Registry::builder()
            .tool(SqlQueryTool::new(&path))
            .post_execute(mask_phone_numbers_in_content)
            .build()
            .unwrap();
        let out = call(&content_only, sql).await;
        let text = out.content()[0].as_text().unwrap();
        assert!(!text.contains(&phone), "{text}");
        assert!(text.contains("[phone]"));
        assert!(out.value().unwrap().to_string().contains(&phone));
        assert_eq!(out.value().unwrap()["rows"][1][2], phone);

        let by_value = Registry::builder()
            .tool(SqlQueryTool::new(&path))
            .post_execute(redact_phone_column)
            .build()
            .unwrap();
        let out = call(&by_value, sql).await;
        assert!(!out.is_error(), "{out:?}");
        let value = out.value().unwrap();
        assert_eq!(value["columns"], serde_json::json!(["id", "name"]));
        assert!(!value.to_string().contains(&phone));
        assert!(!out.content()[0].as_text().unwrap().contains(&phone));
        assert!(!out.content()[0].as_text().unwrap().contains("phone"));
        assert_eq!(
            out.meta().unwrap()["columns"],
            serde_json::json!(["id", "name"])
        );
        let typed = out.value_as::<SqlQueryValue>().unwrap();
        assert_eq!(
            typed.rows[1],
            vec![serde_json::json!(2), serde_json::json!("Alan Lovelace")]
        );

        // A program calling the tool gets the redacted value too.
        let nested = by_value
            .call_nested("sql_query", serde_json::json!({ "sql": sql }))
            .await
            .unwrap();
        assert!(!nested.to_string().contains(&phone));
    }

    #[test]
    fn masks_phone_numbers() {
        assert_eq!(
            mask_phones("call +1-555-002-5838 or +3"),
            "call [phone] or +3"
        );
    }
}
