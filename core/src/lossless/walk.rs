//! Walks over already-built `serde_json::Value`s with an explicit stack, so
//! a value of any depth (a program may hand over 100,000 levels) is checked
//! or dropped without recursion.

use serde_json::Value;

use super::{LosslessError, MAX_DEPTH, Reason, Segment, path_of};
use crate::path::Keys;

/// Checks `value`: no `-0.0`, no nesting deeper than [`MAX_DEPTH`].
pub(crate) fn check_value_with(
    value: &Value,
    root: &str,
    keys: Keys<'_>,
) -> Result<(), LosslessError> {
    enum Frame<'a> {
        Array {
            items: std::slice::Iter<'a, Value>,
            index: usize,
        },
        Object {
            entries: serde_json::map::Iter<'a>,
            position: usize,
            key: &'a str,
        },
    }

    let fail = |stack: &[Frame<'_>], reason: Reason| {
        let segments = stack.iter().map(|frame| match frame {
            Frame::Array { index, .. } => Segment::Index(*index),
            Frame::Object { position, key, .. } => Segment::Key {
                position: *position,
                key: Some((*key).to_owned()),
            },
        });
        Err(LosslessError {
            path: path_of(root, segments, keys),
            reason: reason.text(),
        })
    };

    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(current) = next.take() {
            match current {
                Value::Number(n) if is_negative_zero(n) => {
                    return fail(&stack, Reason::NegativeZero);
                }
                Value::Array(_) | Value::Object(_) if stack.len() == MAX_DEPTH => {
                    return fail(&stack, Reason::TooDeep);
                }
                Value::Array(items) if !items.is_empty() => stack.push(Frame::Array {
                    items: items.iter(),
                    index: usize::MAX,
                }),
                Value::Object(map) if !map.is_empty() => stack.push(Frame::Object {
                    entries: map.iter(),
                    position: usize::MAX,
                    key: "",
                }),
                _ => {}
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ok(());
        };
        let child = match top {
            Frame::Array { items, index } => items.next().inspect(|_| {
                *index = index.wrapping_add(1);
            }),
            Frame::Object {
                entries,
                position,
                key,
            } => entries.next().map(|(k, item)| {
                *position = position.wrapping_add(1);
                *key = k.as_str();
                item
            }),
        };
        match child {
            Some(child) => next = Some(child),
            None => {
                stack.pop();
            }
        }
    }
}

fn is_negative_zero(n: &serde_json::Number) -> bool {
    n.is_f64() && n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative())
}

/// Drops `value` without recursion (`Value`'s own drop recurses once per
/// level, which overflows the stack on very deep values).
pub(crate) fn drop_deep(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}
