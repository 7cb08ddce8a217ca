//! From JSON Schema to [`Ty`]: the mapping of every construct schemars
//! derives, `unknown` for anything else, and the named types a schema
//! needs (`$defs` entries it refers to, and the root when it refers to
//! itself with `"$ref": "#"`).
//!
//! The mapping is total: any JSON value is a schema here, garbage maps to
//! `unknown`, nesting past [`MAX_DEPTH`] maps to `unknown`, and a reference
//! is always to a named type, never expanded, so cycles cost nothing. A
//! named type that would refer to itself where TypeScript cannot defer it
//! (`type A = A | null`) has that reference cut to `unknown`.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::doc::{Doc, Title, schema_doc, text_doc};
use super::names::{Names, string_literal};
use super::types::{Member, Object, Prop, Tuple, Ty};

/// How deep schemas nest before the rest maps to `unknown`.
///
/// Each subschema (a property, the items, a member of `anyOf`, …) is one
/// level; a `$ref` is not, since a named type starts again at 0.
///
/// ```
/// use serde_json::json;
/// use toolprism::code::sdk::{MAX_DEPTH, SdkTool, sdk};
///
/// let mut schema = json!({"type": "string"});
/// for _ in 0..MAX_DEPTH + 1 {
///     schema = json!({"type": "array", "items": schema});
/// }
/// let tool = SdkTool { name: "t", description: "", input_schema: &schema, output_schema: None, read_only: false };
/// let text = sdk(&[tool]);
/// let cut = format!("  \"t\": unknown{};\n", "[]".repeat(MAX_DEPTH + 1));
/// assert!(text.contains(&cut));
/// ```
pub const MAX_DEPTH: usize = 32;

/// An `enum` with more values than this maps to the union of its values'
/// JSON types (`string`, `number`, …) rather than of the values.
///
/// ```
/// use serde_json::json;
/// use toolprism::code::sdk::{MAX_ENUM_VALUES, SdkTool, sdk};
///
/// let values: Vec<String> = (0..=MAX_ENUM_VALUES).map(|i| format!("v{i}")).collect();
/// let schema = json!({"type": "object", "properties": {"v": {"enum": values}}, "required": ["v"]});
/// let tool = SdkTool { name: "t", description: "", input_schema: &schema, output_schema: None, read_only: false };
/// assert!(sdk(&[tool]).contains("  \"t\": { v: string };\n"));
/// ```
pub const MAX_ENUM_VALUES: usize = 256;

/// A fixed-length array of at most this many simple items becomes a tuple.
const MAX_TUPLE_REPEAT: u64 = 16;

/// The name the root takes when it refers to itself.
const ROOT: &str = "Root";

/// A named type of a mapped schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NamedType {
    /// Its identifier, unique in its scope.
    pub(crate) name: String,
    /// Its type.
    pub(crate) ty: Ty,
    /// Its JSDoc.
    pub(crate) doc: Doc,
}

/// A schema mapped: the type to write where it is used, its JSDoc, and
/// the named types it needs.
#[derive(Debug, Clone)]
pub(crate) struct Mapped {
    /// The root's type, or a reference to the named `Root` when the root
    /// refers to itself.
    pub(crate) ty: Ty,
    /// The root's JSDoc (its title dropped); empty when the root is named,
    /// for `Root` carries it then.
    pub(crate) doc: Doc,
    /// The names of the scope's named types, by the index a [`Ty::Ref`]
    /// holds (for the printer).
    pub(crate) names: Vec<String>,
    /// The named types that are used: `Root` first, then by name.
    pub(crate) named: Vec<NamedType>,
}

/// Where a `$ref` points.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Target {
    /// `#`.
    Root,
    /// `#/$defs/<key>` (or draft-07's `#/definitions/<key>`).
    Def(&'static str, String),
}

/// The state of one schema's mapping.
#[derive(Debug)]
struct Scope<'s> {
    /// The whole schema, where `$defs` are looked up.
    root: &'s Value,
    /// The named types' targets, by index; index 0 is the root.
    targets: Vec<Target>,
    /// Their identifiers, by index.
    names: Vec<String>,
    by_target: HashMap<Target, usize>,
    allocator: Names,
    /// Whether some `$ref` points at the root.
    root_referenced: bool,
    /// Definitions referred to and not mapped yet.
    queue: Vec<usize>,
}

