//! An elicitation's form as a terminal asks it: the fields of the
//! requested schema (an object of primitive fields, as MCP's form mode
//! allows) and, for each field, the answer one typed line gives, checked
//! against the field's type, enum and bounds. No I/O: the terminal client
//! (`prompt`) draws the questions and reads the lines.
//!
//! What a form may hold (MCP `2025-11-25`, `PrimitiveSchemaDefinition`):
//!
//! | field | schema | typed as |
//! |---|---|---|
//! | text | `{"type": "string", minLength?, maxLength?, format?}` (`email`, `uri`, `date`, `date-time`) | the line, trimmed |
//! | number | `{"type": "number" \| "integer", minimum?, maximum?}` | a decimal number |
//! | yes or no | `{"type": "boolean"}` | `y`, `yes`, `true`, `n`, `no`, `false` |
//! | one of | `{"type": "string", "enum": […]}`, titled with `oneOf: [{const, title}]` (or the legacy `enumNames`) | a choice's number, value or title |
//! | some of | `{"type": "array", "items": {"enum": […]} \| {"anyOf": [{const, title}]}, minItems?, maxItems?}` | choices separated by commas |
//!
//! Every field may have a `title`, a `description` and a `default`; the
//! object's `required` lists the fields that must be answered. Fields are
//! asked in the order of the schema's keys, which is alphabetical (a
//! `serde_json::Value` keeps no other order).
//!
//! An answer is checked by `jsonschema` against its field's own schema,
//! compiled once per field when the form is read (formats included: the
//! four above are validated, not only annotated), and the first violation
//! is told as one sentence a person can act on (`151 is above the maximum,
//! 150`). Written here is only what a validator does not do: reading the
//! schema to ask it (the kinds, choices and bounds a question shows),
//! turning the typed line into a JSON value of the field's type (a number,
//! `y`/`n`, a choice by its number or title), and wording the violation.

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::{Map, Number, Value};

/// A form: its fields, in the order asked.
#[derive(Debug)]
pub(crate) struct Form {
    pub(crate) fields: Vec<Field>,
}

/// One field of a form.
#[derive(Debug)]
pub(crate) struct Field {
    /// The key of the answer in the content.
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
    /// Checked when the form is read: a default is always a valid answer.
    pub(crate) default: Option<Value>,
    pub(crate) kind: Kind,
    /// The field's schema, compiled: what checks an answer.
    validator: Validator,
}

/// What a field takes, as the question shows it (the bounds are read for
/// the hint; the validator checks them).
#[derive(Debug)]
pub(crate) enum Kind {
    Text {
        min: Option<u64>,
        max: Option<u64>,
        format: Option<Format>,
    },
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
    },
    Boolean,
    /// One of the choices.
    One(Vec<Choice>),
    /// Some of the choices.
    Some {
        choices: Vec<Choice>,
        min: Option<u64>,
        max: Option<u64>,
    },
}

/// One value an enum field allows, with the title shown for it.
#[derive(Debug)]
pub(crate) struct Choice {
    pub(crate) value: String,
    pub(crate) title: Option<String>,
}

/// The string formats MCP's form mode names: a question says in words
/// what each takes, so another format is refused rather than asked blind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Email,
    Uri,
    Date,
    DateTime,
}

impl Format {
    /// The format's name in JSON Schema.
    fn of(name: &str) -> Option<Format> {
        match name {
            "email" => Some(Format::Email),
            "uri" => Some(Format::Uri),
            "date" => Some(Format::Date),
            "date-time" => Some(Format::DateTime),
            _ => None,
        }
    }
}

impl Form {
    /// Reads the form of `schema`, or says why a terminal cannot ask it
    /// (a nested object, an unknown type, a default that is not a valid
    /// answer).
    pub(crate) fn parse(schema: &Value) -> Result<Form, String> {
        let Value::Object(schema) = schema else {
            return Err("the requested schema is not a JSON object".to_owned());
        };
        if schema.get("type").is_some_and(|t| t != "object") {
            return Err("the requested schema is not of type \"object\"".to_owned());
        }
        let required: Vec<&str> = match schema.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            Some(_) => return Err("the schema's `required` is not an array".to_owned()),
        };
        let empty = Map::new();
        let properties = match schema.get("properties") {
            None => &empty,
            Some(Value::Object(properties)) => properties,
            Some(_) => return Err("the schema's `properties` is not an object".to_owned()),
        };
        let mut fields = Vec::with_capacity(properties.len());
        for (name, property) in properties {
            let field = Field::parse(name, property, required.contains(&name.as_str()))
                .map_err(|e| format!("field `{name}`: {e}"))?;
            fields.push(field);
        }
        Ok(Form { fields })
    }
}

