//! The real TypeScript compiler (`tsc --strict --noEmit`, pinned in
//! [`support::TYPESCRIPT`]) on generated SDKs and programs written against
//! them:
//!
//! - the SDK of every schema snapshot of the project's dialect corpus
//!   (each tool named after its file, with the snapshot's canonical input
//!   and output schemas), with a program that passes every sample value of
//!   the corpus as arguments and takes every sample as a value, so each
//!   type is checked against real data;
//! - the same corpus derived with schemars' default settings (every struct
//!   and enum in `$defs`, referenced with `$ref`), and types that need
//!   `$defs` even when inlining (recursion below the root, mutual
//!   recursion, shared names across tools);
//! - a program reading a field the value does not have fails, and the
//!   same program reading the right field passes; wrong arguments fail;
//! - a tool whose value is its content (an imported tool whose server
//!   declares no output schema) takes every kind of block as its value,
//!   and a program narrowing the blocks by `type` passes where one
//!   reading a field no block has, or `structuredContent`, fails;
//! - hostile schemas still give an SDK that compiles.

use crate::corpus;
use crate::for_each_case;
use crate::support;

use std::collections::BTreeMap;
use std::fmt::Write;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolprism::code::sdk::{SdkTool, sdk};

use corpus::Case;

/// The project's schema settings (`toolprism::schema`): draft 2020-12,
/// subschemas inlined (recursive types still use `$defs`).
fn inlined() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true)
}

/// A tool's two schemas, derived with `settings`.
#[derive(Debug, Clone)]
struct Schemas {
    name: String,
    input: Value,
    output: Value,
}

fn derive<A: JsonSchema, V: JsonSchema>(name: &str, settings: &SchemaSettings) -> Schemas {
    Schemas {
        name: name.to_owned(),
        input: settings
            .clone()
            .for_deserialize()
            .into_generator()
            .into_root_schema_for::<A>()
            .to_value(),
        output: settings
            .clone()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<V>()
            .to_value(),
    }
}

fn sdk_of(schemas: &[Schemas]) -> String {
    let tools: Vec<SdkTool<'_>> = schemas
        .iter()
        .map(|s| SdkTool {
            name: &s.name,
            description: "Echo the argument back as the value.",
            input_schema: &s.input,
            output_schema: Some(&s.output),
            read_only: s.name.len() % 2 == 0,
        })
        .collect();
    sdk(&tools)
}

