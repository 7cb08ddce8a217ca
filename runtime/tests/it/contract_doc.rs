//! docs/contract.md kept honest. The document states every rule under an
//! ID (C1–C15, K1–K10, W…, P…) and lists, under **Guarded by:**, the tests
//! that fail when the rule breaks. This file reads it and fails when:
//!
//! - a rule has no guard (only a rule whose status is `planned` may say
//!   "nothing yet"), or one of C1–C15, K1–K10 is missing or given twice;
//! - a guard names a file that does not exist, or a test that is not a
//!   test function of that file (a test renamed without updating the
//!   document), or a trybuild case without its `.rs` (and, under
//!   `ui-tests/fail/`, its `.stderr`);
//! - a link or an anchor in the document leads nowhere;
//! - a test in `runtime/tests` is named after a rule (`c9_…`) that does not
//!   list it;
//! - a file in `runtime/tests` cites the design brief or an issue number
//!   instead of a rule ID;
//! - a `.rs`, `.md` or `.toml` file of the repository cites a path outside
//!   it (the reference material next to the checkout, which a clone does
//!   not have): the rules are stated here, in docs/contract.md, and in the
//!   modules that keep them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The workspace root: the parent of this crate (`runtime/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("runtime/ sits in the workspace")
        .to_path_buf()
}

fn contract() -> String {
    fs::read_to_string(root().join("docs/contract.md")).expect("docs/contract.md exists")
}

// ---------------------------------------------------------------------------
// Reading the document
// ---------------------------------------------------------------------------

/// A heading and what follows it, up to the next heading.
#[derive(Debug)]
struct Section {
    /// The rule ID when the heading starts with one (`C9`, `K1`, `W2`).
    id: Option<String>,
    title: String,
    line: usize,
    /// `partial` or `planned`, from a `**Status: …**` line.
    status: Option<String>,
    guarded: Option<Guarded>,
}

#[derive(Debug)]
enum Guarded {
    /// `**Guarded by:**` followed by a list.
    Entries(Vec<Entry>),
    /// `**Guarded by:** nothing yet (planned).`
    NothingYet,
}

/// One item of a **Guarded by:** list: a link to a file or directory
/// (relative to docs/) and the test names after it, in backticks.
#[derive(Debug)]
struct Entry {
    line: usize,
    text: String,
    target: String,
    names: Vec<String>,
}

/// Whether `word` is a rule ID: one capital letter of C, K, W, P, then digits.
fn is_rule_id(word: &str) -> bool {
    let mut chars = word.chars();
    matches!(chars.next(), Some('C' | 'K' | 'W' | 'P'))
        && !chars.as_str().is_empty()
        && chars.all(|c| c.is_ascii_digit())
}

/// The lines of `doc` outside fenced code blocks, numbered from 1.
fn prose_lines(doc: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in doc.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

fn heading(line: &str) -> Option<&str> {
    let title = line.trim_start_matches('#');
    (line.starts_with('#') && title.starts_with(' ')).then(|| title.trim())
}

/// Every backticked span of `text`.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Every `[text](target)` link of `text`.
fn links(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        rest = &rest[open + 1..];
        let Some(close) = rest.find("](") else { break };
        let label = &rest[..close];
        let after = &rest[close + 2..];
        let Some(end) = after.find(')') else { break };
        out.push((label.to_owned(), after[..end].to_owned()));
        rest = &after[end + 1..];
    }
    out
}

fn parse_entry(line: usize, item: &str) -> Result<Entry, String> {
    let found = links(item);
    let [(text, target)] = found.as_slice() else {
        return Err(format!(
            "line {line}: a guard names exactly one file or directory as a link, found {}",
            found.len()
        ));
    };
    let after_link = &item[item.find(&format!("]({target})")).unwrap() + target.len() + 3..];
    Ok(Entry {
        line,
        text: text.clone(),
        target: target.clone(),
        names: backticked(after_link),
    })
}

