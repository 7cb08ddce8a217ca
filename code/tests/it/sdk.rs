//! The SDK text as a whole: byte-stable whatever the order of the tools,
//! and total on hostile schemas (never a panic, never text that escapes
//! a comment or a string, bounded output for huge enums, cycles of any
//! length, nesting of any depth).

use serde_json::{Value, json};
use toolprism::code::sdk::{MAX_DEPTH, SdkTool, sdk};

fn snapshots() -> Vec<(String, Value)> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../runtime/tests/dialects/snapshots"
    );
    let mut out: Vec<(String, Value)> = std::fs::read_dir(dir)
        .expect("runtime/tests/dialects/snapshots")
        .map(|entry| {
            let path = entry.expect("a snapshot").path();
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("a file name")
                .to_owned();
            let text = std::fs::read_to_string(&path).expect("read a snapshot");
            (
                name,
                serde_json::from_str(&text).expect("a snapshot is JSON"),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn tools(schemas: &[(String, Value)]) -> Vec<SdkTool<'_>> {
    schemas
        .iter()
        .map(|(name, v)| SdkTool {
            name,
            description: "Echo the argument back as the value.",
            input_schema: &v["canonical"]["input"],
            output_schema: Some(&v["canonical"]["output"]),
            read_only: name.contains('_'),
        })
        .collect()
}

/// The code of a TypeScript text: comments dropped, string literals
/// emptied to `""`. Panics on a comment or string left open.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("/*") {
            let end = after.find("*/").expect("a comment is closed");
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else if c == '"' {
            let mut escaped = false;
            let mut end = None;
            for (i, ch) in rest.char_indices().skip(1) {
                match (escaped, ch) {
                    (true, _) => escaped = false,
                    (false, '\\') => escaped = true,
                    (false, '"') => {
                        end = Some(i);
                        break;
                    }
                    (false, '\n') => panic!("a string literal spans a line"),
                    _ => {}
                }
            }
            rest = &rest[end.expect("a string is closed") + 1..];
            out.push_str("\"\"");
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// What every SDK text must be, whatever the schemas.
fn assert_well_formed(text: &str) {
    let code = code_of(text);
    assert!(!code.contains("*/"), "a comment closes outside a comment");
    assert!(
        !code.contains("pwned"),
        "text from a schema escaped into the code"
    );
    for (open, close) in [('{', '}'), ('(', ')'), ('[', ']')] {
        assert_eq!(
            code.matches(open).count(),
            code.matches(close).count(),
            "unbalanced {open}{close}"
        );
    }
    for line in text.lines() {
        assert_eq!(line, line.trim_end(), "trailing white space");
        assert!(!line.contains('\t'), "a tab");
    }
    assert!(text.ends_with("\n"));
}

#[test]
fn the_same_tools_in_any_order_give_the_same_bytes() {
    let schemas = snapshots();
    let sorted = tools(&schemas);
    let expected = sdk(&sorted);
    let mut reversed = sorted.clone();
    reversed.reverse();
    assert_eq!(sdk(&reversed), expected);
    for shift in [1, 7, 16] {
        let mut rotated = sorted.clone();
        rotated.rotate_left(shift);
        assert_eq!(sdk(&rotated), expected, "rotated by {shift}");
    }
    let (even, odd): (Vec<_>, Vec<_>) = sorted.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    let interleaved: Vec<SdkTool<'_>> = odd.into_iter().chain(even).map(|(_, t)| *t).collect();
    assert_eq!(sdk(&interleaved), expected);
    assert_eq!(sdk(&sorted), expected, "a second run");
    assert_well_formed(&expected);
}

#[test]
fn garbage_schemas_are_unknown() {
    let garbage = [json!(42), json!([]), json!("x"), json!(null), json!(true)];
    for (i, g) in garbage.iter().enumerate() {
        let name = format!("g{i}");
        let tool = SdkTool {
            name: &name,
            description: "",
            input_schema: g,
            output_schema: Some(g),
            read_only: false,
        };
        let text = sdk(&[tool]);
        assert!(
            text.contains(&format!("  \"{name}\": unknown;\n")),
            "{text}"
        );
        assert_eq!(text.matches(&format!("\"{name}\": unknown;")).count(), 2);
        assert_well_formed(&text);
    }
}

#[test]
fn comment_closers_everywhere_stay_inside() {
    let evil = "*/ declare const pwned: 1; /*";
    let schema = json!({
        "title": evil, "description": evil, "type": "object",
        "properties": {
            evil: {"type": "string", "description": evil, "title": evil, "default": evil,
                "examples": [evil], "format": evil, "pattern": evil},
            "x": {"enum": [evil, "\u{2028}", "a\nb"], "description": "\u{2028}*/ pwned \r*/"}
        },
        "$defs": {evil: {"description": evil, "type": "string"}},
        "oneOf": [{"$ref": format!("#/$defs/{evil}"), "description": evil}]
    });
    let tool = SdkTool {
        name: "t",
        description: evil,
        input_schema: &schema,
        output_schema: Some(&schema),
        read_only: true,
    };
    assert_well_formed(&sdk(&[tool]));
    // The name too, should a registry ever allow one like it.
    let named = SdkTool { name: evil, ..tool };
    assert_well_formed(&sdk(&[named]));
}

#[test]
fn huge_enums_stay_small() {
    let values: Vec<Value> = (0..100_000).map(|i| json!(format!("value-{i}"))).collect();
    let schema =
        json!({"type": "object", "properties": {"e": {"enum": values}}, "required": ["e"]});
    let tool = SdkTool {
        name: "t",
        description: "",
        input_schema: &schema,
        output_schema: Some(&schema),
        read_only: false,
    };
    let text = sdk(&[tool]);
    assert!(text.contains("  \"t\": { e: string };\n"));
    assert!(text.len() < 4_000, "{} bytes", text.len());
}

#[test]
fn long_reference_cycles_are_cut_without_recursion() {
    let n = 5_000;
    let mut defs = serde_json::Map::new();
    for i in 0..n {
        defs.insert(
            format!("D{i}"),
            json!({"$ref": format!("#/$defs/D{}", (i + 1) % n)}),
        );
    }
    let schema =
        json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/D0"}}, "$defs": defs});
    let tool = SdkTool {
        name: "t",
        description: "",
        input_schema: &schema,
        output_schema: None,
        read_only: false,
    };
    let text = sdk(&[tool]);
    assert!(text.contains("  type D0 = unknown;\n"));
    assert!(text.contains(&format!("  type D{} = unknown;\n", n - 1)));
    assert_well_formed(&text);
}

#[test]
fn any_depth_of_nesting_is_cut() {
    // 400 levels: far past the cap, short of what serde_json's own
    // recursive drop of a `Value` survives on a test thread's stack.
    let mut schema = json!({"type": "string"});
    for i in 0..400 {
        schema = match i % 4 {
            0 => json!({"type": "object", "properties": {"d": schema}, "required": ["d"]}),
            1 => json!({"type": "array", "items": schema}),
            2 => json!({"anyOf": [schema, {"type": "null"}]}),
            _ => json!({"allOf": [schema]}),
        };
    }
    let mut literal = json!("deep");
    for _ in 0..400 {
        literal = json!([literal]);
    }
    let enum_schema = json!({"enum": [literal]});
    for s in [&schema, &enum_schema] {
        let tool = SdkTool {
            name: "t",
            description: "",
            input_schema: s,
            output_schema: Some(s),
            read_only: false,
        };
        let text = sdk(&[tool]);
        assert!(text.contains("unknown"));
        assert!(
            text.lines().count() < 40 * MAX_DEPTH,
            "{} lines",
            text.lines().count()
        );
        assert_well_formed(&text);
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random mix of schema keywords, right and wrong, `depth` deep.
fn random_schema(rng: &mut Rng, depth: u32) -> Value {
    let leaves = [
        json!(true),
        json!(false),
        json!(42),
        json!("x"),
        json!({}),
        json!({"type": "string"}),
        json!({"type": ["integer", "null"]}),
        json!({"const": "c"}),
        json!({"enum": [1, "a", null, [], {}]}),
        json!({"$ref": "#"}),
        json!({"$ref": "#/$defs/A"}),
        json!({"$ref": "#/$defs/Missing"}),
        json!({"type": "nope"}),
    ];
    if depth == 0 || rng.below(4) == 0 {
        return leaves[rng.below(leaves.len() as u64) as usize].clone();
    }
    let mut m = serde_json::Map::new();
    for _ in 0..=rng.below(4) {
        let sub = random_schema(rng, depth - 1);
        match rng.below(12) {
            0 => {
                m.insert(
                    "type".into(),
                    json!(["object", "array", "null", "string"][rng.below(4) as usize]),
                );
            }
            1 => {
                m.insert(
                    "properties".into(),
                    json!({"a": sub, "b-c": random_schema(rng, depth - 1)}),
                );
                m.insert("required".into(), json!(["a", "z"]));
            }
            2 => {
                m.insert("additionalProperties".into(), sub);
            }
            3 => {
                m.insert("items".into(), sub);
            }
            4 => {
                m.insert("prefixItems".into(), json!([sub, {"type": "boolean"}]));
                m.insert("maxItems".into(), json!(rng.below(4)));
            }
            5 => {
                m.insert("oneOf".into(), json!([sub, random_schema(rng, depth - 1)]));
            }
            6 => {
                m.insert("anyOf".into(), json!([sub, {"type": "null"}]));
            }
            7 => {
                m.insert("allOf".into(), json!([sub]));
            }
            8 => {
                m.insert("description".into(), json!("d */ pwned"));
            }
            9 => {
                m.insert("patternProperties".into(), json!({"^x": sub}));
            }
            10 => {
                m.insert("$defs".into(), json!({"A": sub}));
            }
            _ => {
                m.insert("$ref".into(), json!("#/$defs/A"));
            }
        }
    }
    Value::Object(m)
}

#[test]
fn random_schemas_never_panic_and_stay_well_formed() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    for round in 0..400 {
        let schemas: Vec<Value> = (0..4).map(|_| random_schema(&mut rng, 5)).collect();
        let names = ["a", "b-c", "a", "d"];
        let tools: Vec<SdkTool<'_>> = schemas
            .iter()
            .zip(names)
            .enumerate()
            .map(|(i, (s, name))| SdkTool {
                name,
                description: "t */ pwned",
                input_schema: s,
                output_schema: (i % 2 == 0).then_some(&schemas[(i + 1) % 4]),
                read_only: i == 0,
            })
            .collect();
        let text = sdk(&tools);
        assert_well_formed(&text);
        let mut reversed = tools.clone();
        reversed.reverse();
        assert_eq!(sdk(&reversed), text, "round {round}");
    }
}

#[test]
fn wide_schemas_take_linear_time() {
    let n = 20_000;
    let members: Vec<Value> = (0..n)
        .map(|i| json!({"const": format!("c{i}"), "description": "One."}))
        .collect();
    let mut properties = serde_json::Map::new();
    let mut defs = serde_json::Map::new();
    for i in 0..n {
        properties.insert(format!("p{i}"), json!({"$ref": format!("#/$defs/a-{i}")}));
        // Every name sanitizes to the same few bases.
        defs.insert(format!("a-{i}"), json!({"type": "string"}));
        defs.insert(format!("a.{i}"), json!({"type": "string"}));
    }
    let required: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
    let schema = json!({
        "type": "object", "properties": properties, "required": required, "$defs": defs,
        "allOf": [{"oneOf": members}, {"anyOf": [{"type": "object"}, {"type": "object"}]}]
    });
    let tool = SdkTool {
        name: "t",
        description: "",
        input_schema: &schema,
        output_schema: Some(&schema),
        read_only: false,
    };
    let started = std::time::Instant::now();
    let text = sdk(&[tool]);
    assert!(text.contains("    | \"c19999\""));
    assert!(text.contains("  type a_19999 = string;\n"));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}