/// The `canonical` view of each snapshot of the dialect corpus
/// (runtime/tests/dialects/snapshots), by name.
fn snapshots() -> Vec<Schemas> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../runtime/tests/dialects/snapshots"
    );
    let mut out: Vec<Schemas> = std::fs::read_dir(dir)
        .expect("runtime/tests/dialects/snapshots")
        .map(|entry| {
            let path = entry.expect("a snapshot").path();
            let text = std::fs::read_to_string(&path).expect("read a snapshot");
            let v: Value = serde_json::from_str(&text).expect("a snapshot is JSON");
            Schemas {
                name: path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .expect("a file name")
                    .to_owned(),
                input: v["canonical"]["input"].clone(),
                output: v["canonical"]["output"].clone(),
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Program lines that give every sample of `T` as the arguments of its
/// tool and as its value, and call the tool once.
fn sample_lines<T: Case>(out: &mut String) {
    let name = T::NAME;
    for (i, sample) in T::samples().into_iter().enumerate() {
        let value = serde_json::to_string(&sample).expect("a sample serializes");
        let args = serde_json::to_string(&sample.to_args()).expect("arguments serialize");
        writeln!(
            out,
            "const {name}_args_{i}: ToolArgsMap[\"{name}\"] = {args};"
        )
        .unwrap();
        writeln!(
            out,
            "const {name}_value_{i}: ToolOutputMap[\"{name}\"] = {value};"
        )
        .unwrap();
    }
    writeln!(
        out,
        "const {name}_out: ToolOutputMap[\"{name}\"] = await tools.{name}({name}_args_0);"
    )
    .unwrap();
    writeln!(out, "console.log({name}_out);").unwrap();
}

fn corpus_program() -> String {
    let mut out = String::new();
    macro_rules! lines {
        ($t:ident) => {
            sample_lines::<corpus::$t>(&mut out);
        };
    }
    for_each_case!(lines);
    out
}

fn corpus_schemas(settings: &SchemaSettings) -> Vec<Schemas> {
    let mut out = Vec::new();
    macro_rules! push {
        ($t:ident) => {
            out.push(derive::<<corpus::$t as Case>::Args, corpus::$t>(
                <corpus::$t as Case>::NAME,
                settings,
            ));
        };
    }
    for_each_case!(push);
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn assert_compiles(case: &str, sdk: &str, program: &str) {
    if let Err(e) = support::check(case, sdk, program) {
        panic!("tsc refused case {case}:\n{e}");
    }
}

fn assert_refused(case: &str, sdk: &str, program: &str, wanted: &str) {
    match support::check(case, sdk, program) {
        Ok(()) => panic!("tsc accepted case {case}, which it must refuse"),
        Err(e) => assert!(
            e.contains(wanted),
            "case {case}: expected {wanted:?} in:\n{e}"
        ),
    }
}

#[test]
fn the_snapshots_are_what_schemars_derives() {
    let derived = corpus_schemas(&inlined());
    let snapshots = snapshots();
    assert_eq!(derived.len(), snapshots.len());
    for (d, s) in derived.iter().zip(&snapshots) {
        assert_eq!(d.name, s.name);
        assert_eq!(d.input, s.input, "input of {}", d.name);
        assert_eq!(d.output, s.output, "output of {}", d.name);
    }
}

#[test]
fn the_corpus_snapshots_compile_with_their_samples() {
    let text = sdk_of(&snapshots());
    assert_compiles("corpus-snapshots", &text, &corpus_program());
}

#[test]
fn the_corpus_with_every_type_in_defs_compiles_with_its_samples() {
    let schemas = corpus_schemas(&SchemaSettings::draft2020_12());
    let text = sdk_of(&schemas);
    assert!(text.contains("declare namespace ToolTypes.documented.Args {"));
    assert_compiles("corpus-defs", &text, &corpus_program());
}

// ---- types that need `$defs` even when inlining ------------------------------

/// A tree, below the root.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Node {
    /// Its name.
    name: String,
    /// Its children.
    children: Vec<Node>,
}

/// A forest: the recursive type is not the root, so it goes to `$defs`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Forest {
    trees: Vec<Node>,
    biggest: Option<Box<Node>>,
}

/// Mutual recursion through an enum.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Expr {
    Number { value: f64 },
    Call(Call),
}

/// A call of a function on arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Call {
    function: String,
    args: Vec<Expr>,
}

/// The arguments of `eval`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct EvalArgs {
    expr: Expr,
}

/// A flattened optional enum and struct, maps of any JSON.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Mixed {
    id: u32,
    #[serde(flatten)]
    extra: Option<corpus::Internal>,
    #[serde(flatten)]
    meta: Option<corpus::Meta>,
    any: BTreeMap<String, Value>,
    object: serde_json::Map<String, Value>,
    pair: (i32, String),
    digest: [u8; 20],
    rows: Vec<Vec<Value>>,
    twice: Option<Option<bool>>,
}

/// Another tool's own `Node`, to collide by name with `forest`'s.
mod other {
    use super::*;

    /// A different node.
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    pub(super) struct Node {
        pub(super) weight: u8,
        pub(super) next: Option<Box<Node>>,
    }

    /// Holds one.
    #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    pub(super) struct Holder {
        pub(super) node: Node,
    }
}

fn extra_schemas(settings: &SchemaSettings) -> Vec<Schemas> {
    vec![
        derive::<Forest, Forest>("forest", settings),
        derive::<EvalArgs, Expr>("eval", settings),
        derive::<Mixed, Mixed>("mixed", settings),
        derive::<other::Holder, other::Holder>("holder", settings),
    ]
}

