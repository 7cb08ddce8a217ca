//! `sql_query`: one read-only SQL statement against a SQLite database.
//!
//! - **Read-only, twice over**: the database is opened read-only, and a
//!   statement that SQLite says would write ([`rusqlite::Statement::readonly`])
//!   is refused before it runs. `ATTACH` is disabled (its limit is 0), so a
//!   query cannot open other files. One statement per call.
//! - **Value** [`SqlQueryValue`]: `{columns, rows, total, truncated}`: the
//!   first [`MAX_ROWS`] rows as JSON (integers, reals, text, `null`; blobs as
//!   a size note), and the number of rows the statement produced (counted up
//!   to [`COUNT_CAP`], then `totalCapped`).
//! - **Render**: a text table, cells cut to [`CELL_CHARS`] chars, and a
//!   footer that says how many rows are not shown.
//! - **Meta** [`SqlQueryMeta`]: `{columns, shown, total, truncated}`: counts only,
//!   never cells, so it stays small and leaks nothing a policy removed from
//!   the value.
//!
//! ## The card, and why
//!
//! The result card is **`generic`**: its content is the table the model read,
//! its title states the counts (`50 of 1,200 rows · truncated`). The closed
//! card vocabulary has no table card. `search` was the other candidate, as it
//! carries `total` and `truncated`, but its shapes are files with matching
//! lines, or paths: a UI would draw rows as file hits and offer to open them,
//! which would be a lie of another kind. The generic card draws what the
//! model saw, and the title, computed from meta's `shown` and `total` (never
//! from a stored flag that could disagree), keeps truncation visible.
//!
//! ## Redaction
//!
//! [`redact_phone_column`] is a post-execute policy that replaces the
//! **value** without its `phone` column, so content and meta, projected again
//! from the new value, lose it too, and so does a program reading the value.
//! [`mask_phone_numbers_in_content`] replaces only the **content**: the model
//! no longer reads the numbers, but the value a program gets still holds
//! them. That is presentation, not confidentiality. The redaction matches
//! column names: `SELECT phone AS tel` gets past it; a real deployment would
//! hide the column in the database itself (a view) as well.

use std::path::{Path, PathBuf};

use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolprism::card::{GenericResult, ResultCard};
use toolprism::{
    CallCard, ContentBlock, PostDecision, PostExecute, ToolContext, ToolError, ToolKind,
    ToolResult, tool,
};

use super::{blocking, generic_result_card};
use crate::text::{ellipsize, plural};

/// Rows kept in the value.
pub const MAX_ROWS: usize = 50;
/// Rows counted before the count stops.
pub const COUNT_CAP: u64 = 1_000_000;
/// Chars shown per table cell.
pub const CELL_CHARS: usize = 32;

/// Arguments of `sql_query`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SqlQueryArgs {
    /// One read-only SQL statement (SELECT, WITH … SELECT, EXPLAIN, read-only PRAGMA).
    pub sql: String,
}

/// The value of `sql_query`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SqlQueryValue {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// The first rows, each a list of cells in column order.
    pub rows: Vec<Vec<Value>>,
    /// Rows the statement produced (a lower bound when `totalCapped`).
    pub total: u64,
    /// Whether fewer rows are kept than were produced.
    pub truncated: bool,
    /// Counting stopped at the cap: `total` is a lower bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub total_capped: bool,
}

/// The meta of `sql_query`: counts, never cells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SqlQueryMeta {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows shown.
    pub shown: u64,
    /// Rows produced.
    pub total: u64,
    /// Whether fewer rows are shown than were produced.
    pub truncated: bool,
    /// `total` is a lower bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub total_capped: bool,
}

/// Queries one SQLite database, read-only.
#[derive(Debug, Clone)]
pub struct SqlQueryTool {
    database: PathBuf,
}

impl SqlQueryTool {
    /// A `sql_query` over the database file at `database`.
    pub fn new(database: impl Into<PathBuf>) -> Self {
        SqlQueryTool {
            database: database.into(),
        }
    }
}

