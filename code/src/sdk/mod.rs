//! Code Mode's SDK: one TypeScript declaration text (`.d.ts`) that types
//! every tool of a registry as an async function on a global `tools`, from
//! the tools' input and output JSON Schemas (as schemars 1.x derives them).
//!
//! The model reads the text, writes a program against it and passes the
//! program to the tool `run_code`; the header comment says how. The text
//! is deterministic: the same tools in any order give the same bytes, so a
//! provider's prompt cache keeps it.
//!
//! ```
//! use serde_json::json;
//! use toolprism::code::sdk::{SdkTool, sdk};
//!
//! let args = json!({
//!     "type": "object",
//!     "properties": {
//!         "path": {"type": "string", "description": "The file, relative to the workspace root."},
//!         "limit": {"type": ["integer", "null"], "format": "uint64", "minimum": 1}
//!     },
//!     "required": ["path"]
//! });
//! let value = json!({
//!     "type": "object",
//!     "properties": {"lines": {"type": "array", "items": {"type": "string"}}},
//!     "required": ["lines"]
//! });
//! let read = SdkTool {
//!     name: "read",
//!     description: "Reads a text file.",
//!     input_schema: &args,
//!     output_schema: Some(&value),
//!     read_only: true,
//! };
//! let text = sdk(&[read]);
//! assert!(text.contains(
//!     "interface ToolArgsMap {
//!   /**
//!    * Reads a text file.
//!    *
//!    * Read-only.
//!    */
//!   \"read\": {
//!     /**
//!      * @format uint64
//!      * @minimum 1
//!      */
//!     limit?: number | null;
//!     /** The file, relative to the workspace root. */
//!     path: string;
//!   };
//! }"
//! ));
//! assert!(text.contains("  \"read\": { lines: string[] };\n"));
//! assert!(text.contains("declare const tools: { readonly [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]> };"));
//! ```

mod doc;
mod header;
mod mapping;
mod names;
mod printer;
mod tool;
mod types;

pub use mapping::{MAX_DEPTH, MAX_ENUM_VALUES};
pub use tool::SdkTool;

use std::collections::HashMap;

use self::doc::Doc;
use self::header::{ERROR_CLASS, NOT_READ_ONLY, READ_ONLY, TOOLS, header};
use self::mapping::{Mapped, map_schema};
use self::names::{Names, is_identifier, string_literal};
use self::printer::Printer;
use self::types::Ty;
use toolprism_core::content_value_schema;

/// The namespace that holds every tool's named types.
const TYPES: &str = "ToolTypes";

/// The type of one content block, declared once when a tool's value is its
/// content ([`content_value_schema`]).
const CONTENT: &str = "ToolContent";