fn extra_program() -> String {
    let forest = Forest {
        trees: vec![Node {
            name: "a".into(),
            children: vec![Node {
                name: "b".into(),
                children: vec![],
            }],
        }],
        biggest: None,
    };
    let expr = Expr::Call(Call {
        function: "add".into(),
        args: vec![
            Expr::Number { value: 1.0 },
            Expr::Call(Call {
                function: "neg".into(),
                args: vec![Expr::Number { value: 2.5 }],
            }),
        ],
    });
    let mixed = Mixed {
        id: 7,
        extra: Some(corpus::Internal::Move { x: 1, y: 2 }),
        meta: Some(corpus::Meta {
            author: "a".into(),
            version: Some(1),
        }),
        any: BTreeMap::from([("k".into(), json!([1, {"x": null}]))]),
        object: serde_json::Map::from_iter([("o".into(), json!(true))]),
        pair: (-1, "p".into()),
        digest: [9; 20],
        rows: vec![vec![json!(1), json!("x"), Value::Null]],
        twice: Some(None),
    };
    let holder = other::Holder {
        node: other::Node {
            weight: 1,
            next: Some(Box::new(other::Node {
                weight: 2,
                next: None,
            })),
        },
    };
    format!(
        r#"const forest: ToolOutputMap["forest"] = await tools.forest({forest});
const names: string[] = forest.trees.flatMap((t) => [t.name, ...t.children.map((c) => c.name)]);
const result: ToolOutputMap["eval"] = await tools.eval({{ expr: {expr} }});
if (result.kind === "call") {{
  const first = result.args[0];
  console.log(result.function, first.kind === "number" ? first.value : first.function);
}}
const mixed: ToolOutputMap["mixed"] = await tools.mixed({mixed});
const id: number = mixed.id;
const cell: unknown = mixed.rows[0][1];
const holder: ToolOutputMap["holder"] = await tools.holder({holder});
const weight: number | undefined = holder.node.next?.weight;
return {{ names, id, cell, weight }};
"#,
        forest = j(&forest),
        expr = j(&expr),
        mixed = j(&mixed),
        holder = j(&holder),
    )
}

/// JSON text of a value: a TypeScript expression too.
fn j<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("a value serializes")
}

#[test]
fn types_in_defs_compile_inlined_and_not() {
    for (case, settings) in [
        ("extra-inlined", inlined()),
        ("extra-defs", SchemaSettings::draft2020_12()),
    ] {
        let schemas = extra_schemas(&settings);
        let text = sdk_of(&schemas);
        assert!(
            text.contains("declare namespace ToolTypes.forest.Args {"),
            "{case}"
        );
        assert!(
            text.contains("declare namespace ToolTypes.holder.Args {"),
            "{case}"
        );
        assert_compiles(case, &text, &extra_program());
    }
}

// ---- fields and arguments the types refuse -----------------------------------

/// The built-in `read` tool's schemas (toolprism-tools, `ReadArgs` and
/// `ReadValue`), as the project derives them.
fn read_tool() -> Schemas {
    Schemas {
        name: "read".into(),
        input: json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "ReadArgs", "description": "Arguments of `read`.",
            "type": "object", "additionalProperties": false,
            "properties": {
                "path": {"description": "The file, relative to the workspace root.", "type": "string"},
                "offset": {"description": "1-based number of the first line to read. Default 1.",
                    "type": ["integer", "null"], "format": "uint64", "minimum": 1},
                "limit": {"description": "How many lines to read. Default and maximum 2000.",
                    "type": ["integer", "null"], "format": "uint64", "minimum": 1, "maximum": 2000}
            },
            "required": ["path"]
        }),
        output: json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "ReadValue", "description": "The value of `read`: the window read.",
            "type": "object",
            "properties": {
                "path": {"description": "The file, relative to the workspace root.", "type": "string"},
                "offset": {"description": "1-based number of the first line.", "type": "integer", "format": "uint64", "minimum": 0},
                "lines": {"description": "The lines read.", "type": "array", "items": {
                    "description": "One numbered line.", "type": "object",
                    "properties": {
                        "number": {"description": "1-based line number.", "type": "integer", "format": "uint64", "minimum": 0},
                        "text": {"description": "The text, without its line ending, capped at 2000 chars.", "type": "string"}
                    },
                    "required": ["number", "text"]
                }},
                "totalLines": {"description": "Lines in the whole file.", "type": "integer", "format": "uint64", "minimum": 0},
                "byteCapped": {"description": "Whether the 50 KiB cap ended the window early.", "type": "boolean"}
            },
            "required": ["path", "offset", "lines", "totalLines", "byteCapped"]
        }),
    }
}

const READ_PROGRAM: &str = r#"const [a, b] = await Promise.all([
  tools.read({ path: "a.txt" }),
  tools.read({ path: "b.txt", offset: 10, limit: null }),
]);
try {
  await tools.read({ path: "missing.txt" });
} catch (e) {
  if (e instanceof ToolCallError) {
    console.log(e.name, e.toolName, e.code, e.message);
  }
}
return a.FIELD + b.lines.map((l) => `${l.number}: ${l.text}`).join("\n");
"#;

