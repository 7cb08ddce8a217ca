//! `#[tool(blocking)]`: a synchronous `execute` (any of its shapes) becomes
//! `Tool::execute_blocking`, `INFO.blocking` is set, and `execute` runs the
//! same body inline.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{
    ContentBlock, NoMeta, Registry, Tool, ToolCall, ToolContext, ToolError, ToolInfo, tool,
};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct Wait {
    pub ms: u64,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Waited {
    pub ms: u64,
    pub tool: String,
}

fn render(value: &Waited) -> Vec<ContentBlock> {
    vec![ContentBlock::text(format!("{} waited {} ms", value.tool, value.ms))]
}

pub struct SleepTool {
    limit: u64,
}

/// Sleep on the calling thread: `&self`, the context, `Result<T, String>`.
#[tool(blocking, read_only)]
impl SleepTool {
    fn execute(&self, args: Wait, cx: &ToolContext<'_>) -> Result<Waited, String> {
        if args.ms > self.limit {
            return Err(format!("{} ms is over the limit of {} ms", args.ms, self.limit));
        }
        std::thread::sleep(std::time::Duration::from_millis(args.ms));
        Ok(Waited {
            ms: args.ms,
            tool: cx.tool_name().to_owned(),
        })
    }

    fn render(_args: &Wait, value: &Waited) -> Vec<ContentBlock> {
        render(value)
    }
}

pub struct PlainTool;

/// No receiver, no context, a plain value; `blocking = true` spelled out.
#[tool(blocking = true)]
impl PlainTool {
    fn execute(args: Wait) -> Waited {
        Waited {
            ms: args.ms,
            tool: "plain".to_owned(),
        }
    }

    fn render(_args: &Wait, value: &Waited) -> Vec<ContentBlock> {
        render(value)
    }
}

pub struct CodedTool;

/// The context only, `Result<T, ToolError>`: the code is kept.
#[tool(blocking)]
impl CodedTool {
    fn execute(_cx: &ToolContext<'_>, args: Wait) -> Result<Waited, ToolError> {
        Err(ToolError::new(format!("no waiting {} ms", args.ms)).with_code("REFUSED"))
    }

    fn render(_args: &Wait, value: &Waited) -> Vec<ContentBlock> {
        render(value)
    }
}

pub struct AsyncTool;

/// Not blocking: `execute` may be async, and `INFO.blocking` is false.
#[tool]
impl AsyncTool {
    async fn execute(args: Wait) -> Waited {
        Waited {
            ms: args.ms,
            tool: "async".to_owned(),
        }
    }

    fn render(_args: &Wait, value: &Waited) -> Vec<ContentBlock> {
        render(value)
    }
}

/// Calls `SleepTool::execute_blocking` itself, so this test reaches it
/// through a real context whatever the registry does with `blocking`.
pub struct Direct(SleepTool);

impl Tool for Direct {
    type Args = Wait;
    type Value = Waited;
    type Meta = NoMeta;
    const INFO: ToolInfo = ToolInfo::new("direct", "Calls execute_blocking.");

    async fn execute(&self, args: Wait, cx: &ToolContext<'_>) -> Result<Waited, ToolError> {
        <SleepTool as Tool>::execute_blocking(&self.0, args, cx)
    }

    fn render(_args: &Wait, value: &Waited) -> Vec<ContentBlock> {
        render(value)
    }
}

fn main() {
    assert!(SleepTool::INFO.blocking);
    assert!(SleepTool::INFO.annotations.read_only);
    assert!(PlainTool::INFO.blocking);
    assert!(CodedTool::INFO.blocking);
    assert!(!AsyncTool::INFO.blocking);

    let registry = Registry::builder()
        .tool(SleepTool { limit: 50 })
        .tool(PlainTool)
        .tool(CodedTool)
        .tool(AsyncTool)
        .tool(Direct(SleepTool { limit: 50 }))
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for (name, expected) in [
            ("sleep", "sleep waited 5 ms"),
            ("plain", "plain waited 5 ms"),
            ("async", "async waited 5 ms"),
            ("direct", "direct waited 5 ms"),
        ] {
            let out = registry.call(ToolCall::new("c", name, r#"{"ms": 5}"#)).await;
            assert!(!out.is_error(), "{name}: {:?}", out.content());
            assert_eq!(out.content(), [ContentBlock::text(expected)], "{name}");
        }

        // The user's error is converted as for any `execute`.
        for name in ["sleep", "direct"] {
            let out = registry.call(ToolCall::new("c", name, r#"{"ms": 500}"#)).await;
            let error = out.error().unwrap();
            assert_eq!(error.code.as_str(), "TOOL_FAILED", "{name}");
            assert_eq!(error.message, "500 ms is over the limit of 50 ms", "{name}");
        }
        let out = registry.call(ToolCall::new("c", "coded", r#"{"ms": 1}"#)).await;
        assert_eq!(out.error().unwrap().code.as_str(), "REFUSED");
        assert_eq!(out.error().unwrap().message, "no waiting 1 ms");
    });
}