fn text_of(schema: &Map<String, Value>, key: &str) -> Option<String> {
    schema.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn count_of(schema: &Map<String, Value>, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

/// Choices from `enum` (titled by a legacy `enumNames`), or from the
/// `const`/`title` branches of `oneOf` or `anyOf`.
fn choices_of(schema: &Map<String, Value>) -> Result<Option<Vec<Choice>>, String> {
    if let Some(values) = schema.get("enum") {
        let Value::Array(values) = values else {
            return Err("`enum` is not an array".to_owned());
        };
        let names = schema.get("enumNames").and_then(Value::as_array);
        let mut choices = Vec::with_capacity(values.len());
        for (i, value) in values.iter().enumerate() {
            let Some(value) = value.as_str() else {
                return Err(format!("enum value {value} is not a string"));
            };
            choices.push(Choice {
                value: value.to_owned(),
                title: names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            });
        }
        return Ok(Some(choices));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = schema.get(key) {
            let Value::Array(branches) = branches else {
                return Err(format!("`{key}` is not an array"));
            };
            let mut choices = Vec::with_capacity(branches.len());
            for branch in branches {
                let Some(value) = branch.get("const").and_then(Value::as_str) else {
                    return Err(format!(
                        "a branch of `{key}` has no string `const`: {branch}"
                    ));
                };
                choices.push(Choice {
                    value: value.to_owned(),
                    title: branch
                        .get("title")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                });
            }
            return Ok(Some(choices));
        }
    }
    Ok(None)
}

impl Field {
    fn parse(name: &str, schema: &Value, required: bool) -> Result<Field, String> {
        let Value::Object(schema) = schema else {
            return Err("its schema is not an object".to_owned());
        };
        let kind = match schema.get("type").and_then(Value::as_str) {
            Some("string") => match choices_of(schema)? {
                Some(choices) if choices.is_empty() => return Err("no choice to pick".to_owned()),
                Some(choices) => Kind::One(choices),
                None => Kind::Text {
                    min: count_of(schema, "minLength"),
                    max: count_of(schema, "maxLength"),
                    format: match schema.get("format").and_then(Value::as_str) {
                        None => None,
                        Some(name) => match Format::of(name) {
                            Some(format) => Some(format),
                            None => return Err(format!("unknown string format \"{name}\"")),
                        },
                    },
                },
            },
            Some(t @ ("number" | "integer")) => Kind::Number {
                integer: t == "integer",
                min: schema.get("minimum").and_then(Value::as_f64),
                max: schema.get("maximum").and_then(Value::as_f64),
            },
            Some("boolean") => Kind::Boolean,
            Some("array") => {
                let Some(Value::Object(items)) = schema.get("items") else {
                    return Err("an array without an `items` object".to_owned());
                };
                match choices_of(items)? {
                    Some(choices) if !choices.is_empty() => Kind::Some {
                        choices,
                        min: count_of(schema, "minItems"),
                        max: count_of(schema, "maxItems"),
                    },
                    _ => return Err("an array whose items are not an enum".to_owned()),
                }
            }
            Some(other) => return Err(format!("type \"{other}\" is not a form field")),
            None => return Err("no `type`".to_owned()),
        };
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&Value::Object(schema.clone()))
            .map_err(|e| format!("its schema does not compile: {e}"))?;
        let field = Field {
            name: name.to_owned(),
            title: text_of(schema, "title"),
            description: text_of(schema, "description"),
            required,
            default: None,
            kind,
            validator,
        };
        match schema.get("default") {
            None => Ok(field),
            Some(default) => match field.check(default) {
                Ok(()) => Ok(Field {
                    default: Some(default.clone()),
                    ..field
                }),
                Err(why) => Err(format!(
                    "its default {default} is not a valid answer: {why}"
                )),
            },
        }
    }

    /// The field's label: its title, else its name.
    pub(crate) fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// What to type, in a few words: `integer from 0 to 150`, `y/n`.
    pub(crate) fn hint(&self) -> String {
        let range = |min: Option<String>, max: Option<String>| match (min, max) {
            (Some(min), Some(max)) => format!(" from {min} to {max}"),
            (Some(min), None) => format!(" of at least {min}"),
            (None, Some(max)) => format!(" of at most {max}"),
            (None, None) => String::new(),
        };
        // `150`, not `150.0`: as a person writes a bound.
        let number = |n: f64| {
            if n.fract() == 0.0 && n.abs() < 1e15 {
                format!("{}", n as i64)
            } else {
                n.to_string()
            }
        };
        let mut hint = match &self.kind {
            Kind::Text { min, max, format } => {
                let what = match format {
                    None => "text",
                    Some(Format::Email) => "an email address",
                    Some(Format::Uri) => "a URI",
                    Some(Format::Date) => "a date, YYYY-MM-DD",
                    Some(Format::DateTime) => "a date and time, YYYY-MM-DDThh:mm:ssZ",
                };
                let chars = match (min, max) {
                    (None, None) => String::new(),
                    _ => format!(
                        "{} chars",
                        range(min.map(|n| n.to_string()), max.map(|n| n.to_string()))
                    ),
                };
                format!("{what}{chars}")
            }
            Kind::Number { integer, min, max } => format!(
                "{}{}",
                if *integer { "an integer" } else { "a number" },
                range(min.map(number), max.map(number))
            ),
            Kind::Boolean => "y/n".to_owned(),
            Kind::One(_) => "a number or a value above".to_owned(),
            Kind::Some { min, max, .. } => format!(
                "numbers or values above, separated by commas{}",
                match (min, max) {
                    (None, None) => String::new(),
                    (Some(min), Some(max)) => format!("; {min} to {max} of them"),
                    (Some(min), None) => format!("; at least {min}"),
                    (None, Some(max)) => format!("; at most {max}"),
                }
            ),
        };
        if !self.required {
            hint.push_str("; optional");
        }
        hint
    }

    /// The choices to list before asking, numbered from 1.
    pub(crate) fn choices(&self) -> &[Choice] {
        match &self.kind {
            Kind::One(choices) | Kind::Some { choices, .. } => choices,
            _ => &[],
        }
    }

    /// The default as a person would type it, when there is one.
    pub(crate) fn shown_default(&self) -> Option<String> {
        let default = self.default.as_ref()?;
        let choice = |value: &str| {
            self.choices()
                .iter()
                .find(|c| c.value == value)
                .map_or(value, |c| c.title.as_deref().unwrap_or(&c.value))
                .to_owned()
        };
        Some(match (default, &self.kind) {
            (Value::Bool(true), _) => "yes".to_owned(),
            (Value::Bool(false), _) => "no".to_owned(),
            (Value::String(value), Kind::One(_)) => choice(value),
            (Value::String(text), _) => text.clone(),
            (Value::Array(values), _) => values
                .iter()
                .map(|v| choice(v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", "),
            (other, _) => other.to_string(),
        })
    }

    /// The answer `line` gives: `Ok(Some(value))` for the content,
    /// `Ok(None)` for a field left out (an empty line, no default, not
    /// required), or why the line is not an answer.
    pub(crate) fn answer(&self, line: &str) -> Result<Option<Value>, String> {
        let line = line.trim();
        if line.is_empty() {
            return match (&self.default, self.required) {
                (Some(default), _) => Ok(Some(default.clone())),
                (None, false) => Ok(None),
                (None, true) => Err("an answer is required".to_owned()),
            };
        }
        let value = match &self.kind {
            Kind::Text { .. } => Value::String(line.to_owned()),
            Kind::Number { integer: true, .. } => match line.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => return Err(format!("\"{line}\" is not an integer")),
            },
            Kind::Number { integer: false, .. } => {
                match line.parse::<f64>().ok().filter(|n| n.is_finite()) {
                    Some(n) => number(line, n),
                    None => return Err(format!("\"{line}\" is not a number")),
                }
            }
            Kind::Boolean => match line.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Value::Bool(true),
                "n" | "no" | "false" => Value::Bool(false),
                _ => return Err(format!("\"{line}\" is not yes or no (y/n)")),
            },
            Kind::One(choices) => Value::String(pick(choices, line)?.to_owned()),
            Kind::Some { choices, .. } => {
                let mut picked: Vec<Value> = Vec::new();
                for part in line.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let value = Value::String(pick(choices, part)?.to_owned());
                    if !picked.contains(&value) {
                        picked.push(value);
                    }
                }
                Value::Array(picked)
            }
        };
        self.check(&value)?;
        Ok(Some(value))
    }

    /// Whether `value` is a valid answer to the field's schema, or its first
    /// violation in words.
    fn check(&self, value: &Value) -> Result<(), String> {
        match self.validator.iter_errors(value).next() {
            None => Ok(()),
            Some(error) => Err(self.reason(&error)),
        }
    }

    /// A violation as a person at a terminal reads it: what was given, and
    /// the bound or the kind of answer it missed. `jsonschema`'s own message
    /// for what a form field seldom holds (`pattern`, `multipleOf`).
    fn reason(&self, error: &ValidationError<'_>) -> String {
        let given: &Value = error.instance();
        let chars = || given.as_str().map_or(0, |text| text.chars().count());
        let chosen = || given.as_array().map_or(0, Vec::len);
        match error.kind() {
            // Below the root: an item of a list of choices.
            ValidationErrorKind::Type { .. } if error.instance_path().iter().next().is_some() => {
                format!("{given} is not one of the choices")
            }
            ValidationErrorKind::Type { .. } => format!("{given} is not {}", self.what()),
            ValidationErrorKind::Minimum { limit } => {
                format!("{given} is below the minimum, {limit}")
            }
            ValidationErrorKind::Maximum { limit } => {
                format!("{given} is above the maximum, {limit}")
            }
            ValidationErrorKind::ExclusiveMinimum { limit } => {
                format!("{given} is not above {limit}")
            }
            ValidationErrorKind::ExclusiveMaximum { limit } => {
                format!("{given} is not below {limit}")
            }
            ValidationErrorKind::MinLength { limit } => {
                format!("{} chars, fewer than the {limit} it needs", chars())
            }
            ValidationErrorKind::MaxLength { limit } => {
                format!("{} chars, more than the {limit} it takes", chars())
            }
            ValidationErrorKind::Format { format } => format!(
                "{given} is not {}",
                match Format::of(format) {
                    Some(Format::Email) => "an email address".to_owned(),
                    Some(Format::Uri) => "a URI (scheme:…)".to_owned(),
                    Some(Format::Date) => "a date (YYYY-MM-DD)".to_owned(),
                    Some(Format::DateTime) => "a date and time (YYYY-MM-DDThh:mm:ssZ)".to_owned(),
                    None => format!("a valid {format}"),
                }
            ),
            ValidationErrorKind::Enum { .. }
            | ValidationErrorKind::Constant { .. }
            | ValidationErrorKind::AnyOf { .. }
            | ValidationErrorKind::OneOfNotValid { .. } => {
                format!("{given} is not one of the choices")
            }
            ValidationErrorKind::MinItems { limit } => {
                format!("{} chosen, fewer than the {limit} it needs", chosen())
            }
            ValidationErrorKind::MaxItems { limit } => {
                format!("{} chosen, more than the {limit} it takes", chosen())
            }
            ValidationErrorKind::UniqueItems => "a choice is chosen twice".to_owned(),
            _ => error.to_string(),
        }
    }

    /// The kind of answer the field takes, for a value of another type.
    fn what(&self) -> &'static str {
        match &self.kind {
            Kind::Text { .. } => "text",
            Kind::Number { integer: true, .. } => "an integer",
            Kind::Number { integer: false, .. } => "a number",
            Kind::Boolean => "yes or no",
            Kind::One(_) => "one of the choices",
            Kind::Some { .. } => "a list of choices",
        }
    }
}