/// Maps one whole schema (a tool's input or output schema).
pub(crate) fn map_schema(schema: &Value) -> Mapped {
    let mut allocator = Names::default();
    let root_name = allocator.allocate(ROOT);
    let mut scope = Scope {
        root: schema,
        targets: vec![Target::Root],
        names: vec![root_name],
        by_target: HashMap::from([(Target::Root, 0)]),
        allocator,
        root_referenced: false,
        queue: Vec::new(),
    };
    let root = scope.node(schema, 0, Title::Drop);
    let mut tys: Vec<Option<(Ty, Doc)>> = vec![None];
    while let Some(id) = scope.queue.pop() {
        let Target::Def(container, key) = scope.targets[id].clone() else {
            continue;
        };
        let mapped = match scope.root.get(container).and_then(|defs| defs.get(&key)) {
            Some(def) => scope.node(def, 0, Title::Unless(&key)),
            None => (Ty::Unknown, Doc::default()),
        };
        tys.resize(scope.targets.len(), None);
        tys[id] = Some(mapped);
    }
    tys.resize(scope.targets.len(), None);
    let (ty, doc) = if scope.root_referenced {
        tys[0] = Some(root);
        (Ty::Ref(0), Doc::default())
    } else {
        root
    };
    cut_cycles(&mut tys);
    let names = scope.names;
    let mut named: Vec<NamedType> = tys
        .into_iter()
        .zip(&names)
        .filter_map(|(t, name)| {
            t.map(|(ty, doc)| NamedType {
                name: name.clone(),
                ty,
                doc,
            })
        })
        .collect();
    named.sort_by(|a, b| (a.name != ROOT, &a.name).cmp(&(b.name != ROOT, &b.name)));
    Mapped {
        ty,
        doc,
        names,
        named,
    }
}

/// Keywords that make an untyped schema an object schema.
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
];

/// Keywords that make an untyped schema an array schema.
const ARRAY_KEYWORDS: &[&str] = &["items", "prefixItems"];

