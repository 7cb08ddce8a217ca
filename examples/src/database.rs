//! Builds the SQLite database the showcase and the tests query: a
//! `customers` table of made-up people, deterministic, with a `phone` column
//! for the redaction policy and a long `notes` column whose end the model's
//! table never shows.

use std::path::Path;

use rusqlite::{Connection, params};

/// Rows in the showcase database.
pub const CUSTOMERS: u32 = 1200;

const FIRST: [&str; 12] = [
    "Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "John",
    "Margaret", "Niklaus",
];
const LAST: [&str; 10] = [
    "Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Perlman",
    "Backus",
];
const CITIES: [&str; 8] = [
    "Paris", "Lisbon", "Osaka", "Nairobi", "Lima", "Oslo", "Austin", "Pune",
];
const PLANS: [&str; 3] = ["free", "pro", "team"];

/// The phone number of customer `id`: `+1-555-XXX-XXXX`.
pub fn phone_of(id: u32) -> String {
    format!("+1-555-{:03}-{:04}", id % 1000, (id * 7919) % 10_000)
}

/// A marker that ends the notes of customer `id`, far past what a table
/// cell shows: it is in a query's value, never in its content.
pub fn notes_marker(id: u32) -> String {
    format!("NOTE-END-{id:05}")
}

/// Creates `path` with a `customers` table of `rows` rows. Fails if the
/// table already exists.
pub fn build_customers(path: &Path, rows: u32) -> rusqlite::Result<()> {
    let mut conn = Connection::open(path)?;
    conn.execute_batch(
        "CREATE TABLE customers (
            id      INTEGER PRIMARY KEY,
            name    TEXT NOT NULL,
            email   TEXT NOT NULL,
            phone   TEXT NOT NULL,
            city    TEXT NOT NULL,
            plan    TEXT NOT NULL,
            balance REAL NOT NULL,
            notes   TEXT
        );",
    )?;
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare(
            "INSERT INTO customers (id, name, email, phone, city, plan, balance, notes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        for id in 1..=rows {
            let i = id as usize;
            let first = FIRST[i % FIRST.len()];
            let last = LAST[(i / FIRST.len()) % LAST.len()];
            let name = format!("{first} {last}");
            let email = format!(
                "{}.{}{id}@example.test",
                first.to_lowercase(),
                last.to_lowercase()
            );
            let balance = ((id * 3719) % 100_000) as f64 / 100.0;
            let notes = (id % 7 != 0).then(|| {
                format!(
                    "Prefers email; renewal due in Q{}; account reviewed twice this year. {}",
                    id % 4 + 1,
                    notes_marker(id)
                )
            });
            insert.execute(params![
                id,
                name,
                email,
                phone_of(id),
                CITIES[i % CITIES.len()],
                PLANS[i % PLANS.len()],
                balance,
                notes
            ])?;
        }
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_deterministic_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        build_customers(&path, 50).unwrap();
        let conn = Connection::open(&path).unwrap();
        let n: u32 = conn
            .query_row("SELECT count(*) FROM customers", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 50);
        let phone: String = conn
            .query_row("SELECT phone FROM customers WHERE id = 7", [], |r| r.get(0))
            .unwrap();
        assert_eq!(phone, phone_of(7));
        let nulls: u32 = conn
            .query_row(
                "SELECT count(*) FROM customers WHERE notes IS NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(nulls, 7);
        assert!(build_customers(&path, 1).is_err());
    }
}
