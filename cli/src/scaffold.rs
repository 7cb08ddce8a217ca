//! `cargo toolprism new`: checks everything first, then writes the module
//! and makes the edits that register it.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::crate_info::CrateInfo;
use crate::edit;
use crate::names::Names;
use crate::template::{self, Card, Fill, Kind};

/// What `new` was asked for.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) name: String,
    pub(crate) card: Card,
    pub(crate) kind: Option<Kind>,
    pub(crate) read_only: bool,
    pub(crate) builtin: bool,
    pub(crate) path: Option<PathBuf>,
    pub(crate) feature: Option<String>,
}

/// Why `new` stopped.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Nothing was written: the request cannot be done as asked (exit 2).
    Usage(String),
    /// Writing failed part way (exit 1).
    Failed(String),
}

/// A file `new` writes: its path and its whole new text.
struct Write {
    path: PathBuf,
    text: String,
    /// What changed, for the report.
    what: String,
}

/// Runs `new`; returns the lines of the report.
pub(crate) fn new(request: &Request) -> Result<Vec<String>, Refusal> {
    let usage = Refusal::Usage;
    let names = Names::new(&request.name).map_err(usage)?;
    let dir = match &request.path {
        Some(path) => path.clone(),
        None => std::env::current_dir()
            .map_err(|e| Refusal::Usage(format!("cannot read the current directory: {e}")))?,
    };
    let info = CrateInfo::read(&dir, request.path.is_none()).map_err(Refusal::Usage)?;
    let root_dir = info
        .root_file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let module_file = root_dir.join(format!("{}.rs", names.module));
    let shown_root = relative(&info, &info.root_file);
    check_free(&info, &names, &module_file, &root_dir)?;
    if let Some(feature) = &request.feature {
        check_feature_name(feature)?;
    }

    // Every edit, in memory, before anything is written.
    let mut writes = Vec::new();
    let mut manifest = read(&info.manifest)?;
    let mut manifest_notes = Vec::new();
    for (table, entries) in missing_dependencies(&info)? {
        if let Some(text) = edit::add_to_table(&manifest, table, &entries) {
            manifest = text;
            let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
            manifest_notes.push(format!("{} in [{table}]", keys.join(", ")));
        }
    }
    let feature = match (&request.feature, info.is_tools_crate()) {
        (Some(feature), _) => Some(feature.clone()),
        (None, true) => Some(tools_feature(request.card).to_owned()),
        (None, false) => None,
    };
    if let Some(feature) = &feature
        && !info.features.contains(feature)
    {
        let entry = (feature.clone(), format!("{feature} = []"));
        if let Some(text) = edit::add_to_table(&manifest, "features", &[entry]) {
            manifest = text;
            manifest_notes.push(format!("feature {feature} in [features]"));
        }
    }
    let gate = feature
        .as_ref()
        .map(|f| format!("#[cfg(feature = \"{f}\")]"));
    let visibility = if info.is_lib { "pub mod" } else { "mod" };
    let mut item: Vec<String> = gate.iter().cloned().collect();
    item.push(format!("{visibility} {};", names.module));
    let root = read(&info.root_file)?;
    let mut root_text = edit::add_module(&root, &names.module, &item).ok_or_else(|| {
        Refusal::Usage(format!(
            "{shown_root} already declares `mod {}`",
            names.module
        ))
    })?;
    let mut root_notes = vec![item.join(" ")];
    if info.is_tools_crate() {
        let mut reexport: Vec<String> = gate.iter().cloned().collect();
        reexport.push(format!("pub use {}::{}Tool;", names.module, names.types));
        if let Some(text) = edit::add_reexport(&root_text, &names.module, &reexport) {
            root_text = text;
            root_notes.push(reexport.join(" "));
        }
    }
    let kind = request.kind.unwrap_or_else(|| request.card.default_kind());
    let module_text = template::render(&Fill {
        names: &names,
        card: request.card,
        kind,
        read_only: request.read_only,
        builtin: request.builtin,
    });
    writes.push(Write {
        path: info.root_file.clone(),
        text: root_text,
        what: format!("+ {}", root_notes.join(", ")),
    });
    if !manifest_notes.is_empty() {
        writes.push(Write {
            path: info.manifest.clone(),
            text: manifest,
            what: format!("+ {}", manifest_notes.join("; ")),
        });
    }

    // Now write: the new module first (refusing to replace a file that
    // appeared meanwhile), then each edit through a temporary file.
    create_new(&module_file, &module_text)?;
    let formatted = rustfmt(&module_file, &info.edition);
    let mut report = vec![format!(
        "created  {}  (tool \"{}\", {} card, kind {}{})",
        relative(&info, &module_file),
        names.tool,
        request.card.name(),
        kind_name(kind),
        match &feature {
            Some(f) => format!(", behind feature {f}"),
            None => String::new(),
        }
    )];
    for (i, write) in writes.iter().enumerate() {
        if let Err(e) = replace(&write.path, &write.text) {
            if i == 0 {
                // Nothing registered it yet: leave the crate as it was.
                let _ = fs::remove_file(&module_file);
            }
            return Err(e);
        }
        report.push(format!(
            "edited   {}  ({})",
            relative(&info, &write.path),
            write.what
        ));
    }
    if !formatted {
        report.push(
            "note     rustfmt was not found: the new module is as the template wrote it".into(),
        );
    }
    let features = feature
        .map(|f| format!(" --features {f}"))
        .unwrap_or_default();
    report.push(format!(
        "next     cargo test{features} {}::tests   (then make execute do your tool's work)",
        names.module
    ));
    if !info.is_lib && !request.builtin {
        report.push(format!(
            "register .tool({}::{}Tool) in your registry, or scaffold with --builtin for Registry::builtin()",
            names.module, names.types
        ));
    }
    if info.is_tools_crate() && request.builtin {
        report.push(format!(
            "note     {}Tool is builtin: add it to register_in() and to the tools the crate's tests expect",
            names.types
        ));
    }
    Ok(report)
}

