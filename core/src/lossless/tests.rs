//! Tests of the lossless serializer, the key rules and the value walks.

use std::collections::{BTreeMap, HashMap};

use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, json};

use super::*;

const NAN: &str = "is NaN, which JSON cannot represent";
const NEGATIVE_ZERO: &str = "is -0.0, which JSON cannot represent losslessly";

fn non_string_key() -> String {
    Reason::NonStringKey.text()
}

#[derive(Serialize)]
struct Row {
    name: String,
    score: f64,
}

#[derive(Serialize)]
struct Report {
    title: String,
    rows: Vec<Row>,
}

fn row(name: &str, score: f64) -> Row {
    Row {
        name: name.to_owned(),
        score,
    }
}

fn err<T: Serialize + ?Sized>(value: &T) -> LosslessError {
    to_lossless_value(value, "value").expect_err("value should be rejected")
}

#[test]
fn nan_nested_in_vec_in_struct() {
    let report = Report {
        title: "t".into(),
        rows: vec![row("a", 1.0), row("b", f64::NAN), row("c", 2.0)],
    };
    let e = err(&report);
    assert_eq!(e.path(), "value.rows[1].score");
    assert_eq!(e.reason(), "is NaN, which JSON cannot represent");
    assert_eq!(
        e.to_string(),
        r#""value.rows[1].score" is NaN, which JSON cannot represent"#
    );
}

#[test]
fn root_label_starts_the_path() {
    let e = to_lossless_value(&vec![1.0, f64::NAN], "meta").unwrap_err();
    assert_eq!(e.path(), "meta[1]");
    let e = to_lossless_value(&f64::NAN, "meta").unwrap_err();
    assert_eq!(e.path(), "meta");
}

#[test]
fn infinities_are_rejected() {
    for f in [f64::INFINITY, f64::NEG_INFINITY] {
        let e = err(&Report {
            title: "t".into(),
            rows: vec![row("a", f)],
        });
        assert_eq!(e.path(), "value.rows[0].score");
        assert_eq!(e.reason(), "is infinite, which JSON cannot represent");
    }
    assert_eq!(
        err(&f32::NEG_INFINITY).reason(),
        "is infinite, which JSON cannot represent"
    );
}

#[test]
fn f32_nan_is_rejected() {
    #[derive(Serialize)]
    struct Small {
        x: f32,
    }
    let e = err(&Small { x: f32::NAN });
    assert_eq!(e.path(), "value.x");
    assert_eq!(e.reason(), "is NaN, which JSON cannot represent");
}

#[test]
fn negative_zero_is_rejected() {
    let e = err(&Report {
        title: "t".into(),
        rows: vec![row("a", -0.0)],
    });
    assert_eq!(e.path(), "value.rows[0].score");
    assert_eq!(
        e.reason(),
        "is -0.0, which JSON cannot represent losslessly"
    );
    assert_eq!(err(&-0.0f32).reason(), NEGATIVE_ZERO);
    // A serde_json::Value holding -0.0 is caught too.
    assert_eq!(err(&json!({"a": [1, -0.0]})).path(), "value.a[1]");
}

#[test]
fn positive_zero_and_ordinary_floats_pass() {
    assert_eq!(to_lossless_value(&0.0f64, "value").unwrap(), json!(0.0));
    assert_eq!(to_lossless_value(&0.0f32, "value").unwrap(), json!(0.0));
    assert_eq!(
        to_lossless_value(&[f64::MIN_POSITIVE, -1.5, f64::MAX], "value").unwrap(),
        json!([f64::MIN_POSITIVE, -1.5, f64::MAX])
    );
    check_value(&json!({"a": [0.0, 0, -1, -0.5]}), "value").unwrap();
}