/// The number typed as `text`: an integer when it reads as one, so `3`
/// stays `3` and not `3.0`; zero is never negative.
fn number(text: &str, n: f64) -> Value {
    if let Ok(i) = text.parse::<i64>() {
        return Value::from(i);
    }
    if n == 0.0 {
        return Value::from(0);
    }
    Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// The choice `typed` names: its number (from 1), its value, or its
/// title or value in any case when only one matches.
fn pick<'c>(choices: &'c [Choice], typed: &str) -> Result<&'c str, String> {
    if let Ok(n) = typed.parse::<usize>()
        && let Some(choice) = n.checked_sub(1).and_then(|i| choices.get(i))
    {
        return Ok(&choice.value);
    }
    if let Some(choice) = choices.iter().find(|c| c.value == typed) {
        return Ok(&choice.value);
    }
    let lower = typed.to_lowercase();
    let matching: Vec<&Choice> = choices
        .iter()
        .filter(|c| {
            c.value.to_lowercase() == lower
                || c.title.as_ref().is_some_and(|t| t.to_lowercase() == lower)
        })
        .collect();
    match matching.as_slice() {
        [one] => Ok(&one.value),
        [] => Err(format!(
            "\"{typed}\" is not one of the choices (1 to {})",
            choices.len()
        )),
        _ => Err(format!("\"{typed}\" names more than one choice")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> Form {
        Form::parse(&schema).unwrap_or_else(|e| panic!("{e}"))
    }

    fn field(property: Value, required: bool) -> Field {
        let required = if required { json!(["f"]) } else { json!([]) };
        let mut form =
            form(json!({"type": "object", "properties": {"f": property}, "required": required}));
        form.fields.remove(0)
    }

    #[test]
    fn fields_are_read_in_key_order_with_their_titles_and_defaults() {
        let form = form(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name", "description": "What we call you"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
                "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}], "default": "g"},
            },
            "required": ["name"]
        }));
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["age", "colour", "name"]);
        let [age, colour, name] = &form.fields[..] else {
            unreachable!()
        };
        assert_eq!(name.label(), "Your name");
        assert_eq!(name.description.as_deref(), Some("What we call you"));
        assert!(name.required && !age.required);
        assert_eq!(name.hint(), "text");
        assert_eq!(age.hint(), "an integer from 0 to 150; optional");
        assert_eq!(age.shown_default().as_deref(), Some("30"));
        assert_eq!(colour.shown_default().as_deref(), Some("Green"));
        assert_eq!(colour.choices().len(), 2);
    }

    #[test]
    fn what_a_terminal_cannot_ask_is_refused_with_a_reason() {
        for (schema, why) in [
            (json!([]), "not a JSON object"),
            (json!({"type": "array"}), "not of type \"object\""),
            (
                json!({"type": "object", "properties": {"a": {"type": "object"}}}),
                "field `a`: type \"object\" is not a form field",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "format": "ipv4"}}}),
                "unknown string format \"ipv4\"",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 1, "default": 0}}}),
                "field `a`: its default 0 is not a valid answer: 0 is below the minimum, 1",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"], "default": "y"}}}),
                "not one of the choices",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}),
                "an array whose items are not an enum",
            ),
        ] {
            let err = Form::parse(&schema).unwrap_err();
            assert!(err.contains(why), "{schema}: {err}");
        }
        assert!(
            Form::parse(&json!({"type": "object"}))
                .unwrap()
                .fields
                .is_empty()
        );
    }

    #[test]
    fn an_empty_line_takes_the_default_or_leaves_the_field_out() {
        let f = field(json!({"type": "integer", "default": 7}), true);
        assert_eq!(f.answer("  ").unwrap(), Some(json!(7)));
        let f = field(json!({"type": "string"}), false);
        assert_eq!(f.answer("").unwrap(), None);
        let f = field(json!({"type": "string"}), true);
        assert_eq!(f.answer("").unwrap_err(), "an answer is required");
        assert_eq!(
            f.answer("  Ada Lovelace ").unwrap(),
            Some(json!("Ada Lovelace"))
        );
    }

    #[test]
    fn numbers_are_checked_for_type_and_bounds() {
        let f = field(
            json!({"type": "integer", "minimum": 0, "maximum": 150}),
            true,
        );
        assert_eq!(f.answer("42").unwrap(), Some(json!(42)));
        assert_eq!(
            f.answer("forty").unwrap_err(),
            "\"forty\" is not an integer"
        );
        assert_eq!(f.answer("4.5").unwrap_err(), "\"4.5\" is not an integer");
        assert_eq!(
            f.answer("151").unwrap_err(),
            "151 is above the maximum, 150"
        );
        assert_eq!(f.answer("-1").unwrap_err(), "-1 is below the minimum, 0");
        let f = field(json!({"type": "number", "maximum": 1}), true);
        assert_eq!(f.answer("0.25").unwrap(), Some(json!(0.25)));
        assert_eq!(f.answer("1").unwrap(), Some(json!(1)));
        assert_eq!(f.answer("-0.0").unwrap(), Some(json!(0)));
        assert_eq!(f.answer("NaN").unwrap_err(), "\"NaN\" is not a number");
        assert_eq!(f.answer("1e999").unwrap_err(), "\"1e999\" is not a number");
        assert_eq!(f.answer("2").unwrap_err(), "2 is above the maximum, 1");
    }

    #[test]
    fn yes_or_no() {
        let f = field(json!({"type": "boolean", "default": false}), false);
        for yes in ["y", "Yes", "TRUE"] {
            assert_eq!(f.answer(yes).unwrap(), Some(json!(true)), "{yes}");
        }
        for no in ["n", "NO", "false"] {
            assert_eq!(f.answer(no).unwrap(), Some(json!(false)), "{no}");
        }
        assert_eq!(f.answer("").unwrap(), Some(json!(false)));
        assert_eq!(
            f.answer("maybe").unwrap_err(),
            "\"maybe\" is not yes or no (y/n)"
        );
        assert_eq!(f.shown_default().as_deref(), Some("no"));
        assert_eq!(f.hint(), "y/n; optional");
    }

    #[test]
    fn a_choice_by_number_value_or_title() {
        let f = field(
            json!({"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]}),
            true,
        );
        assert_eq!(f.answer("2").unwrap(), Some(json!("g")));
        assert_eq!(f.answer("r").unwrap(), Some(json!("r")));
        assert_eq!(f.answer("green").unwrap(), Some(json!("g")));
        assert_eq!(
            f.answer("3").unwrap_err(),
            "\"3\" is not one of the choices (1 to 2)"
        );
        assert!(
            f.answer("blue")
                .unwrap_err()
                .contains("not one of the choices")
        );
        // Untitled, and the legacy enumNames.
        let f = field(
            json!({"type": "string", "enum": ["low", "high"], "enumNames": ["Low", "High"]}),
            true,
        );
        assert_eq!(f.answer("HIGH").unwrap(), Some(json!("high")));
        assert_eq!(f.choices()[0].title.as_deref(), Some("Low"));
        // Two choices that differ only in case: the exact one, or neither.
        let f = field(json!({"type": "string", "enum": ["a", "A"]}), true);
        assert_eq!(f.answer("A").unwrap(), Some(json!("A")));
        let f = field(json!({"type": "string", "enum": ["ab", "AB"]}), true);
        assert_eq!(
            f.answer("Ab").unwrap_err(),
            "\"Ab\" names more than one choice"
        );
    }

    #[test]
    fn several_choices_separated_by_commas() {
        let f = field(
            json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "Apples"}, {"const": "b", "title": "Bread"}, {"const": "c"}]}, "minItems": 1, "maxItems": 2, "default": ["a"]}),
            true,
        );
        assert_eq!(f.answer("2, c").unwrap(), Some(json!(["b", "c"])));
        assert_eq!(f.answer("bread,b,2").unwrap(), Some(json!(["b"])));
        assert_eq!(f.answer("").unwrap(), Some(json!(["a"])));
        assert_eq!(
            f.answer(",").unwrap_err(),
            "0 chosen, fewer than the 1 it needs"
        );
        assert_eq!(
            f.answer("1,2,3").unwrap_err(),
            "3 chosen, more than the 2 it takes"
        );
        assert!(
            f.answer("a, z")
                .unwrap_err()
                .contains("\"z\" is not one of the choices")
        );
        assert_eq!(f.shown_default().as_deref(), Some("Apples"));
        let f = field(
            json!({"type": "array", "items": {"type": "string", "enum": ["x", "y"]}}),
            false,
        );
        assert_eq!(f.answer("y,x").unwrap(), Some(json!(["y", "x"])));
    }

    #[test]
    fn text_bounds_and_formats() {
        let f = field(
            json!({"type": "string", "minLength": 2, "maxLength": 3}),
            true,
        );
        assert_eq!(
            f.answer("é").unwrap_err(),
            "1 chars, fewer than the 2 it needs"
        );
        assert_eq!(f.answer("éèê").unwrap(), Some(json!("éèê")));
        assert_eq!(
            f.answer("abcd").unwrap_err(),
            "4 chars, more than the 3 it takes"
        );
        let email = field(json!({"type": "string", "format": "email"}), true);
        assert!(email.answer("ada@example.com").is_ok());
        assert_eq!(
            email.answer("ada").unwrap_err(),
            "\"ada\" is not an email address"
        );
        for bad in ["@x", "a@", "a b@c", "a@b@c"] {
            assert!(email.answer(bad).is_err(), "{bad}");
        }
        let uri = field(json!({"type": "string", "format": "uri"}), true);
        assert!(uri.answer("https://example.com/x").is_ok());
        assert!(uri.answer("mailto:ada@example.com").is_ok());
        assert_eq!(
            uri.answer("example.com").unwrap_err(),
            "\"example.com\" is not a URI (scheme:…)"
        );
        assert!(uri.answer("1http://x").is_err());
        let date = field(json!({"type": "string", "format": "date"}), true);
        assert!(date.answer("2024-02-29").is_ok());
        for bad in ["2023-02-29", "2024-13-01", "2024-1-01"] {
            assert!(date.answer(bad).is_err(), "{bad}");
        }
        assert_eq!(
            date.answer("tomorrow").unwrap_err(),
            "\"tomorrow\" is not a date (YYYY-MM-DD)"
        );
        let at = field(json!({"type": "string", "format": "date-time"}), true);
        for good in ["2024-05-01T12:30:00Z", "2024-05-01T12:30:00.25+02:00"] {
            assert!(at.answer(good).is_ok(), "{good}");
        }
        for bad in [
            "2024-05-01",
            "2024-05-01T25:00:00Z",
            "2024-05-01T12:30:00",
            "2024-05-01T12:30Z",
        ] {
            assert!(at.answer(bad).is_err(), "{bad}");
        }
        assert_eq!(
            at.answer("2024-05-01").unwrap_err(),
            "\"2024-05-01\" is not a date and time (YYYY-MM-DDThh:mm:ssZ)"
        );
    }

    #[test]
    fn the_whole_field_schema_is_checked_and_a_broken_one_refused() {
        // Keywords the hint does not show are checked all the same.
        let f = field(json!({"type": "number", "exclusiveMinimum": 0}), true);
        assert_eq!(f.answer("0").unwrap_err(), "0 is not above 0");
        assert_eq!(f.answer("0.5").unwrap(), Some(json!(0.5)));
        let f = field(json!({"type": "string", "pattern": "^[a-z]+$"}), true);
        assert!(f.answer("ada").is_ok());
        assert!(
            f.answer("Ada 1").unwrap_err().contains("\"Ada 1\""),
            "the answer is named"
        );
        // A default of another type, and a schema no validator compiles.
        let err = Form::parse(
            &json!({"type": "object", "properties": {"a": {"type": "integer", "default": "7"}}}),
        )
        .unwrap_err();
        assert_eq!(
            err,
            "field `a`: its default \"7\" is not a valid answer: \"7\" is not an integer"
        );
        let err = Form::parse(&json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "enum": ["x"]}, "default": [1]}}}))
            .unwrap_err();
        assert!(err.ends_with(": 1 is not one of the choices"), "{err}");
        let err = Form::parse(
            &json!({"type": "object", "properties": {"a": {"type": "string", "minLength": "two"}}}),
        )
        .unwrap_err();
        assert!(
            err.starts_with("field `a`: its schema does not compile: "),
            "{err}"
        );
    }
}