/// The feature a tool of this card is gated by in the built-in tools
/// crate: the group its kind of work belongs to.
fn tools_feature(card: Card) -> &'static str {
    match card {
        Card::Terminal => "shell",
        Card::Web => "web",
        Card::Generic | Card::Diff | Card::Read | Card::Search => "fs",
    }
}

fn kind_name(kind: Kind) -> String {
    format!("{kind:?}").to_lowercase()
}

/// The module's name is free: no file, no declaration, no crate or target
/// of that name.
fn check_free(
    info: &CrateInfo,
    names: &Names,
    module_file: &Path,
    root_dir: &Path,
) -> Result<(), Refusal> {
    let module = &names.module;
    let taken = |why: String| Err(Refusal::Usage(why));
    if info.sibling_roots.contains(module) {
        return taken(format!(
            "`{module}` is the name of a target's own file next to {}; pick another name",
            relative(info, &info.root_file)
        ));
    }
    if module_file.exists() {
        return taken(format!(
            "{} already exists: a tool named \"{}\" was scaffolded before, or pick another name",
            relative(info, module_file),
            names.tool
        ));
    }
    let folder = root_dir.join(module).join("mod.rs");
    if folder.exists() {
        return taken(format!("{} already exists", relative(info, &folder)));
    }
    if let Some(dep) = info.dependencies.iter().find(|d| d.code_name() == *module) {
        return taken(format!(
            "`{module}` is the name of the dependency {}; a module of that name would hide it",
            dep.package
        ));
    }
    Ok(())
}

/// A feature name Cargo accepts.
fn check_feature_name(feature: &str) -> Result<(), Refusal> {
    let ok = feature
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && feature
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Refusal::Usage(format!(
            "\"{}\" is not a feature name: use letters, digits, `_`, `-`, `+` and `.`",
            feature.escape_debug()
        )))
    }
}

/// Lines to add to a manifest table: `(key, line)`.
type Entries = Vec<(String, String)>;

