//! What the showcase runs against: a workspace of files in a temp dir, a
//! SQLite database, and a loopback HTTP server. Built fresh on every run,
//! with no network.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::database::{CUSTOMERS, build_customers};
use crate::http_server::Server;
use toolprism_tools::Workspace;

/// A unique string in a grep match the model never sees (match 200 of 243).
pub const GREP_MARKER: &str = "GREP-VALUE-ONLY-200";
/// A path glob finds that the model never sees (beyond the first 100).
pub const GLOB_MARKER: &str = "g_117.rs";
/// The first line of the edited config: in the value, not in the diff.
pub const EDIT_MARKER: &str = "APP-CONFIG-VALUE-ONLY";
/// The end of the fetched article: past what the model reads.
pub const WEB_MARKER: &str = "WEB-BODY-VALUE-ONLY";

/// The showcase's world, removed when dropped.
#[derive(Debug)]
pub struct Fixtures {
    _dir: tempfile::TempDir,
    /// The workspace the file tools are confined to.
    pub workspace: Workspace,
    /// The SQLite database (outside the workspace).
    pub database: PathBuf,
    /// The loopback HTTP server.
    pub server: Server,
}

impl Fixtures {
    /// Builds everything, the workspace under `sandbox`.
    pub fn build(sandbox: toolprism_tools::sandbox::SandboxPolicy) -> io::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("toolprism-showcase-")
            .tempdir()?;
        let root = dir.path().join("workspace");
        populate(&root)?;
        fs::write(dir.path().join("outside.txt"), "not for the model\n")?;
        let database = dir.path().join("shop.db");
        build_customers(&database, CUSTOMERS).map_err(io::Error::other)?;
        let server = Server::builder()
            .route("/article", 200, "text/html; charset=utf-8", article())
            .route(
                "/status",
                200,
                "application/json",
                r#"{"service":"shop","ok":true}"#,
            )
            .start()?;
        Ok(Fixtures {
            workspace: Workspace::new(&root)?.with_sandbox(sandbox),
            _dir: dir,
            database,
            server,
        })
    }
}

fn write(root: &Path, path: &str, text: impl AsRef<[u8]>) -> io::Result<()> {
    let path = root.join(path);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, text)
}

const LIB_RS: &str = r#"//! Demo shop: prices, carts and totals.

use std::collections::BTreeMap;

/// A price in cents.
pub type Cents = u64;

/// A shopping cart.
#[derive(Debug, Default)]
pub struct Cart {
    items: BTreeMap<String, (Cents, u32)>,
}

impl Cart {
    /// Adds `qty` of an item at `price`.
    pub fn add(&mut self, name: &str, price: Cents, qty: u32) {
        let entry = self.items.entry(name.to_owned()).or_insert((price, 0));
        entry.1 += qty;
    }

    /// The total in cents.
    pub fn total(&self) -> Cents {
        self.items.values().map(|(p, q)| p * u64::from(*q)).sum()
    }

    // TODO: discounts
    /// Removes an item.
    pub fn remove(&mut self, name: &str) -> bool {
        self.items.remove(name).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals() {
        let mut cart = Cart::default();
        cart.add("tea", 450, 2);
        // TODO: test remove
        assert_eq!(cart.total(), 900);
    }
}
"#;

fn populate(root: &Path) -> io::Result<()> {
    write(
        root,
        "README.md",
        "# Demo shop\n\nA small workspace for the toolprism showcase.\n\nTODO: write the install section.\n",
    )?;
    write(root, ".gitignore", "target/\n*.log\n")?;
    write(root, "build.log", "TODO: ignored, *.log is in .gitignore\n")?;
    write(
        root,
        "target/debug/stale.rs",
        "// TODO: ignored, target/ is in .gitignore\n",
    )?;
    write(root, "src/lib.rs", LIB_RS)?;
    write(
        root,
        "src/main.rs",
        "fn main() {\n    let mut cart = demo_shop::Cart::default();\n    cart.add(\"tea\", 450, 2);\n    println!(\"{}\", cart.total());\n}\n",
    )?;
    write(
        root,
        "src/util/strings.rs",
        "/// Title-cases a word.\npub fn title(word: &str) -> String {\n    let mut c = word.chars();\n    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()\n}\n",
    )?;
    for i in 0..120 {
        write(
            root,
            &format!("src/generated/g_{i:03}.rs"),
            format!("// generated\npub const N: u32 = {i};\n"),
        )?;
    }
    let todos: String = (1..=240)
        .map(|i| {
            if i == 200 {
                format!("TODO item {i:03}: {GREP_MARKER}\n")
            } else {
                format!(
                    "TODO item {i:03}: check the inventory of shelf {}\n",
                    i % 17
                )
            }
        })
        .collect();
    write(root, "data/todo-list.txt", todos)?;
    let mut config = format!("# {EDIT_MARKER}: the shop's settings\n");
    for i in 2..=30 {
        config.push_str(&match i {
            20 => "port = 8080\n".to_owned(),
            _ => format!("setting_{i:02} = {}\n", i * 3),
        });
    }
    write(root, "config/app.toml", config)?;
    Ok(())
}

fn article() -> String {
    let mut html = String::from(
        "<!doctype html>\n<html><head><title>Shop news</title></head><body>\n<h1>Shop news</h1>\n",
    );
    let mut n = 0;
    while html.len() < 14_000 {
        n += 1;
        html.push_str(&format!(
            "<p>Paragraph {n}: the tea shelf was restocked and prices stayed the same this week.</p>\n"
        ));
    }
    html.push_str(&format!("<footer>{WEB_MARKER}</footer>\n</body></html>\n"));
    html
}
