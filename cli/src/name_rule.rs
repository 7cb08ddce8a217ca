//! The tool-name rule, `[A-Za-z0-9_-]{1,64}` (K9), is checked in three
//! crates that cannot share one function:
//!
//! - the registry (`toolprism-core`), when a tool is registered: a name
//!   outside the rule is a problem of `Registry::builder().build()`;
//! - `#[tool]` (`toolprism-macros`), at compile time: a proc-macro crate
//!   cannot depend on the registry, and exports nothing but its macros;
//! - `cargo toolprism new` ([`crate::names::is_tool_name`]), before it
//!   writes anything: a scaffolder has no business compiling the registry.
//!
//! So the rule is written three times and pinned equal here, over a corpus
//! of names that sit on each edge of the rule. The macro's check is the
//! file `macros/src/names.rs` itself, compiled into this test (its own unit
//! tests come along and run here too); the registry's is its public
//! behaviour: a tool whose `ToolInfo` carries the name, registered and
//! built.

#[allow(dead_code)] // The file's name suggestions are not used here.
#[path = "../../macros/src/names.rs"]
mod macro_names;

use toolprism_core::{ContentBlock, NoMeta, Registry, Tool, ToolContext, ToolError, ToolInfo};

/// `a` repeated up to `N` bytes, ending with `tail`.
const fn padded<const N: usize>(tail: &str) -> [u8; N] {
    let mut out = [b'a'; N];
    let tail = tail.as_bytes();
    let mut i = 0;
    while i < tail.len() {
        out[N - tail.len() + i] = tail[i];
        i += 1;
    }
    out
}

/// `bytes` as text, for the consts below.
const fn utf8(bytes: &'static [u8]) -> &'static str {
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => panic!("a corpus name is not UTF-8"),
    }
}

const A64: [u8; 64] = padded("");
const A65: [u8; 65] = padded("");
/// 63 chars in 64 bytes: short enough counted either way, but not ASCII.
const A62_E: [u8; 64] = padded("é");
/// 64 chars in 65 bytes: the length counted in chars would pass.
const A63_E: [u8; 65] = padded("é");

/// Each name, and whether the rule allows it.
const CORPUS: [(&str, bool); 26] = [
    ("read", true),
    ("web_fetch", true),
    ("web-fetch_2", true),
    ("A", true),
    ("9", true),
    ("_", true),
    ("-", true),
    ("Z9_-z", true),
    (utf8(&A64), true),
    ("", false),
    (utf8(&A65), false),
    (" ", false),
    ("has space", false),
    ("tab\t", false),
    ("new\nline", false),
    ("nul\0", false),
    (".", false),
    ("dot.ted", false),
    ("a/b", false),
    ("läs", false),
    ("émoji", false),
    ("🦀", false),
    ("日本", false),
    ("\u{ff41}", false), // a fullwidth `a`
    (utf8(&A62_E), false),
    (utf8(&A63_E), false),
];

/// Arguments and value of a candidate: nothing.
#[derive(Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// A tool named `CORPUS[I].0`: `ToolInfo::name` is a const of the tool's
/// type, so each name gets a type.
struct Candidate<const I: usize>;

impl<const I: usize> Tool for Candidate<I> {
    type Args = Nothing;
    type Value = Nothing;
    type Meta = NoMeta;
    const INFO: ToolInfo = ToolInfo::new(CORPUS[I].0, "A name from the corpus.");

    async fn execute(&self, _: Nothing, _: &ToolContext<'_>) -> Result<Nothing, ToolError> {
        Ok(Nothing {})
    }

    fn render(_: &Nothing, _: &Nothing) -> Vec<ContentBlock> {
        Vec::new()
    }
}

/// Whether the registry takes `CORPUS[I].0`; a refusal must be the name's.
fn registry_allows<const I: usize>() -> bool {
    match Registry::builder().tool(Candidate::<I>).build() {
        Ok(registry) => registry.definition(CORPUS[I].0).is_some(),
        Err(e) => {
            assert!(
                e.problems().len() == 1 && e.problems()[0].contains("tool name"),
                "{:?} was refused for another reason: {e}",
                CORPUS[I].0
            );
            false
        }
    }
}

macro_rules! registry_verdicts {
    ($($i:literal)*) => {
        [$(registry_allows::<$i>()),*]
    };
}

#[test]
fn the_registry_the_macro_and_the_scaffolder_draw_one_line() {
    // The array's type makes the list of indices cover the corpus.
    let registry: [bool; CORPUS.len()] = registry_verdicts!(
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25
    );
    for (i, &(name, allowed)) in CORPUS.iter().enumerate() {
        let verdicts = (
            registry[i],
            macro_names::tool_name_problem(name).is_none(),
            crate::names::is_tool_name(name),
        );
        assert_eq!(
            verdicts,
            (allowed, allowed, allowed),
            "{name:?} (registry, #[tool], cargo toolprism new) should all be {allowed}"
        );
    }
}

#[test]
fn the_corpus_sits_on_the_edges() {
    assert_eq!((A64.len(), utf8(&A64).chars().count()), (64, 64));
    assert_eq!((A65.len(), utf8(&A65).chars().count()), (65, 65));
    assert_eq!((A62_E.len(), utf8(&A62_E).chars().count()), (64, 63));
    assert_eq!((A63_E.len(), utf8(&A63_E).chars().count()), (65, 64));
    let allowed = CORPUS.iter().filter(|(_, ok)| *ok).count();
    assert!(allowed > 0 && allowed < CORPUS.len());
}
