//! Dialects on the corpus: golden snapshots (one file per corpus type
//! under `tests/dialects/`, every dialect side by side), a checker per
//! dialect run on every snapshot, and round trips through a real registry.
//!
//! Re-record the snapshots with `SNAPSHOTS=overwrite cargo test -p
//! toolprism --test it dialect::`, then review the diff like code.

use crate::checkers;
use crate::corpus;
use crate::dialects_common as common;
use crate::for_each_case;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value, json};
use toolprism::ToolDefinition;
use toolprism::dialect::{self, Dialect, mcp};

use common::{Echo, registry};
use corpus::*;

const NEW_MCP: &str = "2026-07-28";

fn snapshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/dialects/snapshots")
}

/// Every dialect's view of one tool, side by side.
fn snapshot(def: &ToolDefinition) -> Value {
    let mut out = Map::new();
    out.insert(
        "canonical".into(),
        json!({"input": def.input_schema, "output": def.output_schema}),
    );
    for d in Dialect::ALL {
        let entry = match dialect::definition(d, def) {
            Ok(p) => json!({"notes": p.notes(), "json": p.json()}),
            Err(e) => json!({"refused": e.reasons()}),
        };
        out.insert(d.name().into(), entry);
    }
    out.insert(
        format!("mcp@{NEW_MCP}"),
        json!({"notes": [], "json": mcp::tool(def, NEW_MCP)}),
    );
    Value::Object(out)
}

