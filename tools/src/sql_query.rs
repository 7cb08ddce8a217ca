//! `sql_query`: one read-only SQL statement against a SQLite database.
//!
//! - **Value** [`SqlQueryValue`]: `{columns, rows, total, truncated}`: the
//!   first [`MAX_ROWS`] rows as JSON (integers, reals, text, `null`; blobs as
//!   a size note; text cut at [`MAX_CELL_CHARS`]; rows kept while they fit in
//!   [`MAX_VALUE_BYTES`]), and the number of rows the statement produced
//!   (counted up to [`COUNT_CAP`], then `totalCapped`).
//! - **Render**: a text table, cells cut to [`CELL_CHARS`] chars, and a
//!   footer that says how many rows are not shown.
//! - **Meta** [`SqlQueryMeta`]: `{columns, shown, total, truncated}`: counts only,
//!   never cells, so it stays small and leaks nothing a policy removed from
//!   the value.
//! - **Cancellation**: a progress handler checks every few thousand SQLite
//!   instructions whether the call is still awaited, and interrupts the
//!   statement when it is not (a timeout, a cancellation).
//!
//! ## Read-only by construction
//!
//! Whether a statement may run is decided by SQLite itself, while it
//! compiles the statement, never by reading the SQL text. Every layer below
//! must let it through:
//!
//! 1. **The file is opened `SQLITE_OPEN_READ_ONLY`**: SQLite will not write
//!    the database file, whatever the statement.
//! 2. **The connection is locked down** before any user SQL: `PRAGMA
//!    query_only = ON`; `SQLITE_DBCONFIG_DEFENSIVE` (no `writable_schema`
//!    tricks, no direct writes to shadow tables); `SQLITE_DBCONFIG_TRUSTED_SCHEMA`
//!    off (functions with side effects cannot be called from views or
//!    triggers stored in the file); `ATTACH` limited to 0 databases; values
//!    limited to [`MAX_LENGTH`] bytes.
//! 3. **An authorizer** (`sqlite3_set_authorizer`), consulted for every
//!    action of the statement being compiled, allows a closed list and
//!    denies everything else: `SELECT`, reading tables and columns, calling a
//!    function (except `load_extension`), `WITH RECURSIVE`, and the pragmas
//!    in [`READ_ONLY_PRAGMAS`] (and [`QUERY_PRAGMAS`] when given no value).
//!    Denied at compile time: `INSERT`, `UPDATE`, `DELETE`, every `CREATE`
//!    and `DROP` (temporary tables, views, triggers and indexes too),
//!    `ALTER`, `REINDEX`, `ANALYZE`, `ATTACH`, `DETACH`, `BEGIN`, `COMMIT`,
//!    savepoints, virtual tables, and any pragma that sets something
//!    (`PRAGMA writable_schema = ON`, `PRAGMA query_only = OFF`).
//! 4. **`sqlite3_stmt_readonly`** ([`rusqlite::Statement::readonly`]) must
//!    then say the compiled statement does not write: this covers what has no
//!    authorizer action, such as `VACUUM` and `VACUUM INTO 'file'`.
//! 5. **One statement per call**: text after the first statement (other
//!    than whitespace and comments) is refused.
//!
//! A refused statement is an error result with code `NOT_READ_ONLY` that
//! names the action SQLite was asked to authorize. The other codes:
//! `INVALID_SQL` (empty, more than one statement, does not compile),
//! `QUERY_FAILED` (failed while running), `NO_DATABASE` (the path is missing
//! or not a file) and `BAD_DATABASE` (the file is not a SQLite database, or
//! is torn or damaged: the file's fault, not the SQL's).
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

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::config::DbConfig;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolprism::card::{GenericResult, ResultCard};
use toolprism::{CallCard, ContentBlock, ToolContext, ToolError, ToolKind, ToolResult, tool};

use crate::blocking::Stop;
use crate::text::{cap_chars, ellipsize, plural, thousands};

