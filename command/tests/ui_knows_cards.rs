//! C8: a UI switches on the card tag, never on a tool's name. The terminal
//! renderer (`toolprism::cli::terminal`, which the showcase and every
//! `toolprism::cli` program draw with) is checked for any mention of a
//! tool, by name or by type, and its drawing functions for taking anything
//! but a card. (The HTML renderer's check is in `html/tests/it/html_render.rs`.)

use toolprism::Tool;
use toolprism_tools::{
    BashTool, EditTool, GlobTool, GrepTool, ReadTool, SqlQueryTool, WebFetchTool, WriteTool,
};

const RENDERER: &str = include_str!("../src/terminal.rs");

fn tools() -> Vec<(&'static str, &'static str)> {
    fn of<T: Tool>() -> (&'static str, &'static str) {
        let ty = std::any::type_name::<T>().rsplit("::").next().unwrap();
        (T::INFO.name, ty)
    }
    vec![
        of::<ReadTool>(),
        of::<GrepTool>(),
        of::<GlobTool>(),
        of::<BashTool>(),
        of::<EditTool>(),
        of::<WriteTool>(),
        of::<WebFetchTool>(),
        of::<SqlQueryTool>(),
    ]
}

#[test]
fn the_renderer_never_names_a_tool() {
    for (name, ty) in tools() {
        let quoted = format!("\"{name}\"");
        assert!(
            !RENDERER.contains(&quoted),
            "terminal.rs mentions the tool name {quoted}: draw from the card tag instead"
        );
        assert!(
            !RENDERER.contains(ty),
            "terminal.rs mentions the tool type `{ty}`: it must know cards, not tools"
        );
    }
}

#[test]
fn the_renderer_takes_only_cards() {
    // Its public drawing functions take a card and a style, nothing that
    // could carry a tool's identity.
    for line in RENDERER.lines().filter(|l| l.starts_with("pub fn draw")) {
        assert!(
            line.contains("card: &CallCard") || line.contains("card: &ResultCard"),
            "{line}"
        );
        assert!(!line.contains("name"), "{line}");
    }
}
