//! `--import` and `--mcp-config`: read with the other global options,
//! connected on the command's runtime before the registry is built, and
//! checked to have been registered after.

use std::path::PathBuf;

use clap::ArgMatches;

use toolprism_core::Registry;
use toolprism_mcp::import::{Import, Imports, McpConfig, split_command_line};

/// The imports given on the command line: what to connect to, then what
/// connecting gave.
#[derive(Debug, Clone, Default)]
pub(crate) struct Given {
    pending: Vec<Import>,
    connected: Imports,
}

/// Equal when the same servers were asked for.
impl PartialEq for Given {
    fn eq(&self, other: &Self) -> bool {
        self.pending == other.pending
    }
}

impl Eq for Given {}

impl Given {
    /// Whether any import was given.
    pub(crate) fn any(&self) -> bool {
        !self.pending.is_empty()
    }

    pub(crate) fn connected(&self) -> &Imports {
        &self.connected
    }
}

/// The imports of `--import` (in order) then `--mcp-config` (each file in
/// order, each server in the file's order).
pub(crate) fn given(matches: &ArgMatches) -> Result<Given, String> {
    let mut pending = Vec::new();
    let imports = matches
        .try_get_many::<String>("import")
        .ok()
        .flatten()
        .into_iter()
        .flatten();
    for spec in imports {
        pending.push(import(spec)?);
    }
    let configs = matches
        .try_get_many::<PathBuf>("mcp-config")
        .ok()
        .flatten()
        .into_iter()
        .flatten();
    for path in configs {
        let config = McpConfig::read(path).map_err(|e| format!("--mcp-config: {e}"))?;
        pending.extend(config.imports());
    }
    Ok(Given {
        pending,
        connected: Imports::default(),
    })
}

/// One `--import`: a URL (`http://` or `https://`), else a command line.
fn import(spec: &str) -> Result<Import, String> {
    let trimmed = spec.trim();
    let lower = trimmed.get(..8).unwrap_or(trimmed).to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(Import::http(trimmed));
    }
    let words = split_command_line(spec).map_err(|e| format!("--import {spec:?}: {e}"))?;
    let Some((program, args)) = words.split_first() else {
        return Err("--import needs a command line or a URL".to_owned());
    };
    Ok(Import::stdio(program.clone(), args.iter().cloned()))
}

/// Connects every pending import, all at once.
pub(crate) fn connect(
    mut globals: crate::Globals,
    runtime: &tokio::runtime::Runtime,
) -> Result<crate::Globals, String> {
    let given = globals.imports_mut();
    if given.pending.is_empty() {
        return Ok(globals);
    }
    let pending = given.pending.clone();
    given.connected = runtime
        .block_on(Imports::connect(pending))
        .map_err(|e| e.to_string())?;
    Ok(globals)
}

/// Fails when the program built its registry without the imported tools
/// (its build does not call `globals.imports().register_in(…)`).
pub(crate) fn check_registered(
    globals: &crate::Globals,
    registry: &Registry,
) -> Result<(), String> {
    use toolprism_core::DynamicTool;
    let missing = globals
        .imports()
        .tools()
        .map(|t| t.definition().name.as_str())
        .find(|name| registry.program_definition(name).is_none());
    match missing {
        Some(name) => Err(format!(
            "this program's tools leave out the imported tool \"{name}\": its registry must register `globals.imports()` (`globals.imports().register_in(builder)`) for --import and --mcp-config to work"
        )),
        None => Ok(()),
    }
}