fn parse(doc: &str) -> (Vec<Section>, Vec<String>) {
    let mut sections: Vec<Section> = Vec::new();
    let mut problems = Vec::new();
    let lines = prose_lines(doc);
    let mut i = 0;
    while i < lines.len() {
        let (n, line) = lines[i];
        i += 1;
        if let Some(title) = heading(line) {
            let first = title.split_whitespace().next().unwrap_or("");
            sections.push(Section {
                id: is_rule_id(first).then(|| first.to_owned()),
                title: title.to_owned(),
                line: n,
                status: None,
                guarded: None,
            });
            continue;
        }
        let Some(section) = sections.last_mut() else {
            continue;
        };
        if let Some(rest) = line.strip_prefix("**Status: ") {
            let word: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
            section.status = Some(word);
        }
        let Some(rest) = line.strip_prefix("**Guarded by:**") else {
            continue;
        };
        if section.guarded.is_some() {
            problems.push(format!("line {n}: a second **Guarded by:** in one section"));
        }
        let rest = rest.trim();
        if !rest.is_empty() {
            if rest == "nothing yet (planned)." {
                section.guarded = Some(Guarded::NothingYet);
            } else {
                problems.push(format!(
                    "line {n}: **Guarded by:** is followed by a list, or by `nothing yet (planned).`"
                ));
            }
            continue;
        }
        let mut entries = Vec::new();
        while i < lines.len() {
            let (m, item) = lines[i];
            if let Some(item) = item.strip_prefix("- ") {
                match parse_entry(m, item) {
                    Ok(entry) => entries.push(entry),
                    Err(problem) => problems.push(problem),
                }
            } else if !(item.trim().is_empty() && entries.is_empty()) {
                break;
            }
            i += 1;
        }
        section.guarded = Some(Guarded::Entries(entries));
    }
    (sections, problems)
}

// ---------------------------------------------------------------------------
// Reading the tests a guard names
// ---------------------------------------------------------------------------

/// The functions a Rust file defines, and which of them are tests (under a
/// `#[test]`, `#[tokio::test]`, … attribute).
fn functions(source: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut all, mut tests) = (BTreeSet::new(), BTreeSet::new());
    let mut under_test_attribute = false;
    for line in source.lines() {
        let line = line.trim_start();
        if line.starts_with("#[") {
            under_test_attribute |= line.contains("test");
            continue;
        }
        if line.starts_with("//") {
            continue;
        }
        let mut words = line.split_whitespace();
        while let Some(word) = words.next() {
            if word == "fn" {
                if let Some(name) = words.next() {
                    let name: String = name
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if under_test_attribute {
                        tests.insert(name.clone());
                    }
                    all.insert(name);
                }
                break;
            }
            if !matches!(word, "pub" | "pub(crate)" | "async" | "const" | "unsafe") {
                break;
            }
        }
        under_test_attribute = false;
    }
    (all, tests)
}

