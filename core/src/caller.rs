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
