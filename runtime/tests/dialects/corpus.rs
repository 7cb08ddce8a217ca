//! The corpus: argument and value types Rust users write, with sample
//! values of each. Every type is used both as a tool's arguments (wrapped
//! as `{"value": …}` when its JSON is not an object, since a model always
//! sends an object) and as its value, so the golden snapshots cover the
//! input (deserialize contract) and the output (serialize contract) view.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A corpus type: its name, whether its JSON is an object, and samples.
pub(crate) trait Case:
    Serialize
    + serde::de::DeserializeOwned
    + JsonSchema
    + Clone
    + PartialEq
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// The tool's name (also the snapshot file's name).
    const NAME: &'static str;
    /// The JSON of this type is an object, so it is the tool's arguments as is.
    const OBJECT: bool;
    /// The tool's arguments: `Self`, or `Field<Self>` when not an object.
    type Args: Serialize
        + serde::de::DeserializeOwned
        + JsonSchema
        + Clone
        + PartialEq
        + std::fmt::Debug
        + Send
        + Sync
        + 'static;
    /// Values of the type that survive a serde round trip.
    fn samples() -> Vec<Self>;
    /// The arguments carrying `self`.
    fn to_args(self) -> Self::Args;
    /// Back from the arguments.
    fn from_args(args: Self::Args) -> Self;
}

/// Wraps a type whose JSON is not an object, so a model can send it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Field<T> {
    /// The wrapped value.
    pub(crate) value: T,
}

macro_rules! case {
    ($ty:ty, $name:literal, object, [$($sample:expr),+ $(,)?]) => {
        impl Case for $ty {
            const NAME: &'static str = $name;
            const OBJECT: bool = true;
            type Args = Self;
            fn samples() -> Vec<Self> { vec![$($sample),+] }
            fn to_args(self) -> Self { self }
            fn from_args(args: Self) -> Self { args }
        }
    };
    ($ty:ty, $name:literal, wrapped, [$($sample:expr),+ $(,)?]) => {
        impl Case for $ty {
            const NAME: &'static str = $name;
            const OBJECT: bool = false;
            type Args = Field<Self>;
            fn samples() -> Vec<Self> { vec![$($sample),+] }
            fn to_args(self) -> Field<Self> { Field { value: self } }
            fn from_args(args: Field<Self>) -> Self { args.value }
        }
    };
}

/// Calls the macro `$m!(Type)` once per corpus type.
#[macro_export]
macro_rules! for_each_case {
    ($m:ident) => {
        $m!(Scalars);
        $m!(Integers);
        $m!(OptionalScalars);
        $m!(Defaults);
        $m!(OptionalStruct);
        $m!(OptionalEnum);
        $m!(UnitEnum);
        $m!(External);
        $m!(Internal);
        $m!(Adjacent);
        $m!(Untagged);
        $m!(FlattenStruct);
        $m!(FlattenEnum);
        $m!(Maps);
        $m!(FlattenMap);
        $m!(VecOfStructs);
        $m!(Tree);
        $m!(LinkedList);
        $m!(Documented);
        $m!(Renamed);
        $m!(UnitStruct);
        $m!(EmptyStruct);
        $m!(Newtype);
        $m!(TupleStruct);
        $m!(Chars);
        $m!(NestedOptions);
        $m!(DenyUnknown);
        $m!(Collections);
        $m!(AnyJson);
        $m!(SkipIfNone);
        $m!(Constrained);
        $m!(Generic);
        $m!(OptionalData);
    };
}

// ---- scalars -------------------------------------------------------------

/// Plain scalars.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Scalars {
    pub(crate) text: String,
    pub(crate) flag: bool,
    pub(crate) small: i32,
    pub(crate) ratio: f64,
}
case!(
    Scalars,
    "scalars",
    object,
    [
        Scalars {
            text: "hi".into(),
            flag: true,
            small: -3,
            ratio: 0.5
        },
        Scalars {
            text: String::new(),
            flag: false,
            small: i32::MAX,
            ratio: -1e10
        },
    ]
);