#[test]
fn reading_a_field_the_value_has_passes_and_one_it_lacks_fails() {
    let text = sdk_of(&[read_tool()]);
    assert_compiles(
        "read-right-field",
        &text,
        &READ_PROGRAM.replace("FIELD", "totalLines"),
    );
    assert_refused(
        "read-wrong-field",
        &text,
        &READ_PROGRAM.replace("FIELD", "total_lines"),
        "Property 'total_lines' does not exist",
    );
}

#[test]
fn reading_fields_of_named_types_is_checked_too() {
    let text = sdk_of(&snapshots());
    let program = "const t = await tools.tree({ label: \"root\", children: [] });\n\
                   const l = await tools.linked_list({ value: 1, next: { value: 2 } });\n\
                   return [t.children[0]?.FIELD, l.next?.next?.value];";
    assert_compiles(
        "corpus-right-field",
        &text,
        &program.replace("FIELD", "label"),
    );
    assert_refused(
        "corpus-wrong-field",
        &text,
        &program.replace("FIELD", "name"),
        "Property 'name' does not exist on type 'Root'",
    );
}

#[test]
fn wrong_arguments_fail() {
    let text = sdk_of(&[read_tool()]);
    assert_refused(
        "read-wrong-type",
        &text,
        "await tools.read({ path: 1 });",
        "Type 'number' is not assignable to type 'string'",
    );
    assert_refused(
        "read-missing-argument",
        &text,
        "await tools.read({ offset: 1 });",
        "Property 'path' is missing",
    );
    assert_refused(
        "read-unknown-argument",
        &text,
        "await tools.read({ path: \"a\", lines: 3 });",
        "Object literal may only specify known properties",
    );
    assert_refused(
        "read-unknown-tool",
        &text,
        "await tools.write({ path: \"a\" });",
        "Property 'write' does not exist",
    );
}

// ---- a value that is the tool's content ------------------------------------------

/// Two tools as an import of a server that declares no output schema
/// gives them (their value is their content), and one that declares one.
fn content_tools() -> Vec<Schemas> {
    let input = json!({"type": "object", "properties": {"repo_path": {"type": "string"}},
        "required": ["repo_path"]});
    let content = toolprism::content_value_schema().clone();
    vec![
        Schemas {
            name: "git_status".into(),
            input: input.clone(),
            output: content.clone(),
        },
        Schemas {
            name: "git_log".into(),
            input: input.clone(),
            output: content,
        },
        Schemas {
            name: "count".into(),
            input,
            output: json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        },
    ]
}

/// A program reading the blocks of `git_status`; `FIELD` is read from a
/// text block, `OTHER` from the value.
const CONTENT_PROGRAM: &str = r#"const status = await tools.git_status({ repo_path: "." });
const lines: string[] = [];
for (const block of status.content) {
  switch (block.type) {
    case "text": lines.push(block.FIELD); break;
    case "image": case "audio": lines.push(`${block.mimeType}, ${block.data.length} chars`); break;
    case "resource": lines.push(block.resource.text ?? block.resource.blob ?? block.resource.uri); break;
    case "resource_link": lines.push(`${block.name} (${block.size ?? 0} bytes) at ${block.uri}`); break;
  }
}
const log = await tools.git_log({ repo_path: "." });
const n: number = (await tools.count({ repo_path: "." })).n;
return [lines, log.OTHER, n];
"#;

