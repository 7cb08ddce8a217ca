//! The checks after the run: the session log is read back with
//! `toolprism::replay`, every card is drawn again from it alone (with the
//! presenters registered now) and compared with the live card, every card's
//! JSON is checked against the wire format, and the log is searched for
//! canonical values.

use std::io;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolprism::replay::replay_log;
use toolprism::{CallCard, Registry, ResultCard};

use super::scenarios::Expect;
use super::{Record, by_call_id, json_escaped};

/// What the checks found: lines for the report, and failures.
pub(crate) struct Summary {
    pub lines: Vec<String>,
    pub failures: Vec<String>,
}

/// Keys a `tool/result` event may have: what a presenter may see, and no
/// more, and when the event was written (`timeMs`, every event's).
const RESULT_KEYS: [&str; 7] = [
    "type", "callId", "content", "isError", "error", "meta", "timeMs",
];
/// `dialect` when the call came in a provider's dialect (the agent loop's).
const CALL_KEYS: [&str; 6] = ["type", "callId", "name", "arguments", "dialect", "timeMs"];
/// A program's calls also name the call that ran the program.
const NESTED_RESULT_KEYS: [&str; 8] = [
    "type",
    "callId",
    "parentCallId",
    "content",
    "isError",
    "error",
    "meta",
    "timeMs",
];
const NESTED_CALL_KEYS: [&str; 6] = [
    "type",
    "callId",
    "parentCallId",
    "name",
    "arguments",
    "timeMs",
];

/// Deserializes a card's JSON and serializes it back: it must come back
/// unchanged. This is the wire-format check: a card that breaks C7 (a
/// search card whose `truncated` disagrees with `total`, a terminal card
/// with an exit code and a signal) does not deserialize.
fn wire_ok<C: Serialize + DeserializeOwned>(json: &Value) -> Result<(), String> {
    let card: C = serde_json::from_value(json.clone()).map_err(|e| e.to_string())?;
    let again = serde_json::to_value(&card).map_err(|e| e.to_string())?;
    if &again == json {
        Ok(())
    } else {
        Err(format!("{json} serializes back as {again}"))
    }
}

