//! What the scaffold needs to know of the crate it writes into, read with
//! `cargo metadata` (so every manifest Cargo reads, including inherited
//! workspace dependencies, reads the same here).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The name of the built-in tools crate, whose modules are gated by a
/// feature.
pub(crate) const TOOLS_CRATE: &str = "toolprism-tools";

/// A dependency, as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dependency {
    /// The package's name.
    pub(crate) package: String,
    /// The name the code uses, when renamed.
    pub(crate) rename: Option<String>,
    /// `[dev-dependencies]`.
    pub(crate) dev: bool,
    /// `[build-dependencies]`.
    pub(crate) build: bool,
    /// The features it asks for.
    pub(crate) features: Vec<String>,
    /// Whether its default features are on.
    pub(crate) default_features: bool,
}

/// A crate to write a tool into.
#[derive(Debug, Clone)]
pub(crate) struct CrateInfo {
    /// The package's name.
    pub(crate) name: String,
    /// Its `Cargo.toml`.
    pub(crate) manifest: PathBuf,
    /// The file that declares the modules: `src/lib.rs`, or the binary's
    /// `src/main.rs` for a crate with no library.
    pub(crate) root_file: PathBuf,
    /// Whether the root file is a library's.
    pub(crate) is_lib: bool,
    /// The stems of the other target files next to the root file
    /// (`main` for `src/main.rs`): no module may take those names.
    pub(crate) sibling_roots: BTreeSet<String>,
    /// Its edition.
    pub(crate) edition: String,
    /// Its features.
    pub(crate) features: BTreeSet<String>,
    /// Its dependencies.
    pub(crate) dependencies: Vec<Dependency>,
}

impl CrateInfo {
    /// Reads the crate whose manifest is in `dir`. With `implicit`, `dir`
    /// is the current directory: a workspace root there whose members
    /// include the built-in tools crate means that crate.
    pub(crate) fn read(dir: &Path, implicit: bool) -> Result<CrateInfo, String> {
        let shown = dir.display();
        if !dir.is_dir() {
            return Err(if dir.exists() {
                format!("{shown} is not a directory; --path takes a crate's directory")
            } else {
                format!("{shown} does not exist; --path takes a crate's directory")
            });
        }
        let manifest = dir.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(format!(
                "{shown} is not a crate: it has no Cargo.toml (make one with `cargo new`, or pass --path)"
            ));
        }
        let manifest = manifest
            .canonicalize()
            .map_err(|e| format!("{}: {e}", manifest.display()))?;
        let metadata = metadata(&manifest)?;
        let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
        let own = packages
            .iter()
            .find(|p| same_path(&p["manifest_path"], &manifest));
        let package = match own {
            Some(package) => package,
            None if implicit => packages
                .iter()
                .find(|p| p["name"] == TOOLS_CRATE)
                .ok_or_else(|| {
                    format!(
                        "{shown} is a workspace, not a crate: run this in a crate's directory or pass --path CRATE_DIR"
                    )
                })?,
            None => {
                return Err(format!(
                    "{shown} is a workspace, not a crate: pass the directory of one of its crates"
                ));
            }
        };
        from_package(package)
    }

    /// Whether this is the built-in tools crate.
    pub(crate) fn is_tools_crate(&self) -> bool {
        self.name == TOOLS_CRATE
    }

    /// The crate's directory.
    pub(crate) fn dir(&self) -> &Path {
        self.manifest.parent().unwrap_or(Path::new("."))
    }

    /// The dependency the code names `name` (its package name, `-` as `_`,
    /// or its rename) of the given sections.
    pub(crate) fn dependency(&self, name: &str, dev: bool) -> Vec<&Dependency> {
        self.dependencies
            .iter()
            .filter(|d| !d.build && d.dev == dev && d.code_name() == name)
            .collect()
    }
}

impl Dependency {
    /// The name the code uses for it.
    pub(crate) fn code_name(&self) -> String {
        self.rename
            .clone()
            .unwrap_or_else(|| self.package.clone())
            .replace('-', "_")
    }
}

/// `cargo metadata` of the workspace `manifest` belongs to, without its
/// dependencies' manifests.
fn metadata(manifest: &Path) -> Result<Value, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("no message");
        let cause = err
            .lines()
            .map(str::trim)
            .skip_while(|l| !l.starts_with("Caused by:"))
            .nth(1)
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        return Err(format!(
            "{} is not a crate Cargo can read: {}{cause}",
            manifest.display(),
            first.trim_start_matches("error: ")
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata printed no JSON: {e}"))
}

fn same_path(value: &Value, path: &Path) -> bool {
    value
        .as_str()
        .and_then(|p| Path::new(p).canonicalize().ok())
        .is_some_and(|p| p == path)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn from_package(package: &Value) -> Result<CrateInfo, String> {
    let name = package["name"].as_str().unwrap_or_default().to_owned();
    let manifest = PathBuf::from(package["manifest_path"].as_str().unwrap_or_default());
    let targets = package["targets"].as_array().cloned().unwrap_or_default();
    let kinds = |t: &Value| strings(&t["kind"]);
    let lib = targets.iter().find(|t| {
        kinds(t).iter().any(|k| {
            matches!(
                k.as_str(),
                "lib" | "rlib" | "dylib" | "cdylib" | "staticlib"
            )
        })
    });
    if lib.is_none()
        && targets
            .iter()
            .any(|t| kinds(t).iter().any(|k| k == "proc-macro"))
    {
        return Err(format!(
            "{name} is a proc-macro crate, which cannot export tools; write the tool into another crate"
        ));
    }
    let bins: Vec<&Value> = targets
        .iter()
        .filter(|t| kinds(t).iter().any(|k| k == "bin"))
        .collect();
    let (root, is_lib) = match (lib, bins.as_slice()) {
        (Some(lib), _) => (lib, true),
        (None, [bin]) => (*bin, false),
        (None, []) => {
            return Err(format!(
                "{name} has neither a library nor a binary to hold the tool"
            ));
        }
        (None, several) => match several.iter().find(|b| b["name"] == package["name"]) {
            Some(bin) => (*bin, false),
            None => {
                return Err(format!(
                    "{name} has {} binaries and no library: add a src/lib.rs for the tool",
                    several.len()
                ));
            }
        },
    };
    let root_file = PathBuf::from(root["src_path"].as_str().unwrap_or_default());
    let root_dir = root_file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let sibling_roots = targets
        .iter()
        .filter_map(|t| t["src_path"].as_str().map(PathBuf::from))
        .filter(|p| p.parent() == Some(root_dir.as_path()))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    let dependencies = package["dependencies"]
        .as_array()
        .map(|deps| {
            deps.iter()
                .map(|d| Dependency {
                    package: d["name"].as_str().unwrap_or_default().to_owned(),
                    rename: d["rename"].as_str().map(str::to_owned),
                    dev: d["kind"] == "dev",
                    build: d["kind"] == "build",
                    features: strings(&d["features"]),
                    default_features: d["uses_default_features"].as_bool().unwrap_or(true),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(CrateInfo {
        name,
        manifest,
        root_file,
        is_lib,
        sibling_roots,
        edition: package["edition"].as_str().unwrap_or("2021").to_owned(),
        features: package["features"]
            .as_object()
            .map(|f| f.keys().cloned().collect())
            .unwrap_or_default(),
        dependencies,
    })
}
