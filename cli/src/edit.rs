//! Edits to files the user wrote: lines inserted, nothing else touched.
//!
//! Each edit returns the new text, or `None` when what it would add is
//! already there, so running it twice changes nothing the second time. The
//! file's line ending (`\n` or `\r\n`) is kept.

/// The text's line ending.
fn newline(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// The text as lines without their endings, and whether it ended with one.
fn split(text: &str) -> (Vec<&str>, bool) {
    let ends = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines = if text.is_empty() {
        Vec::new()
    } else {
        body.split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect()
    };
    (lines, ends)
}

fn join(lines: &[String], newline: &str, ends: bool) -> String {
    let mut text = lines.join(newline);
    if ends || !text.is_empty() {
        text.push_str(newline);
    }
    text
}

/// The module a top-level `mod` item declares on this line: `mod x;`,
/// `pub mod x;`, `pub(crate) mod x {`; with `file_only`, only the `;` form.
fn module_of(line: &str, file_only: bool) -> Option<&str> {
    let mut rest = line;
    if let Some(r) = rest.strip_prefix("pub") {
        rest = r;
        if let Some(r) = rest.strip_prefix('(') {
            rest = &r[r.find(')')? + 1..];
        }
        rest = rest.strip_prefix(' ')?;
    }
    let rest = rest.strip_prefix("mod ")?.trim_start();
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, tail) = rest.split_at(end);
    let tail = tail.trim_start();
    let ok = tail.starts_with(';') || (!file_only && tail.starts_with('{'));
    (!name.is_empty() && ok).then_some(name)
}

/// Whether the root file declares module `module` at its top level.
pub(crate) fn declares_module(source: &str, module: &str) -> bool {
    split(source)
        .0
        .iter()
        .any(|l| module_of(l, false) == Some(module))
}

/// The first line of the attributes and comments above line `at`: they
/// belong to it.
fn start_of_item(lines: &[&str], at: usize) -> usize {
    let mut start = at;
    while start > 0 {
        let above = lines[start - 1];
        if above.starts_with("#[") || (above.starts_with("//") && !above.starts_with("//!")) {
            start -= 1;
        } else {
            break;
        }
    }
    start
}

/// The line after the file's header: inner doc comments (`//!`), inner
/// attributes (`#![…]`, over several lines too) and the blank lines
/// between them.
fn after_header(lines: &[&str]) -> usize {
    let mut at = 0;
    let mut depth = 0i32;
    while at < lines.len() {
        let line = lines[at].trim();
        if depth > 0 || line.starts_with("#![") {
            depth += line.matches('[').count() as i32 - line.matches(']').count() as i32;
            at += 1;
        } else if line.starts_with("//!") || line.is_empty() {
            at += 1;
        } else {
            break;
        }
    }
    // Stop after the header's last line, not after the blanks below it.
    while at > 0 && lines[at - 1].trim().is_empty() {
        at -= 1;
    }
    at
}

/// Inserts `item` (its lines: attributes, then `mod x;`) among the
/// top-level `mod x;` declarations, in name order; or, in a file without
/// any, after its header, set apart by blank lines. `None` when `module` is
/// already declared.
pub(crate) fn add_module(source: &str, module: &str, item: &[String]) -> Option<String> {
    if declares_module(source, module) {
        return None;
    }
    let (lines, ends) = split(source);
    let declared: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| module_of(l, true).map(|m| (i, m)))
        .collect();
    Some(insert_among(
        &lines,
        ends,
        newline(source),
        &declared,
        module,
        item,
    ))
}

/// The module a `pub use module::…;` line at the top level re-exports from.
fn reexport_of(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("pub use ")?;
    let end = rest.find("::")?;
    let module = &rest[..end];
    module
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_')
        .then_some(module)
}

/// Inserts `item` (attributes, then `pub use module::Type;`) among the
/// top-level `pub use module::…;` lines, in module order; or, with none,
/// after the last `mod` declaration. `None` when `line` is already there.
pub(crate) fn add_reexport(source: &str, module: &str, item: &[String]) -> Option<String> {
    let (lines, ends) = split(source);
    let last = item.last()?;
    if lines.iter().any(|l| l.trim() == last.trim()) {
        return None;
    }
    let exported: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| reexport_of(l).map(|m| (i, m)))
        .collect();
    if exported.is_empty() {
        let declared: Vec<(usize, &str)> = lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| module_of(l, true).map(|m| (i, m)))
            .collect();
        if let Some(&(last_mod, _)) = declared.last() {
            let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
            let mut block = vec![String::new()];
            block.extend(item.iter().cloned());
            out.splice(last_mod + 1..last_mod + 1, block);
            return Some(join(&out, newline(source), ends));
        }
    }
    Some(insert_among(
        &lines,
        ends,
        newline(source),
        &exported,
        module,
        item,
    ))
}