/// Interrupts the running statement when the call's future is dropped.
struct InterruptOnDrop(rusqlite::InterruptHandle);

impl Drop for InterruptOnDrop {
    fn drop(&mut self) {
        self.0.interrupt();
    }
}

/// Run one read-only SQL statement (SQLite dialect) and get its columns,
/// the first 50 rows and the total row count. Statements that write are
/// refused. Use WHERE, ORDER BY and LIMIT/OFFSET to see other rows.
#[tool(
    name = "sql_query",
    title = "Query the database",
    kind = read,
    read_only,
    idempotent,
    timeout_ms = 20000
)]
impl SqlQueryTool {
    async fn execute(
        &self,
        args: SqlQueryArgs,
        _cx: &ToolContext<'_>,
    ) -> Result<SqlQueryValue, ToolError> {
        let conn = open_read_only(&self.database)?;
        // Dropped with this future: on a timeout or cancellation the
        // statement stops; after the statement finished it is a no-op.
        let _interrupt = InterruptOnDrop(conn.get_interrupt_handle());
        blocking(move || query(&conn, &args.sql)).await
    }

    fn render(_args: &SqlQueryArgs, value: &SqlQueryValue) -> Vec<ContentBlock> {
        let mut text = table(&value.columns, &value.rows);
        text.push_str("\n\n");
        let total = if value.total_capped {
            format!("{}+", value.total)
        } else {
            value.total.to_string()
        };
        text.push_str(&if value.rows.is_empty() {
            "(no rows)".to_owned()
        } else if value.truncated {
            format!(
                "(Showing the first {} of {total} rows. Add a WHERE clause, or ORDER BY with LIMIT/OFFSET, to see others.)",
                value.rows.len()
            )
        } else {
            format!("({})", plural(value.total, "row", "rows"))
        });
        vec![ContentBlock::text(text)]
    }

    fn presentation_meta(_args: &SqlQueryArgs, value: &SqlQueryValue) -> SqlQueryMeta {
        SqlQueryMeta {
            columns: value.columns.clone(),
            shown: value.rows.len() as u64,
            total: value.total,
            truncated: (value.rows.len() as u64) < value.total,
            total_capped: value.total_capped,
        }
    }

    fn present_call(args: &SqlQueryArgs) -> CallCard {
        CallCard::generic(
            format!("SQL {}", ellipsize(args.sql.trim(), 100)),
            Some(ToolKind::Read),
            serde_json::to_value(args).ok(),
        )
    }

    fn present_result(_args: &SqlQueryArgs, result: &ToolResult<SqlQueryMeta>) -> ResultCard {
        let Some(meta) = result.meta.as_ref().filter(|_| !result.is_error) else {
            return generic_result_card("sql_query", result);
        };
        if meta.shown > meta.total {
            return generic_result_card("sql_query", result);
        }
        ResultCard::Generic(GenericResult {
            title: Some(rows_title(meta.shown, meta.total, meta.total_capped)),
            content: Some(result.content.clone()),
        })
    }
}

