//! [`Caller`]: who makes a call, as the transport that received it verified
//! it (W3 in `docs/contract.md`).
//!
//! A transport that authenticates its clients (the MCP server's bearer
//! authentication) hands the verified identity to the registry with the call
//! ([`CallOptions::with_caller`](crate::CallOptions::with_caller)); the
//! pre-execute policies see it ([`PreExecute::caller`](crate::PreExecute::caller)),
//! and so does the tool ([`ToolContext::caller`](crate::ToolContext::caller)).
//! A program's nested calls carry their parent's caller, so a tool that calls
//! another cannot reach what its caller may not.
//!
//! The registry only carries the identity: it never checks it, and a call
//! made without one (the command line, a program holding the registry,
//! stdio) has none. Deciding what a caller may do is a policy's job.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// A verified identity: a subject (who), the scopes it was granted, and any
/// other claims as JSON (a token's payload, an introspection answer).
///
/// Cheap to clone (an `Arc` inside).
///
/// ```
/// use toolprism::{Caller, PreDecision, PreExecute, Registry};
///
/// let alice = Caller::new("alice").with_scopes(["tools:write"]);
/// assert_eq!(alice.subject(), "alice");
/// assert!(alice.has_scope("tools:write"));
///
/// // A policy that lets only callers holding `tools:write` run `write`.
/// let writers_only = |call: &PreExecute<'_>| match call.caller {
///     _ if call.tool != "write" => PreDecision::Allow,
///     Some(caller) if caller.has_scope("tools:write") => PreDecision::Allow,
///     Some(caller) => PreDecision::deny(format!("{} may not write files", caller.subject())),
///     None => PreDecision::deny("writing files needs a verified caller"),
/// };
/// let registry = Registry::builder().pre_execute(writers_only).build().unwrap();
/// # let _ = registry;
/// ```
///
/// A tool reads it from its context:
///
/// ```
/// # use toolprism::{ContentBlock, NoMeta, Tool, ToolContext, ToolError, ToolInfo};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, Clone)] struct A {}
/// struct Whoami;
/// impl Tool for Whoami {
/// #   type Args = A; type Value = String; type Meta = NoMeta;
/// #   const INFO: ToolInfo = ToolInfo::new("whoami", "Who calls.");
///     // …
///     async fn execute(&self, _: A, cx: &ToolContext<'_>) -> Result<String, ToolError> {
///         Ok(cx.caller().map_or("nobody", |c| c.subject()).to_owned())
///     }
/// #   fn render(_: &A, v: &String) -> Vec<ContentBlock> { vec![ContentBlock::text(v)] }
/// }
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = toolprism::Registry::builder().tool(Whoami).build().unwrap();
/// let options = toolprism::CallOptions::new().with_caller(toolprism::Caller::new("alice"));
/// let out = registry.call_with(toolprism::ToolCall::new("1", "whoami", ""), &options).await;
/// assert_eq!(out.value().unwrap(), "alice");
/// # });
/// ```
#[derive(Clone, PartialEq)]
pub struct Caller(Arc<Identity>);

#[derive(Clone, PartialEq)]
struct Identity {
    subject: String,
    scopes: Vec<String>,
    claims: Value,
}

impl Caller {
    /// A caller known by `subject` (a user id, a client id, a token's
    /// `sub`), with no scopes and no claims.
    pub fn new(subject: impl Into<String>) -> Self {
        Caller(Arc::new(Identity {
            subject: subject.into(),
            scopes: Vec::new(),
            claims: Value::Null,
        }))
    }

    /// The same caller with these scopes (replacing any it had).
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        Arc::make_mut(&mut self.0).scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The same caller with these claims (replacing any it had): whatever
    /// else the verifier learned, for policies to read.
    ///
    /// ```
    /// let caller = toolprism::Caller::new("ci").with_claims(serde_json::json!({"team": "infra"}));
    /// assert_eq!(caller.claims()["team"], "infra");
    /// ```
    pub fn with_claims(mut self, claims: Value) -> Self {
        Arc::make_mut(&mut self.0).claims = claims;
        self
    }

    /// Who the caller is.
    pub fn subject(&self) -> &str {
        &self.0.subject
    }

    /// The scopes granted to the caller.
    pub fn scopes(&self) -> &[String] {
        &self.0.scopes
    }

    /// Whether the caller was granted `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.0.scopes.iter().any(|s| s == scope)
    }

    /// The claims, `null` when none were given.
    pub fn claims(&self) -> &Value {
        &self.0.claims
    }
}

