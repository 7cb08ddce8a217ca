//! The module templates: one file per card in `templates/`, with named
//! holes (`{{name}}`) filled by plain replacement.
//!
//! | hole | filled with | e.g. |
//! |---|---|---|
//! | `{{name}}` | the tool's name, as the model calls it | `web-fetch` |
//! | `{{Type}}` | the prefix of the module's types | `WebFetch` |
//! | `{{kind}}` | the kind, as `#[tool(kind = …)]` and the wire write it | `fetch` |
//! | `{{Kind}}` | the kind's `ToolKind` variant | `Fetch` |
//! | `{{flags}}` | more `#[tool]` keys, each after `, ` | `, read_only, builtin` |

use crate::names::Names;

/// The cards a tool can be scaffolded for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Card {
    /// The generic cards: a title over content.
    Generic,
    /// A command and its output with an exit code.
    Terminal,
    /// A change to a file.
    Diff,
    /// Numbered lines of a file.
    Read,
    /// Matches with a total.
    Search,
    /// Web sources.
    Web,
}

impl Card {
    /// The template's text.
    fn template(self) -> &'static str {
        match self {
            Card::Generic => include_str!("../templates/generic.rs.tmpl"),
            Card::Terminal => include_str!("../templates/terminal.rs.tmpl"),
            Card::Diff => include_str!("../templates/diff.rs.tmpl"),
            Card::Read => include_str!("../templates/read.rs.tmpl"),
            Card::Search => include_str!("../templates/search.rs.tmpl"),
            Card::Web => include_str!("../templates/web.rs.tmpl"),
        }
    }

    /// The kind a tool drawing this card usually has.
    pub(crate) fn default_kind(self) -> Kind {
        match self {
            Card::Generic => Kind::Other,
            Card::Terminal => Kind::Execute,
            Card::Diff => Kind::Edit,
            Card::Read => Kind::Read,
            Card::Search => Kind::Search,
            Card::Web => Kind::Fetch,
        }
    }

    /// The card's name, as `--card` takes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Card::Generic => "generic",
            Card::Terminal => "terminal",
            Card::Diff => "diff",
            Card::Read => "read",
            Card::Search => "search",
            Card::Web => "web",
        }
    }
}

/// The kinds of work a tool does (toolprism's `ToolKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Kind {
    /// Reads.
    Read,
    /// Edits.
    Edit,
    /// Deletes.
    Delete,
    /// Moves or renames.
    Move,
    /// Searches.
    Search,
    /// Runs something.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    Other,
}

impl Kind {
    /// `read`, as `#[tool(kind = read)]` and the wire write it.
    fn wire(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Edit => "edit",
            Kind::Delete => "delete",
            Kind::Move => "move",
            Kind::Search => "search",
            Kind::Execute => "execute",
            Kind::Fetch => "fetch",
            Kind::Other => "other",
        }
    }

    /// `Read`, the `ToolKind` variant.
    fn variant(self) -> &'static str {
        match self {
            Kind::Read => "Read",
            Kind::Edit => "Edit",
            Kind::Delete => "Delete",
            Kind::Move => "Move",
            Kind::Search => "Search",
            Kind::Execute => "Execute",
            Kind::Fetch => "Fetch",
            Kind::Other => "Other",
        }
    }
}

/// What goes into a template.
#[derive(Debug, Clone)]
pub(crate) struct Fill<'a> {
    pub(crate) names: &'a Names,
    pub(crate) card: Card,
    pub(crate) kind: Kind,
    pub(crate) read_only: bool,
    pub(crate) builtin: bool,
}

/// The module's source: the card's template with every hole filled.
pub(crate) fn render(fill: &Fill<'_>) -> String {
    let mut flags = String::new();
    if fill.read_only {
        flags.push_str(", read_only");
    }
    if fill.builtin {
        flags.push_str(", builtin");
    }
    let holes = [
        ("{{name}}", fill.names.tool.as_str()),
        ("{{Type}}", fill.names.types.as_str()),
        ("{{kind}}", fill.kind.wire()),
        ("{{Kind}}", fill.kind.variant()),
        ("{{flags}}", flags.as_str()),
    ];
    let mut text = fill.card.template().to_owned();
    for (hole, value) in holes {
        text = text.replace(hole, value);
    }
    text
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;

    #[test]
    fn every_hole_of_every_template_is_filled() {
        let names = Names::new("my-tool").unwrap();
        for &card in Card::value_variants() {
            for &kind in Kind::value_variants() {
                let text = render(&Fill {
                    names: &names,
                    card,
                    kind,
                    read_only: true,
                    builtin: true,
                });
                assert!(!text.contains("{{"), "{card:?}: a hole is left");
                assert!(
                    text.contains(&format!(
                        "#[tool(name = \"my-tool\", kind = {}, read_only, builtin)]",
                        kind.wire()
                    )),
                    "{card:?}"
                );
                assert!(text.contains("pub struct MyToolTool;"), "{card:?}");
            }
        }
    }

    /// A tool's types are `{{Type}}Args`, `{{Type}}Line`, …: no template
    /// may import a name one of them could be (a tool called `numbered`
    /// makes `NumberedLine`), or that tool's module would not compile.
    #[test]
    fn no_generated_type_can_shadow_an_import() {
        for &card in Card::value_variants() {
            let text = card.template();
            let suffixes: Vec<&str> = text
                .split("{{Type}}")
                .skip(1)
                .map(|rest| {
                    let end = rest
                        .find(|c: char| !c.is_alphanumeric())
                        .unwrap_or(rest.len());
                    &rest[..end]
                })
                .filter(|s| !s.is_empty())
                .collect();
            let imported: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with("use "))
                .flat_map(|l| l.split(['{', '}', ',', ' ', ':', ';']))
                .filter(|w| w.starts_with(|c: char| c.is_ascii_uppercase()))
                .collect();
            for name in &imported {
                for suffix in &suffixes {
                    assert!(
                        !(name.ends_with(suffix) && name.len() > suffix.len()),
                        "{card:?}: a tool named after `{}` would define `{name}`, which the template imports",
                        &name[..name.len() - suffix.len()]
                    );
                }
            }
            assert!(suffixes.contains(&"Tool") && suffixes.contains(&"Args"));
        }
    }

    #[test]
    fn kinds_match_toolprisms() {
        let wire: Vec<&str> = Kind::value_variants().iter().map(|k| k.wire()).collect();
        assert_eq!(
            wire,
            [
                "read", "edit", "delete", "move", "search", "execute", "fetch", "other"
            ]
        );
        for &kind in Kind::value_variants() {
            let variant = kind.variant();
            assert_eq!(variant.to_lowercase(), kind.wire());
        }
    }
}