pub(crate) fn check(
    registry: &Registry,
    log_path: &Path,
    records: &[Record],
    log_text: &str,
) -> io::Result<Summary> {
    let mut failures = Vec::new();
    let live = by_call_id(records);
    let mut wire_checked = 0;
    let mut wire = |card: &Value, is_call: bool, what: &str, failures: &mut Vec<String>| {
        wire_checked += 1;
        let checked = if is_call {
            wire_ok::<CallCard>(card)
        } else {
            wire_ok::<ResultCard>(card)
        };
        if let Err(e) = checked {
            failures.push(format!("{what} is not a valid card: {e}"));
        }
    };

    // The log alone, drawn again through the runtime's replay reader.
    let replayed = replay_log(log_path, registry)?;
    for problem in &replayed.problems {
        failures.push(format!("log {problem}"));
    }
    let (mut calls_equal, mut results_equal, mut results) = (0, 0, 0);
    let (mut nested, mut nested_equal) = (0, 0);
    for entry in &replayed.entries {
        let call_id = &entry.call_id;
        if entry.nested {
            // A program's call: its live cards are drawn from what its
            // parent's outcome lists, with the presenters replay uses.
            nested += 1;
            let live_call = entry
                .parent_call_id
                .as_deref()
                .and_then(|parent| live.get(parent))
                .and_then(|r| {
                    r.outcome
                        .nested_calls()
                        .iter()
                        .find(|c| &c.call_id == call_id)
                });
            let Some(live_call) = live_call else {
                failures.push(format!(
                    "{call_id}: a logged nested call its program's outcome does not list"
                ));
                continue;
            };
            let mut result = live_call.result.clone();
            let call_card = registry.present_call(&live_call.name, &live_call.arguments);
            let result_card =
                registry.present_result(&live_call.name, &live_call.arguments, &mut result);
            if entry.call_card == call_card && entry.result_card.as_ref() == Some(&result_card) {
                nested_equal += 1;
            } else {
                failures.push(format!(
                    "{call_id}: the replayed cards of a program's call differ from the live ones"
                ));
            }
            continue;
        }
        let record = live.get(call_id.as_str());
        let replayed_call = to_json(&entry.call_card);
        wire(
            &replayed_call,
            true,
            &format!("{call_id}: the replayed call card"),
            &mut failures,
        );
        match record.and_then(|r| r.outcome.call_card()) {
            Some(card) if to_json(card) == replayed_call => calls_equal += 1,
            Some(card) => failures.push(format!(
                "{call_id}: the replayed call card differs from the live one:\n    live   {}\n    replay {replayed_call}",
                to_json(card)
            )),
            None => failures.push(format!("{call_id}: a logged call with no live call")),
        }
        let Some(result_card) = &entry.result_card else {
            failures.push(format!("{call_id}: the log holds no result for this call"));
            continue;
        };
        results += 1;
        let replayed_result = to_json(result_card);
        wire(
            &replayed_result,
            false,
            &format!("{call_id}: the replayed result card"),
            &mut failures,
        );
        match record.and_then(|r| r.outcome.result_card()) {
            Some(card) if to_json(card) == replayed_result => results_equal += 1,
            Some(card) => failures.push(format!(
                "{call_id}: the replayed result card differs from the live one:\n    live   {}\n    replay {replayed_result}",
                to_json(card)
            )),
            None => failures.push(format!("{call_id}: a logged result with no live call")),
        }
    }
    let calls = replayed.entries.len() - nested;
    for record in records {
        match record.outcome.call_card() {
            Some(card) => wire(
                &to_json(card),
                true,
                &format!("{}: the live call card", record.call_id),
                &mut failures,
            ),
            None => failures.push(format!("{}: no live call card", record.call_id)),
        }
        match record.outcome.result_card() {
            Some(card) => wire(
                &to_json(card),
                false,
                &format!("{}: the live result card", record.call_id),
                &mut failures,
            ),
            None => failures.push(format!("{}: no live result card", record.call_id)),
        }
    }
    if calls != records.len() || results != records.len() {
        failures.push(format!(
            "the log replays {calls} calls and {results} results for {} live calls",
            records.len()
        ));
    }

    // No value in the log: no event carries a field beyond what presenters
    // see, no value's JSON appears, and no value-only marker appears.
    for (i, line) in log_text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line) else {
            continue; // already reported by read_log
        };
        let allowed: &[&str] = match event.get("type").and_then(Value::as_str) {
            Some("tool/result") => &RESULT_KEYS,
            Some("tool/nested-result") => &NESTED_RESULT_KEYS,
            Some("tool/nested-call") => &NESTED_CALL_KEYS,
            _ => &CALL_KEYS,
        };
        for key in event.keys().filter(|k| !allowed.contains(&k.as_str())) {
            failures.push(format!("log line {}: unexpected field \"{key}\"", i + 1));
        }
        if let Some(error) = event.get("error").and_then(Value::as_object)
            && error.keys().any(|k| k != "code")
        {
            failures.push(format!(
                "log line {}: the error holds more than its code",
                i + 1
            ));
        }
    }
    let values: Vec<(&str, String)> = records
        .iter()
        .filter_map(|r| Some((r.call_id.as_str(), r.outcome.value()?.to_string())))
        .collect();
    for (call_id, value) in &values {
        if log_text.contains(value.as_str()) || log_text.contains(&json_escaped(value)) {
            failures.push(format!("{call_id}: its canonical value is in the log"));
        }
    }
    let markers = records
        .iter()
        .flat_map(|r| &r.expect)
        .filter(|e| matches!(e, Expect::LogLacks(_)))
        .count();

    let ok = |good: bool| if good { "✓" } else { "✗" };
    let lines = vec![
        format!(
            "log          {calls} calls with {results} results read back by toolprism::replay, {} problems",
            replayed.problems.len()
        ),
        format!(
            "call cards   {calls_equal} of {calls} redrawn from the log equal the live ones {}",
            ok(calls_equal == calls && calls == records.len())
        ),
        format!(
            "result cards {results_equal} of {results} redrawn from the log equal the live ones {}",
            ok(results_equal == results && results == records.len())
        ),
        format!(
            "programs     {nested_equal} of {nested} calls made by programs redrawn from the log equal the live ones {}",
            ok(nested_equal == nested)
        ),
        format!(
            "wire format  {wire_checked} cards, live and replayed, deserialize as CallCard/ResultCard and serialize back unchanged {}",
            ok(!failures.iter().any(|f| f.contains("is not a valid card")))
        ),
        format!(
            "values       none persisted: events hold only {{callId, content, isError, error.code, meta}}; {} values and {markers} value-only markers absent from the log {}",
            values.len(),
            ok(!failures
                .iter()
                .any(|f| f.contains("log line") || f.contains("value is in the log")))
        ),
    ];
    Ok(Summary { lines, failures })
}

