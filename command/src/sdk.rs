//! `sdk`: the TypeScript declarations a Code Mode program is written
//! against (`toolprism::code::sdk`), as `run_code`'s description carries
//! them.

use std::io::Write;

use toolprism_core::Registry;

use crate::exit::{Failure, Status};

/// The options of `sdk`.
#[derive(Debug, clap::Args)]
pub(crate) struct SdkArgs {}

pub(crate) fn run(
    registry: &Registry,
    _args: &SdkArgs,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    out.write_all(toolprism_code::sdk(registry).as_bytes())?;
    Ok(Status::Ok)
}
