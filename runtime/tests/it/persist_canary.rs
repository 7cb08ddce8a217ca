//! The value is never on disk (C12, docs/contract.md): a tool whose value
//! holds a secret made up at test time, which `render` and
//! `presentation_meta` leave out, runs plain, under a replace-content
//! policy and under a block, with a session log and a spill store
//! attached. The secret is in the value a program gets, and in no byte of
//! any file the registry wrote; nor are a value's own keys, when the value
//! fails the contract and the error names where.

use crate::common;
use crate::persist_common;

use std::collections::BTreeMap;
use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use common::{N, Ok_, call};
use persist_common::runtime;
use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use toolprism::card::{CallCard, ResultCard, TerminalCall, TerminalResult};
use toolprism::log::SessionLog;
use toolprism::replay::replay_log;
use toolprism::spill::SpillStore;
use toolprism::{
    ContentBlock, ErrorCode, NoMeta, PostDecision, PostExecute, PostExecutePolicy, Registry, Tool,
    ToolCall, ToolContext, ToolError, ToolInfo, ToolOutcome, ToolResult,
};

/// A UUID-like string no file on this machine holds by chance.
fn fresh_secret() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let mut words = [0u64; 2];
    for (i, word) in words.iter_mut().enumerate() {
        let mut h = RandomState::new().build_hasher();
        h.write_u128(now);
        h.write_u32(std::process::id());
        h.write_usize(i);
        *word = h.finish();
    }
    let [a, b] = words;
    format!(
        "canary-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

#[derive(Clone, Deserialize, schemars::JsonSchema)]
struct VaultArgs {
    label: String,
    lines: usize,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
struct VaultValue {
    label: String,
    /// The secret: for programs only.
    secret: String,
    /// The public part.
    report: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct VaultMeta {
    label: String,
    lines: usize,
}

/// Holds the secret in its state; puts it in every value.
struct Vault {
    secret: String,
    /// For the control run only: render the secret too.
    leaky: bool,
}

impl Tool for Vault {
    type Args = VaultArgs;
    type Value = VaultValue;
    type Meta = VaultMeta;
    const INFO: ToolInfo = ToolInfo::new("vault", "Open the vault and report on it.");

    async fn execute(&self, args: VaultArgs, _: &ToolContext<'_>) -> Result<VaultValue, ToolError> {
        let mut report: Vec<String> = (0..args.lines)
            .map(|i| format!("{}: shelf {i} checked, all in order", args.label))
            .collect();
        if self.leaky {
            report.push(format!("the key is {}", self.secret));
        }
        Ok(VaultValue {
            label: args.label,
            secret: self.secret.clone(),
            report,
        })
    }

    fn render(_: &VaultArgs, value: &VaultValue) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.report.join("\n"))]
    }

    fn presentation_meta(args: &VaultArgs, value: &VaultValue) -> Option<VaultMeta> {
        Some(VaultMeta {
            label: args.label.clone(),
            lines: value.report.len(),
        })
    }

    fn present_call(args: &VaultArgs) -> Option<CallCard> {
        Some(CallCard::Terminal(TerminalCall::new(format!(
            "open vault {}",
            args.label
        ))))
    }

    fn present_result(_: &VaultArgs, result: &ToolResult<VaultMeta>) -> Option<ResultCard> {
        let meta = result.meta.as_ref()?;
        Some(ResultCard::Terminal(TerminalResult::new(
            Some(format!("{} ({} lines)", meta.label, meta.lines)),
            None,
            None,
        )))
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The files under `dir` whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|path| {
            let bytes = fs::read(path).unwrap();
            bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        })
        .collect()
}

/// Runs the vault once under `policy`, in a fresh directory with a log and
/// a spill store, and returns the outcome and the directory.
fn run(
    secret: &str,
    leaky: bool,
    policy: impl PostExecutePolicy,
) -> (ToolOutcome, tempfile::TempDir, Registry) {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::builder()
        .tool(Vault {
            secret: secret.to_owned(),
            leaky,
        })
        .post_execute(policy)
        .log(SessionLog::create(dir.path().join("session.jsonl")).unwrap())
        .spill(SpillStore::new(dir.path().join("spill")).unwrap())
        .spill_budget(1024)
        .build()
        .unwrap();
    let out = runtime().block_on(registry.call(ToolCall::new(
        "call-1",
        "vault",
        r#"{"label":"north","lines":400}"#,
    )));
    assert!(out.warnings().is_empty(), "{:?}", out.warnings());
    (out, dir, registry)
}