/// Every integer width, with schemars' non-standard formats and bounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Integers {
    pub(crate) big: u64,
    pub(crate) size: usize,
    pub(crate) count: u32,
    pub(crate) byte: u8,
    pub(crate) signed: i64,
    pub(crate) short: i16,
    pub(crate) single: f32,
}
case!(
    Integers,
    "integers",
    object,
    [
        Integers {
            big: u64::MAX,
            size: 7,
            count: 0,
            byte: 255,
            signed: i64::MIN,
            short: -2,
            single: 1.5
        },
        Integers {
            big: 0,
            size: 0,
            count: u32::MAX,
            byte: 0,
            signed: 9,
            short: i16::MAX,
            single: 0.0
        },
    ]
);

/// `Option` of scalars (not required in the input, nullable).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct OptionalScalars {
    pub(crate) name: Option<String>,
    pub(crate) count: Option<u32>,
    pub(crate) flag: Option<bool>,
    pub(crate) level: u8,
}
case!(
    OptionalScalars,
    "optional_scalars",
    object,
    [
        OptionalScalars {
            name: None,
            count: None,
            flag: None,
            level: 1
        },
        OptionalScalars {
            name: Some("x".into()),
            count: Some(3),
            flag: Some(false),
            level: 2
        },
        OptionalScalars {
            name: Some(String::new()),
            count: None,
            flag: Some(true),
            level: 0
        },
    ]
);

fn default_mode() -> String {
    "fast".into()
}

/// `#[serde(default)]` fields: optional in the input, never `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Defaults {
    pub(crate) query: String,
    #[serde(default)]
    pub(crate) limit: u32,
    #[serde(default)]
    pub(crate) tags: Vec<String>,
    #[serde(default = "default_mode")]
    pub(crate) mode: String,
    #[serde(default)]
    pub(crate) point: Point,
}
case!(
    Defaults,
    "defaults",
    object,
    [
        Defaults {
            query: "q".into(),
            limit: 0,
            tags: vec![],
            mode: "fast".into(),
            point: Point::default()
        },
        Defaults {
            query: "q".into(),
            limit: 10,
            tags: vec!["a".into()],
            mode: "slow".into(),
            point: Point { x: 1, y: 2 }
        },
    ]
);

/// A point.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Point {
    pub(crate) x: i32,
    pub(crate) y: i32,
}

/// `Option` of a struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct OptionalStruct {
    pub(crate) origin: Option<Point>,
    pub(crate) label: String,
}
case!(
    OptionalStruct,
    "optional_struct",
    object,
    [
        OptionalStruct {
            origin: None,
            label: "none".into()
        },
        OptionalStruct {
            origin: Some(Point { x: -1, y: 4 }),
            label: "some".into()
        },
    ]
);

/// Unit-only enum: a string enum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum UnitEnum {
    Low,
    Medium,
    High,
}
case!(
    UnitEnum,
    "unit_enum",
    wrapped,
    [UnitEnum::Low, UnitEnum::High]
);

/// `Option` of an enum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct OptionalEnum {
    pub(crate) priority: Option<UnitEnum>,
    pub(crate) shape: Option<External>,
}
case!(
    OptionalEnum,
    "optional_enum",
    object,
    [
        OptionalEnum {
            priority: None,
            shape: None
        },
        OptionalEnum {
            priority: Some(UnitEnum::Medium),
            shape: Some(External::Circle { radius: 2.0 })
        },
        OptionalEnum {
            priority: None,
            shape: Some(External::Empty)
        },
    ]
);

// ---- the four serde enum representations ---------------------------------

/// Externally tagged (serde's default): unit, newtype, tuple and struct variants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) enum External {
    Empty,
    Named(String),
    Pair(i32, i32),
    Circle { radius: f64 },
}
case!(
    External,
    "external",
    wrapped,
    [
        External::Empty,
        External::Named("n".into()),
        External::Pair(1, -1),
        External::Circle { radius: 0.25 },
    ]
);