/// Inserts `item` before the first of `sorted` whose name is after `name`
/// (with that item's attributes), after the last of them, or, with none,
/// after the header.
fn insert_among(
    lines: &[&str],
    ends: bool,
    newline: &str,
    sorted: &[(usize, &str)],
    name: &str,
    item: &[String],
) -> String {
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let mut block: Vec<String> = item.to_vec();
    let at = match sorted.iter().find(|(_, n)| *n > name) {
        Some(&(line, _)) => start_of_item(lines, line),
        None => match sorted.last() {
            Some(&(line, _)) => line + 1,
            None => {
                let at = after_header(lines);
                if at > 0 {
                    block.insert(0, String::new());
                }
                if lines.get(at).is_some_and(|l| !l.trim().is_empty()) {
                    block.push(String::new());
                }
                at
            }
        },
    };
    out.splice(at..at, block);
    join(&out, newline, ends)
}

/// The table a manifest line opens (`[dev-dependencies]` → `dev-dependencies`).
fn table_of(line: &str) -> Option<String> {
    let line = line.split('#').next()?.trim();
    let inner = line.strip_prefix('[')?.strip_suffix(']')?;
    if inner.starts_with('[') {
        return None; // an array of tables, `[[bin]]`
    }
    Some(inner.split_whitespace().collect())
}

/// The key a manifest line sets, if it sets one at its start.
fn key_of(line: &str) -> Option<&str> {
    let line = line.trim();
    if line.starts_with('#') || line.starts_with('[') {
        return None;
    }
    let key = line.split('=').next()?.trim();
    (!key.is_empty() && key.len() < line.len()).then_some(key.trim_matches('"'))
}

