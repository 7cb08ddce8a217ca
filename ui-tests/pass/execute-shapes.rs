//! Every supported shape of `execute`: sync or async, with `&self` or no
//! receiver, with or without the context, returning `T` or `Result<T, E>`.
//! Each tool doubles `n`; `main` calls all sixteen through a registry.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, Registry, ToolCall, ToolContext, ToolError, tool};

#[derive(Clone, Deserialize, JsonSchema)]
pub struct Num {
    pub n: i64,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Doubled {
    pub n: i64,
}

fn doubled(args: Num) -> Doubled {
    Doubled { n: args.n * 2 }
}

fn render(value: &Doubled) -> Vec<ContentBlock> {
    vec![ContentBlock::text(value.n.to_string())]
}

pub struct SyncSelfCtxValue {
    factor: i64,
}

/// sync, &self, cx, T
#[tool]
impl SyncSelfCtxValue {
    fn execute(&self, args: Num, cx: &ToolContext<'_>) -> Doubled {
        assert_eq!(cx.tool_name(), "sync_self_ctx_value");
        Doubled {
            n: args.n * self.factor,
        }
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct SyncSelfCtxResult;

/// sync, &self, cx, Result (the context first)
#[tool]
impl SyncSelfCtxResult {
    fn execute(&self, cx: &toolprism::ToolContext, args: Num) -> Result<Doubled, ToolError> {
        let _ = cx.call_id();
        Ok(doubled(args))
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct SyncSelfValue;

/// sync, &self, T
#[tool]
impl SyncSelfValue {
    fn execute(&self, args: Num) -> Doubled {
        doubled(args)
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct SyncSelfResult;

/// sync, &self, Result<T, String>
#[tool]
impl SyncSelfResult {
    fn execute(&self, args: Num) -> Result<Doubled, String> {
        if args.n < 0 {
            return Err(format!("{} is negative", args.n));
        }
        Ok(doubled(args))
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct SyncCtxValue;

/// sync, no receiver, cx, T
#[tool]
impl SyncCtxValue {
    fn execute(args: Num, _cx: &ToolContext<'_>) -> Doubled {
        doubled(args)
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct SyncCtxResult;

/// sync, no receiver, cx, Result<T, std::io::Error>
#[tool]
impl SyncCtxResult {
    fn execute(args: Num, _cx: &ToolContext<'_>) -> std::result::Result<Doubled, std::io::Error> {
        Ok(doubled(args))
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct SyncValue;

/// sync, no receiver, T
#[tool]
impl SyncValue {
    fn execute(args: Num) -> Doubled {
        doubled(args)
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct SyncResult;

/// sync, no receiver, Result<T, Box<dyn Error>>
#[tool]
impl SyncResult {
    fn execute(args: Num) -> Result<Doubled, Box<dyn std::error::Error + Send + Sync>> {
        Ok(doubled(args))
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct AsyncSelfCtxValue;

/// async, &self, cx, T
#[tool]
impl AsyncSelfCtxValue {
    async fn execute(&self, args: Num, cx: &ToolContext<'_>) -> Doubled {
        tokio::task::yield_now().await;
        assert!(!cx.is_cancelled());
        doubled(args)
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct AsyncSelfCtxResult;

/// async, &self, cx, Result<T, ToolError>: the common case
#[tool]
impl AsyncSelfCtxResult {
    async fn execute(&self, args: Num, _cx: &ToolContext<'_>) -> Result<Doubled, ToolError> {
        if args.n == 13 {
            return Err(ToolError::new("13 is unlucky").with_code("UNLUCKY"));
        }
        Ok(doubled(args))
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct AsyncSelfValue;

/// async, &self, T
#[tool]
impl AsyncSelfValue {
    async fn execute(&self, args: Num) -> Doubled {
        doubled(args)
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct AsyncSelfResult;

/// async, &self, Result
#[tool]
impl AsyncSelfResult {
    async fn execute(&self, args: Num) -> Result<Doubled, ToolError> {
        Ok(doubled(args))
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct AsyncCtxValue;

/// async, no receiver, cx, T
#[tool]
impl AsyncCtxValue {
    async fn execute(args: Num, _cx: &ToolContext<'_>) -> Doubled {
        doubled(args)
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct AsyncCtxResult;

/// async, no receiver, cx, Result
#[tool]
impl AsyncCtxResult {
    async fn execute(args: Num, cx: &ToolContext<'_>) -> Result<Doubled, ToolError> {
        cx.registry();
        Ok(doubled(args))
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct AsyncValue;

/// async, no receiver, T
#[tool]
impl AsyncValue {
    async fn execute(args: Num) -> Doubled {
        doubled(args)
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

pub struct AsyncResult;

/// async, no receiver, Result
#[tool]
impl AsyncResult {
    async fn execute(Num { n }: Num) -> Result<Doubled, ToolError> {
        Ok(Doubled { n: n * 2 })
    }
    fn render(_: &Num, v: &Doubled) -> Vec<ContentBlock> {
        render(v)
    }
}

fn main() {
    let registry = Registry::builder()
        .tool(SyncSelfCtxValue { factor: 2 })
        .tool(SyncSelfCtxResult)
        .tool(SyncSelfValue)
        .tool(SyncSelfResult)
        .tool(SyncCtxValue)
        .tool(SyncCtxResult)
        .tool(SyncValue)
        .tool(SyncResult)
        .tool(AsyncSelfCtxValue)
        .tool(AsyncSelfCtxResult)
        .tool(AsyncSelfValue)
        .tool(AsyncSelfResult)
        .tool(AsyncCtxValue)
        .tool(AsyncCtxResult)
        .tool(AsyncValue)
        .tool(AsyncResult)
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let names: Vec<String> = registry.definitions().map(|d| d.name.clone()).collect();
        assert_eq!(names.len(), 16);
        for name in &names {
            let out = registry
                .call(ToolCall::new("c", name, r#"{"n": 21}"#))
                .await;
            assert!(!out.is_error(), "{name}: {:?}", out.content());
            assert_eq!(out.value().unwrap()["n"], 42, "{name}");
            assert_eq!(out.content(), [ContentBlock::text("42")], "{name}");
        }

        // `Err(String)` becomes a TOOL_FAILED error with its text.
        let out = registry
            .call(ToolCall::new("c", "sync_self_result", r#"{"n": -1}"#))
            .await;
        assert_eq!(out.error().unwrap().code.as_str(), "TOOL_FAILED");
        assert_eq!(out.error().unwrap().message, "-1 is negative");

        // `Err(ToolError)` keeps its code: it is not wrapped again.
        let out = registry
            .call(ToolCall::new("c", "async_self_ctx_result", r#"{"n": 13}"#))
            .await;
        assert_eq!(out.error().unwrap().code.as_str(), "UNLUCKY");
        assert_eq!(out.error().unwrap().message, "13 is unlucky");
    });
}