/// The TypeScript declaration text (a `.d.ts` script, no imports) for
/// `tools`: the same bytes for the same tools in any order.
///
/// Tools are sorted by name; of two tools with one name, the one whose
/// declarations sort first is kept. A tool's arguments and value are
/// written inline in `ToolArgsMap` and `ToolOutputMap`; the types their
/// schemas name (`$defs` entries, and a root that refers to itself as
/// `Root`) go to `declare namespace ToolTypes.<tool>.Args { … }` and
/// `ToolTypes.<tool>.Output`, so two tools' types never collide. A tool
/// whose output schema is [`content_value_schema`] (its
/// value is its content blocks: an imported tool whose server declares no
/// output schema) resolves to `{ content: ToolContent[] }`, `ToolContent`
/// declared once, after `ToolCallError`.
///
/// ```
/// use serde_json::json;
/// use toolprism::code::sdk::{SdkTool, sdk};
///
/// let input = json!({
///     "type": "object",
///     "properties": {"children": {"type": "array", "items": {"$ref": "#"}}, "label": {"type": "string"}},
///     "required": ["label", "children"]
/// });
/// let tool = SdkTool {
///     name: "tree",
///     description: "Echo a tree.",
///     input_schema: &input,
///     output_schema: None,
///     read_only: false,
/// };
/// let text = sdk(&[tool]);
/// assert!(text.contains("  \"tree\": ToolTypes.tree.Args.Root;\n"));
/// assert!(text.contains(
///     "declare namespace ToolTypes.tree.Args {\n  interface Root {\n    children: Root[];\n    label: string;\n  }\n}\n"
/// ));
/// assert!(text.contains("  \"tree\": unknown;\n"));
/// assert_eq!(text, sdk(&[tool, tool]));
/// ```
pub fn sdk(tools: &[SdkTool<'_>]) -> String {
    let mut names: Vec<&str> = tools.iter().map(|t| t.name).collect();
    names.sort_unstable();
    names.dedup();
    // Names that are identifiers keep them; the others get theirs after.
    let mut allocator = Names::default();
    let (plain, other): (Vec<&str>, Vec<&str>) = names.iter().partition(|n| is_identifier(n));
    let namespaces: HashMap<&str, String> = plain
        .into_iter()
        .chain(other)
        .map(|name| (name, allocator.allocate(name)))
        .collect();
    let mut rendered: Vec<Rendered<'_>> = tools
        .iter()
        .map(|tool| {
            let namespace = namespaces.get(tool.name).map_or(tool.name, String::as_str);
            Rendered::new(tool, namespace)
        })
        .collect();
    rendered.sort_by(|a, b| a.key().cmp(&b.key()));
    rendered.dedup_by(|later, first| later.name == first.name);

    let mut out = header(names.iter().copied());
    out.push('\n');
    out.push_str(ERROR_CLASS);
    if rendered.iter().any(|r| r.content) {
        out.push('\n');
        out.push_str(&content_declaration());
    }
    out.push_str("\n/** Each tool's arguments, by tool name. */\ninterface ToolArgsMap {\n");
    for r in &rendered {
        out.push_str(&r.args);
    }
    out.push_str(
        "}\n\n/** What each tool's call resolves to, by tool name. */\ninterface ToolOutputMap {\n",
    );
    for r in &rendered {
        out.push_str(&r.output);
    }
    out.push_str("}\n\n");
    out.push_str(TOOLS);
    for r in &rendered {
        out.push_str(&r.types);
    }
    out
}

/// One tool's text: its entries in the two maps and its namespaces.
#[derive(Debug)]
struct Rendered<'a> {
    name: &'a str,
    args: String,
    output: String,
    types: String,
    /// Its value is its content: `{ content: ToolContent[] }`.
    content: bool,
}