#[test]
fn check_value_rejects_negative_zero() {
    let value = json!({"rows": [{"score": 1.0}, {"score": -0.0}]});
    let e = check_value(&value, "meta").unwrap_err();
    assert_eq!(e.path(), "meta.rows[1].score");
    assert_eq!(e.reason(), NEGATIVE_ZERO);

    let e = check_value(&json!(-0.0), "value").unwrap_err();
    assert_eq!(e.path(), "value");

    let e = check_value(&json!({"a b": {"x\"y": -0.0}}), "value").unwrap_err();
    assert_eq!(e.path(), r#"value["a b"]["x\"y"]"#);
}

#[test]
fn check_value_on_parsed_negative_zero() {
    // serde_json parses `-0`, `-0.0` and `-0e0` as the float -0.0.
    for (text, path) in [("-0", "value"), ("-0.0", "value"), ("[-0e0]", "value[0]")] {
        let value: Value = serde_json::from_str(text).unwrap();
        let e = check_value(&value, "value").unwrap_err();
        assert_eq!(e.path(), path, "{text}");
    }
    check_value(&serde_json::from_str("[0, 0.0, 1e-300]").unwrap(), "value").unwrap();
}

#[test]
fn hash_map_key_path() {
    let mut map = HashMap::new();
    map.insert("ok".to_owned(), 1.0);
    map.insert("a b".to_owned(), f64::NAN);
    let e = err(&map);
    assert_eq!(e.path(), r#"value["a b"]"#);
    assert_eq!(e.reason(), NAN);

    let mut map = HashMap::new();
    map.insert("plain_key".to_owned(), f64::INFINITY);
    assert_eq!(err(&map).path(), "value.plain_key");

    let mut map = HashMap::new();
    map.insert("quote\"d".to_owned(), f64::NAN);
    assert_eq!(err(&map).path(), r#"value["quote\"d"]"#);
}

#[test]
fn non_string_like_keys_render_as_quoted_strings() {
    let mut map = BTreeMap::new();
    map.insert(7u32, f64::NAN);
    assert_eq!(err(&map).path(), r#"value["7"]"#);

    let mut map = BTreeMap::new();
    map.insert(-3i64, vec![0.5, f64::NAN]);
    assert_eq!(err(&map).path(), r#"value["-3"][1]"#);

    let mut map = BTreeMap::new();
    map.insert('c', f64::NAN);
    assert_eq!(err(&map).path(), "value.c");

    let mut map = BTreeMap::new();
    map.insert(true, f64::NAN);
    assert_eq!(err(&map).path(), "value.true");
}

#[test]
fn nested_map_in_struct() {
    #[derive(Serialize)]
    struct Holder {
        scores: BTreeMap<String, Vec<f64>>,
    }
    let mut scores = BTreeMap::new();
    scores.insert("x y".to_owned(), vec![1.0, 2.0, f64::NAN]);
    let e = err(&Holder { scores });
    assert_eq!(e.path(), r#"value.scores["x y"][2]"#);
}

#[test]
fn composite_keys_are_rejected() {
    let mut map = BTreeMap::new();
    map.insert((1, 2), 3);
    let e = err(&map);
    assert_eq!(e.path(), "value");
    assert_eq!(e.reason(), non_string_key());

    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    struct StructKey {
        a: u8,
    }
    #[derive(Serialize)]
    struct Holder {
        inner: Vec<BTreeMap<StructKey, u8>>,
    }
    let mut map = BTreeMap::new();
    map.insert(StructKey { a: 1 }, 2);
    let e = err(&Holder {
        inner: vec![BTreeMap::new(), map],
    });
    assert_eq!(e.path(), "value.inner[1]");
    assert_eq!(e.reason(), non_string_key());

    let mut map = BTreeMap::new();
    map.insert(vec![1u8], 2);
    assert_eq!(err(&map).reason(), non_string_key());

    let mut map = BTreeMap::new();
    map.insert((), 2);
    assert_eq!(err(&map).reason(), non_string_key());

    let mut map = BTreeMap::new();
    map.insert(Some("x"), 2);
    assert_eq!(err(&map).reason(), non_string_key());
}

/// A map with a float key, which serde_json would stringify; we reject it.
struct FloatKeyed(f64);

impl Serialize for FloatKeyed {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(&self.0, &1)?;
        map.end()
    }
}

#[test]
fn float_keys_are_rejected() {
    assert_eq!(err(&FloatKeyed(1.5)).reason(), non_string_key());
    assert_eq!(err(&FloatKeyed(f64::NAN)).reason(), non_string_key());
}

#[test]
fn unit_variant_and_newtype_keys_are_accepted() {
    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    #[serde(rename_all = "snake_case")]
    enum Color {
        DarkRed,
    }
    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    struct Id(u32);

    let mut map = BTreeMap::new();
    map.insert(Color::DarkRed, 1.0);
    assert_eq!(
        to_lossless_value(&map, "value").unwrap(),
        json!({"dark_red": 1.0})
    );
    map.insert(Color::DarkRed, f64::NAN);
    assert_eq!(err(&map).path(), "value.dark_red");

    let mut map = BTreeMap::new();
    map.insert(Id(4), 1.0);
    assert_eq!(to_lossless_value(&map, "value").unwrap(), json!({"4": 1.0}));
    map.insert(Id(4), f64::NAN);
    assert_eq!(err(&map).path(), r#"value["4"]"#);
}

/// A map written with separate `serialize_key` / `serialize_value` calls.
struct SplitMap(Vec<(String, f64)>);

impl Serialize for SplitMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_key(k)?;
            map.serialize_value(v)?;
        }
        map.end()
    }
}

#[test]
fn split_key_value_calls_keep_the_key_for_the_path() {
    let ok = SplitMap(vec![("a".into(), 1.0)]);
    assert_eq!(to_lossless_value(&ok, "value").unwrap(), json!({"a": 1.0}));
    let bad = SplitMap(vec![("a".into(), 1.0), ("b-c".into(), f64::NAN)]);
    assert_eq!(err(&bad).path(), r#"value["b-c"]"#);
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum Shape {
    Circle(f64),
    Pair(f64, f64),
    Rect { width: f64, height: f64 },
    Empty,
}

#[test]
fn enum_variant_paths() {
    let e = err(&Shape::Circle(f64::NAN));
    assert_eq!(e.path(), "value.circle");
    assert_eq!(
        err(&vec![Shape::Empty, Shape::Circle(-0.0)]).path(),
        "value[1].circle"
    );
    assert_eq!(err(&Shape::Pair(1.0, f64::NAN)).path(), "value.pair[1]");
    assert_eq!(
        err(&Shape::Rect {
            width: 1.0,
            height: f64::INFINITY
        })
        .path(),
        "value.rect.height"
    );
    assert_eq!(
        to_lossless_value(&Shape::Empty, "value").unwrap(),
        json!("empty")
    );
}

#[test]
fn internally_tagged_and_flattened() {
    #[derive(Serialize)]
    #[serde(tag = "type")]
    enum Tagged {
        Point { x: f64 },
    }
    assert_eq!(err(&Tagged::Point { x: f64::NAN }).path(), "value.x");

    #[derive(Serialize)]
    struct Outer {
        id: u32,
        #[serde(flatten)]
        extra: HashMap<String, f64>,
    }
    let mut extra = HashMap::new();
    extra.insert("w".to_owned(), f64::NAN);
    assert_eq!(err(&Outer { id: 1, extra }).path(), "value.w");
}

#[test]
fn options_tuples_and_newtypes() {
    #[derive(Serialize)]
    struct Meters(f64);
    #[derive(Serialize)]
    struct Pair(u8, Meters);
    #[derive(Serialize)]
    struct S {
        maybe: Option<f64>,
        tuple: (u8, f64),
        pair: Pair,
    }
    let base = || S {
        maybe: None,
        tuple: (1, 1.0),
        pair: Pair(1, Meters(1.0)),
    };
    assert!(to_lossless_value(&base(), "value").is_ok());
    let mut s = base();
    s.maybe = Some(f64::NAN);
    assert_eq!(err(&s).path(), "value.maybe");
    let mut s = base();
    s.tuple.1 = f64::NAN;
    assert_eq!(err(&s).path(), "value.tuple[1]");
    let mut s = base();
    s.pair.1 = Meters(f64::NAN);
    assert_eq!(err(&s).path(), "value.pair[1]");
}

#[test]
fn renamed_fields_that_are_not_identifiers() {
    #[derive(Serialize)]
    struct S {
        #[serde(rename = "@score")]
        score: f64,
    }
    assert_eq!(err(&S { score: f64::NAN }).path(), r#"value["@score"]"#);
}

struct Failing;

impl Serialize for Failing {
    fn serialize<S: Serializer>(&self, _serializer: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("boom"))
    }
}

#[test]
fn custom_serialize_error_is_reported_where_it_happened() {
    let e = err(&Failing);
    assert_eq!(e.path(), "value");
    assert_eq!(e.reason(), "could not be serialized: boom");

    #[derive(Serialize)]
    struct Holder {
        items: Vec<Failing>,
    }
    let e = to_lossless_value(
        &Holder {
            items: vec![Failing],
        },
        "meta",
    )
    .unwrap_err();
    assert_eq!(e.path(), "meta.items[0]");
    assert_eq!(e.reason(), "could not be serialized: boom");
    assert_eq!(
        e.to_string(),
        r#""meta.items[0]" could not be serialized: boom"#
    );
}

#[test]
fn serde_json_errors_are_reported_where_they_happened() {
    // Passes the check, but serde_json cannot hold it without
    // `arbitrary_precision`.
    let big = u128::from(u64::MAX) + 1;
    let e = to_lossless_value(&vec![big], "value").unwrap_err();
    assert_eq!(e.path(), "value[0]");
    assert!(e.reason().starts_with("could not be serialized: "), "{e}");
}

struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

struct Displayed(u32);

impl Serialize for Displayed {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("#{}", self.0))
    }
}

#[test]
fn big_ordinary_value_matches_serde_json() {
    #[derive(Serialize, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
    enum Kind {
        Alpha,
        Beta,
    }
    #[derive(Serialize)]
    struct Unit;
    #[derive(Serialize)]
    struct Newtype(String);
    #[derive(Serialize)]
    struct Big {
        text: String,
        emoji: char,
        flags: Vec<bool>,
        small: (i8, i16, i32, i64, u8, u16, u32, u64),
        extremes: [i64; 2],
        big_unsigned: u64,
        wide: (i128, u128),
        floats: Vec<f64>,
        single: f32,
        maybe: Option<Box<Big>>,
        none: Option<u8>,
        unit: (),
        unit_struct: Unit,
        newtype: Newtype,
        shapes: Vec<Shape>,
        kinds: BTreeMap<Kind, Vec<u8>>,
        by_id: BTreeMap<u64, String>,
        by_char: BTreeMap<char, bool>,
        by_bool: BTreeMap<bool, i32>,
        by_name: HashMap<String, Value>,
        json: Value,
    }
    let leaf = Big {
        text: "leaf".into(),
        emoji: '✓',
        flags: vec![],
        small: (-1, -2, -3, -4, 1, 2, 3, 4),
        extremes: [i64::MIN, i64::MAX],
        big_unsigned: u64::MAX,
        wide: (-5, 6),
        floats: vec![0.0, 0.1, -2.5e-300, 1e300],
        single: 0.1,
        maybe: None,
        none: None,
        unit: (),
        unit_struct: Unit,
        newtype: Newtype("n".into()),
        shapes: vec![],
        kinds: BTreeMap::new(),
        by_id: BTreeMap::new(),
        by_char: BTreeMap::new(),
        by_bool: BTreeMap::new(),
        by_name: HashMap::new(),
        json: Value::Null,
    };
    let mut by_name = HashMap::new();
    for i in 0..50 {
        by_name.insert(
            format!("key {i}"),
            json!({"i": i, "half": f64::from(i) / 2.0}),
        );
    }
    let big = Big {
        text: "top \"quoted\" \n line".into(),
        emoji: '😀',
        flags: vec![true, false, true],
        small: (
            i8::MIN,
            i16::MIN,
            i32::MIN,
            i64::MIN,
            u8::MAX,
            u16::MAX,
            u32::MAX,
            u64::MAX,
        ),
        extremes: [i64::MIN, i64::MAX],
        big_unsigned: u64::MAX,
        wide: (i128::from(i64::MIN), u128::from(u64::MAX)),
        floats: (0..1000).map(|i| f64::from(i) * 0.37 - 100.0).collect(),
        single: f32::MAX,
        maybe: Some(Box::new(leaf)),
        none: None,
        unit: (),
        unit_struct: Unit,
        newtype: Newtype("wrapped".into()),
        shapes: vec![
            Shape::Circle(1.0),
            Shape::Pair(2.0, 3.0),
            Shape::Rect {
                width: 4.0,
                height: 5.0,
            },
            Shape::Empty,
        ],
        kinds: [(Kind::Alpha, vec![1, 2]), (Kind::Beta, vec![])]
            .into_iter()
            .collect(),
        by_id: (0..100).map(|i| (i * 1_000_003, format!("v{i}"))).collect(),
        by_char: [('a', true), ('é', false)].into_iter().collect(),
        by_bool: [(true, 1), (false, 0)].into_iter().collect(),
        by_name,
        json: json!({"nested": [1, 2.5, "x", null, {"deep": [true]}]}),
    };
    let expected = serde_json::to_value(&big).unwrap();
    assert_eq!(to_lossless_value(&big, "value").unwrap(), expected);
    check_value(&expected, "value").unwrap();

    let odd = (Bytes(&[0, 1, 255]), Displayed(7));
    assert_eq!(
        to_lossless_value(&odd, "value").unwrap(),
        json!([[0, 1, 255], "#7"])
    );
}

#[test]
fn error_trait_and_accessors() {
    let e: Box<dyn std::error::Error> = Box::new(err(&f64::NAN));
    assert_eq!(
        e.to_string(),
        r#""value" is NaN, which JSON cannot represent"#
    );
    let a = err(&f64::NAN);
    assert_eq!(a.clone(), a);
    assert_ne!(a, err(&f64::INFINITY));
}

fn deep(depth: usize, leaf: Value) -> (Value, String) {
    let mut value = leaf;
    let mut segments = Vec::with_capacity(depth);
    for i in 0..depth {
        value = if i % 2 == 0 {
            segments.push("[0]");
            Value::Array(vec![value])
        } else {
            segments.push(".k");
            let mut map = Map::new();
            map.insert("k".to_owned(), value);
            Value::Object(map)
        };
    }
    let mut path = String::from("value");
    for segment in segments.iter().rev() {
        path.push_str(segment);
    }
    (value, path)
}

#[test]
fn check_value_stops_at_max_depth_without_recursing() {
    // A small stack proves the walk and the drop do not recurse.
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let (value, _) = deep(MAX_DEPTH, json!(1.5));
            check_value(&value, "value").unwrap();
            drop_deep(value);

            let (value, path) = deep(MAX_DEPTH, json!(-0.0));
            let e = check_value(&value, "value").unwrap_err();
            assert_eq!(e.path(), path);
            assert_eq!(e.reason(), NEGATIVE_ZERO);
            drop_deep(value);

            let (value, _) = deep(100_000, json!(1));
            let e = check_value(&value, "value").unwrap_err();
            assert_eq!(e.reason(), Reason::TooDeep.text());
            // The path stops at the container that would be one level too deep.
            assert_eq!(
                e.path().matches("[0]").count() + e.path().matches(".k").count(),
                MAX_DEPTH
            );
            drop_deep(value);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn max_depth_is_what_serde_json_reads_back() {
    let (value, _) = deep(MAX_DEPTH, json!(null));
    let text = to_lossless_value(&value, "value").unwrap().to_string();
    let back: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(back, value);
    let (value, _) = deep(MAX_DEPTH + 1, json!(null));
    let e = to_lossless_value(&value, "value").unwrap_err();
    assert_eq!(e.reason(), Reason::TooDeep.text());
    let text = serde_json::to_string(&value).unwrap();
    assert!(serde_json::from_str::<Value>(&text).is_err());
}

/// A recursive type, as a user writes it.
#[derive(Serialize)]
struct Node {
    next: Option<Box<Node>>,
}

#[test]
fn a_deep_recursive_type_is_refused_on_a_small_stack() {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(|| {
            let mut node = Node { next: None };
            for _ in 0..10_000 {
                node = Node {
                    next: Some(Box::new(node)),
                };
            }
            let e = to_lossless_value(&node, "value").unwrap_err();
            assert_eq!(e.reason(), Reason::TooDeep.text());
            assert!(e.path().starts_with("value.next.next.next"), "{e}");
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Writes the same key twice, as a flattened map or a hand-written impl can.
struct Twice(&'static str);

impl Serialize for Twice {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("a", &1)?;
        map.serialize_entry(self.0, &2)?;
        map.serialize_entry(self.0, &3)?;
        map.end()
    }
}

#[test]
fn a_key_written_twice_is_refused() {
    let e = err(&Twice("b"));
    assert_eq!(e.path(), "value.b");
    assert_eq!(e.reason(), Reason::DuplicateKey.text());
    // Where keys are data, the entry is named by its position only.
    let e = to_value_with(&Twice("secret"), "value", Keys::Hidden).unwrap_err();
    assert_eq!(e.path(), "value.{entry 2}");
    assert!(!e.to_string().contains("secret"));

    #[derive(Serialize)]
    struct Flat {
        id: u32,
        #[serde(flatten)]
        extra: BTreeMap<String, u32>,
    }
    let extra = [("id".to_owned(), 9)].into_iter().collect();
    let e = err(&Flat { id: 1, extra });
    assert_eq!(e.path(), "value.id");
    assert_eq!(e.reason(), Reason::DuplicateKey.text());

    #[derive(Serialize)]
    struct Renamed {
        a: u8,
        #[serde(rename = "a")]
        b: u8,
    }
    assert_eq!(err(&Renamed { a: 1, b: 2 }).path(), "value.a");
}

#[test]
fn hidden_keys_never_reach_a_path() {
    let mut map = BTreeMap::new();
    map.insert("alpha".to_owned(), 1.0);
    map.insert("secret-canary".to_owned(), f64::NAN);
    let e = to_value_with(&map, "value", Keys::Hidden).unwrap_err();
    assert_eq!(e.path(), "value.{entry 1}");
    let e = check_value_with(
        &json!({"x": {"secret-canary": -0.0}}),
        "value",
        Keys::Hidden,
    )
    .unwrap_err();
    assert_eq!(e.path(), "value.{entry 0}.{entry 0}");
}

#[test]
fn check_value_visits_every_sibling() {
    let value = json!([
        [],
        {},
        {"a": [1, 2, {"b": 3}], "c": []},
        [[[0.0]], [[-0.0]]]
    ]);
    let e = check_value(&value, "value").unwrap_err();
    assert_eq!(e.path(), "value[3][1][0][0]");
}
