//! Tool names and "did you mean" suggestions.

/// The default tool name for a type: snake_case, without a trailing `Tool`
/// (`WebFetchTool` → `web_fetch`, `Echo` → `echo`, `HTTPGet` → `http_get`).
pub(crate) fn default_tool_name(type_name: &str) -> String {
    let type_name = type_name.trim_start_matches("r#");
    let stem = match type_name.strip_suffix("Tool") {
        Some(stem) if !stem.is_empty() => stem.trim_end_matches('_'),
        _ => type_name,
    };
    snake_case(stem)
}

fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                None | Some('_') => false,
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                // The last capital of an acronym starts a word: `HTTPGet` → `http_get`.
                Some(p) if p.is_uppercase() => next.is_some_and(char::is_lowercase),
                Some(_) => false,
            };
            if boundary {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Why `name` is not a valid tool name (`[A-Za-z0-9_-]{1,64}`, K9), if it
/// is not. The registry (`toolprism-core`) checks the same rule when a tool
/// is registered, and `cargo toolprism new` before it scaffolds one; a proc
/// macro cannot depend on the registry, so the rule is written in each
/// crate, and a test of `cargo-toolprism` (`name_rule`) compiles this file
/// and pins the three equal over a corpus of names.
pub(crate) fn tool_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".to_owned());
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        let shown = match bad {
            ' ' => "a space".to_owned(),
            c if c.is_whitespace() || c.is_control() => format!("`{}`", c.escape_debug()),
            c => format!("`{c}`"),
        };
        return Some(format!("contains {shown}"));
    }
    let len = name.chars().count();
    if len > 64 {
        return Some(format!("is {len} characters long"));
    }
    None
}

/// The candidate closest to `word`, if one is close enough to be what the
/// user meant.
pub(crate) fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let word_lower = word.to_ascii_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for &candidate in candidates {
        let distance = osa_distance(&word_lower, candidate);
        let limit = (candidate.len().max(word_lower.len()) / 3).max(1);
        let prefix = word_lower.len() >= 3
            && (candidate.starts_with(&word_lower) || word_lower.starts_with(candidate));
        if distance <= limit || prefix {
            let score = if prefix {
                distance.min(limit)
            } else {
                distance
            };
            if best.is_none_or(|(b, _)| score < b) {
                best = Some((score, candidate));
            }
        }
    }
    best.map(|(_, c)| c)
}

/// Optimal string alignment distance: edits, where swapping two adjacent
/// characters counts as one (`read_olny` is one edit from `read_only`).
fn osa_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names() {
        assert_eq!(default_tool_name("WebFetchTool"), "web_fetch");
        assert_eq!(default_tool_name("Echo"), "echo");
        assert_eq!(default_tool_name("ReadTool"), "read");
        assert_eq!(default_tool_name("Tool"), "tool");
        assert_eq!(default_tool_name("HTTPGetTool"), "http_get");
        assert_eq!(default_tool_name("Sha256Sum"), "sha256_sum");
        assert_eq!(default_tool_name("already_snake"), "already_snake");
    }

    #[test]
    fn names() {
        assert_eq!(tool_name_problem("read"), None);
        assert_eq!(tool_name_problem("web-fetch_2"), None);
        assert_eq!(tool_name_problem("read file").unwrap(), "contains a space");
        assert_eq!(tool_name_problem("").unwrap(), "is empty");
        assert_eq!(tool_name_problem(&"a".repeat(64)), None);
        assert_eq!(
            tool_name_problem(&"a".repeat(65)).unwrap(),
            "is 65 characters long"
        );
        assert_eq!(tool_name_problem("läs").unwrap(), "contains `ä`");
    }

    #[test]
    fn suggestions() {
        let keys = ["name", "read_only", "timeout_ms", "kind", "open_world"];
        assert_eq!(closest("read_olny", &keys), Some("read_only"));
        assert_eq!(closest("readonly", &keys), Some("read_only"));
        assert_eq!(closest("timeout", &keys), Some("timeout_ms"));
        assert_eq!(closest("nmae", &keys), Some("name"));
        assert_eq!(closest("zzz", &keys), None);
        let kinds = ["read", "edit", "delete", "move", "search"];
        assert_eq!(closest("reed", &kinds), Some("read"));
        assert_eq!(closest("Search", &kinds), Some("search"));
    }
}