impl<'a> Rendered<'a> {
    fn new(tool: &SdkTool<'a>, namespace: &str) -> Rendered<'a> {
        let args = map_schema(tool.input_schema);
        let mut doc = Doc::text(tool.description);
        doc.paragraph(if tool.read_only {
            READ_ONLY
        } else {
            NOT_READ_ONLY
        });
        let args_entry = entry(tool.name, &doc, &args, namespace, "Args");
        let args_types = namespace_block(tool.name, namespace, "Args", "arguments", &args);
        if tool.output_schema == Some(content_value_schema()) {
            return Rendered {
                name: tool.name,
                args: args_entry,
                output: content_entry(tool.name),
                types: args_types,
                content: true,
            };
        }
        let output = tool.output_schema.map_or_else(
            || Mapped {
                ty: Ty::Unknown,
                doc: Doc::default(),
                names: Vec::new(),
                named: Vec::new(),
            },
            map_schema,
        );
        let output_types = namespace_block(tool.name, namespace, "Output", "value", &output);
        Rendered {
            name: tool.name,
            args: args_entry,
            output: entry(tool.name, &output.doc, &output, namespace, "Output"),
            types: args_types + &output_types,
            content: false,
        }
    }

    fn key(&self) -> (&str, &str, &str, &str) {
        (self.name, &self.args, &self.output, &self.types)
    }
}

/// The `ToolOutputMap` entry of a tool whose value is its content:
/// `"name": { content: ToolContent[] };` (`ToolContent`'s JSDoc says what
/// it is, once for every such tool).
fn content_entry(name: &str) -> String {
    format!("  {}: {{ content: {CONTENT}[] }};\n", string_literal(name))
}

/// `type ToolContent = …;`, the blocks of [`content_value_schema`] mapped
/// like any schema, after its JSDoc.
fn content_declaration() -> String {
    let block = &content_value_schema()["properties"]["content"]["items"];
    let mapped = map_schema(block);
    let printer = Printer {
        names: &mapped.names,
        prefix: "",
    };
    let doc = Doc::text(&format!(
        "One content block of a tool's answer, as MCP spells it. A tool that declares no output schema (an imported one) resolves to `{{ content: {CONTENT}[] }}`, what it answered; narrow a block by its `type`."
    ));
    let mut out = String::new();
    printer.declaration(CONTENT, &mapped.ty, &doc, 0, &mut out);
    out
}

/// A map entry: `doc`, then `"name": <type>;`, indented two spaces.
fn entry(name: &str, doc: &Doc, mapped: &Mapped, namespace: &str, side: &str) -> String {
    let prefix = format!("{TYPES}.{namespace}.{side}.");
    let printer = Printer {
        names: &mapped.names,
        prefix: &prefix,
    };
    let mut out = String::new();
    doc.write(2, &mut out);
    out.push_str("  ");
    out.push_str(&string_literal(name));
    out.push(':');
    printer.slot(&mapped.ty, 2, &mut out);
    out.push_str(";\n");
    out
}

/// `declare namespace ToolTypes.<namespace>.<side> { … }` with the named
/// types of `mapped`, after a blank line; empty when it has none.
fn namespace_block(name: &str, namespace: &str, side: &str, what: &str, mapped: &Mapped) -> String {
    if mapped.named.is_empty() {
        return String::new();
    }
    let printer = Printer {
        names: &mapped.names,
        prefix: "",
    };
    let mut out = String::from("\n");
    Doc::text(&format!("Named types of the {what} of `{name}`.")).write(0, &mut out);
    out.push_str(&format!(
        "declare namespace {TYPES}.{namespace}.{side} {{\n"
    ));
    for named in &mapped.named {
        printer.declaration(&named.name, &named.ty, &named.doc, 2, &mut out);
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn tool<'a>(name: &'a str, input: &'a Value, output: Option<&'a Value>) -> SdkTool<'a> {
        SdkTool {
            name,
            description: "Does it.",
            input_schema: input,
            output_schema: output,
            read_only: false,
        }
    }