#[test]
fn a_value_that_is_content_types_every_block_and_refuses_a_wrong_field() {
    use toolprism::{ContentBlock, EmbeddedResource, ResourceLink, content_value};
    let text = sdk_of(&content_tools());
    assert!(
        text.contains("  \"git_status\": { content: ToolContent[] };\n"),
        "{text}"
    );
    assert!(!text.contains("\"git_status\": unknown"), "{text}");
    // Every kind of block, as the registry makes the value, is a value.
    let every = content_value(&[
        ContentBlock::text("On branch main"),
        ContentBlock::image("image/png", "iVBO"),
        ContentBlock::audio("audio/wav", "UklG"),
        ContentBlock::embedded_text("git://HEAD", "text/plain", "abc123"),
        ContentBlock::Resource {
            resource: EmbeddedResource::blob("git://blob", "AAEC"),
        },
        ContentBlock::ResourceLink(
            ResourceLink::new("file:///repo/README.md", "README.md")
                .with_title("Read me")
                .with_mime_type("text/markdown")
                .with_size(42),
        ),
    ]);
    let samples = format!(
        "const every: ToolOutputMap[\"git_status\"] = {};\nconst none: ToolOutputMap[\"git_log\"] = {};\n",
        j(&every),
        j(&content_value(&[])),
    );
    let program = CONTENT_PROGRAM
        .replace("FIELD", "text")
        .replace("OTHER", "content.length");
    assert_compiles(
        "content-right-fields",
        &text,
        &format!("{samples}{program}"),
    );
    assert_refused(
        "content-wrong-block-field",
        &text,
        &CONTENT_PROGRAM
            .replace("FIELD", "txt")
            .replace("OTHER", "content.length"),
        "Property 'txt' does not exist",
    );
    assert_refused(
        "content-structured-content",
        &text,
        &CONTENT_PROGRAM
            .replace("FIELD", "text")
            .replace("OTHER", "structuredContent"),
        "Property 'structuredContent' does not exist on type '{ content: ToolContent[]; }'",
    );
    assert_refused(
        "content-not-a-block",
        &text,
        "const v: ToolOutputMap[\"git_status\"] = { content: [{ type: \"video\", data: \"x\" }] };",
        "Type '\"video\"' is not assignable",
    );
}

// ---- hostile schemas still compile ---------------------------------------------// ---- hostile schemas still compile ---------------------------------------------

#[test]
fn hostile_schemas_give_an_sdk_that_compiles() {
    let mut schemas = vec![
        ("garbage_number", json!(42), json!([])),
        ("garbage_string", json!("x"), json!(null)),
        ("false_schema", json!(false), json!(true)),
        (
            "cycle",
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
                "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}}}),
            json!({"anyOf": [{"$ref": "#"}, {"type": "string"}]}),
        ),
        (
            "missing",
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Gone"}, "b": {"$ref": "other.json#/x"}}}),
            json!({"$ref": "#/definitions/Gone"}),
        ),
        (
            "closing-comment",
            json!({"type": "object", "description": "*/ declare const x: 1; /*",
                "properties": {"*/": {"type": "string", "description": "a */ b", "title": "*/"}}}),
            json!({"enum": ["*/", "\u{2028}", "\\", "\"", null, 1.5, -3, true, {"*/": [1]}]}),
        ),
        (
            "clashing-props",
            json!({"type": "object", "properties": {"id": {"type": "integer"}, "tag": {"type": "string"}},
                "required": ["tag"], "additionalProperties": {"type": "boolean"},
                "patternProperties": {"^x-": {"type": "object", "properties": {"deep": {"type": "null"}}}}}),
            json!({"type": "object", "properties": {"n": {"type": "number"}}, "additionalProperties": {"type": "string"}}),
        ),
        (
            "1st-tool",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/string"}},
                "$defs": {"string": {"type": "string"}, "Root": {"type": "number"}}}),
            json!({"type": "object", "properties": {"r": {"$ref": "#/$defs/Root"}, "self": {"$ref": "#"}},
                "$defs": {"Root": {"type": "array", "items": {"$ref": "#/$defs/Root"}}}}),
        ),
    ];
    let huge: Vec<Value> = (0..5000).map(|i| json!(format!("v{i}"))).collect();
    schemas.push((
        "huge_enum",
        json!({"type": "object", "properties": {"e": {"enum": huge}}}),
        json!({"enum": huge[..200]}),
    ));
    let mut deep = json!({"type": "string"});
    for i in 0..200 {
        deep = if i % 2 == 0 {
            json!({"type": "object", "properties": {"d": deep}, "required": ["d"]})
        } else {
            json!({"type": "array", "items": deep})
        };
    }
    schemas.push(("deep", deep.clone(), deep));
    let schemas: Vec<Schemas> = schemas
        .into_iter()
        .map(|(name, input, output)| Schemas {
            name: name.into(),
            input,
            output,
        })
        .collect();
    let text = sdk_of(&schemas);
    assert_compiles(
        "hostile",
        &text,
        "const c = await tools.cycle({ a: null });\nconst h = await tools.huge_enum({ e: \"v4999\" });\nreturn [c, h];",
    );
}