/// Internally tagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Internal {
    Stop,
    Move {
        x: i32,
        y: i32,
    },
    Write {
        text: String,
        #[serde(default)]
        append: bool,
    },
    At(Point),
}
case!(
    Internal,
    "internal",
    wrapped,
    [
        Internal::Stop,
        Internal::Move { x: 1, y: 2 },
        Internal::Write {
            text: "t".into(),
            append: false
        },
        Internal::Write {
            text: "t".into(),
            append: true
        },
        Internal::At(Point { x: 0, y: 9 }),
    ]
);

/// Adjacently tagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", content = "data")]
pub(crate) enum Adjacent {
    Ping,
    Text(String),
    Span { start: u32, end: u32 },
}
case!(
    Adjacent,
    "adjacent",
    wrapped,
    [
        Adjacent::Ping,
        Adjacent::Text("x".into()),
        Adjacent::Span { start: 1, end: 5 },
    ]
);

/// Untagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Untagged {
    Number(i64),
    Text(String),
    Range { from: i64, to: i64 },
}
case!(
    Untagged,
    "untagged",
    wrapped,
    [
        Untagged::Number(-4),
        Untagged::Text("t".into()),
        Untagged::Range { from: 0, to: 10 },
    ]
);

// ---- flatten and maps -----------------------------------------------------

/// Metadata flattened into its parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Meta {
    pub(crate) author: String,
    pub(crate) version: Option<u32>,
}

/// `#[serde(flatten)]` of a struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct FlattenStruct {
    pub(crate) id: String,
    #[serde(flatten)]
    pub(crate) meta: Meta,
}
case!(
    FlattenStruct,
    "flatten_struct",
    object,
    [
        FlattenStruct {
            id: "1".into(),
            meta: Meta {
                author: "a".into(),
                version: None
            }
        },
        FlattenStruct {
            id: "2".into(),
            meta: Meta {
                author: "b".into(),
                version: Some(3)
            }
        },
    ]
);

/// `#[serde(flatten)]` of an internally tagged enum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct FlattenEnum {
    pub(crate) id: u32,
    #[serde(flatten)]
    pub(crate) action: Internal,
}
case!(
    FlattenEnum,
    "flatten_enum",
    object,
    [
        FlattenEnum {
            id: 1,
            action: Internal::Stop
        },
        FlattenEnum {
            id: 2,
            action: Internal::Move { x: 3, y: 4 }
        },
        FlattenEnum {
            id: 3,
            action: Internal::Write {
                text: "w".into(),
                append: true
            }
        },
    ]
);

/// Maps with typed values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Maps {
    pub(crate) counts: BTreeMap<String, u32>,
    pub(crate) env: BTreeMap<String, String>,
}
case!(
    Maps,
    "maps",
    object,
    [
        Maps {
            counts: BTreeMap::new(),
            env: BTreeMap::new()
        },
        Maps {
            counts: BTreeMap::from([("a".into(), 1), ("b".into(), 2)]),
            env: BTreeMap::from([("PATH".into(), "/bin".into())]),
        },
    ]
);

/// A map flattened into a struct: unknown keys are kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct FlattenMap {
    pub(crate) name: String,
    #[serde(flatten)]
    pub(crate) extra: BTreeMap<String, String>,
}
case!(
    FlattenMap,
    "flatten_map",
    object,
    [
        FlattenMap {
            name: "n".into(),
            extra: BTreeMap::new()
        },
        FlattenMap {
            name: "n".into(),
            extra: BTreeMap::from([("k".into(), "v".into())])
        },
    ]
);

/// A `Vec` of structs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct VecOfStructs {
    pub(crate) points: Vec<Point>,
    pub(crate) metas: Vec<Meta>,
}
case!(
    VecOfStructs,
    "vec_of_structs",
    object,
    [
        VecOfStructs {
            points: vec![],
            metas: vec![]
        },
        VecOfStructs {
            points: vec![Point { x: 1, y: 1 }, Point { x: 2, y: 3 }],
            metas: vec![
                Meta {
                    author: "a".into(),
                    version: None
                },
                Meta {
                    author: "b".into(),
                    version: Some(1)
                }
            ],
        },
    ]
);