/// The subject and scopes; the claims only by their keys (they may hold
/// personal data).
impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = match &self.0.claims {
            Value::Object(map) => map.keys().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        f.debug_struct("Caller")
            .field("subject", &self.0.subject)
            .field("scopes", &self.0.scopes)
            .field("claims", &keys)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::{CallCard, ResultCard};
    use crate::content::ContentBlock;
    use crate::context::ToolContext;
    use crate::definition::ToolInfo;
    use crate::error::{ErrorCode, ToolError};
    use crate::policy::{PreDecision, PreExecute};
    use crate::registry::{CallOptions, Registry, ToolCall};
    use crate::result::ToolResult;
    use crate::tool::{NoMeta, Tool};

    #[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
    struct NoArgs {}

    /// Its value is the subject it sees in its context, then the subject
    /// its nested call to `blocking_whoami` saw.
    struct Whoami;

    impl Tool for Whoami {
        type Args = NoArgs;
        type Value = Vec<String>;
        type Meta = NoMeta;
        const INFO: ToolInfo = ToolInfo::new("whoami", "The caller's subject.");

        async fn execute(&self, _: NoArgs, cx: &ToolContext<'_>) -> Result<Vec<String>, ToolError> {
            let mut seen = vec![cx.caller().map_or("-", Caller::subject).to_owned()];
            let inner = cx
                .call_nested("blocking_whoami", serde_json::json!({}))
                .await?;
            seen.push(inner.as_str().unwrap_or("?").to_owned());
            Ok(seen)
        }

        fn render(_: &NoArgs, value: &Vec<String>) -> Vec<ContentBlock> {
            vec![ContentBlock::text(value.join(","))]
        }

        fn present_call(_: &NoArgs) -> Option<CallCard> {
            None
        }

        fn present_result(_: &NoArgs, _: &ToolResult<NoMeta>) -> Option<ResultCard> {
            None
        }
    }

    /// The same, blocking.
    struct BlockingWhoami;

    impl Tool for BlockingWhoami {
        type Args = NoArgs;
        type Value = String;
        type Meta = NoMeta;
        const INFO: ToolInfo = ToolInfo {
            blocking: true,
            ..ToolInfo::new("blocking_whoami", "The caller's subject.")
        };

        fn execute_blocking(&self, _: NoArgs, cx: &ToolContext<'_>) -> Result<String, ToolError> {
            Ok(cx.caller().map_or("-", Caller::subject).to_owned())
        }

        async fn execute(&self, args: NoArgs, cx: &ToolContext<'_>) -> Result<String, ToolError> {
            self.execute_blocking(args, cx)
        }

        fn render(_: &NoArgs, value: &String) -> Vec<ContentBlock> {
            vec![ContentBlock::text(value)]
        }
    }

    /// Lets only `alice` run `whoami`, and only callers run
    /// `blocking_whoami`.
    fn only_alice(call: &PreExecute<'_>) -> PreDecision {
        match (call.tool, call.caller.map(Caller::subject)) {
            ("whoami", Some("alice")) => PreDecision::Allow,
            ("whoami", Some(other)) => PreDecision::deny(format!("{other} may not")),
            (_, None) => PreDecision::deny("no caller"),
            _ => PreDecision::Allow,
        }
    }

    fn registry() -> Registry {
        Registry::builder()
            .tool(Whoami)
            .tool(BlockingWhoami)
            .pre_execute(only_alice)
            .build()
            .unwrap()
    }

    fn run(registry: &Registry, tool: &str, caller: Option<Caller>) -> crate::ToolOutcome {
        let mut options = CallOptions::new();
        if let Some(caller) = caller {
            options = options.with_caller(caller);
        }
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
            .block_on(registry.call_with(ToolCall::new("c1", tool, "{}"), &options))
    }

    #[test]
    fn w3_a_policy_allows_one_caller_and_denies_another() {
        let registry = registry();
        let alice = run(&registry, "whoami", Some(Caller::new("alice")));
        assert!(!alice.is_error(), "{alice:?}");
        // The tool and its nested call saw alice: the nested call carried
        // her identity through its own policy check too (which denies a
        // call without a caller).
        assert_eq!(
            alice.value().unwrap(),
            &serde_json::json!(["alice", "alice"])
        );

        let bob = run(&registry, "whoami", Some(Caller::new("bob")));
        assert_eq!(bob.code(), Some(&ErrorCode::Denied));
        assert_eq!(bob.error().unwrap().message, "bob may not");

        let nobody = run(&registry, "whoami", None);
        assert_eq!(nobody.code(), Some(&ErrorCode::Denied));
        assert_eq!(nobody.error().unwrap().message, "no caller");
    }

    #[test]
    fn w3_a_blocking_tool_sees_its_caller() {
        let registry = registry();
        let out = run(&registry, "blocking_whoami", Some(Caller::new("carol")));
        assert_eq!(out.value().unwrap(), "carol");
    }

    #[test]
    fn scopes_claims_and_debug() {
        let caller = Caller::new("ci")
            .with_scopes(["a", "b"])
            .with_claims(serde_json::json!({"email": "ci@example.com"}));
        assert!(caller.has_scope("b") && !caller.has_scope("c"));
        assert_eq!(caller.scopes(), ["a", "b"]);
        let debug = format!("{caller:?}");
        assert!(
            debug.contains("\"ci\"") && debug.contains("\"email\""),
            "{debug}"
        );
        assert!(!debug.contains("ci@example.com"), "{debug}");
        assert_eq!(Caller::new("x").claims(), &Value::Null);
    }
}
