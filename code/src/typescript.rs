//! Erasable TypeScript annotations, blanked before a program runs
//! (feature `typescript`): `swc_ts_fast_strip` in strip-only mode replaces
//! every type by spaces, so the program keeps its length, its lines and its
//! columns, and an error still points into the text the model wrote.
//!
//! The program is the body of an async function, so it is stripped inside
//! the same kind of wrapper (top-level `return` and `await` parse there)
//! and unwrapped again at the same byte offsets.

use swc_common::errors::Handler;
use swc_common::sync::Lrc;
use swc_common::{GLOBALS, Globals, SourceMap};
use swc_ts_fast_strip::{Mode, Options, operate};

const PREFIX: &str = "(async function __program() {";
const SUFFIX: &str = "\n})";

/// `program` with its type annotations blanked, or `None` when it does not
/// parse as TypeScript (then the engine reports the program's own syntax
/// error as JavaScript).
pub(crate) fn strip(program: &str) -> Option<String> {
    let wrapped = format!("{PREFIX}{program}{SUFFIX}");
    let stripped = GLOBALS.set(&Globals::new(), || {
        let map: Lrc<SourceMap> = Lrc::default();
        // Diagnostics are not needed: the engine reports its own.
        let handler = Handler::with_emitter_writer(Box::new(std::io::sink()), None);
        let options = Options {
            module: Some(false),
            mode: Mode::StripOnly,
            ..Default::default()
        };
        operate(&map, &handler, wrapped.clone(), options).ok()
    })?;
    let code = stripped.code;
    (code.len() == wrapped.len() && code.starts_with(PREFIX) && code.ends_with(SUFFIX))
        .then(|| code[PREFIX.len()..code.len() - SUFFIX.len()].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_become_spaces_and_positions_stay() {
        let program =
            "const x: number = 1;\ninterface I { a: number }\nlet y = x as number;\nreturn y;";
        let stripped = strip(program).unwrap();
        assert_eq!(stripped.len(), program.len());
        assert_eq!(stripped.lines().count(), program.lines().count());
        assert!(!stripped.contains("number"), "{stripped}");
        assert!(stripped.contains("return y;"));
        // Plain JavaScript passes unchanged.
        let js = "const a = [1, 2].map((n) => n * 2);\nreturn a;";
        assert_eq!(strip(js).unwrap(), js);
        // Not TypeScript either: left to the engine's own error.
        assert_eq!(strip("const a: = 1;"), None);
    }
}