    #[test]
    fn the_whole_text_of_one_tool() {
        let input = json!({"type": "object", "properties": {"q": {"type": "string", "description": "The query."}},
            "required": ["q"], "title": "Args", "description": "Arguments of `find`."});
        let output = json!({"type": "object", "description": "The hits.",
            "properties": {"hits": {"type": "array", "items": {"$ref": "#/$defs/Hit"}}}, "required": ["hits"],
            "$defs": {"Hit": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}});
        let find = SdkTool {
            name: "find",
            description: "Finds files.",
            input_schema: &input,
            output_schema: Some(&output),
            read_only: true,
        };
        let text = sdk(&[find]);
        let expected = format!(
            "{}\n{ERROR_CLASS}\n{}",
            header(["find"]),
            r#"/** Each tool's arguments, by tool name. */
interface ToolArgsMap {
  /**
   * Finds files.
   *
   * Read-only.
   */
  "find": {
    /** The query. */
    q: string;
  };
}

/** What each tool's call resolves to, by tool name. */
interface ToolOutputMap {
  /** The hits. */
  "find": { hits: ToolTypes.find.Output.Hit[] };
}

/** The name of a tool. */
type ToolName = keyof ToolArgsMap;

/** The tools: `await tools.<name>(args)` runs one. */
declare const tools: { readonly [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]> };

/** Named types of the value of `find`. */
declare namespace ToolTypes.find.Output {
  interface Hit {
    path: string;
  }
}
"#
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn a_value_that_is_content_is_typed_as_its_blocks_declared_once() {
        let input = json!({"type": "object", "properties": {"repo_path": {"type": "string"}}, "required": ["repo_path"]});
        let content = content_value_schema();
        let text = sdk(&[
            tool("git_status", &input, Some(content)),
            tool("git_log", &input, Some(content)),
        ]);
        assert!(
            text.contains("  \"git_status\": { content: ToolContent[] };\n"),
            "{text}"
        );
        assert!(
            text.contains("  \"git_log\": { content: ToolContent[] };\n"),
            "{text}"
        );
        assert_eq!(text.matches("type ToolContent =").count(), 1, "{text}");
        assert!(!text.contains("unknown"), "{text}");
        for kind in ["text", "image", "audio", "resource", "resource_link"] {
            assert!(
                text.contains(&format!("type: \"{kind}\"")),
                "{kind}: {text}"
            );
        }
        // Without such a tool, no declaration: the text is as it was.
        let plain = sdk(&[tool("t", &input, None)]);
        assert!(!plain.contains("ToolContent"), "{plain}");
    }

    #[test]
    fn no_tools_is_still_a_declaration_text() {
        let text = sdk(&[]);
        assert!(text.contains("interface ToolArgsMap {\n}\n"));
        assert!(text.contains("interface ToolOutputMap {\n}\n"));
        assert!(!text.contains("declare namespace"));
    }

    #[test]
    fn tools_are_sorted_and_names_quoted() {
        let s = json!({"type": "object"});
        let text = sdk(&[
            tool("zeta", &s, None),
            tool("web-fetch", &s, None),
            tool("alpha", &s, None),
        ]);
        let a = text.find("  \"alpha\": {};").unwrap();
        let w = text.find("  \"web-fetch\": {};").unwrap();
        let z = text.find("  \"zeta\": {};").unwrap();
        assert!(a < w && w < z);
        assert!(text.contains("  \"zeta\": unknown;\n"));
        assert!(text.contains("`tools[\"web-fetch\"](args)`"));
    }

    #[test]
    fn namespaces_are_identifiers_and_an_identifier_keeps_its_own() {
        let s = json!({"type": "object", "properties": {"next": {"$ref": "#"}}});
        let text = sdk(&[
            tool("web-fetch", &s, Some(&s)),
            tool("web_fetch", &s, None),
            tool("1st", &s, None),
        ]);
        assert!(text.contains("  \"web_fetch\": ToolTypes.web_fetch.Args.Root;\n"));
        assert!(text.contains("  \"web-fetch\": ToolTypes.web_fetch_2.Args.Root;\n"));
        assert!(text.contains("  \"web-fetch\": ToolTypes.web_fetch_2.Output.Root;\n"));
        assert!(text.contains("declare namespace ToolTypes._1st.Args {\n"));
        assert!(text.contains("/** Named types of the arguments of `web-fetch`. */\ndeclare namespace ToolTypes.web_fetch_2.Args {\n"));
    }

    #[test]
    fn one_tool_per_name_whatever_the_order() {
        let a = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let b = json!({"type": "object", "properties": {"b": {"type": "string"}}});
        let first = sdk(&[tool("t", &a, None), tool("t", &b, None)]);
        let second = sdk(&[tool("t", &b, None), tool("t", &a, None)]);
        assert_eq!(first, second);
        assert_eq!(
            first.matches("  \"t\":").count(),
            2,
            "one entry in each map"
        );
        assert!(first.contains("  \"t\": { a?: string };"));
    }

    #[test]
    fn descriptions_cannot_close_their_comment() {
        let s = json!({"type": "object"});
        let mut t = tool("t", &s, None);
        t.description = "Ends here */ declare const pwned: 1; /* and on.";
        let text = sdk(&[t]);
        assert!(text.contains("   * Ends here *\\/ declare const pwned: 1; /* and on.\n"));
        assert!(!text.contains("*/ declare"));
    }

    #[test]
    fn read_only_is_marked_either_way() {
        let s = json!({"type": "object"});
        let mut reader = tool("r", &s, None);
        reader.read_only = true;
        let text = sdk(&[reader, tool("w", &s, None)]);
        assert!(text.contains("   * Read-only.\n   */\n  \"r\": {};"));
        assert!(text.contains("   * Not read-only.\n   */\n  \"w\": {};"));
    }
}
