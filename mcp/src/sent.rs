//! The arguments of a `tools/call` exactly as the client sent them (W2 in
//! `docs/contract.md`: the wire keeps the lossless rules).
//!
//! rmcp hands the server a request whose `arguments` it has already parsed
//! into a map: a key written twice is gone by then (the last one won), and
//! arguments nested deeper than serde_json reads, or holding a number no
//! `f64` holds, fail the whole message. So both transports read the
//! message's bytes first: [`locate`] finds the text of `params.arguments`
//! without parsing it (no recursion, any depth), the transport attaches it
//! to the request as [`Sent`], and the server hands that text to the
//! registry, whose reader (the one `Registry::call` uses) applies the
//! rules and names the path. When the arguments are what stops the message
//! from parsing, the transport gives rmcp the message with `{}` in their
//! place ([`with_placeholder`]) and the text as sent still goes to the
//! registry, so the model gets `INVALID_ARGS`, not a protocol error.

use std::ops::Range;
use std::sync::Arc;

/// The text of a `tools/call`'s `params.arguments` as sent, attached to the
/// request's extensions by the transport.
#[derive(Debug, Clone)]
pub(crate) struct Sent(pub(crate) Arc<str>);

/// Where a message's `params.arguments` is, in a `tools/call` request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Located {
    /// The byte range of the arguments' value.
    pub(crate) arguments: Range<usize>,
}

/// The `params.arguments` of `message` when it is a `tools/call` request
/// (a JSON object whose `method` is `"tools/call"`). Reads the members of
/// the message and of `params` only, skipping every value without
/// recursion; keys are compared after their escapes are decoded. When a
/// key is written twice, the last one counts, as for rmcp's parser.
pub(crate) fn locate(message: &str) -> Option<Located> {
    let mut cursor = Cursor::new(message.as_bytes());
    let mut method = None;
    let mut arguments = None;
    cursor.object(|cursor, key| {
        let value = cursor.value()?;
        match key.as_str() {
            "method" => method = Some(value),
            "params" if message.as_bytes()[value.start] == b'{' => {
                let mut inner = Cursor::at(message.as_bytes(), value.start);
                let mut found = None;
                inner.object(|inner, key| {
                    let value = inner.value()?;
                    if key == "arguments" {
                        found = Some(value);
                    }
                    Some(())
                })?;
                arguments = found;
            }
            _ => {}
        }
        Some(())
    })?;
    let method = method?;
    let is_call = serde_json::from_str::<String>(&message[method]).ok()? == "tools/call";
    Some(Located {
        arguments: arguments.filter(|_| is_call)?,
    })
}

/// What the limits of the HTTP service read of a message: its `method`
/// and the text of its `id`, found like [`locate`] finds arguments
/// (without parsing the rest, any depth).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Envelope {
    /// The method, decoded; `None` for a response or what is not a message.
    pub(crate) method: Option<String>,
    /// The `id` as written, when it is a string or a number.
    pub(crate) id: Option<String>,
}

/// The [`Envelope`] of `message`; empty when it is not a JSON object.
pub(crate) fn envelope(message: &str) -> Envelope {
    let mut cursor = Cursor::new(message.as_bytes());
    let mut found = Envelope::default();
    let read = cursor.object(|cursor, key| {
        let value = cursor.value()?;
        let text = &message[value];
        match key.as_str() {
            "method" => found.method = serde_json::from_str::<String>(text).ok(),
            "id" if text.len() <= 256
                && (text.starts_with('"')
                    || text.starts_with(|c: char| c == '-' || c.is_ascii_digit())) =>
            {
                found.id = Some(text.to_owned());
            }
            _ => {}
        }
        Some(())
    });
    if read.is_some() {
        found
    } else {
        Envelope::default()
    }
}

/// `message` with `{}` in place of the arguments at `range`.
pub(crate) fn with_placeholder(message: &str, range: Range<usize>) -> String {
    let mut out = String::with_capacity(message.len() - range.len() + 2);
    out.push_str(&message[..range.start]);
    out.push_str("{}");
    out.push_str(&message[range.end..]);
    out
}