impl Scope<'_> {
    /// Maps one schema node to its type and its JSDoc.
    ///
    /// A node's keywords are a conjunction, so its type is the intersection
    /// of what each says: the base (`const`, else `enum`, else `type`, else
    /// object or array keywords), the `$ref`, each `allOf` member, the union
    /// of the `oneOf` members and that of the `anyOf` members.
    fn node(&mut self, schema: &Value, depth: usize, title: Title<'_>) -> (Ty, Doc) {
        let m = match schema {
            Value::Bool(false) => return (Ty::Never, Doc::default()),
            Value::Object(m) if depth <= MAX_DEPTH => m,
            _ => return (Ty::Unknown, Doc::default()),
        };
        let mut sized = false;
        let base = self.base(m, depth, &mut sized);
        let mut doc = schema_doc(m, title, sized);
        let object_base = matches!(base, Some(Ty::Object(_)));
        let mut parts: Vec<Ty> = base.into_iter().collect();
        if let Some(Value::String(r)) = m.get("$ref") {
            parts.push(self.reference(r));
        }
        if let Some(Value::Array(all)) = m.get("allOf") {
            for s in all {
                parts.push(self.node(s, depth + 1, Title::Keep).0);
            }
        }
        let unions: Vec<&Vec<Value>> = ["oneOf", "anyOf"]
            .iter()
            .filter_map(|k| m.get(*k).and_then(Value::as_array))
            .collect();
        let alone = parts.is_empty() && unions.len() == 1;
        for members in unions {
            let mut members: Vec<Member> = members
                .iter()
                .map(|s| {
                    let ty = self.node(s, depth + 1, Title::Keep).0;
                    // A member's bounds and format would only clutter the
                    // union; its title and description say which it is.
                    let doc = s
                        .as_object()
                        .map(|m| text_doc(m, Title::Keep))
                        .unwrap_or_default();
                    // `{}` beside an object type (schemars' optional
                    // flattened enum) is any object, not anything.
                    let ty = if object_base && ty == Ty::Unknown {
                        Ty::empty_object()
                    } else {
                        ty
                    };
                    Member { ty, doc }
                })
                .collect();
            if alone && doc.is_empty() {
                doc = hoist(&mut members);
            }
            parts.push(Ty::union(members));
        }
        (Ty::intersection(parts), doc)
    }

    /// The type the node's `const`, `enum` or `type` says, or its object or
    /// array keywords when it has no `type`; `None` when it says nothing.
    fn base(&mut self, m: &Map<String, Value>, depth: usize, sized: &mut bool) -> Option<Ty> {
        let types = types_of(m);
        let types = types.as_deref();
        if let Some(c) = m.get("const") {
            return Some(if types.is_none_or(|t| matches_type(c, t)) {
                literal(c, depth)
            } else {
                Ty::Never
            });
        }
        if let Some(Value::Array(values)) = m.get("enum") {
            let values: Vec<&Value> = values
                .iter()
                .filter(|v| types.is_none_or(|t| matches_type(v, t)))
                .collect();
            return Some(if values.len() > MAX_ENUM_VALUES {
                Ty::union_of(values.into_iter().map(json_type).collect())
            } else {
                Ty::union_of(values.into_iter().map(|v| literal(v, depth)).collect())
            });
        }
        match types {
            Some(types) => Some(Ty::union_of(
                types
                    .iter()
                    .map(|t| match *t {
                        "string" => Ty::String,
                        "number" | "integer" => Ty::Number,
                        "boolean" => Ty::Boolean,
                        "null" => Ty::Null,
                        "object" => self.object(m, depth),
                        "array" => self.array(m, depth, sized),
                        _ => Ty::Unknown,
                    })
                    .collect(),
            )),
            None if OBJECT_KEYWORDS.iter().any(|k| m.contains_key(*k)) => {
                Some(self.object(m, depth))
            }
            None if ARRAY_KEYWORDS.iter().any(|k| m.contains_key(*k)) => {
                Some(self.array(m, depth, sized))
            }
            None => None,
        }
    }

    /// An object type: `properties` (optional unless `required`), required
    /// names it does not declare, and an index signature when
    /// `additionalProperties` is a schema or `true`, or there are
    /// `patternProperties`. `additionalProperties` absent or `false` adds
    /// none, so reading an undeclared field fails to compile.
    fn object(&mut self, m: &Map<String, Value>, depth: usize) -> Ty {
        let mut required: Vec<&str> = Vec::new();
        let mut required_set: HashSet<&str> = HashSet::new();
        if let Some(Value::Array(names)) = m.get("required") {
            for name in names.iter().filter_map(Value::as_str) {
                if required_set.insert(name) {
                    required.push(name);
                }
            }
        }
        let mut props: Vec<Prop> = Vec::new();
        if let Some(Value::Object(properties)) = m.get("properties") {
            for (name, s) in properties {
                let (ty, doc) = self.node(s, depth + 1, Title::Keep);
                props.push(Prop {
                    name: name.clone(),
                    optional: !required_set.contains(name.as_str()),
                    ty,
                    doc,
                });
            }
        }
        let additional = match m.get("additionalProperties") {
            Some(Value::Bool(true)) => Some(Ty::Unknown),
            Some(s @ Value::Object(_)) => Some(self.node(s, depth + 1, Title::Keep).0),
            _ => None,
        };
        let declared: HashSet<String> = props.iter().map(|p| p.name.clone()).collect();
        for name in required {
            if !declared.contains(name) {
                props.push(Prop {
                    name: name.to_owned(),
                    optional: false,
                    ty: additional.clone().unwrap_or(Ty::Unknown),
                    doc: Doc::default(),
                });
            }
        }
        let mut extra: Vec<Ty> = additional.into_iter().collect();
        if let Some(Value::Object(patterns)) = m.get("patternProperties") {
            for s in patterns.values() {
                extra.push(self.node(s, depth + 1, Title::Keep).0);
            }
        }
        let index = if extra.is_empty() {
            None
        } else {
            index_type(Ty::union_of(extra), &props)
        };
        Ty::Object(Object {
            props,
            index: index.map(Box::new),
        })
    }

    /// An array type: a tuple for `prefixItems` (or draft-07's array
    /// `items`), bounded by `items: false` or `maxItems`, its elements past
    /// `minItems` optional; `T[]` for `items: T`, or a tuple of `n` items
    /// when `minItems` and `maxItems` are both a small `n` (`[u8; 3]`).
    /// Sets `sized` when the bounds went into a tuple.
    fn array(&mut self, m: &Map<String, Value>, depth: usize, sized: &mut bool) -> Ty {
        let min = m.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let max = m.get("maxItems").and_then(Value::as_u64);
        let (prefix, rest) = match (m.get("prefixItems"), m.get("items")) {
            (Some(Value::Array(prefix)), items) => (Some(prefix), items),
            (_, Some(Value::Array(prefix))) => (Some(prefix), m.get("additionalItems")),
            (_, items) => (None, items),
        };
        let rest = match rest {
            None => Some(Ty::Unknown),
            Some(s) => Some(self.node(s, depth + 1, Title::Keep).0).filter(|t| *t != Ty::Never),
        };
        let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        if let Some(prefix) = prefix {
            *sized = true;
            let mut elements: Vec<Ty> = prefix
                .iter()
                .map(|s| self.node(s, depth + 1, Title::Keep).0)
                .collect();
            let max = max.map_or(usize::MAX, to_usize);
            let rest = match rest {
                Some(rest) if max > elements.len() => Some(Box::new(rest)),
                _ => {
                    elements.truncate(max);
                    None
                }
            };
            let required = to_usize(min).min(elements.len());
            return Ty::Tuple(Tuple {
                elements,
                required,
                rest,
            });
        }
        let Some(item) = rest else {
            *sized = true;
            return Ty::Tuple(Tuple {
                elements: Vec::new(),
                required: 0,
                rest: None,
            });
        };
        match max {
            Some(n) if n == min && n <= MAX_TUPLE_REPEAT && item.is_simple() => {
                *sized = true;
                Ty::Tuple(Tuple {
                    elements: vec![item; to_usize(n)],
                    required: to_usize(n),
                    rest: None,
                })
            }
            _ => Ty::Array(Box::new(item)),
        }
    }

    /// The type a `$ref` points at: a named type for `#` and for an entry
    /// of the root's `$defs`, `unknown` for anything else (a missing
    /// entry, another pointer, another document).
    fn reference(&mut self, r: &str) -> Ty {
        if r == "#" {
            self.root_referenced = true;
            return Ty::Ref(0);
        }
        let Some(target) = def_target(r) else {
            return Ty::Unknown;
        };
        if let Some(&id) = self.by_target.get(&target) {
            return Ty::Ref(id);
        }
        let Target::Def(container, key) = &target else {
            return Ty::Unknown;
        };
        if self
            .root
            .get(*container)
            .and_then(|defs| defs.get(key.as_str()))
            .is_none()
        {
            return Ty::Unknown;
        }
        let id = self.targets.len();
        self.names.push(self.allocator.allocate(key));
        self.targets.push(target.clone());
        self.by_target.insert(target, id);
        self.queue.push(id);
        Ty::Ref(id)
    }
}