fn assert_secret_only_in_the_value(secret: &str, out: &ToolOutcome, dir: &Path) {
    // Files were written: the log, and a spill file when content was large.
    let files = files_under(dir);
    assert!(files.iter().any(|f| f.ends_with("session.jsonl")));
    let log = fs::read_to_string(dir.join("session.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    // Not the secret, nor a piece of it.
    for needle in [secret, &secret[7..19], &secret[secret.len() - 12..]] {
        assert_eq!(
            files_holding(dir, needle),
            Vec::<PathBuf>::new(),
            "{needle}"
        );
    }
    // Nor anywhere in what the model or a UI sees.
    let seen = serde_json::json!([
        out.content(),
        out.meta(),
        out.call_card(),
        out.result_card()
    ]);
    assert!(!seen.to_string().contains(secret));
}

#[test]
fn the_secret_is_in_the_value_and_on_no_disk_plain() {
    let secret = fresh_secret();
    let (out, dir, registry) = run(&secret, false, |_: &PostExecute<'_>| PostDecision::Accept);
    assert!(!out.is_error());
    // A program gets the secret: the test can fail.
    assert_eq!(out.value().unwrap()["secret"], secret);
    assert_eq!(out.value_as::<VaultValue>().unwrap().secret, secret);
    assert!(serde_json::to_string(&out).unwrap().contains(&secret));
    // The content was large enough to spill.
    assert!(
        out.content()[0]
            .as_text()
            .unwrap()
            .contains("is stored at: ")
    );
    assert_eq!(files_under(&dir.path().join("spill")).len(), 1);
    assert_secret_only_in_the_value(&secret, &out, dir.path());
    // The log replays to the live cards without the value.
    let replayed = replay_log(dir.path().join("session.jsonl"), &registry).unwrap();
    assert_eq!(replayed.entries[0].result_card.as_ref(), out.result_card());
    assert_eq!(Some(&replayed.entries[0].call_card), out.call_card());
}

#[test]
fn the_secret_is_in_the_value_and_on_no_disk_under_replace_content() {
    let secret = fresh_secret();
    let policy = |r: &PostExecute<'_>| {
        // The policy sees the value (and the secret) but writes its own content.
        assert!(r.value.unwrap()["secret"].is_string());
        PostDecision::ReplaceContent(vec![ContentBlock::text(
            "redacted report line\n".repeat(200),
        )])
    };
    let (out, dir, _) = run(&secret, false, policy);
    assert!(!out.is_error());
    // Presentation, not confidentiality: a program still gets the value.
    assert_eq!(out.value().unwrap()["secret"], secret);
    assert_eq!(out.meta().unwrap()["lines"], 400);
    // The replaced content spilled.
    let spilled = files_under(&dir.path().join("spill"));
    assert_eq!(spilled.len(), 1);
    assert_eq!(
        fs::read_to_string(&spilled[0]).unwrap(),
        "redacted report line\n".repeat(200)
    );
    assert_secret_only_in_the_value(&secret, &out, dir.path());
}

#[test]
fn the_secret_is_on_no_disk_under_a_block() {
    let secret = fresh_secret();
    let policy = |_: &PostExecute<'_>| PostDecision::block("the vault is closed today");
    let (out, dir, _) = run(&secret, false, policy);
    assert!(out.is_error());
    assert_eq!(out.error().unwrap().code, ErrorCode::Blocked);
    assert!(out.value().is_none());
    assert!(out.meta().is_none());
    assert_eq!(
        out.content(),
        [ContentBlock::text("the vault is closed today")]
    );
    assert!(files_under(&dir.path().join("spill")).is_empty());
    assert_secret_only_in_the_value(&secret, &out, dir.path());
}

#[test]
fn control_a_tool_that_renders_the_secret_is_caught() {
    // The scan finds a leak where there is one, in the log and in the spill file.
    let secret = fresh_secret();
    let (out, dir, _) = run(&secret, true, |_: &PostExecute<'_>| PostDecision::Accept);
    let mut holding = files_holding(dir.path(), &secret);
    holding.sort();
    assert_eq!(holding.len(), 2, "{holding:?}");
    assert!(holding[0].ends_with("session.jsonl"));
    assert!(holding[1].starts_with(dir.path().join("spill")));
    assert!(out.content()[0].as_text().unwrap().contains(&secret));
}

// ---------------------------------------------------------------------------
// C12: a value's keys reach no persisted byte through an error either
// ---------------------------------------------------------------------------

const SECRET: &str = "canary-7f3a9c-secret";

#[derive(Serialize, Deserialize, JsonSchema)]
struct Ledger {
    balances: BTreeMap<String, u32>,
}

/// Serializes a map key that is the secret, with a value of the wrong type.
struct LyingLedger;

impl Serialize for LyingLedger {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            balances: BTreeMap<&'a str, &'a str>,
        }
        Wire {
            balances: [(SECRET, "not a number")].into(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for LyingLedger {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ledger::deserialize(d).map(|_| LyingLedger)
    }
}

impl JsonSchema for LyingLedger {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Ledger::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Ledger::json_schema(generator)
    }
}

hostile_tool!(SchemaLeak, "schema_leak", N, LyingLedger, NoMeta,
    execute: |_a, _cx| Ok(LyingLedger), meta: |_a, _v| None);
hostile_tool!(NanLeak, "nan_leak", N, BTreeMap<String, f64>, NoMeta,
    execute: |_a, _cx| Ok([(SECRET.to_owned(), f64::NAN)].into()), meta: |_a, _v| None);
/// A map that writes the secret key twice.
#[derive(Deserialize, JsonSchema)]
struct SecretTwice(#[allow(dead_code)] BTreeMap<String, u32>);

impl Serialize for SecretTwice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry(SECRET, &1)?;
        map.serialize_entry(SECRET, &2)?;
        map.end()
    }
}

hostile_tool!(DupLeak, "dup_leak", N, SecretTwice, NoMeta,
    execute: |_a, _cx| Ok(SecretTwice(BTreeMap::new())), meta: |_a, _v| None);
hostile_tool!(MetaLeak, "meta_leak", N, u32, BTreeMap<String, f64>,
    execute: |_a, _cx| Ok(1), meta: |_a, _v| Some([(SECRET.to_owned(), f64::INFINITY)].into()));

#[test]
fn c12_a_values_keys_reach_no_persisted_byte_through_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("s.jsonl");
    let registry = Registry::builder()
        .tool(Ok_)
        .tool(SchemaLeak)
        .tool(NanLeak)
        .tool(DupLeak)
        .tool(MetaLeak)
        .log(SessionLog::create(&log).unwrap())
        .spill(SpillStore::new(dir.path().join("spill")).unwrap())
        .build()
        .unwrap();
    for name in ["schema_leak", "nan_leak", "dup_leak", "meta_leak"] {
        let out = call(&registry, name, r#"{"n":1}"#);
        assert_eq!(
            out.code().unwrap(),
            "INVALID_TOOL_OUTPUT",
            "{name}: {out:?}"
        );
        let message = &out.error().unwrap().message;
        assert!(!message.contains(SECRET), "{name}: {message}");
        assert!(
            message.contains("{entry"),
            "{name}: the path names the entry by position: {message}"
        );
    }
    // The scan can fail: a control call puts the secret in the arguments,
    // which are persisted by design.
    let scan = |path: &std::path::Path| -> bool {
        let mut found = false;
        for entry in files_under(path) {
            let bytes = std::fs::read(&entry).unwrap();
            found |= bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes());
        }
        found
    };
    assert!(!scan(dir.path()), "the secret reached the disk");
    let control = call(&registry, "ok", &format!(r#"{{"n":1,"{SECRET}":0}}"#));
    assert!(!control.is_error());
    assert!(
        scan(dir.path()),
        "the control must be found, or the scan proves nothing"
    );
}

#[test]
fn secrets_are_fresh() {
    assert_ne!(fresh_secret(), fresh_secret());
}