/// A reader over JSON text that finds members and skips values.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, at: 0 }
    }

    fn at(bytes: &'a [u8], at: usize) -> Self {
        Cursor { bytes, at }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.blanks();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// The members of the object starting here: `member` is called with
    /// each decoded key and the cursor before the value, and must read it.
    fn object(&mut self, mut member: impl FnMut(&mut Self, String) -> Option<()>) -> Option<()> {
        self.expect(b'{')?;
        self.blanks();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.blanks();
            let key = self.string()?;
            let key = std::str::from_utf8(&self.bytes[key]).ok()?;
            let key = serde_json::from_str::<String>(key).ok()?;
            self.expect(b':')?;
            self.blanks();
            member(self, key)?;
            self.blanks();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string starting here, quotes included.
    fn string(&mut self) -> Option<Range<usize>> {
        let start = self.at;
        if self.peek()? != b'"' {
            return None;
        }
        self.at += 1;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(start..self.at);
                }
                _ => self.at += 1,
            }
        }
    }

    /// Any value starting here, skipped without recursion: its range.
    fn value(&mut self) -> Option<Range<usize>> {
        self.blanks();
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.at += 1;
                }
                if self.at == start {
                    return None;
                }
            }
        }
        Some(start..self.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(message: &str) -> Option<&str> {
        locate(message).map(|l| &message[l.arguments])
    }

    #[test]
    fn finds_the_arguments_of_a_tools_call_as_written() {
        let m = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt","path":"b.txt"}}}"#;
        assert_eq!(arguments(m), Some(r#"{"path":"a.txt","path":"b.txt"}"#));
        // Member order, blanks, escaped keys and strings holding brackets.
        let m = " { \"params\" : { \"arguments\" : { \"a\" : \"}]\\\"{\" , \"b\":[1,{\"c\":-0.0}] } , \"name\":\"x\" } , \"m\\u0065thod\" : \"tools/call\" , \"id\" : 7 } ";
        assert_eq!(
            arguments(m),
            Some("{ \"a\" : \"}]\\\"{\" , \"b\":[1,{\"c\":-0.0}] }")
        );
        // The last of two `arguments` counts, as for rmcp.
        let m = r#"{"method":"tools/call","params":{"arguments":{"a":1},"arguments":{"b":2}}}"#;
        assert_eq!(arguments(m), Some(r#"{"b":2}"#));
        // Numbers no f64 holds are text here.
        let m = r#"{"method":"tools/call","params":{"arguments":{"n":1e999}}}"#;
        assert_eq!(arguments(m), Some(r#"{"n":1e999}"#));
    }

    #[test]
    fn reads_arguments_of_any_depth_without_recursion() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let m = format!(
            r#"{{"method":"tools/call","params":{{"name":"x","arguments":{{"a":{deep}}}}}}}"#
        );
        let located = locate(&m).unwrap();
        assert_eq!(m[located.arguments.clone()].len(), deep.len() + 6);
        let placeheld = with_placeholder(&m, located.arguments);
        assert_eq!(
            placeheld,
            r#"{"method":"tools/call","params":{"name":"x","arguments":{}}}"#
        );
    }

    #[test]
    fn the_envelope_is_the_method_and_the_id_as_written() {
        let e = envelope(
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/c\u0061ll","params":{"x":[[[]]]}}"#,
        );
        assert_eq!(e.method.as_deref(), Some("tools/call"));
        assert_eq!(e.id.as_deref(), Some(r#""a\"b""#));
        let e = envelope(r#"{"id":-7,"method":"initialize"}"#);
        assert_eq!(
            (e.method.as_deref(), e.id.as_deref()),
            (Some("initialize"), Some("-7"))
        );
        // An id that is no string or number is not kept; garbage is empty.
        assert_eq!(envelope(r#"{"id":{"a":1},"method":"x"}"#).id, None);
        assert_eq!(envelope("[1]"), Envelope::default());
        assert_eq!(envelope(r#"{"method":"x""#), Envelope::default());
    }

    #[test]
    fn other_messages_have_no_arguments() {
        assert_eq!(
            arguments(r#"{"method":"tools/list","params":{"arguments":{}}}"#),
            None
        );
        assert_eq!(
            arguments(r#"{"method":"tools/call","params":{"name":"x"}}"#),
            None
        );
        assert_eq!(arguments(r#"{"method":"tools/call","params":[1]}"#), None);
        for garbage in [
            "",
            "{",
            "[]",
            "{\"method\":",
            "{\"a\" 1}",
            "{\"method\":\"tools/call\",\"params\":{\"arguments\":{\"a\":\"x}}",
        ] {
            assert_eq!(arguments(garbage), None, "{garbage}");
        }
    }
}