/// Moves the JSDoc of the one documented member of a union to the union,
/// when every other member is `null` (schemars' `Option<Enum>`:
/// `anyOf: [<the enum, documented>, {"type": "null"}]`).
fn hoist(members: &mut [Member]) -> Doc {
    let mut documented = members.iter().filter(|m| !m.doc.is_empty());
    let (Some(_), None) = (documented.next(), documented.next()) else {
        return Doc::default();
    };
    if members.iter().any(|m| m.doc.is_empty() && m.ty != Ty::Null) {
        return Doc::default();
    }
    members
        .iter_mut()
        .find(|m| !m.doc.is_empty())
        .map(|m| std::mem::take(&mut m.doc))
        .unwrap_or_default()
}

/// The index signature's type beside `props`: TypeScript wants every
/// property to fit it, so it is the declared type when they all have it,
/// else the union of it and theirs (`undefined` too when one is optional)
/// if that stays simple, else `unknown`.
fn index_type(declared: Ty, props: &[Prop]) -> Option<Ty> {
    match declared {
        Ty::Never => None,
        Ty::Unknown => Some(Ty::Unknown),
        declared => {
            if props.iter().all(|p| !p.optional && p.ty == declared) {
                return Some(declared);
            }
            let mut all = vec![declared];
            all.extend(props.iter().map(|p| p.ty.clone()));
            if props.iter().any(|p| p.optional) {
                all.push(Ty::Undefined);
            }
            let union = Ty::union_of(all);
            Some(if union.is_simple() {
                union
            } else {
                Ty::Unknown
            })
        }
    }
}

/// The names in the node's `type`, when it has any.
fn types_of(m: &Map<String, Value>) -> Option<Vec<&str>> {
    match m.get("type") {
        Some(Value::String(t)) => Some(vec![t.as_str()]),
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            (!names.is_empty()).then_some(names)
        }
        _ => None,
    }
}

/// Whether `v` is of one of the JSON Schema `types` (an unknown type name
/// lets anything through).
fn matches_type(v: &Value, types: &[&str]) -> bool {
    types.iter().any(|t| match *t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => true,
    })
}

/// The literal type of a JSON value: `"a"`, `1`, `true`, `null`, and a
/// tuple or object type of literals for arrays and objects.
fn literal(v: &Value, depth: usize) -> Ty {
    if depth > MAX_DEPTH {
        return Ty::Unknown;
    }
    match v {
        Value::Null => Ty::Null,
        Value::Bool(b) => Ty::Literal(b.to_string()),
        Value::Number(n) => Ty::Literal(n.to_string()),
        Value::String(s) => Ty::Literal(string_literal(s)),
        Value::Array(items) => Ty::Tuple(Tuple {
            elements: items.iter().map(|v| literal(v, depth + 1)).collect(),
            required: items.len(),
            rest: None,
        }),
        Value::Object(o) => Ty::Object(Object {
            props: o
                .iter()
                .map(|(k, v)| Prop {
                    name: k.clone(),
                    optional: false,
                    ty: literal(v, depth + 1),
                    doc: Doc::default(),
                })
                .collect(),
            index: None,
        }),
    }
}

/// The type of any value of `v`'s JSON type.
fn json_type(v: &Value) -> Ty {
    match v {
        Value::Null => Ty::Null,
        Value::Bool(_) => Ty::Boolean,
        Value::Number(_) => Ty::Number,
        Value::String(_) => Ty::String,
        Value::Array(_) => Ty::Array(Box::new(Ty::Unknown)),
        Value::Object(_) => Ty::Object(Object {
            props: Vec::new(),
            index: Some(Box::new(Ty::Unknown)),
        }),
    }
}

/// The `$defs` entry a `$ref` names: `#/$defs/<key>` or
/// `#/definitions/<key>`, percent- and `~`-escapes decoded.
fn def_target(r: &str) -> Option<Target> {
    let pointer = percent_decode(r.strip_prefix('#')?)?;
    let (container, key) = if let Some(key) = pointer.strip_prefix("/$defs/") {
        ("$defs", key)
    } else if let Some(key) = pointer.strip_prefix("/definitions/") {
        ("definitions", key)
    } else {
        return None;
    };
    if key.contains('/') {
        return None;
    }
    Some(Target::Def(
        container,
        key.replace("~1", "/").replace("~0", "~"),
    ))
}

/// `s` with its `%XX` escapes decoded; `None` when one is broken or the
/// result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Cuts, in each named type, the references made at once to a named type
/// of its own strongly connected component (references that TypeScript
/// reports as "circularly references itself"), found with Tarjan's
/// algorithm over those references only.
fn cut_cycles(tys: &mut [Option<(Ty, Doc)>]) {
    let n = tys.len();
    let edges: Vec<Vec<usize>> = tys
        .iter()
        .map(|t| {
            let mut out = Vec::new();
            if let Some((ty, _)) = t {
                ty.immediate_refs(&mut |id| {
                    if id < n && !out.contains(&id) {
                        out.push(id);
                    }
                });
            }
            out
        })
        .collect();
    let component = components(&edges);
    for (id, slot) in tys.iter_mut().enumerate() {
        if let Some((ty, _)) = slot
            && edges[id].iter().any(|&to| component[to] == component[id])
        {
            let taken = std::mem::replace(ty, Ty::Unknown);
            *ty = taken.cut_immediate_refs(&|to| to < n && component[to] == component[id]);
        }
    }
}