/// Adds each `(key, line)` to `[table]` of a `Cargo.toml`, after the
/// table's last entry (or in a new table at the end); a key the table
/// already sets is left alone. `None` when nothing is added.
pub(crate) fn add_to_table(
    manifest: &str,
    table: &str,
    entries: &[(String, String)],
) -> Option<String> {
    let (lines, ends) = split(manifest);
    let header = lines
        .iter()
        .position(|l| table_of(l).as_deref() == Some(table));
    let (mut out, at, keys): (Vec<String>, usize, Vec<&str>) = match header {
        Some(h) => {
            let end = lines[h + 1..]
                .iter()
                .position(|l| table_of(l).is_some() || l.trim_start().starts_with("[["))
                .map_or(lines.len(), |p| h + 1 + p);
            let last = (h + 1..end)
                .rev()
                .find(|&i| {
                    let l = lines[i].trim();
                    !l.is_empty() && !l.starts_with('#')
                })
                .unwrap_or(h);
            let keys = lines[h + 1..end].iter().filter_map(|l| key_of(l)).collect();
            (
                lines.iter().map(|l| (*l).to_owned()).collect(),
                last + 1,
                keys,
            )
        }
        None => {
            let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
            if out.last().is_some_and(|l| !l.trim().is_empty()) {
                out.push(String::new());
            }
            out.push(format!("[{table}]"));
            let at = out.len();
            (out, at, Vec::new())
        }
    };
    let new: Vec<String> = entries
        .iter()
        .filter(|(key, _)| !keys.contains(&key.as_str()))
        .map(|(_, line)| line.clone())
        .collect();
    if new.is_empty() {
        return None;
    }
    out.splice(at..at, new);
    Some(join(&out, newline(manifest), ends || header.is_none()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| (*l).to_owned()).collect()
    }

    #[test]
    fn a_module_goes_in_name_order_with_its_attributes() {
        let source = "//! Tools.\n\n#![deny(unsafe_code)]\n\n#[cfg(feature = \"fs\")]\npub mod edit;\n#[cfg(feature = \"shell\")]\n#[cfg(unix)]\npub mod grep;\nmod text;\n\nuse x::Y;\n";
        let out = add_module(
            source,
            "fetch",
            &item(&["#[cfg(feature = \"web\")]", "pub mod fetch;"]),
        )
        .unwrap();
        assert_eq!(
            out,
            "//! Tools.\n\n#![deny(unsafe_code)]\n\n#[cfg(feature = \"fs\")]\npub mod edit;\n#[cfg(feature = \"web\")]\npub mod fetch;\n#[cfg(feature = \"shell\")]\n#[cfg(unix)]\npub mod grep;\nmod text;\n\nuse x::Y;\n"
        );
        // Twice: nothing more.
        assert_eq!(add_module(&out, "fetch", &item(&["pub mod fetch;"])), None);
        // Last in order: after the last declaration.
        let out = add_module(source, "zebra", &item(&["pub mod zebra;"])).unwrap();
        assert!(
            out.contains("mod text;\npub mod zebra;\n\nuse x::Y;"),
            "{out}"
        );
    }

    #[test]
    fn a_file_without_modules_gets_one_after_its_header() {
        let fresh = "pub fn add(left: u64, right: u64) -> u64 {\n    left + right\n}\n";
        assert_eq!(
            add_module(fresh, "weather", &item(&["pub mod weather;"])).unwrap(),
            format!("pub mod weather;\n\n{fresh}")
        );
        let documented =
            "//! My crate.\n#![cfg_attr(\n    docsrs,\n    feature(doc_cfg)\n)]\nfn main() {}\n";
        assert_eq!(
            add_module(documented, "weather", &item(&["mod weather;"])).unwrap(),
            "//! My crate.\n#![cfg_attr(\n    docsrs,\n    feature(doc_cfg)\n)]\n\nmod weather;\n\nfn main() {}\n"
        );
        assert_eq!(add_module("", "w", &item(&["mod w;"])).unwrap(), "mod w;\n");
    }

    #[test]
    fn inline_modules_count_as_declared_and_crlf_is_kept() {
        assert!(declares_module("mod weather {\n}\n", "weather"));
        assert!(declares_module("pub(crate) mod weather;\n", "weather"));
        assert!(!declares_module("    mod weather;\n", "weather"));
        assert!(!declares_module("// mod weather;\n", "weather"));
        let crlf = "mod a;\r\nmod c;\r\n\r\nfn f() {}\r\n";
        assert_eq!(
            add_module(crlf, "b", &item(&["mod b;"])).unwrap(),
            "mod a;\r\nmod b;\r\nmod c;\r\n\r\nfn f() {}\r\n"
        );
    }

    #[test]
    fn reexports_go_in_module_order() {
        let source =
            "mod a;\nmod z;\n\n#[cfg(feature = \"fs\")]\npub use a::ATool;\npub use z::ZTool;\n";
        let out = add_reexport(
            source,
            "m",
            &item(&["#[cfg(feature = \"fs\")]", "pub use m::MTool;"]),
        )
        .unwrap();
        assert_eq!(
            out,
            "mod a;\nmod z;\n\n#[cfg(feature = \"fs\")]\npub use a::ATool;\n#[cfg(feature = \"fs\")]\npub use m::MTool;\npub use z::ZTool;\n"
        );
        assert_eq!(add_reexport(&out, "m", &item(&["pub use m::MTool;"])), None);
        // No re-exports yet: after the modules.
        assert_eq!(
            add_reexport("mod a;\nfn f() {}\n", "a", &item(&["pub use a::ATool;"])).unwrap(),
            "mod a;\n\npub use a::ATool;\nfn f() {}\n"
        );
    }

    #[test]
    fn manifest_tables_gain_lines_and_keep_the_rest() {
        let manifest = "[package]\nname = \"x\" # mine\n\n[dependencies]\ntoolprism = { path = \"../runtime\" }\n# a comment\nserde = { version = \"1\", features = [\n    \"derive\",\n] }\n\n# about tests\n[dev-dependencies]\ntempfile = \"3\"\n";
        let entries = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, l)| ((*k).to_owned(), (*l).to_owned()))
                .collect()
        };
        let out = add_to_table(
            manifest,
            "dependencies",
            &entries(&[("schemars", "schemars = \"1\""), ("serde", "serde = \"9\"")]),
        )
        .unwrap();
        assert_eq!(
            out,
            manifest.replace(
                "    \"derive\",\n] }\n",
                "    \"derive\",\n] }\nschemars = \"1\"\n"
            )
        );
        let out = add_to_table(
            &out,
            "dev-dependencies",
            &entries(&[("serde_json", "serde_json = \"1\"")]),
        )
        .unwrap();
        assert!(
            out.ends_with("tempfile = \"3\"\nserde_json = \"1\"\n"),
            "{out}"
        );
        assert_eq!(
            add_to_table(
                &out,
                "dev-dependencies",
                &entries(&[("serde_json", "serde_json = \"2\"")])
            ),
            None
        );
        // A table that is not there yet: at the end.
        let out = add_to_table(
            "[package]\nname = \"x\"",
            "features",
            &entries(&[("w", "w = []")]),
        )
        .unwrap();
        assert_eq!(out, "[package]\nname = \"x\"\n\n[features]\nw = []\n");
        // `[ features ]` with spaces and a comment is the same table.
        let out = add_to_table(
            "[ features ] # flags\nfs = []\n\n[lints]\n",
            "features",
            &entries(&[("w", "w = []")]),
        )
        .unwrap();
        assert_eq!(out, "[ features ] # flags\nfs = []\nw = []\n\n[lints]\n");
    }
}