fn check_entry(root: &Path, entry: &Entry) -> Vec<String> {
    let at = format!("line {}", entry.line);
    let Some(rel) = entry.target.strip_prefix("../") else {
        return vec![format!(
            "{at}: `{}` should be a path relative to docs/ (starting with ../)",
            entry.target
        )];
    };
    let mut problems = Vec::new();
    if entry.text != rel {
        problems.push(format!(
            "{at}: the link reads `{}` but leads to `{rel}`",
            entry.text
        ));
    }
    let path = root.join(rel);
    if !path.exists() {
        problems.push(format!("{at}: `{rel}` does not exist"));
        return problems;
    }
    if path.is_dir() {
        if entry.names.is_empty() {
            problems.push(format!("{at}: `{rel}` is a directory: name its cases"));
        }
        let fail = path.file_name().is_some_and(|n| n == "fail");
        for name in &entry.names {
            let mut wanted = vec![format!("{name}.rs")];
            if fail {
                wanted.push(format!("{name}.stderr"));
            }
            for file in wanted {
                if !path.join(&file).is_file() {
                    problems.push(format!("{at}: `{rel}{file}` does not exist"));
                }
            }
        }
        return problems;
    }
    if entry.names.is_empty() {
        let case = rel.starts_with("ui-tests/fail/") || rel.starts_with("ui-tests/pass/");
        if !case {
            problems.push(format!("{at}: `{rel}` is listed without a test name"));
        } else if rel.starts_with("ui-tests/fail/") && !path.with_extension("stderr").is_file() {
            problems.push(format!("{at}: `{rel}` has no .stderr next to it"));
        }
        return problems;
    }
    if path.extension().is_none_or(|e| e != "rs") {
        problems.push(format!(
            "{at}: `{rel}` is not a Rust file, so it has no tests to name"
        ));
        return problems;
    }
    let source = fs::read_to_string(&path).unwrap();
    let (all, tests) = functions(&source);
    // A file with a harness of its own (`harness = false`) marks no tests:
    // there, any function of that name counts.
    let known = if tests.is_empty() { &all } else { &tests };
    for name in &entry.names {
        if !known.contains(name) {
            problems.push(format!(
                "{at}: `{rel}` has no test `fn {name}` (renamed or removed? update docs/contract.md)"
            ));
        }
    }
    problems
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, punctuation dropped.
fn anchor(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every problem of `doc`, with `root` as the workspace root.
fn check(doc: &str, root: &Path) -> Vec<String> {
    let (sections, mut problems) = parse(doc);

    let mut seen = BTreeMap::new();
    for section in &sections {
        if let Some(id) = &section.id
            && let Some(first) = seen.insert(id.clone(), section.line)
        {
            problems.push(format!(
                "line {}: {id} is already the rule of line {first}",
                section.line
            ));
        }
    }
    let required = (1..=15)
        .map(|n| format!("C{n}"))
        .chain((1..=10).map(|n| format!("K{n}")));
    for id in required {
        if !seen.contains_key(&id) {
            problems.push(format!("rule {id} is missing: the code and tests cite it"));
        }
    }

    for section in &sections {
        let at = format!("line {}", section.line);
        let planned = section.status.as_deref() == Some("planned");
        if let Some(status) = &section.status
            && !matches!(status.as_str(), "partial" | "planned")
        {
            problems.push(format!(
                "{at}: status `{status}`: a rule is `partial`, `planned`, or says nothing"
            ));
        }
        match (&section.id, &section.guarded) {
            (Some(id), None) => problems.push(format!("{at}: {id} has no **Guarded by:**")),
            (Some(id), Some(Guarded::Entries(entries))) if entries.is_empty() => {
                problems.push(format!("{at}: {id} lists no guard"));
            }
            (Some(id), Some(Guarded::NothingYet)) if !planned => problems.push(format!(
                "{at}: {id} is not planned, so a test must guard it"
            )),
            (None, Some(Guarded::NothingYet)) => problems.push(format!(
                "{at}: `{}` is not a rule, and says nothing yet guards it",
                section.title
            )),
            _ => {}
        }
        if let Some(Guarded::Entries(entries)) = &section.guarded {
            for entry in entries {
                problems.extend(check_entry(root, entry));
            }
        }
    }

    let anchors: BTreeSet<String> = sections.iter().map(|s| anchor(&s.title)).collect();
    for (n, line) in prose_lines(doc) {
        for (_, target) in links(line) {
            if let Some(name) = target.strip_prefix('#') {
                if !anchors.contains(name) {
                    problems.push(format!("line {n}: no heading has the anchor `{target}`"));
                }
            } else if !target.contains("://") {
                let Some(rel) = target.strip_prefix("../") else {
                    problems.push(format!(
                        "line {n}: `{target}` should be relative to docs/ (../…)"
                    ));
                    continue;
                };
                if !root.join(rel).exists() {
                    problems.push(format!("line {n}: `{rel}` does not exist"));
                }
            }
        }
    }
    problems
}

/// The tests each rule lists, by rule ID, as `(file, test name)`.
fn guards_by_rule(doc: &str) -> BTreeMap<String, BTreeSet<(String, String)>> {
    let mut out: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for section in parse(doc).0 {
        let (Some(id), Some(Guarded::Entries(entries))) = (section.id, section.guarded) else {
            continue;
        };
        let listed = out.entry(id).or_default();
        for entry in entries {
            let file = entry.target.trim_start_matches("../").to_owned();
            listed.extend(entry.names.into_iter().map(|name| (file.clone(), name)));
        }
    }
    out
}

/// Every file under `dir`, recursively, with its path relative to `root`.
fn files_under(root: &Path, dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(files_under(root, &path));
        } else {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, path));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

#[test]
fn every_rule_is_guarded_by_tests_that_exist() {
    let problems = check(&contract(), &root());
    assert!(
        problems.is_empty(),
        "docs/contract.md:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn every_test_named_after_a_rule_is_listed_under_that_rule() {
    let root = root();
    let guards = guards_by_rule(&contract());
    let mut problems = Vec::new();
    for (rel, path) in files_under(&root, &root.join("runtime/tests")) {
        if !rel.ends_with(".rs") {
            continue;
        }
        let (_, tests) = functions(&fs::read_to_string(&path).unwrap());
        for test in tests {
            let Some((prefix, _)) = test.split_once('_') else {
                continue;
            };
            let id = prefix.to_uppercase();
            if !is_rule_id(&id) {
                continue;
            }
            let listed = guards
                .get(&id)
                .is_some_and(|g| g.contains(&(rel.clone(), test.clone())));
            if !listed {
                problems.push(format!(
                    "{rel}: `{test}` is named after {id}, but {id} in docs/contract.md does not list it"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn runtime_tests_cite_rule_ids_not_the_brief_or_issue_numbers() {
    let root = root();
    // Spelled in pieces, so this file does not find itself.
    let brief = ["DES", "IGN"].concat();
    let mut problems = Vec::new();
    for (rel, path) in files_under(&root, &root.join("runtime/tests")) {
        if !(rel.ends_with(".rs") || rel.ends_with(".py")) {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let issue = lower.match_indices("issue").any(|(at, word)| {
                let rest = lower[at + word.len()..].trim_start_matches([' ', '#']);
                rest.starts_with(|c: char| c.is_ascii_digit())
            });
            if line.contains(&brief) || issue {
                problems.push(format!(
                    "{rel}:{}: cite the rule ID and docs/contract.md instead: {}",
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every `.rs`, `.md` and `.toml` file of the repository, with its path
/// relative to `root`: build output (`target/`), npm installs
/// (`node_modules/`) and git's own directory left out.
fn repository_sources(root: &Path, dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), "target" | "node_modules" | ".git") {
                out.extend(repository_sources(root, &path));
            }
        } else if [".rs", ".md", ".toml"].iter().any(|e| name.ends_with(e)) {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, path));
        }
    }
    out
}

/// The lines of `text` that cite a path outside the repository: the
/// reference material kept in a `shared` directory next to a checkout
/// (its `reference` folder, or any path up into it), which a clone does
/// not have.
fn outside_citations(text: &str) -> Vec<(usize, &str)> {
    // Spelled in pieces, so this file does not find itself.
    let shared = ["sha", "red/"].concat();
    let needles = [format!("{shared}reference"), format!("../{shared}")];
    text.lines()
        .enumerate()
        .filter(|(_, line)| needles.iter().any(|n| line.contains(n.as_str())))
        .map(|(n, line)| (n + 1, line))
        .collect()
}

#[test]
fn no_file_cites_a_path_outside_the_repository() {
    let root = root();
    let files = repository_sources(&root, &root);
    assert!(
        files
            .iter()
            .any(|(rel, _)| rel == "provider/src/dialect/dsh.rs")
            && files.iter().any(|(rel, _)| rel == "docs/contract.md")
            && files.iter().any(|(rel, _)| rel == "Cargo.toml"),
        "the walk reaches the sources: {} files",
        files.len()
    );
    let mut problems = Vec::new();
    for (rel, path) in files {
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        for (n, line) in outside_citations(&text) {
            problems.push(format!(
                "{rel}:{n}: cites a path outside the repository; cite docs/contract.md or state the rule where it is kept: {}",
                line.trim()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The check itself finds both spellings.
    let shared = ["sha", "red/"].concat();
    let sample = format!("a\n//! see `{shared}reference/x.md`\n[y](../../{shared}y.md)\n");
    assert_eq!(
        outside_citations(&sample)
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>(),
        [2, 3]
    );
}

#[test]
fn the_checker_catches_renamed_tests_missing_files_and_unguarded_rules() {
    let doc = "\
# A contract

Read [the rules](#the-rules) or [a file](../no/such/file.md).

### C1 Value

**Guarded by:**

- [runtime/tests/it/pipeline.rs](../runtime/tests/it/pipeline.rs) `c9_unknown_tool`, `c9_a_test_that_was_renamed`
- [runtime/tests/gone.rs](../runtime/tests/gone.rs) `anything`
- [runtime/tests/it/macro_tool.rs](../runtime/tests/it/pipeline.rs) `c9_unknown_tool`
- [runtime/tests/it/pipeline.rs](../runtime/tests/it/pipeline.rs) `fixture`
- [ui-tests/fail/](../ui-tests/fail/) `missing-render`, `no-such-case`
- [ui-tests/pass/](../ui-tests/pass/) `missing-render`

### C2 Checked

Nothing guards this one.

### C3 Lossless

**Guarded by:**

Text, but no list.

### W8 Not planned

**Guarded by:** nothing yet (planned).

### W9 Planned

**Status: planned.** Not built.

**Guarded by:** nothing yet (planned).

### C1 Twice

**Guarded by:**

- [ui-tests/fail/missing-render.rs](../ui-tests/fail/missing-render.rs)
";
    let problems = check(doc, &root());
    let all = problems.join("\n");
    for expected in [
        "has no test `fn c9_a_test_that_was_renamed`",
        "`runtime/tests/gone.rs` does not exist",
        "the link reads `runtime/tests/it/macro_tool.rs` but leads to `runtime/tests/it/pipeline.rs`",
        "has no test `fn fixture`",
        "`ui-tests/fail/no-such-case.rs` does not exist",
        "`ui-tests/fail/no-such-case.stderr` does not exist",
        "`ui-tests/pass/missing-render.rs` does not exist",
        "C2 has no **Guarded by:**",
        "C3 lists no guard",
        "W8 is not planned",
        "C1 is already the rule of line",
        "rule C4 is missing",
        "rule K10 is missing",
        "no heading has the anchor `#the-rules`",
        "`no/such/file.md` does not exist",
    ] {
        assert!(all.contains(expected), "`{expected}` not found in:\n{all}");
    }
    for fine in ["fn c9_unknown_tool`", "ui-tests/fail/missing-render", "W9"] {
        assert!(!all.contains(fine), "`{fine}` should pass:\n{all}");
    }
}