/// Runs the checker of each dialect on a snapshot.
fn check(name: &str, snap: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let notes = |d: &str| -> Vec<String> {
        snap[d]["notes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect()
    };
    for d in Dialect::ALL {
        let entry = &snap[d.name()];
        if let Some(reasons) = entry.get("refused") {
            if reasons.as_array().is_none_or(Vec::is_empty) {
                problems.push(format!("{d}: refused without a reason"));
            }
            if matches!(
                d,
                Dialect::OpenAi | Dialect::OpenAiResponses | Dialect::Anthropic | Dialect::Mcp
            ) {
                problems.push(format!(
                    "{d}: refused, but this dialect always has a fallback"
                ));
            }
            continue;
        }
        let j = &entry["json"];
        let found = match d {
            Dialect::OpenAi => {
                let mut p = Vec::new();
                if j["type"] != "function" {
                    p.push("openai: type is not function".into());
                }
                p.extend(checkers::openai(&j["function"], &notes(d.name())));
                // Both shapes carry the same function.
                let mut r = snap["openai-responses"]["json"].clone();
                if let Some(m) = r.as_object_mut() {
                    m.remove("type");
                }
                if r != j["function"] {
                    p.push("openai-responses and openai disagree".into());
                }
                p
            }
            Dialect::OpenAiResponses => {
                let mut p = Vec::new();
                if j["type"] != "function" {
                    p.push("openai-responses: type is not function".into());
                }
                p.extend(checkers::openai(j, &notes(d.name())));
                p
            }
            Dialect::Anthropic => checkers::anthropic(j, false),
            Dialect::AnthropicStrict => checkers::anthropic(j, true),
            Dialect::Gemini => checkers::gemini(j),
            Dialect::GeminiOpenApi => checkers::gemini_openapi(j),
            Dialect::Mcp => checkers::mcp(j, true),
            Dialect::Dsh => checkers::dsh(j),
            _ => vec![format!("no checker for {d}")],
        };
        problems.extend(found);
    }
    problems.extend(checkers::mcp(
        &snap[format!("mcp@{NEW_MCP}")]["json"],
        false,
    ));
    problems
        .into_iter()
        .map(|p| format!("{name}: {p}"))
        .collect()
}

#[test]
fn golden_snapshots_pass_every_dialect_checker() {
    let registry = registry();
    let overwrite = std::env::var("SNAPSHOTS").is_ok_and(|v| v == "overwrite");
    let dir = snapshot_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let mut problems = Vec::new();
    let mut names = Vec::new();
    // Per dialect: the corpus types that fell back or were refused, and why.
    let mut table: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for def in registry.definitions() {
        let snap = snapshot(def);
        problems.extend(check(&def.name, &snap));
        for d in Dialect::ALL {
            let e = &snap[d.name()];
            let strict_off =
                e["json"]["strict"] == false || e["json"]["function"]["strict"] == false;
            if let Some(r) = e.get("refused") {
                table
                    .entry(d.name().into())
                    .or_default()
                    .push(format!("{}: refused: {}", def.name, r));
            } else if strict_off {
                table
                    .entry(d.name().into())
                    .or_default()
                    .push(format!("{}: {}", def.name, e["notes"][0]));
            }
        }
        let file = dir.join(format!("{}.json", def.name));
        let text = serde_json::to_string_pretty(&snap).unwrap() + "\n";
        names.push(format!("{}.json", def.name));
        if overwrite {
            std::fs::write(&file, &text).unwrap();
        } else {
            match std::fs::read_to_string(&file) {
                Ok(old) if old == text => {}
                Ok(_) => problems.push(format!(
                    "{}: the snapshot changed; review, then re-record with SNAPSHOTS=overwrite",
                    file.display()
                )),
                Err(_) => problems.push(format!(
                    "{}: no snapshot; record it with SNAPSHOTS=overwrite",
                    file.display()
                )),
            }
        }
    }
    for entry in std::fs::read_dir(&dir).unwrap() {
        let n = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !names.contains(&n) {
            problems.push(format!("{n}: a snapshot of no corpus type (delete it)"));
        }
    }
    assert!(names.len() >= 25, "the corpus has {} types", names.len());
    for (d, rows) in &table {
        eprintln!("{d}:");
        for r in rows {
            eprintln!("  {r}");
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What the model sends in OpenAI strict mode: every declared property
/// present, `null` for the ones the value leaves out and for the ones
/// equal to their schema's `default` (written independently of the
/// library's reverse step).
fn nullify(value: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > 64 {
        return;
    }
    let parts = parts(schema, value, root);
    match value {
        Value::Object(m) => {
            let mut required = Vec::new();
            let mut props: Vec<(&String, &Value)> = Vec::new();
            for p in &parts {
                required.extend(
                    p.get("required")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str),
                );
                props.extend(
                    p.get("properties")
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten(),
                );
            }
            for (name, s) in &props {
                if required.contains(&name.as_str()) {
                    continue;
                }
                match m.get(*name) {
                    None => {
                        m.insert((*name).clone(), Value::Null);
                    }
                    Some(v) if s.get("default") == Some(v) => {
                        m.insert((*name).clone(), Value::Null);
                    }
                    _ => {}
                }
            }
            for (name, s) in props {
                if let Some(v) = m.get_mut(name) {
                    nullify(v, s, root, depth + 1);
                }
            }
            let extra = parts
                .iter()
                .find_map(|p| p.get("additionalProperties").filter(|a| a.is_object()));
            if let Some(s) = extra {
                let declared: Vec<String> = parts
                    .iter()
                    .flat_map(|p| {
                        p.get("properties")
                            .and_then(Value::as_object)
                            .into_iter()
                            .flatten()
                            .map(|(k, _)| k.clone())
                    })
                    .collect();
                for (k, v) in m.iter_mut() {
                    if !declared.contains(k) {
                        nullify(v, s, root, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = parts.iter().find_map(|p| p.get("items")) {
                for v in items {
                    nullify(v, s, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn parts<'a>(schema: &'a Value, value: &Value, root: &'a Value) -> Vec<&'a Map<String, Value>> {
    let mut out = Vec::new();
    let mut todo = vec![schema];
    while let Some(s) = todo.pop() {
        let Some(m) = s.as_object() else { continue };
        out.push(m);
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            todo.push(if r == "#" {
                root
            } else {
                root.pointer(&r[1..]).unwrap()
            });
        }
        for k in ["anyOf", "oneOf"] {
            if let Some(b) = m
                .get(k)
                .and_then(Value::as_array)
                .and_then(|bs| bs.iter().find(|b| fits(b, value, root)))
            {
                todo.push(b);
            }
        }
    }
    out
}

/// The test's own branch choice: type, tags, required keys, closedness.
fn fits(branch: &Value, value: &Value, root: &Value) -> bool {
    let Some(m) = branch.as_object() else {
        return true;
    };
    if let Some(r) = m.get("$ref").and_then(Value::as_str) {
        let t = if r == "#" {
            root
        } else {
            root.pointer(&r[1..]).unwrap()
        };
        return fits(t, value, root);
    }
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let types: Vec<&str> = match m.get("type") {
        Some(Value::String(t)) => vec![t],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if !types.is_empty()
        && !types
            .iter()
            .any(|t| *t == kind || (*t == "number" && kind == "integer"))
    {
        return false;
    }
    if m.get("const").is_some_and(|c| c != value)
        || m.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.contains(value))
    {
        return false;
    }
    if let Value::Object(o) = value {
        let props = m.get("properties").and_then(Value::as_object);
        for r in m
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !o.contains_key(r) {
                return false;
            }
        }
        for (k, s) in props.into_iter().flatten() {
            if let (Some(c), Some(v)) = (s.get("const"), o.get(k))
                && c != v
            {
                return false;
            }
        }
        if m.get("additionalProperties") == Some(&Value::Bool(false))
            && o.keys().any(|k| !props.is_some_and(|p| p.contains_key(k)))
        {
            return false;
        }
    }
    for k in ["anyOf", "oneOf"] {
        if let Some(bs) = m.get(k).and_then(Value::as_array)
            && !bs.iter().any(|b| fits(b, value, root))
        {
            return false;
        }
    }
    true
}

fn valid(schema: &Value, instance: &Value) -> Result<(), String> {
    let v =
        jsonschema::validator_for(schema).map_err(|e| format!("schema does not compile: {e}"))?;
    let errors: Vec<String> = v
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

async fn round_trip<T: Case>(
    registry: &toolprism::Registry,
    problems: &mut Vec<String>,
    nulls: &mut usize,
) {
    let def = registry.definition(T::NAME).unwrap();
    let canonical = &def.input_schema;
    let views: std::collections::HashMap<Dialect, Option<Value>> = Dialect::ALL
        .into_iter()
        .map(|d| (d, dialect::definition(d, def).ok().map(|p| p.into_json())))
        .collect();
    for (i, sample) in T::samples().into_iter().enumerate() {
        let at = format!("{} sample {i}", T::NAME);
        let args = serde_json::to_value(sample.clone().to_args()).unwrap();
        let value = serde_json::to_value(&sample).unwrap();
        // As is.
        match registry.call_typed::<Echo<T>>(args.clone()).await {
            Ok(v) if v == sample => {}
            other => problems.push(format!("{at}: plain arguments: {other:?}")),
        }
        // OpenAI strict: the nulls the model sends, accepted by the strict
        // schema, removed by the reverse step, accepted by the registry.
        let mut sent = args.clone();
        nullify(&mut sent, canonical, canonical, 0);
        *nulls += count_nulls(&sent) - count_nulls(&args);
        let function = &views[&Dialect::OpenAi].as_ref().unwrap()["function"];
        if function["strict"] == true
            && let Err(e) = valid(&function["parameters"], &sent)
        {
            problems.push(format!(
                "{at}: the strict schema refuses what a model sends: {e}\n  sent: {sent}"
            ));
        }
        for d in [Dialect::OpenAi, Dialect::OpenAiResponses] {
            let restored = dialect::restore_arguments(d, canonical, sent.clone());
            match registry.call_typed::<Echo<T>>(restored.clone()).await {
                Ok(v) if v == sample => {}
                other => problems.push(format!(
                    "{at}: {d}: {other:?}\n  sent: {sent}\n  restored: {restored}"
                )),
            }
        }
        for d in Dialect::ALL {
            if !matches!(d, Dialect::OpenAi | Dialect::OpenAiResponses)
                && dialect::restore_arguments(d, canonical, sent.clone()) != sent
            {
                problems.push(format!("{at}: {d} changed the arguments on the way back"));
            }
        }
        // Every JSON Schema view accepts the value's own arguments (no
        // transform narrowed a schema), and DSH's output schema the value.
        let checks: [(Dialect, &str); 4] = [
            (Dialect::Anthropic, "/input_schema"),
            (Dialect::AnthropicStrict, "/input_schema"),
            (Dialect::Gemini, "/parametersJsonSchema"),
            (Dialect::Dsh, "/parameters"),
        ];
        for (d, pointer) in checks {
            if let Some(view) = &views[&d]
                && let Err(e) = valid(view.pointer(pointer).unwrap(), &args)
            {
                problems.push(format!("{at}: {d} refuses the arguments: {e}"));
            }
        }
        if let Some(view) = &views[&Dialect::Dsh]
            && let Err(e) = valid(&view["output"]["schema"], &value)
        {
            problems.push(format!("{at}: dsh's output schema refuses the value: {e}"));
        }
        // MCP: structured content matches the advertised output schema in
        // both protocol generations.
        for version in ["2025-11-25", "2025-06-18", NEW_MCP, "garbage"] {
            let (schema, _) = mcp::output_schema(def, version);
            let content = mcp::structured_content(def, value.clone(), version);
            if let Err(e) = valid(&schema, &content) {
                problems.push(format!("{at}: mcp {version}: {e}"));
            }
            if let Err(e) = valid(&mcp::input_schema(def), &args) {
                problems.push(format!("{at}: mcp input: {e}"));
            }
        }
    }
}

fn count_nulls(v: &Value) -> usize {
    match v {
        Value::Null => 1,
        Value::Array(a) => a.iter().map(count_nulls).sum(),
        Value::Object(m) => m.values().map(count_nulls).sum(),
        _ => 0,
    }
}

#[tokio::test]
async fn every_sample_round_trips_through_the_registry_in_every_dialect() {
    let registry = registry();
    let mut problems = Vec::new();
    let mut nulls = 0usize;
    macro_rules! rt {
        ($t:ty) => {
            round_trip::<$t>(&registry, &mut problems, &mut nulls).await;
        };
    }
    for_each_case!(rt);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The round trips did exercise the reverse step.
    assert!(nulls >= 8, "only {nulls} nulls were added");
}

#[test]
fn definitions_keep_the_others_when_one_is_refused() {
    let registry = registry();
    let all = dialect::definitions(Dialect::GeminiOpenApi, registry.definitions());
    assert_eq!(
        all.tools().len() + all.refused().len(),
        registry.definitions().len()
    );
    assert!(all.refused().iter().any(|e| e.tool() == "tree"));
    let text = all.refused()[0].to_string();
    assert!(text.starts_with("tool \""), "{text}");
    assert!(all.json().as_array().unwrap().len() == all.tools().len());
    for d in Dialect::ALL {
        let set = dialect::definitions(d, registry.definitions());
        assert!(!set.tools().is_empty(), "{d}");
        for n in set.notes() {
            assert!(
                n.starts_with("tool \"") || n.contains("strict tools"),
                "{d}: {n}"
            );
        }
    }
    // 33 strict tools together are over Anthropic's per-request limits: said, not hidden.
    let strict = dialect::definitions(Dialect::AnthropicStrict, registry.definitions());
    assert!(
        strict
            .notes()
            .iter()
            .any(|n| n.contains("a request may carry at most 20")),
        "{:?}",
        strict.notes()
    );
}