/// Rows kept in the value.
pub const MAX_ROWS: usize = 50;
/// Rows counted before the count stops.
pub const COUNT_CAP: u64 = 1_000_000;
/// Chars shown per table cell.
pub const CELL_CHARS: usize = 32;
/// Chars of a text cell kept in the value; longer text ends in `…[cell truncated]`.
pub const MAX_CELL_CHARS: usize = 10_000;
/// Rows are kept in the value while their cells' bytes fit in this budget
/// (the first row always is).
pub const MAX_VALUE_BYTES: usize = 1024 * 1024;
/// The longest string or blob SQLite will build (`SQLITE_LIMIT_LENGTH`).
pub const MAX_LENGTH: i32 = 32 * 1024 * 1024;
/// Pragmas that only ever read, allowed with or without an argument (the
/// argument names a table, an index or a count, never a new setting).
pub const READ_ONLY_PRAGMAS: &[&str] = &[
    "collation_list",
    "foreign_key_check",
    "foreign_key_list",
    "function_list",
    "index_info",
    "index_list",
    "index_xinfo",
    "integrity_check",
    "module_list",
    "pragma_list",
    "quick_check",
    "table_info",
    "table_list",
    "table_xinfo",
];
/// Pragmas that read a setting when given no value (and would change it
/// when given one): allowed only without a value.
pub const QUERY_PRAGMAS: &[&str] = &[
    "application_id",
    "auto_vacuum",
    "data_version",
    "encoding",
    "foreign_keys",
    "freelist_count",
    "page_count",
    "page_size",
    "schema_version",
    "user_version",
];
/// SQLite instructions between two checks of the call's cancellation.
const PROGRESS_STEPS: i32 = 4096;

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

/// Run one read-only SQL statement (SQLite dialect) and get its columns,
/// the first 50 rows and the total row count. Statements that write are
/// refused. Use WHERE, ORDER BY and LIMIT/OFFSET to see other rows.
#[tool(
    name = "sql_query",
    title = "Query the database",
    kind = read,
    read_only,
    idempotent,
    timeout_ms = 20000,
    blocking
)]
impl SqlQueryTool {
    fn execute(
        &self,
        args: SqlQueryArgs,
        cx: &ToolContext<'_>,
    ) -> Result<SqlQueryValue, ToolError> {
        self.run(args, &Stop::of(cx))
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

    fn present_result(
        _args: &SqlQueryArgs,
        result: &ToolResult<SqlQueryMeta>,
    ) -> Option<ResultCard> {
        let meta = result.meta.as_ref().filter(|_| !result.is_error)?;
        if meta.shown > meta.total {
            return None;
        }
        Some(ResultCard::Generic(
            GenericResult::new(result.content.clone()).with_title(rows_title(
                meta.shown,
                meta.total,
                meta.total_capped,
            )),
        ))
    }
}

impl SqlQueryTool {
    /// The query itself, synchronous (see [`crate::blocking`]).
    fn run(&self, args: SqlQueryArgs, stop: &Stop) -> Result<SqlQueryValue, ToolError> {
        let mut conn = open_read_only(&self.database)?;
        let stop = stop.clone();
        conn.progress_handler(PROGRESS_STEPS, Some(move || stop.is_stopped()))
            .map_err(|e| ToolError::new(format!("cannot configure the database: {e}")))?;
        let denied = Arc::new(Mutex::new(None));
        conn.authorizer(Some(authorizer(denied.clone())))
            .map_err(|e| ToolError::new(format!("cannot configure the database: {e}")))?;
        query(&conn, &args.sql, &denied)
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

fn open_read_only(path: &Path) -> Result<Connection, ToolError> {
    if !path.is_file() {
        let what = if path.exists() {
            "is not a file"
        } else {
            "does not exist"
        };
        return Err(
            ToolError::new(format!("the database {} {what}", path.display()))
                .with_code("NO_DATABASE"),
        );
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| ToolError::new(format!("cannot open the database: {e}")))?;
    let configure = || -> rusqlite::Result<()> {
        conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)?;
        conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_LENGTH)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
        conn.pragma_update(None, "query_only", true)
    };
    configure().map_err(|e| ToolError::new(format!("cannot configure the database: {e}")))?;
    Ok(conn)
}

/// The authorizer: a closed list of allowed actions. The first action it
/// denies is kept in `denied` for the error message.
fn authorizer(
    denied: Arc<Mutex<Option<String>>>,
) -> impl for<'r> FnMut(AuthContext<'r>) -> Authorization + Send + 'static {
    move |cx: AuthContext<'_>| {
        if allowed(&cx.action) {
            return Authorization::Allow;
        }
        let mut slot = denied.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(describe(&cx.action));
        }
        Authorization::Deny
    }
}

