//! `schema [--dialect D] [--tool NAME]`: the tool definitions, canonical or
//! in a provider's request shape.

use std::io::{self, Write};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use serde_json::Value;

use super::text::{ellipsize, one_line};
use super::{Failure, Status};
use toolprism_core::Registry;
use toolprism_provider::dialect::{self, Dialect};

/// Options of `schema`.
#[derive(Debug, clap::Args)]
pub(crate) struct SchemaArgs {
    /// The provider's request shape [default: toolprism's own definition,
    /// with both schemas, the kind and the hints]
    #[arg(long, value_name = "DIALECT", value_parser = dialects())]
    dialect: Option<Dialect>,
    /// One tool only: print its definition as one object instead of an array.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
}

/// The dialects by name, as `--help` lists them.
pub(crate) fn dialects() -> impl TypedValueParser<Value = Dialect> {
    PossibleValuesParser::new(Dialect::ALL.map(Dialect::name))
        .try_map(|name| name.parse::<Dialect>())
}

pub(crate) fn run(
    registry: &Registry,
    args: &SchemaArgs,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let chosen: Vec<_> = match &args.tool {
        Some(name) => match registry.definition(name) {
            Some(definition) => vec![definition],
            None => return Err(super::unknown_tool(registry, name)),
        },
        None => registry.definitions().collect(),
    };
    let (json, notes, refused) = match args.dialect {
        None => {
            let all: Vec<Value> = chosen
                .iter()
                .map(|d| serde_json::to_value(d).map_err(io::Error::from))
                .collect::<Result<_, _>>()?;
            (Value::Array(all), Vec::new(), Vec::new())
        }
        Some(dialect) => {
            let projected = dialect::definitions(dialect, chosen.iter().copied());
            (
                projected.json(),
                projected.notes().to_vec(),
                projected
                    .refused()
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>(),
            )
        }
    };
    let json = match (&args.tool, json) {
        (Some(_), Value::Array(mut one)) if one.len() == 1 => one.remove(0),
        (Some(_), Value::Array(_)) => {
            return Err(Failure::Failed(
                refused
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "the dialect gave no definition".to_owned()),
            ));
        }
        (_, json) => json,
    };
    serde_json::to_writer_pretty(&mut *out, &json).map_err(io::Error::from)?;
    writeln!(out)?;
    out.flush()?;
    let mut err = io::stderr().lock();
    for note in &notes {
        writeln!(err, "note: {}", ellipsize(&one_line(note), 1000))?;
    }
    for refusal in &refused {
        writeln!(err, "error: {}", ellipsize(&one_line(refusal), 1000))?;
    }
    Ok(if refused.is_empty() {
        Status::Ok
    } else {
        Status::Failed
    })
}
