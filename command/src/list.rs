//! `list`: the tools, their kind and hints, as a table or JSON.

use std::io::Write;

use serde::Serialize;

use super::table::Table;
use super::text::one_line;
use super::{Failure, Status};
use toolprism_core::Registry;
use toolprism_core::ToolAnnotations;
use toolprism_core::card::ToolKind;

/// Options of `list`.
#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    /// Print one JSON array of {name, title?, description, kind, annotations}
    /// instead of the table.
    #[arg(long)]
    json: bool,
}

/// One tool in `list --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    description: &'a str,
    kind: ToolKind,
    annotations: ToolAnnotations,
}

/// The width the table is cut to.
const WIDTH: usize = 120;

pub(crate) fn run(
    registry: &Registry,
    args: &ListArgs,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    if args.json {
        let listed: Vec<Listed<'_>> = registry
            .definitions()
            .map(|d| Listed {
                name: &d.name,
                title: d.title.as_deref(),
                description: &d.description,
                kind: d.kind,
                annotations: d.annotations,
            })
            .collect();
        serde_json::to_writer(&mut *out, &listed).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(Status::Ok);
    }
    if registry.definitions().len() == 0 {
        writeln!(out, "no tools are registered")?;
        return Ok(Status::Ok);
    }
    let mut table = Table::new(vec!["NAME", "KIND", "HINTS", "DESCRIPTION"]);
    for d in registry.definitions() {
        // The first paragraph, its lines joined: doc comments wrap.
        let description: Vec<&str> = d
            .description
            .lines()
            .map(str::trim)
            .take_while(|l| !l.is_empty())
            .collect();
        let description = description.join(" ");
        table.row(vec![
            one_line(&d.name),
            d.kind.as_str().to_owned(),
            hints(&d.annotations),
            one_line(&description),
        ]);
    }
    write!(out, "{}", table.render(WIDTH))?;
    Ok(Status::Ok)
}

/// `read-only, idempotent`, or `-` when no hint is set.
fn hints(a: &ToolAnnotations) -> String {
    let set: Vec<&str> = [
        (a.read_only, "read-only"),
        (a.destructive, "destructive"),
        (a.idempotent, "idempotent"),
        (a.open_world, "open-world"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if set.is_empty() {
        "-".to_owned()
    } else {
        set.join(", ")
    }
}