fn allowed(action: &AuthAction<'_>) -> bool {
    match action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => true,
        AuthAction::Function { function_name } => {
            !function_name.eq_ignore_ascii_case("load_extension")
        }
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } => {
            let name = pragma_name.to_ascii_lowercase();
            READ_ONLY_PRAGMAS.contains(&name.as_str())
                || (pragma_value.is_none() && QUERY_PRAGMAS.contains(&name.as_str()))
        }
        _ => false,
    }
}

/// A denied action in a few words.
fn describe(action: &AuthAction<'_>) -> String {
    match action {
        AuthAction::Pragma {
            pragma_name,
            pragma_value: Some(value),
        } => format!("PRAGMA {pragma_name} = {}", ellipsize(value, 40)),
        AuthAction::Pragma { pragma_name, .. } => format!("PRAGMA {pragma_name}"),
        AuthAction::Function { function_name } => format!("the function {function_name}()"),
        AuthAction::Transaction { operation } => format!("{operation:?} (a transaction)"),
        other => {
            let debug = format!("{other:?}");
            debug.split([' ', '{', '(']).next().unwrap_or("").to_owned()
        }
    }
}

fn query(
    conn: &Connection,
    sql: &str,
    denied: &Mutex<Option<String>>,
) -> Result<SqlQueryValue, ToolError> {
    if sql.trim().is_empty() {
        return Err(
            ToolError::new("the SQL is empty; send one SELECT statement").with_code("INVALID_SQL"),
        );
    }
    let not_read_only = |what: &str| {
        ToolError::new(format!(
            "only read-only statements are allowed (SELECT, WITH … SELECT, EXPLAIN, read-only PRAGMA); SQLite refused this one: {what}"
        ))
        .with_code("NOT_READ_ONLY")
    };
    let mut stmt = match conn.prepare(sql) {
        Ok(stmt) => stmt,
        Err(rusqlite::Error::MultipleStatement) => {
            return Err(
                ToolError::new("send one statement per call; the SQL holds more than one")
                    .with_code("INVALID_SQL"),
            );
        }
        Err(e) => {
            let refused = denied.lock().unwrap_or_else(|p| p.into_inner()).take();
            return Err(match refused {
                Some(action) => not_read_only(&format!("it would perform {action}")),
                None => bad_database(&e).unwrap_or_else(|| {
                    ToolError::new(format!("the SQL does not compile: {e}"))
                        .with_code("INVALID_SQL")
                }),
            });
        }
    };
    if !stmt.readonly() {
        return Err(not_read_only("it would change the database"));
    }
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut rows = stmt.raw_query();
    let mut kept = Vec::new();
    let mut kept_bytes = 0usize;
    let mut keeping = true;
    let mut total = 0u64;
    let mut total_capped = false;
    while let Some(row) = rows.next().map_err(|e| {
        bad_database(&e).unwrap_or_else(|| {
            ToolError::new(format!("the query failed: {e}")).with_code("QUERY_FAILED")
        })
    })? {
        if total >= COUNT_CAP {
            total_capped = true;
            break;
        }
        total += 1;
        if keeping && kept.len() < MAX_ROWS {
            let mut cells = Vec::with_capacity(columns.len());
            let mut bytes = 0;
            for i in 0..columns.len() {
                let cell = cell_json(row.get_ref(i).map_err(|e| e.to_string())?);
                bytes += cell_bytes(&cell);
                cells.push(cell);
            }
            if !kept.is_empty() && kept_bytes + bytes > MAX_VALUE_BYTES {
                keeping = false;
            } else {
                kept_bytes += bytes;
                kept.push(cells);
            }
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

/// `BAD_DATABASE` when SQLite says the file itself is at fault (not a
/// database, or damaged), so the model is not told to fix its SQL.
fn bad_database(e: &rusqlite::Error) -> Option<ToolError> {
    match e.sqlite_error_code()? {
        rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt => Some(
            ToolError::new(format!(
                "the database file is not a SQLite database or is damaged ({e}); the SQL was not at fault"
            ))
            .with_code("BAD_DATABASE"),
        ),
        _ => None,
    }
}

fn cell_bytes(cell: &Value) -> usize {
    match cell {
        Value::String(s) => s.len(),
        _ => 8,
    }
}

/// A cell as lossless JSON: non-finite reals and `-0.0` become strings.
fn cell_json(cell: ValueRef<'_>) -> Value {
    match cell {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) if f.is_finite() && !(f == 0.0 && f.is_sign_negative()) => Value::from(f),
        ValueRef::Real(f) => Value::String(f.to_string()),
        ValueRef::Text(t) => {
            let text = String::from_utf8_lossy(t);
            Value::String(match cap_chars(&text, MAX_CELL_CHARS) {
                (all, false) => all.into_owned(),
                (head, true) => format!("{head}…[cell truncated]"),
            })
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use toolprism::{CallOptions, Registry, ToolCall, ToolOutcome};

    /// `customers` with 1,200 rows: id, name, phone, notes (long, ending in
    /// a marker the table never shows).
    fn db() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.db");
        let mut conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, phone TEXT, notes TEXT);
             CREATE INDEX by_name ON customers (name);",
        )
        .unwrap();
        let tx = conn.transaction().unwrap();
        for id in 1..=1200 {
            tx.execute(
                "INSERT INTO customers VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![
                    id,
                    format!("Customer {id}"),
                    format!("+1-555-{id:07}"),
                    format!("{} NOTE-END-{id}", "blah ".repeat(20))
                ],
            )
            .unwrap();
        }
        tx.commit().unwrap();
        (dir, path)
    }

    fn registry(path: &Path) -> Registry {
        Registry::builder()
            .tool(SqlQueryTool::new(path))
            .build()
            .unwrap()
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

    fn file_state(path: &Path) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap_or_default(),
                )
            })
            .collect();
        files.sort();
        files
    }

    #[tokio::test]
    async fn keeps_the_first_rows_counts_all_and_says_so() {
        let (_d, path) = db();
        let registry = registry(&path);
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
        assert_eq!(v.rows[0][2], "+1-555-0000001");
        let text = out.content()[0].as_text().unwrap();
        assert!(text.starts_with("id | name"), "{text}");
        assert!(text.contains("(Showing the first 50 of 1200 rows."));
        // The long notes are cut in the table, whole in the value.
        assert!(v.rows[0][3].as_str().unwrap().ends_with("NOTE-END-1"));
        assert!(!text.contains("NOTE-END-1"));
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
            &ResultCard::Generic(GenericResult::new(out.content().to_vec()).with_title("1 row"))
        );
    }

    /// Reading the schema works: introspection pragmas, their table-valued
    /// forms, settings read without a value, `EXPLAIN`, `WITH RECURSIVE`.
    #[tokio::test]
    async fn read_only_statements_run() {
        let (_d, path) = db();
        let registry = registry(&path);
        for sql in [
            "PRAGMA table_info(customers)",
            "PRAGMA index_list('customers')",
            "SELECT name FROM pragma_table_info('customers')",
            "PRAGMA user_version",
            "PRAGMA main.page_count",
            "PRAGMA integrity_check",
            "SELECT sql FROM sqlite_schema",
            "EXPLAIN QUERY PLAN SELECT * FROM customers WHERE name = 'x'",
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT sum(i) FROM n",
            "SELECT upper(name), length(notes), abs(-1) FROM customers LIMIT 1",
            "  SELECT 1 ; -- a trailing comment is not a second statement",
        ] {
            let out = call(&registry, sql).await;
            assert!(!out.is_error(), "{sql}: {:?}", out.error());
        }
        let out = call(&registry, "PRAGMA table_info(customers)").await;
        assert_eq!(out.value_as::<SqlQueryValue>().unwrap().total, 4);
    }

    /// Every way to write, attach or reconfigure is refused, and the
    /// database directory is byte for byte what it was.
    #[tokio::test]
    async fn writes_attach_pragma_writes_reindex_vacuum_temp_tables_and_batches_are_refused() {
        let (dir, path) = db();
        let registry = registry(&path);
        let other = dir.path().join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        let before = file_state(&path);
        let escaped = dir.path().join("copy.db");
        let refused = [
            "DELETE FROM customers",
            "UPDATE customers SET phone = ''",
            "INSERT INTO customers (name) VALUES ('x')",
            "REPLACE INTO customers (id, name) VALUES (1, 'x')",
            "CREATE TABLE t (x)",
            "CREATE TEMP TABLE t (x)",
            "CREATE TEMP VIEW v AS SELECT 1",
            "CREATE TEMP TRIGGER tr AFTER INSERT ON customers BEGIN SELECT 1; END",
            "CREATE INDEX i ON customers (phone)",
            "CREATE VIRTUAL TABLE temp.v USING fts5(x)",
            "DROP TABLE customers",
            "DROP INDEX by_name",
            "ALTER TABLE customers ADD COLUMN x",
            "REINDEX",
            "REINDEX customers",
            "ANALYZE",
            "VACUUM",
            &format!("VACUUM INTO '{}'", escaped.display()),
            &format!("ATTACH '{}' AS o", other.display()),
            "DETACH main",
            "BEGIN",
            "BEGIN IMMEDIATE",
            "COMMIT",
            "SAVEPOINT s",
            "PRAGMA writable_schema = ON",
            "PRAGMA writable_schema",
            "PRAGMA query_only = OFF",
            "PRAGMA query_only = 0",
            "PRAGMA user_version = 7",
            "PRAGMA journal_mode = DELETE",
            "PRAGMA foreign_keys = ON",
            "PRAGMA trusted_schema = ON",
            "PRAGMA temp_store_directory = '/tmp'",
            "PRAGMA database_list",
            "SELECT load_extension('/nonexistent')",
            "EXPLAIN DELETE FROM customers",
            "WITH x AS (SELECT 1) DELETE FROM customers",
        ];
        for sql in refused {
            let out = call(&registry, sql).await;
            let error = out.error().unwrap_or_else(|| panic!("{sql} ran: {out:?}"));
            assert_eq!(
                error.code.as_str(),
                "NOT_READ_ONLY",
                "{sql}: {}",
                error.message
            );
            assert_eq!(out.result_card().unwrap().tag(), "generic");
        }
        let out = call(&registry, "PRAGMA writable_schema = ON").await;
        assert!(
            out.error()
                .unwrap()
                .message
                .contains("PRAGMA writable_schema = ON"),
            "{:?}",
            out.error()
        );
        let out = call(&registry, "REINDEX").await;
        assert!(
            out.error().unwrap().message.contains("Reindex"),
            "{:?}",
            out.error()
        );
        for (sql, code) in [
            // The second statement is compiled (never run) to find it: the
            // authorizer refuses it first.
            ("SELECT 1; DELETE FROM customers", "NOT_READ_ONLY"),
            ("SELECT 1; SELECT 2", "INVALID_SQL"),
            ("SELECT 1; garbage", "INVALID_SQL"),
            ("SELEC 1", "INVALID_SQL"),
            ("SELECT * FROM nowhere", "INVALID_SQL"),
            ("   ", "INVALID_SQL"),
            ("-- only a comment", "INVALID_SQL"),
        ] {
            let out = call(&registry, sql).await;
            assert_eq!(
                out.error().unwrap().code.as_str(),
                code,
                "{sql}: {:?}",
                out.error()
            );
        }
        assert_eq!(file_state(&path), before);
        assert!(!escaped.exists());
        let out = call(&registry, "SELECT count(*) FROM customers").await;
        assert_eq!(out.value().unwrap()["rows"][0][0], 1200);
        let missing = registry_for_missing(dir.path());
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

    fn registry_for_missing(dir: &Path) -> Registry {
        registry(&dir.join("missing.db"))
    }

    /// A file that is not a database, a torn database and a directory are
    /// the database's fault, never the SQL's, and change nothing on disk.
    #[tokio::test]
    async fn garbage_torn_and_directory_databases_are_named_as_such() {
        let (dir, path) = db();
        let bytes = std::fs::read(&path).unwrap();
        let garbage = dir.path().join("garbage.db");
        std::fs::write(&garbage, b"not a database at all, just text\n".repeat(3000)).unwrap();
        let torn = dir.path().join("torn.db");
        std::fs::write(&torn, &bytes[..bytes.len() / 3]).unwrap();
        let folder = dir.path().join("folder.db");
        std::fs::create_dir(&folder).unwrap();
        let before = file_state(&path);
        for (file, code, says) in [
            (
                &garbage,
                "BAD_DATABASE",
                "not a SQLite database or is damaged",
            ),
            (&torn, "BAD_DATABASE", "not a SQLite database or is damaged"),
            (&folder, "NO_DATABASE", "is not a file"),
        ] {
            let out = call(
                &registry(file),
                "SELECT count(*), max(length(notes)) FROM customers",
            )
            .await;
            let error = out.error().unwrap_or_else(|| panic!("{file:?}: {out:?}"));
            assert_eq!(error.code.as_str(), code, "{file:?}: {error:?}");
            assert!(error.message.contains(says), "{file:?}: {error:?}");
        }
        assert_eq!(file_state(&path), before);
    }

    /// Huge values are bounded by SQLite's length limit, and long text is
    /// cut in the value.
    #[tokio::test]
    async fn huge_values_are_bounded() {
        let (_d, path) = db();
        let registry = registry(&path);
        let out = call(&registry, "SELECT zeroblob(100000000)").await;
        assert_eq!(
            out.error().unwrap().code.as_str(),
            "QUERY_FAILED",
            "{out:?}"
        );
        let out = call(&registry, "SELECT printf('%.*c', 20000, 'x') AS s").await;
        let v = out.value_as::<SqlQueryValue>().unwrap();
        let cell = v.rows[0][0].as_str().unwrap();
        assert!(cell.ends_with("…[cell truncated]"));
        assert_eq!(cell.chars().filter(|c| *c == 'x').count(), MAX_CELL_CHARS);
        let out = call(
            &registry,
            "SELECT printf('%.*c', 9000, 'a'), printf('%.*c', 9000, 'b'), printf('%.*c', 9000, 'c') FROM customers LIMIT 200",
        )
        .await;
        let v = out.value_as::<SqlQueryValue>().unwrap();
        assert!(
            v.rows.len() < MAX_ROWS && !v.rows.is_empty(),
            "{}",
            v.rows.len()
        );
        assert!(v.truncated);
        assert_eq!(v.total, 200);
    }

    const ENDLESS: &str =
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n";

    /// A statement that would never end stops once the call is over: the
    /// progress handler sees the raised [`Stop`].
    #[test]
    fn a_raised_stop_interrupts_a_running_statement() {
        let (_d, path) = db();
        let tool = SqlQueryTool::new(&path);
        let stop = Stop::never();
        let raiser = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(100));
                stop.raise();
            })
        };
        let started = std::time::Instant::now();
        let e = tool
            .run(
                SqlQueryArgs {
                    sql: ENDLESS.into(),
                },
                &stop,
            )
            .unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert!(e.message().contains("interrupted"), "{}", e.message());
        raiser.join().unwrap();
    }

    #[tokio::test]
    async fn a_registry_timeout_ends_the_call_on_time() {
        let (_d, path) = db();
        let registry = registry(&path);
        let options = CallOptions::new().with_timeout(std::time::Duration::from_millis(200));
        let started = std::time::Instant::now();
        let out = registry
            .call_with(
                ToolCall::new(
                    "c",
                    "sql_query",
                    serde_json::json!({ "sql": ENDLESS }).to_string(),
                ),
                &options,
            )
            .await;
        assert_eq!(out.error().unwrap().code.as_str(), "TIMEOUT");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn helpers() {
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