// ---- recursion -------------------------------------------------------------

/// Recursion through a required `Vec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Tree {
    pub(crate) label: String,
    pub(crate) children: Vec<Tree>,
}
case!(
    Tree,
    "tree",
    object,
    [
        Tree {
            label: "leaf".into(),
            children: vec![]
        },
        Tree {
            label: "root".into(),
            children: vec![
                Tree {
                    label: "a".into(),
                    children: vec![]
                },
                Tree {
                    label: "b".into(),
                    children: vec![Tree {
                        label: "c".into(),
                        children: vec![]
                    }]
                },
            ],
        },
    ]
);

/// Recursion through an `Option`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct LinkedList {
    pub(crate) value: i32,
    pub(crate) next: Option<Box<LinkedList>>,
}
case!(
    LinkedList,
    "linked_list",
    object,
    [
        LinkedList {
            value: 1,
            next: None
        },
        LinkedList {
            value: 1,
            next: Some(Box::new(LinkedList {
                value: 2,
                next: Some(Box::new(LinkedList {
                    value: 3,
                    next: None
                }))
            }))
        },
    ]
);

// ---- names and docs ----------------------------------------------------------

/// Search the notes.
///
/// Matches are case-insensitive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Documented {
    /// The words to look for.
    pub(crate) query: String,
    /// How many matches to return at most.
    #[serde(default)]
    pub(crate) limit: Option<u16>,
    /// Where to search.
    pub(crate) scope: Scope,
}

/// Where a search looks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Scope {
    /// Only the titles.
    Titles,
    /// Titles and bodies.
    Everything,
}
case!(
    Documented,
    "documented",
    object,
    [
        Documented {
            query: "q".into(),
            limit: None,
            scope: Scope::Titles
        },
        Documented {
            query: "q".into(),
            limit: Some(5),
            scope: Scope::Everything
        },
    ]
);

/// Renames: `rename_all`, a field `rename`, a variant `rename`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Renamed {
    pub(crate) file_path: String,
    #[serde(rename = "type")]
    pub(crate) kind: RenamedKind,
    pub(crate) max_line_count: Option<u32>,
}

/// A renamed enum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum RenamedKind {
    PlainText,
    #[serde(rename = "md")]
    Markdown,
}
case!(
    Renamed,
    "renamed",
    object,
    [
        Renamed {
            file_path: "a.txt".into(),
            kind: RenamedKind::PlainText,
            max_line_count: None
        },
        Renamed {
            file_path: "b.md".into(),
            kind: RenamedKind::Markdown,
            max_line_count: Some(9)
        },
    ]
);

// ---- odd shapes --------------------------------------------------------------

/// A unit struct: JSON `null`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct UnitStruct;
case!(UnitStruct, "unit_struct", wrapped, [UnitStruct]);

/// A struct with no fields: `{}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct EmptyStruct {}
case!(EmptyStruct, "empty_struct", object, [EmptyStruct {}]);

/// A newtype with bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Newtype(pub u16);
case!(Newtype, "newtype", wrapped, [Newtype(0), Newtype(u16::MAX)]);

/// A tuple struct: a fixed-length array of mixed types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TupleStruct(pub i32, pub String, pub bool);
case!(
    TupleStruct,
    "tuple_struct",
    wrapped,
    [
        TupleStruct(1, "a".into(), true),
        TupleStruct(-1, String::new(), false)
    ]
);

/// `char`: a one-character string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Chars {
    pub(crate) separator: char,
    pub(crate) quote: Option<char>,
}
case!(
    Chars,
    "chars",
    object,
    [
        Chars {
            separator: ',',
            quote: None
        },
        Chars {
            separator: 'é',
            quote: Some('"')
        },
    ]
);

/// Nested options. `Some(None)` is not listed: plain serde reads `null` back as `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NestedOptions {
    pub(crate) twice: Option<Option<u8>>,
    pub(crate) items: Option<Vec<Option<String>>>,
}
case!(
    NestedOptions,
    "nested_options",
    object,
    [
        NestedOptions {
            twice: None,
            items: None
        },
        NestedOptions {
            twice: Some(Some(3)),
            items: Some(vec![None, Some("x".into())])
        },
    ]
);

