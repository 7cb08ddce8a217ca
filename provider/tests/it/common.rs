//! What the judges and the hostile cases share: real tools declared with
//! `#[tool]`, models that answer from a script, and a reader of a body's
//! raw bytes at a path.

#![allow(dead_code)]

use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use toolprism::provider::{Model, ModelError, Provider, Request};
use toolprism::{ContentBlock, EmbeddedResource, Registry, ToolError, tool};

/// A real 1×1 PNG.
pub(crate) const TINY_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/// A real WAV file: 8 samples of silence, 8 kHz, 8-bit mono.
pub(crate) const TINY_WAV: &str =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";
/// A real one-page PDF (327 bytes).
pub(crate) const TINY_PDF: &str = "JVBERi0xLjQKMSAwIG9iago8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5cGUgL1BhZ2VzIC9LaWRzIFszIDAgUl0gL0NvdW50IDEgPj4KZW5kb2JqCjMgMCBvYmoKPDwgL1R5cGUgL1BhZ2UgL1BhcmVudCAyIDAgUiAvTWVkaWFCb3ggWzAgMCA3MiA3Ml0gPj4KZW5kb2JqCnhyZWYKMCA0CjAwMDAwMDAwMDAgNjU1MzUgZiAKMDAwMDAwMDAwOSAwMDAwMCBuIAowMDAwMDAwMDU4IDAwMDAwIG4gCjAwMDAwMDAxMTUgMDAwMDAgbiAKdHJhaWxlcgo8PCAvU2l6ZSA0IC9Sb290IDEgMCBSID4+CnN0YXJ0eHJlZgoxODQKJSVFT0YK";

#[derive(Clone, Deserialize, JsonSchema)]
pub(crate) struct Key {
    pub(crate) key: String,
}

#[derive(Clone, Deserialize, JsonSchema)]
pub(crate) struct Empty {}

#[derive(Clone, Deserialize, JsonSchema)]
pub(crate) struct Pages {
    pub(crate) pages: u32,
}

/// `lookup`: text.
pub(crate) struct Lookup;

/// Looks a key up.
#[tool(read_only)]
impl Lookup {
    fn execute(args: Key) -> String {
        match args.key.as_str() {
            "alpha" => "1".into(),
            other => format!("no value for {other}"),
        }
    }

    fn render(args: &Key, value: &String) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!("{} = {value}", args.key))]
    }
}

/// `snapshot`: a line of text and an image.
pub(crate) struct Snapshot;

/// Takes a picture.
#[tool]
impl Snapshot {
    fn execute(_args: Empty) -> u32 {
        1
    }

    fn render(_args: &Empty, _value: &u32) -> Vec<ContentBlock> {
        vec![
            ContentBlock::text("one picture"),
            ContentBlock::image("image/png", TINY_PNG),
        ]
    }
}

/// `recording`: audio only, which no provider's results take.
pub(crate) struct Recording;

/// Records a sound.
#[tool]
impl Recording {
    fn execute(_args: Empty) -> u32 {
        8
    }

    fn render(_args: &Empty, _value: &u32) -> Vec<ContentBlock> {
        vec![ContentBlock::audio("audio/wav", TINY_WAV)]
    }
}

/// `report`: an embedded PDF resource.
pub(crate) struct Report;

/// Writes the report.
#[tool]
impl Report {
    fn execute(args: Pages) -> u32 {
        args.pages
    }

    fn render(_args: &Pages, _value: &u32) -> Vec<ContentBlock> {
        vec![
            ContentBlock::text("the report:"),
            ContentBlock::Resource {
                resource: EmbeddedResource::blob("file:///out/report.pdf", TINY_PDF)
                    .with_mime_type("application/pdf"),
            },
        ]
    }
}

/// `fail`: always fails, with a code of its own.
pub(crate) struct Fail;

/// Fails.
#[tool]
impl Fail {
    async fn execute(&self, _args: Empty) -> Result<u32, ToolError> {
        Err(ToolError::new("the disk is full").with_code("DISK_FULL"))
    }

    fn render(_args: &Empty, value: &u32) -> Vec<ContentBlock> {
        vec![ContentBlock::text(value.to_string())]
    }
}

/// The tools every run has (a call to `nope` is a call to a tool that
/// does not exist).
pub(crate) fn registry() -> Registry {
    toolprism::Registry::builder()
        .tool(Lookup)
        .tool(Snapshot)
        .tool(Recording)
        .tool(Report)
        .tool(Fail)
        .build()
        .unwrap()
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A model that answers request `n` with body `n` of its script (the last
/// one again past the end), and keeps every request body it was sent.
pub(crate) struct Scripted {
    bodies: Vec<String>,
    pub(crate) requests: Mutex<Vec<String>>,
}

impl Scripted {
    pub(crate) fn new<S: Into<String>>(bodies: impl IntoIterator<Item = S>) -> Self {
        Scripted {
            bodies: bodies.into_iter().map(Into::into).collect(),
            requests: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Model for Scripted {
    async fn respond(&self, request: &Request) -> Result<String, ModelError> {
        let body = request.body(serde_json::json!({"model": "scripted", "max_tokens": 1024}))?;
        // Every request is JSON, whatever the conversation holds (read
        // without a recursion limit: a deep echo is the model's own).
        serde_json::from_str::<serde::de::IgnoredAny>(&body)
            .map_err(|e| format!("request {} is not JSON: {e}", request.turn()))?;
        self.requests.lock().unwrap().push(body);
        let n = request.turn().min(self.bodies.len() - 1);
        Ok(self.bodies[n].clone())
    }
}

/// A user message in each provider's shape, to start a run.
pub(crate) fn start(provider: Provider) -> Vec<Box<RawValue>> {
    vec![provider.user_message("Look alpha up, take a picture, record a sound, write the report.")]
}

/// One step of a path into a JSON text.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

pub(crate) use Step::{Index as I, Key as K};

/// The exact bytes of the value at `path` in `text`.
pub(crate) fn raw_at<'a>(text: &'a str, path: &[Step<'_>]) -> &'a str {
    let mut at: &'a str = text;
    for step in path {
        at = match step {
            Step::Key(k) => {
                let map: std::collections::BTreeMap<String, &'a RawValue> =
                    serde_json::from_str(at).unwrap_or_else(|e| panic!("{k}: {e} in {at}"));
                map.get(*k)
                    .unwrap_or_else(|| panic!("no {k} in {at}"))
                    .get()
            }
            Step::Index(i) => {
                let list: Vec<&'a RawValue> =
                    serde_json::from_str(at).unwrap_or_else(|e| panic!("[{i}]: {e} in {at}"));
                list.get(*i)
                    .unwrap_or_else(|| panic!("no [{i}] in {at}"))
                    .get()
            }
        };
    }
    at
}

/// `text` as a JSON value.
pub(crate) fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}