fn to_json<T: Serialize>(card: &T) -> Value {
    serde_json::to_value(card).unwrap_or_else(|e| Value::String(format!("<unserializable: {e}>")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::AcmeTicketTool;
    use toolprism::ToolCall;
    use toolprism::log::SessionLog;
    use toolprism_tools::{BashTool, Workspace};

    async fn setup(dir: &Path) -> (Registry, Vec<Record>, std::path::PathBuf) {
        let log = dir.join("s.jsonl");
        let registry = Registry::builder()
            .tool(AcmeTicketTool::default())
            .tool(BashTool::new(Workspace::new(dir).unwrap()))
            .log(SessionLog::create(&log).unwrap())
            .build()
            .unwrap();
        let mut records = Vec::new();
        for (id, name, args) in [
            ("t-1", "acme_ticket", r#"{"id":"ACME-7"}"#),
            ("t-2", "bash", r#"{"command":"exit 4"}"#),
        ] {
            let outcome = registry.call(ToolCall::new(id, name, args)).await;
            records.push(Record {
                scenario: "t",
                call_id: id.to_owned(),
                outcome,
                persisted: Vec::new(),
                expect: Vec::new(),
            });
        }
        (registry, records, log)
    }

    #[tokio::test]
    async fn a_faithful_log_passes() {
        let dir = tempfile::tempdir().unwrap();
        let (registry, records, log) = setup(dir.path()).await;
        let text = std::fs::read_to_string(&log).unwrap();
        let summary = check(&registry, &log, &records, &text).unwrap();
        assert!(summary.failures.is_empty(), "{:?}", summary.failures);
        assert!(summary.lines[1].contains("2 of 2"), "{:?}", summary.lines);
    }

    #[tokio::test]
    async fn a_tampered_log_fails_the_checks() {
        let dir = tempfile::tempdir().unwrap();
        let (registry, records, log) = setup(dir.path()).await;
        let text = std::fs::read_to_string(&log)
            .unwrap()
            .replace(r#""exitCode":4"#, r#""exitCode":0"#)
            .replace("Export fails", "Export works");
        let text = format!(
            "{text}{{\"type\":\"tool/result\",\"callId\":\"t-1\",\"content\":[],\"isError\":false,\"value\":{{}}}}\n"
        );
        std::fs::write(&log, &text).unwrap();
        let summary = check(&registry, &log, &records, &text).unwrap();
        let all = summary.failures.join("\n");
        assert!(
            all.contains("t-1: the replayed result card differs"),
            "{all}"
        );
        assert!(
            all.contains("t-2: the replayed result card differs"),
            "{all}"
        );
        assert!(all.contains("unexpected field \"value\""), "{all}");
    }

    #[test]
    fn the_wire_check_rejects_lying_cards() {
        let lie = serde_json::json!({"card": "search", "shape": "paths", "paths": ["a"], "truncated": false, "total": 3});
        assert!(wire_ok::<ResultCard>(&lie).is_err());
        let both = serde_json::json!({"card": "terminal", "exitCode": 0, "signal": "SIGKILL"});
        assert!(wire_ok::<ResultCard>(&both).is_err());
        let fine = serde_json::json!({"card": "terminal", "title": "x", "exitCode": 0});
        assert!(wire_ok::<ResultCard>(&fine).is_ok());
    }
}