/// `50 of 1,200 rows · truncated`, `3 rows`, `0 rows`: truncation is
/// derived from the counts, so the title cannot claim a complete result
/// that is not.
pub fn rows_title(shown: u64, total: u64, capped: bool) -> String {
    let total_text = if capped {
        format!("{}+", thousands(total))
    } else {
        thousands(total)
    };
    if shown < total || capped {
        format!("{shown} of {total_text} rows · truncated")
    } else {
        plural(total, "row", "rows")
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn open_read_only(path: &Path) -> Result<Connection, ToolError> {
    if !path.is_file() {
        return Err(
            ToolError::new(format!("the database {} does not exist", path.display()))
                .with_code("NO_DATABASE"),
        );
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| ToolError::new(format!("cannot open the database: {e}")))?;
    conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)
        .map_err(|e| ToolError::new(format!("cannot configure the database: {e}")))?;
    Ok(conn)
}

fn query(conn: &Connection, sql: &str) -> Result<SqlQueryValue, ToolError> {
    if sql.trim().is_empty() {
        return Err(
            ToolError::new("the SQL is empty; send one SELECT statement").with_code("INVALID_SQL"),
        );
    }
    let mut stmt = conn.prepare(sql).map_err(|e| {
        ToolError::new(format!("the SQL does not compile: {e}")).with_code("INVALID_SQL")
    })?;
    if !stmt.readonly() {
        return Err(ToolError::new(
            "only read-only statements are allowed (SELECT, WITH … SELECT, EXPLAIN, read-only PRAGMA); this one would change the database",
        )
        .with_code("NOT_READ_ONLY"));
    }
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut rows = stmt.raw_query();
    let mut kept = Vec::new();
    let mut total = 0u64;
    let mut total_capped = false;
    while let Some(row) = rows
        .next()
        .map_err(|e| ToolError::new(format!("the query failed: {e}")).with_code("QUERY_FAILED"))?
    {
        if total >= COUNT_CAP {
            total_capped = true;
            break;
        }
        total += 1;
        if kept.len() < MAX_ROWS {
            let mut cells = Vec::with_capacity(columns.len());
            for i in 0..columns.len() {
                let cell = row.get_ref(i).map_err(|e| e.to_string())?;
                cells.push(cell_json(cell));
            }
            kept.push(cells);
        }
    }
    Ok(SqlQueryValue {
        truncated: (kept.len() as u64) < total || total_capped,
        columns,
        rows: kept,
        total,
        total_capped,
    })
}

/// A cell as lossless JSON: non-finite reals and `-0.0` become strings.
fn cell_json(cell: ValueRef<'_>) -> Value {
    match cell {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) if f.is_finite() && !(f == 0.0 && f.is_sign_negative()) => Value::from(f),
        ValueRef::Real(f) => Value::String(f.to_string()),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::String(format!("<blob, {} bytes>", b.len())),
    }
}