/// The `(table, [(key, line)])` to add so the module builds and its tests
/// run; an error for what cannot be added by inserting lines.
fn missing_dependencies(info: &CrateInfo) -> Result<Vec<(&'static str, Entries)>, Refusal> {
    let manifest = relative(info, &info.manifest);
    let normal = |name: &str| info.dependency(name, false);
    let any = |name: &str| {
        let mut all = info.dependency(name, false);
        all.extend(info.dependency(name, true));
        all
    };
    let has_feature = |deps: &[&crate::crate_info::Dependency], feature: &str| {
        deps.iter().any(|d| d.features.iter().any(|f| f == feature))
    };
    let toolprism = normal("toolprism");
    if toolprism.is_empty() {
        let renamed = info
            .dependencies
            .iter()
            .find(|d| d.package == "toolprism" && !d.dev && !d.build);
        return Err(Refusal::Usage(match renamed {
            Some(d) => format!(
                "{manifest} names toolprism `{}`; the scaffold writes `toolprism::`: depend on it under its own name",
                d.code_name()
            ),
            None => format!(
                "{} does not depend on toolprism: add it to [dependencies] in {manifest} first",
                info.name
            ),
        }));
    }
    let mut normal_adds = Vec::new();
    let serde = normal("serde");
    if serde.is_empty() {
        normal_adds.push((
            "serde".to_owned(),
            r#"serde = { version = "1", features = ["derive"] }"#.to_owned(),
        ));
    } else if !has_feature(&serde, "derive") {
        return Err(Refusal::Usage(format!(
            "serde needs its `derive` feature for the tool's types: add features = [\"derive\"] to serde in {manifest}"
        )));
    }
    let schemars = normal("schemars");
    if schemars.is_empty() {
        normal_adds.push(("schemars".to_owned(), r#"schemars = "1""#.to_owned()));
    } else if !(has_feature(&schemars, "derive") || schemars.iter().any(|d| d.default_features)) {
        return Err(Refusal::Usage(format!(
            "schemars needs its `derive` feature for the tool's types: add it to schemars in {manifest}"
        )));
    }
    let mut dev_adds = Vec::new();
    if any("serde_json").is_empty() {
        dev_adds.push(("serde_json".to_owned(), r#"serde_json = "1""#.to_owned()));
    }
    let tokio = any("tokio");
    let runs_tests = has_feature(&tokio, "macros")
        && (has_feature(&tokio, "rt") || has_feature(&tokio, "rt-multi-thread"));
    if !runs_tests {
        if !info.dependency("tokio", true).is_empty() {
            return Err(Refusal::Usage(format!(
                "the tests use #[tokio::test]: add features = [\"macros\", \"rt\"] to tokio in [dev-dependencies] of {manifest}"
            )));
        }
        dev_adds.push((
            "tokio".to_owned(),
            r#"tokio = { version = "1", features = ["macros", "rt"] }"#.to_owned(),
        ));
    }
    let mut out = Vec::new();
    if !normal_adds.is_empty() {
        out.push(("dependencies", normal_adds));
    }
    if !dev_adds.is_empty() {
        out.push(("dev-dependencies", dev_adds));
    }
    Ok(out)
}

fn read(path: &Path) -> Result<String, Refusal> {
    fs::read_to_string(path)
        .map_err(|e| Refusal::Usage(format!("cannot read {}: {e}", path.display())))
}

/// `path` relative to the crate's directory, for the report.
fn relative(info: &CrateInfo, path: &Path) -> String {
    path.strip_prefix(info.dir())
        .unwrap_or(path)
        .display()
        .to_string()
}

fn create_new(path: &Path, text: &str) -> Result<(), Refusal> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                Refusal::Usage(format!("{} already exists", path.display()))
            } else {
                Refusal::Usage(format!("cannot create {}: {e}", path.display()))
            }
        })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| {
            let _ = fs::remove_file(path);
            Refusal::Failed(format!("cannot write {}: {e}", path.display()))
        })
}

/// Replaces `path`'s text through a temporary file next to it, so a
/// failure never leaves it half written.
fn replace(path: &Path, text: &str) -> Result<(), Refusal> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{file_name}.toolprism-new"));
    let written = fs::write(&temporary, text).and_then(|()| {
        if let Ok(meta) = fs::metadata(path) {
            fs::set_permissions(&temporary, meta.permissions())?;
        }
        fs::rename(&temporary, path)
    });
    written.map_err(|e| {
        let _ = fs::remove_file(&temporary);
        Refusal::Failed(format!("cannot write {}: {e}", path.display()))
    })
}

/// Formats the new module with rustfmt (and the crate's `rustfmt.toml`),
/// when rustfmt is there. Returns whether it ran.
fn rustfmt(file: &Path, edition: &str) -> bool {
    Command::new("rustfmt")
        .args(["--edition", edition])
        .arg(file)
        .output()
        .is_ok_and(|out| out.status.success())
}