/// The strongly connected component of each node (Tarjan, iterative).
fn components(edges: &[Vec<usize>]) -> Vec<usize> {
    const UNSEEN: usize = usize::MAX;
    let n = edges.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![UNSEEN; n];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut next_component = 0;
    for start in 0..n {
        if index[start] != UNSEEN {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(start, 0)];
        index[start] = next_index;
        low[start] = next_index;
        next_index += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if let Some(&w) = edges[v].get(*i) {
                *i += 1;
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component[w] = next_component;
                        if w == v {
                            break;
                        }
                    }
                    next_component += 1;
                }
            }
        }
    }
    component
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::sdk::printer::Printer;

    /// The schema as `type T = …;`, then its named types' declarations.
    fn ts(schema: Value) -> String {
        let mapped = map_schema(&schema);
        let printer = Printer {
            names: &mapped.names,
            prefix: "",
        };
        let mut out = String::new();
        printer.declaration("T", &mapped.ty, &mapped.doc, 0, &mut out);
        for named in &mapped.named {
            printer.declaration(&named.name, &named.ty, &named.doc, 0, &mut out);
        }
        out
    }

    #[test]
    fn scalars() {
        assert_eq!(ts(json!({"type": "string"})), "type T = string;\n");
        assert_eq!(ts(json!({"type": "number"})), "type T = number;\n");
        assert_eq!(
            ts(json!({"type": "integer", "format": "int32"})),
            "/** @format int32 */\ntype T = number;\n"
        );
        assert_eq!(ts(json!({"type": "boolean"})), "type T = boolean;\n");
        assert_eq!(ts(json!({"type": "null"})), "type T = null;\n");
    }

    #[test]
    fn type_arrays_are_unions() {
        assert_eq!(
            ts(json!({"type": ["string", "null"]})),
            "type T = string | null;\n"
        );
        assert_eq!(
            ts(json!({"type": ["integer", "number", "boolean"]})),
            "type T = number | boolean;\n"
        );
        assert_eq!(
            ts(json!({"type": ["string", "madeup"]})),
            "type T = unknown;\n"
        );
    }

    #[test]
    fn enums_and_consts_are_literals() {
        assert_eq!(
            ts(json!({"type": "string", "enum": ["low", "high"]})),
            "type T = \"low\" | \"high\";\n"
        );
        assert_eq!(
            ts(json!({"enum": ["a", 1, -2.5, true, null]})),
            "type T = \"a\" | 1 | -2.5 | true | null;\n"
        );
        // `type` filters the values, as JSON Schema does.
        assert_eq!(
            ts(json!({"type": "string", "enum": ["a", null, 3]})),
            "type T = \"a\";\n"
        );
        assert_eq!(
            ts(json!({"type": ["string", "null"], "enum": ["low", null]})),
            "type T = \"low\" | null;\n"
        );
        assert_eq!(
            ts(json!({"type": "integer", "enum": [1, 1.5, 2.0]})),
            "type T = 1 | 2.0;\n"
        );
        assert_eq!(
            ts(json!({"const": "Ping", "type": "string"})),
            "type T = \"Ping\";\n"
        );
        assert_eq!(
            ts(json!({"const": "x", "type": "integer"})),
            "type T = never;\n"
        );
        assert_eq!(
            ts(json!({"enum": [{"a": [1, "b"]}, []]})),
            "type T = { a: [1, \"b\"] } | [];\n"
        );
        assert_eq!(ts(json!({"enum": []})), "type T = never;\n");
    }

    #[test]
    fn huge_enums_become_their_types() {
        let values: Vec<Value> = (0..=MAX_ENUM_VALUES)
            .map(|i| json!(format!("v{i}")))
            .collect();
        assert_eq!(ts(json!({ "enum": values })), "type T = string;\n");
        let mut values: Vec<Value> = (0..=MAX_ENUM_VALUES).map(|i| json!(i)).collect();
        values.push(Value::Null);
        assert_eq!(ts(json!({ "enum": values })), "type T = number | null;\n");
        let at_cap: Vec<Value> = (0..MAX_ENUM_VALUES).map(|i| json!(i)).collect();
        assert!(ts(json!({ "enum": at_cap })).contains(" | 255"));
    }

    #[test]
    fn objects_mark_optional_properties() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "max-len": {"type": "integer"}},
            "required": ["a"]
        });
        assert_eq!(
            ts(schema),
            "interface T {\n  a: string;\n  \"max-len\"?: number;\n}\n"
        );
        assert_eq!(ts(json!({"type": "object"})), "interface T {}\n");
        assert_eq!(
            ts(
                json!({"type": "object", "properties": {"x": {"type": "null"}}, "additionalProperties": false})
            ),
            "interface T {\n  x?: null;\n}\n"
        );
    }

    #[test]
    fn property_docs_come_from_the_property_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "limit": {"description": "How many.", "type": ["integer", "null"], "format": "uint16",
                    "minimum": 0, "maximum": 65535, "default": null}
            }
        });
        assert_eq!(
            ts(schema),
            "interface T {\n  /**\n   * How many.\n   * @default null\n   * @format uint16\n   */\n  limit?: number | null;\n}\n"
        );
    }

    #[test]
    fn maps_are_index_signatures() {
        assert_eq!(
            ts(json!({"type": "object", "additionalProperties": {"type": "integer"}})),
            "interface T {\n  [key: string]: number;\n}\n"
        );
        assert_eq!(
            ts(json!({"type": "object", "additionalProperties": true})),
            "interface T {\n  [key: string]: unknown;\n}\n"
        );
        // Declared properties must fit the index signature.
        assert_eq!(
            ts(
                json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
                "additionalProperties": {"type": "string"}})
            ),
            "interface T {\n  name: string;\n  [key: string]: string;\n}\n"
        );
        assert_eq!(
            ts(
                json!({"type": "object", "properties": {"id": {"type": "integer"}, "n": {"type": "null"}},
                "required": ["n"], "additionalProperties": {"type": "string"}})
            ),
            "interface T {\n  id?: number;\n  n: null;\n  [key: string]: string | number | null | undefined;\n}\n"
        );
        assert_eq!(
            ts(
                json!({"type": "object", "properties": {"o": {"type": "object", "properties": {"x": {"type": "string"}}}},
                "additionalProperties": {"type": "string"}})
            ),
            "interface T {\n  o?: { x?: string };\n  [key: string]: unknown;\n}\n"
        );
        assert_eq!(
            ts(
                json!({"type": "object", "patternProperties": {"^x-": {"type": "string"}, "^n-": {"type": "number"}}})
            ),
            "interface T {\n  [key: string]: number | string;\n}\n"
        );
        assert_eq!(
            ts(
                json!({"type": "object", "additionalProperties": false, "patternProperties": {"^x": false}})
            ),
            "interface T {}\n"
        );
    }

    #[test]
    fn required_names_without_properties_are_still_required() {
        assert_eq!(
            ts(
                json!({"type": "object", "required": ["a", "a"], "additionalProperties": {"type": "string"}})
            ),
            "interface T {\n  a: string;\n  [key: string]: string;\n}\n"
        );
        assert_eq!(
            ts(json!({"required": ["a"]})),
            "interface T {\n  a: unknown;\n}\n"
        );
    }

    #[test]
    fn arrays_and_tuples() {
        assert_eq!(
            ts(json!({"type": "array", "items": {"type": "string"}})),
            "type T = string[];\n"
        );
        assert_eq!(ts(json!({"type": "array"})), "type T = unknown[];\n");
        assert_eq!(
            ts(json!({"type": "array", "items": {"type": ["string", "null"]}})),
            "type T = (string | null)[];\n"
        );
        assert_eq!(
            ts(
                json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2, "maxItems": 2})
            ),
            "type T = [number, string];\n"
        );
        assert_eq!(
            ts(
                json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false})
            ),
            "type T = [number?, string?];\n"
        );
        assert_eq!(
            ts(
                json!({"type": "array", "prefixItems": [{"type": "integer"}], "minItems": 1,
                "items": {"type": "boolean"}})
            ),
            "type T = [number, ...boolean[]];\n"
        );
        assert_eq!(
            ts(
                json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "maxItems": 1})
            ),
            "type T = [number?];\n"
        );
        // Draft-07's tuples.
        assert_eq!(
            ts(
                json!({"type": "array", "items": [{"type": "integer"}, {"type": "null"}], "minItems": 2,
                "additionalItems": false})
            ),
            "type T = [number, null];\n"
        );
        assert_eq!(
            ts(json!({"type": "array", "items": false})),
            "type T = [];\n"
        );
    }

    #[test]
    fn fixed_length_arrays_are_tuples() {
        assert_eq!(
            ts(
                json!({"type": "array", "items": {"type": "integer", "format": "uint8"},
                "minItems": 3, "maxItems": 3})
            ),
            "type T = [number, number, number];\n"
        );
        assert_eq!(
            ts(
                json!({"type": "array", "items": {"type": "integer"}, "minItems": 20, "maxItems": 20})
            ),
            "/**\n * @minItems 20\n * @maxItems 20\n */\ntype T = number[];\n"
        );
        assert_eq!(
            ts(json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3})),
            "/**\n * @minItems 1\n * @maxItems 3\n */\ntype T = string[];\n"
        );
    }

    #[test]
    fn externally_tagged_enums() {
        let schema = json!({"oneOf": [
            {"type": "string", "enum": ["Empty"]},
            {"type": "object", "properties": {"Named": {"type": "string"}}, "required": ["Named"], "additionalProperties": false},
            {"type": "object", "properties": {"Pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}],
                "minItems": 2, "maxItems": 2}}, "required": ["Pair"], "additionalProperties": false}
        ]});
        assert_eq!(
            ts(schema),
            "type T = \"Empty\" | { Named: string } | { Pair: [number, number] };\n"
        );
    }

    #[test]
    fn internally_and_adjacently_tagged_enums() {
        let internal = json!({"description": "An action.", "oneOf": [
            {"type": "object", "properties": {"type": {"type": "string", "const": "stop"}}, "required": ["type"]},
            {"type": "object", "description": "A move.", "properties": {"type": {"type": "string", "const": "move"},
                "x": {"type": "integer"}}, "required": ["type", "x"]}
        ]});
        assert_eq!(
            ts(internal),
            "/** An action. */\ntype T =\n  | { type: \"stop\" }\n  /** A move. */\n  | { type: \"move\"; x: number };\n"
        );
        let adjacent = json!({"oneOf": [
            {"type": "object", "properties": {"kind": {"type": "string", "const": "Ping"}}, "required": ["kind"]},
            {"type": "object", "properties": {"data": {"type": "string"}, "kind": {"type": "string", "const": "Text"}},
                "required": ["kind", "data"]}
        ]});
        assert_eq!(
            ts(adjacent),
            "type T = { kind: \"Ping\" } | { data: string; kind: \"Text\" };\n"
        );
    }

    #[test]
    fn untagged_enums_and_any_of() {
        assert_eq!(
            ts(
                json!({"anyOf": [{"type": "integer", "format": "int64"}, {"type": "string"},
                {"type": "object", "properties": {"from": {"type": "integer"}}, "required": ["from"]}]})
            ),
            "type T = number | string | { from: number };\n"
        );
        assert_eq!(
            ts(json!({"anyOf": [{"type": "string"}, {}]})),
            "type T = unknown;\n"
        );
    }

    #[test]
    fn documented_unit_variants_keep_their_docs() {
        let schema = json!({"type": "object", "properties": {"scope": {"description": "Where to search.", "oneOf": [
            {"type": "string", "const": "titles", "description": "Only the titles."},
            {"type": "string", "const": "everything", "description": "Titles and bodies."}
        ]}}, "required": ["scope"]});
        assert_eq!(
            ts(schema),
            "interface T {\n  /** Where to search. */\n  scope:\n    /** Only the titles. */\n    | \"titles\"\n    /** Titles and bodies. */\n    | \"everything\";\n}\n"
        );
    }

    #[test]
    fn an_optional_enum_takes_the_enum_doc() {
        let schema = json!({"type": "object", "properties": {"shape": {"anyOf": [
            {"description": "A shape.", "oneOf": [{"type": "string", "enum": ["Empty"]},
                {"type": "object", "properties": {"Named": {"type": "string"}}, "required": ["Named"]}]},
            {"type": "null"}
        ]}}});
        assert_eq!(
            ts(schema),
            "interface T {\n  /** A shape. */\n  shape?: \"Empty\" | { Named: string } | null;\n}\n"
        );
    }

    #[test]
    fn all_of_is_an_intersection() {
        assert_eq!(
            ts(json!({"allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": "number"}}}
            ]})),
            "interface T {\n  a: string;\n  b?: number;\n}\n"
        );
        assert_eq!(
            ts(json!({"allOf": [{"type": "string"}, {"enum": ["a", 1]}]})),
            "type T = string & (\"a\" | 1);\n"
        );
    }

    #[test]
    fn flattened_enums_intersect_with_the_struct() {
        let schema = json!({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
        "oneOf": [
            {"type": "object", "properties": {"type": {"const": "stop", "type": "string"}}, "required": ["type"]},
            {"type": "object", "properties": {"type": {"const": "go", "type": "string"}}, "required": ["type"]}
        ]});
        assert_eq!(
            ts(schema),
            "type T = { id: number } & ({ type: \"stop\" } | { type: \"go\" });\n"
        );
        // `Option<Enum>` flattened: schemars adds `{}`, any object, beside it.
        let optional = json!({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
        "anyOf": [
            {"oneOf": [{"type": "object", "properties": {"type": {"const": "stop"}}, "required": ["type"]}]},
            {}
        ]});
        assert_eq!(
            ts(optional),
            "type T = { id: number } & ({ type: \"stop\" } | {});\n"
        );
    }

    #[test]
    fn defs_become_named_types() {
        let schema = json!({
            "type": "object",
            "properties": {
                "origin": {"$ref": "#/$defs/Point", "description": "Where it starts."},
                "points": {"type": "array", "items": {"$ref": "#/$defs/Point"}},
                "unused": {"type": "string"}
            },
            "required": ["origin", "points"],
            "$defs": {
                "Point": {"description": "A point.", "type": "object",
                    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]},
                "Never": {"type": "string"}
            }
        });
        assert_eq!(
            ts(schema),
            "interface T {\n  /** Where it starts. */\n  origin: Point;\n  points: Point[];\n  unused?: string;\n}\n\
             /** A point. */\ninterface Point {\n  x: number;\n  y: number;\n}\n"
        );
    }

    #[test]
    fn root_recursion_names_the_root() {
        let schema = json!({"title": "Tree", "description": "A tree.", "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}, "required": ["children"]});
        assert_eq!(
            ts(schema),
            "type T = Root;\n/** A tree. */\ninterface Root {\n  children: Root[];\n}\n"
        );
    }

    #[test]
    fn references_nothing_can_resolve_are_unknown() {
        let schema = json!({"type": "object", "properties": {
            "gone": {"$ref": "#/$defs/Gone"},
            "remote": {"$ref": "https://example.invalid/s.json"},
            "deep": {"$ref": "#/$defs/A/properties/x"},
            "path": {"$ref": "#/properties/gone"},
            "number": {"$ref": 42}
        }, "$defs": {"A": {"type": "object"}}});
        assert_eq!(
            ts(schema),
            "interface T {\n  deep?: unknown;\n  gone?: unknown;\n  number?: unknown;\n  path?: unknown;\n  remote?: unknown;\n}\n"
        );
    }

    #[test]
    fn definitions_and_escaped_names_resolve() {
        let schema = json!({"anyOf": [{"$ref": "#/definitions/a~1b"}, {"$ref": "#/$defs/Page%3CPoint%3E"}],
            "definitions": {"a/b": {"type": "string"}},
            "$defs": {"Page<Point>": {"type": "number"}}});
        assert_eq!(
            ts(schema),
            "type T = a_b | Page_Point_;\ntype Page_Point_ = number;\ntype a_b = string;\n"
        );
    }

    #[test]
    fn names_are_identifiers_and_never_collide() {
        let schema = json!({"type": "object", "properties": {
            "a": {"$ref": "#/$defs/Root"}, "b": {"$ref": "#/$defs/string"}, "c": {"$ref": "#/$defs/1st"},
            "d": {"$ref": "#/$defs/string_"}
        }, "required": ["a", "b", "c", "d"],
           "$defs": {"Root": {"type": "null"}, "string": {"type": "string"}, "1st": {"type": "boolean"},
            "string_": {"type": "number"}}});
        assert_eq!(
            ts(schema),
            "interface T {\n  a: Root_2;\n  b: string_;\n  c: _1st;\n  d: string__2;\n}\n\
             type Root_2 = null;\ntype _1st = boolean;\ntype string_ = string;\ntype string__2 = number;\n"
        );
    }

    #[test]
    fn recursion_typescript_cannot_defer_is_cut() {
        // `type A = A | null` does not compile: the reference goes.
        let schema = json!({"$ref": "#/$defs/A", "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}}});
        assert_eq!(ts(schema), "type T = A;\ntype A = unknown;\n");
        // Mutual recursion at once: both sides go.
        let schema = json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}});
        assert_eq!(
            ts(schema),
            "type T = A;\ntype A = unknown;\ntype B = unknown;\n"
        );
        // Recursion through an object, array or tuple is fine and stays.
        let schema = json!({"$ref": "#/$defs/L", "$defs": {"L": {"anyOf": [
            {"type": "array", "items": {"$ref": "#/$defs/L"}},
            {"type": "array", "prefixItems": [{"$ref": "#/$defs/L"}], "items": false},
            {"type": "object", "properties": {"next": {"$ref": "#/$defs/L"}}},
            {"type": "string"}
        ]}}});
        assert_eq!(
            ts(schema),
            "type T = L;\ntype L = L[] | [L?] | { next?: L } | string;\n"
        );
        // The root too.
        assert_eq!(
            ts(json!({"anyOf": [{"$ref": "#"}, {"type": "string"}]})),
            "type T = Root;\ntype Root = unknown;\n"
        );
    }

    #[test]
    fn boolean_empty_and_garbage_schemas() {
        assert_eq!(ts(json!(true)), "type T = unknown;\n");
        assert_eq!(ts(json!(false)), "type T = never;\n");
        assert_eq!(ts(json!({})), "type T = unknown;\n");
        assert_eq!(
            ts(json!({"description": "Anything."})),
            "/** Anything. */\ntype T = unknown;\n"
        );
        for garbage in [
            json!(42),
            json!([]),
            json!("x"),
            json!(null),
            json!([{"type": "string"}]),
        ] {
            assert_eq!(ts(garbage), "type T = unknown;\n");
        }
        assert_eq!(
            ts(
                json!({"type": 7, "properties": [], "items": "x", "enum": "no", "oneOf": {}, "required": "a"})
            ),
            "interface T {}\n"
        );
    }

    #[test]
    fn nesting_past_the_cap_is_unknown() {
        let mut schema = json!({"type": "string"});
        for _ in 0..(MAX_DEPTH + 10) {
            schema = json!({"type": "array", "items": schema});
        }
        let text = ts(schema);
        assert!(text.contains("unknown"), "{text}");
        assert!(!text.contains("string"), "{text}");
        let mut shallow = json!({"type": "string"});
        for _ in 0..MAX_DEPTH {
            shallow = json!({"type": "array", "items": shallow});
        }
        assert!(ts(shallow).contains("string[]"));
    }

    #[test]
    fn the_root_title_is_dropped() {
        assert_eq!(
            ts(
                json!({"title": "Newtype", "description": "A newtype.", "type": "integer", "format": "uint16",
                "minimum": 0, "maximum": 65535})
            ),
            "/**\n * A newtype.\n * @format uint16\n */\ntype T = number;\n"
        );
    }
}