fn cell_text(cell: &Value) -> String {
    let text = match cell {
        Value::Null => "NULL".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    ellipsize(&text.replace(['\n', '\r', '\t'], " "), CELL_CHARS)
}

/// A plain text table: header, rule, rows; cells cut to [`CELL_CHARS`].
pub fn table(columns: &[String], rows: &[Vec<Value>]) -> String {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(cell_text).collect())
        .collect();
    let mut widths: Vec<usize> = columns
        .iter()
        .map(|c| ellipsize(c, CELL_CHARS).chars().count())
        .collect();
    for row in &cells {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |items: &mut dyn Iterator<Item = String>| -> String {
        let parts: Vec<String> = items
            .zip(&widths)
            .map(|(s, w)| format!("{s:<w$}", w = *w))
            .collect();
        parts.join(" | ").trim_end().to_owned()
    };
    let mut out = line(&mut columns.iter().map(|c| ellipsize(c, CELL_CHARS)));
    out.push('\n');
    out.push_str(
        &widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("-+-"),
    );
    for row in cells {
        out.push('\n');
        out.push_str(&line(&mut row.into_iter()));
    }
    out
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
    use crate::database::{CUSTOMERS, build_customers, notes_marker, phone_of};
    use toolprism::{Registry, ToolCall, ToolOutcome};

    fn db() -> (tempfile::TempDir, PathBuf) {
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

    #[tokio::test]
    async fn keeps_the_first_rows_counts_all_and_says_so() {
        let (_d, path) = db();
        let registry = Registry::builder()
            .tool(SqlQueryTool::new(&path))
            .build()
            .unwrap();
        let out = call(
            &registry,
            "SELECT id, name, phone, notes FROM customers ORDER BY id",
        )
        .await;
        assert!(!out.is_error(), "{out:?}");
        let v = out.value_as::<SqlQueryValue>().unwrap();
        assert_eq!(v.columns, ["id", "name", "phone", "notes"]);
        assert_eq!((v.rows.len(), v.total, v.truncated), (50, 1200, true));
        assert_eq!(v.rows[0][0], 1);
        assert_eq!(v.rows[0][2], phone_of(1));
        let text = out.content()[0].as_text().unwrap();
        assert!(text.starts_with("id | name"), "{text}");
        assert!(text.contains("(Showing the first 50 of 1200 rows."));
        // The long notes are cut in the table, whole in the value.
        assert!(v.rows[0][3].as_str().unwrap().ends_with(&notes_marker(1)));
        assert!(!text.contains(&notes_marker(1)));
        assert_eq!(
            out.meta().unwrap(),
            &serde_json::json!({"columns": ["id", "name", "phone", "notes"], "shown": 50, "total": 1200, "truncated": true})
        );
        let ResultCard::Generic(card) = out.result_card().unwrap() else {
            panic!()
        };
        assert_eq!(card.title.as_deref(), Some("50 of 1,200 rows · truncated"));
        assert_eq!(card.content.as_deref(), Some(out.content()));

        let out = call(
            &registry,
            "SELECT count(*) AS n, NULL AS z, 1.5 AS r FROM customers",
        )
        .await;
        let v = out.value_as::<SqlQueryValue>().unwrap();
        assert_eq!(
            v.rows,
            vec![vec![
                serde_json::json!(1200),
                Value::Null,
                serde_json::json!(1.5)
            ]]
        );
        assert!(!v.truncated);
        assert_eq!(
            out.result_card().unwrap(),
            &ResultCard::Generic(GenericResult {
                title: Some("1 row".into()),
                content: Some(out.content().to_vec())
            })
        );
    }

    #[tokio::test]
    async fn writes_and_bad_sql_are_clear_errors() {
        let (dir, path) = db();
        let registry = Registry::builder()
            .tool(SqlQueryTool::new(&path))
            .build()
            .unwrap();
        for (sql, code) in [
            ("DELETE FROM customers", "NOT_READ_ONLY"),
            ("UPDATE customers SET phone = ''", "NOT_READ_ONLY"),
            ("CREATE TABLE t (x)", "NOT_READ_ONLY"),
            ("SELEC 1", "INVALID_SQL"),
            ("SELECT * FROM nowhere", "INVALID_SQL"),
            ("SELECT 1; DELETE FROM customers", "INVALID_SQL"),
            ("   ", "INVALID_SQL"),
        ] {
            let out = call(&registry, sql).await;
            assert_eq!(
                out.error().unwrap().code.as_str(),
                code,
                "{sql}: {:?}",
                out.error()
            );
            assert_eq!(out.result_card().unwrap().tag(), "generic");
        }
        let other = dir.path().join("other.db");
        build_customers(&other, 1).unwrap();
        let out = call(&registry, &format!("ATTACH '{}' AS o", other.display())).await;
        assert!(out.is_error(), "{out:?}");
        let out = call(&registry, "SELECT count(*) FROM customers").await;
        assert_eq!(out.value().unwrap()["rows"][0][0], 1200);
        let missing = Registry::builder()
            .tool(SqlQueryTool::new(dir.path().join("missing.db")))
            .build()
            .unwrap();
        assert_eq!(
            call(&missing, "SELECT 1")
                .await
                .error()
                .unwrap()
                .code
                .as_str(),
            "NO_DATABASE"
        );
        assert!(!dir.path().join("missing.db").exists());
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
    fn helpers() {
        assert_eq!(
            mask_phones("call +1-555-002-5838 or +3"),
            "call [phone] or +3"
        );
        assert_eq!(thousands(1200), "1,200");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(rows_title(50, 1200, false), "50 of 1,200 rows · truncated");
        assert_eq!(rows_title(0, 0, false), "0 rows");
        assert_eq!(cell_json(ValueRef::Real(-0.0)), Value::String("-0".into()));
        assert_eq!(
            cell_json(ValueRef::Real(f64::INFINITY)),
            Value::String("inf".into())
        );
        let t = table(
            &["a".into(), "long".into()],
            &[vec![serde_json::json!(1), Value::Null]],
        );
        assert_eq!(t, "a | long\n--+-----\n1 | NULL");
    }
}
