//! A tool generic over its client: the impl's generics carry over. (The
//! checks of the types' bounds, constants, cannot name the impl's type
//! parameters, so a generic impl's bounds are its own where clause.)

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, Registry, ToolCall, tool};

pub trait Client: Send + Sync + 'static {
    fn get(&self, key: &str) -> Option<String>;
}

pub struct Fixed;

impl Client for Fixed {
    fn get(&self, key: &str) -> Option<String> {
        (key == "a").then(|| "1".to_owned())
    }
}

#[derive(Clone, Deserialize, JsonSchema)]
pub struct Key {
    pub key: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Found {
    pub value: Option<String>,
}

pub struct LookupTool<C> {
    client: C,
}

/// Look a key up.
#[tool]
impl<C: Client> LookupTool<C> {
    fn execute(&self, args: Key) -> Found {
        Found {
            value: self.client.get(&args.key),
        }
    }

    fn render(args: &Key, value: &Found) -> Vec<ContentBlock> {
        let text = match &value.value {
            Some(v) => format!("{} = {v}", args.key),
            None => format!("{} is not set", args.key),
        };
        vec![ContentBlock::text(text)]
    }
}

fn main() {
    let registry = Registry::builder()
        .tool(LookupTool { client: Fixed })
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(registry.call(ToolCall::new("c1", "lookup", r#"{"key":"a"}"#)));
    assert_eq!(out.content(), [ContentBlock::text("a = 1")]);
}