/// `deny_unknown_fields`: a closed object in the canonical schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DenyUnknown {
    pub(crate) path: String,
    pub(crate) recursive: Option<bool>,
}
case!(
    DenyUnknown,
    "deny_unknown",
    object,
    [
        DenyUnknown {
            path: "/".into(),
            recursive: None
        },
        DenyUnknown {
            path: "/tmp".into(),
            recursive: Some(true)
        },
    ]
);

/// Sets, fixed arrays, bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Collections {
    pub(crate) unique: BTreeSet<String>,
    pub(crate) rgb: [u8; 3],
    pub(crate) bytes: Vec<u8>,
}
case!(
    Collections,
    "collections",
    object,
    [
        Collections {
            unique: BTreeSet::new(),
            rgb: [0, 0, 0],
            bytes: vec![]
        },
        Collections {
            unique: BTreeSet::from(["a".into(), "b".into()]),
            rgb: [255, 128, 0],
            bytes: vec![1, 2, 3]
        },
    ]
);

/// Any JSON: `serde_json::Value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct AnyJson {
    pub(crate) name: String,
    pub(crate) payload: serde_json::Value,
}
case!(
    AnyJson,
    "any_json",
    object,
    [
        AnyJson {
            name: "n".into(),
            payload: serde_json::json!({"a": [1, null, "x"]})
        },
        AnyJson {
            name: "n".into(),
            payload: serde_json::Value::Bool(true)
        },
    ]
);

/// An optional field skipped when `None`: optional in both contracts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SkipIfNone {
    pub(crate) id: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) tags: Vec<String>,
}
case!(
    SkipIfNone,
    "skip_if_none",
    object,
    [
        SkipIfNone {
            id: 1,
            note: None,
            tags: vec![]
        },
        SkipIfNone {
            id: 2,
            note: Some("n".into()),
            tags: vec!["t".into()]
        },
    ]
);

/// schemars validation attributes: lengths, ranges, a pattern, a format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Constrained {
    #[schemars(length(min = 1, max = 40))]
    pub(crate) name: String,
    #[schemars(range(min = 1, max = 100))]
    pub(crate) percent: u8,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    pub(crate) slug: String,
    #[schemars(email)]
    pub(crate) email: String,
    #[schemars(length(min = 1, max = 3))]
    pub(crate) picks: Vec<String>,
}
case!(
    Constrained,
    "constrained",
    object,
    [Constrained {
        name: "n".into(),
        percent: 1,
        slug: "abc".into(),
        email: "a@b.c".into(),
        picks: vec!["x".into()]
    },]
);

/// A generic struct instantiated with a struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Page<T> {
    pub(crate) items: Vec<T>,
    pub(crate) next_cursor: Option<String>,
}

/// `Page<Point>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Generic {
    pub(crate) page: Page<Point>,
}
case!(
    Generic,
    "generic",
    object,
    [
        Generic {
            page: Page {
                items: vec![],
                next_cursor: None
            }
        },
        Generic {
            page: Page {
                items: vec![Point { x: 1, y: 2 }],
                next_cursor: Some("c".into())
            }
        },
    ]
);

/// `Option` of data-carrying enums in several representations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct OptionalData {
    pub(crate) internal: Option<Internal>,
    pub(crate) adjacent: Option<Adjacent>,
    pub(crate) untagged: Option<Untagged>,
    #[serde(default)]
    pub(crate) list: Vec<External>,
}
case!(
    OptionalData,
    "optional_data",
    object,
    [
        OptionalData {
            internal: None,
            adjacent: None,
            untagged: None,
            list: vec![]
        },
        OptionalData {
            internal: Some(Internal::Write {
                text: "w".into(),
                append: false
            }),
            adjacent: Some(Adjacent::Span { start: 0, end: 1 }),
            untagged: Some(Untagged::Range { from: 1, to: 2 }),
            list: vec![External::Empty, External::Named("x".into())],
        },
    ]
);
