//! A bounded loop over a model you call: ask, run the calls it makes
//! through the registry, answer them, ask again.
//!
//! The loop speaks JSON, never HTTP: the [`Model`] you implement sends the
//! [`Request`]'s body with any client and returns the response's body as
//! received. Every call goes through the registry's pipeline (policy,
//! approval, arguments read losslessly, output schema, render, the session
//! log), so `replay` draws a loop's calls like any other.
//!
//! **Order.** A turn's calls run in the order the model made them, except
//! that consecutive calls to read-only tools (`#[tool(read_only)]`) run
//! together, concurrently; the results are answered in the calls' order.
//!
//! **Bounds.** At most [`DEFAULT_MAX_TURNS`] model requests unless set,
//! each waited for at most [`DEFAULT_TURN_TIMEOUT`] unless set; the
//! options' cancellation token ends the loop at the next step (a running
//! tool sees the same token and ends `ABORTED`).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;
use toolprism_core::{CallOptions, Registry, ToolCall, ToolOutcome};

use crate::dialect::{self, Definitions};
use crate::turn::{ModelCall, Stop, TurnError};
use crate::wire::{Accepts, Provider};

/// The error a [`Model`] returns: any error, boxed.
pub type ModelError = Box<dyn std::error::Error + Send + Sync>;

/// The model a loop asks: one request's body in, the response's body out.
///
/// Implement it with any HTTP client. The body is JSON text in the
/// provider's request shape ([`Request::body`]); return the response body
/// as received, and an error for a failed request (the loop ends with it,
/// keeping the conversation so far).
///
/// ```
/// use toolprism::provider::{Model, ModelError, Request};
///
/// /// A model that always answers "done" (a real one posts `request.body(...)`).
/// struct Done;
///
/// impl Model for Done {
///     async fn respond(&self, request: &Request) -> Result<String, ModelError> {
///         let _body = request.body(serde_json::json!({"model": "claude-sonnet-4-5", "max_tokens": 1024}))?;
///         Ok(r#"{"type":"message","role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"done"}]}"#.into())
///     }
/// }
/// ```
pub trait Model: Send + Sync {
    /// Sends the request and returns the response's body.
    fn respond(&self, request: &Request)
    -> impl Future<Output = Result<String, ModelError>> + Send;
}

/// One request of the loop: the tool definitions and the conversation so
/// far, in the provider's shape.
#[derive(Debug)]
pub struct Request {
    provider: Provider,
    turn: usize,
    tools: std::sync::Arc<Tools>,
    messages: Vec<Box<RawValue>>,
}

/// The request's `tools` field, and its JSON text: projected once per
/// agent, as the registry's definitions are fixed.
#[derive(Debug)]
struct Tools {
    json: Value,
    text: String,
}

impl Request {
    /// The provider the request is for.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The turn this request asks for, from 0.
    pub fn turn(&self) -> usize {
        self.turn
    }

    /// The request's `tools` field: the registry's definitions in the
    /// provider's dialect (Gemini's wrapped in one `functionDeclarations`
    /// tool).
    pub fn tools(&self) -> &Value {
        &self.tools.json
    }

    /// The conversation so far: `messages` (Anthropic, Chat), `input`
    /// items (Responses) or `contents` (Gemini), each verbatim.
    pub fn messages(&self) -> &[Box<RawValue>] {
        &self.messages
    }

    /// The request body: `base` (an object with the model, the token limit,
    /// a system prompt, whatever the provider takes) with `tools` and the
    /// conversation's field set. The conversation is written verbatim,
    /// never re-read. A `base` that is not an object is an error.
    ///
    /// ```
    /// # use toolprism::provider::{Agent, Provider};
    /// # let registry = toolprism::Registry::builder().build().unwrap();
    /// let agent = Agent::new(&registry, Provider::OpenAiChat);
    /// let request = agent.request(vec![Provider::OpenAiChat.user_message("hi")]);
    /// let body = request.body(serde_json::json!({"model": "gpt-5", "messages": "replaced"})).unwrap();
    /// assert_eq!(body, r#"{"model":"gpt-5","tools":[],"messages":[{"content":"hi","role":"user"}]}"#);
    /// ```
    pub fn body(&self, base: Value) -> Result<String, ModelError> {
        let Value::Object(mut base) = base else {
            return Err(format!("the request body must be a JSON object, not {base}").into());
        };
        let field = self.provider.messages_field();
        base.remove(field);
        base.remove("tools");
        let mut out = serde_json::to_string(&base)?;
        out.pop(); // the closing brace
        if !base.is_empty() {
            out.push(',');
        }
        out.push_str("\"tools\":");
        out.push_str(&self.tools.text);
        out.push_str(&format!(",\"{field}\":["));
        for (i, message) in self.messages.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(message.get());
        }
        out.push_str("]}");
        Ok(out)
    }
}

/// How a loop ended, when it ended well.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The model made no call: its last turn is the answer (see
    /// [`Run::stop`] for why it ended: answered, cut by the token limit,
    /// refused).
    Answered,
    /// The turn limit was reached while the model was still calling; its
    /// last calls were run and answered, so the conversation can go on.
    TurnLimit,
    /// The options' cancellation token fired.
    Cancelled,
}

/// One call of a loop and how it ended.
#[derive(Debug)]
#[non_exhaustive]
pub struct LoopCall {
    /// The turn it was made in, from 0.
    pub turn: usize,
    /// The call as the model made it.
    pub call: ModelCall,
    /// Its outcome, as the registry returned it (the value included).
    pub outcome: ToolOutcome,
}

/// What a loop did.
#[derive(Debug)]
pub struct Run {
    messages: Vec<Box<RawValue>>,
    turns: usize,
    calls: Vec<LoopCall>,
    end: End,
    stop: Option<Stop>,
    text: String,
}

impl Run {
    /// The whole conversation, ready to go on with (append a user message
    /// and pass it to [`Agent::run`] again).
    pub fn messages(&self) -> &[Box<RawValue>] {
        &self.messages
    }

    /// Takes the conversation.
    pub fn into_messages(self) -> Vec<Box<RawValue>> {
        self.messages
    }

    /// Takes every call, in order, with its outcome.
    pub fn into_calls(self) -> Vec<LoopCall> {
        self.calls
    }

    /// The model requests made.
    pub fn turns(&self) -> usize {
        self.turns
    }

    /// Every call, in order, with its outcome.
    pub fn calls(&self) -> &[LoopCall] {
        &self.calls
    }

    /// How the loop ended.
    pub fn end(&self) -> &End {
        &self.end
    }

    /// Why the model's last turn ended, when one came.
    pub fn stop(&self) -> Option<&Stop> {
        self.stop.as_ref()
    }

    /// The text of the model's last turn.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// Why a loop could not go on.
#[non_exhaustive]
#[derive(Debug)]
pub enum AgentErrorKind {
    /// The model's request failed.
    Model(ModelError),
    /// The response is not the provider's.
    Response(TurnError),
    /// No response came in time.
    Timeout(Duration),
}

/// A loop that stopped on an error, with what it had done: the
/// conversation up to the failed request (every call made was answered),
/// so nothing is lost and it can be retried.
#[derive(Debug)]
pub struct AgentError {
    kind: AgentErrorKind,
    run: Box<Run>,
}

impl AgentError {
    /// What went wrong.
    pub fn kind(&self) -> &AgentErrorKind {
        &self.kind
    }

    /// The run up to the failure.
    pub fn run(&self) -> &Run {
        &self.run
    }

    /// Takes the run up to the failure.
    pub fn into_run(self) -> Run {
        *self.run
    }
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let turn = self.run.turns;
        match &self.kind {
            AgentErrorKind::Model(e) => write!(f, "turn {turn}: the model's request failed: {e}"),
            AgentErrorKind::Response(e) => write!(f, "turn {turn}: {e}"),
            AgentErrorKind::Timeout(d) => write!(
                f,
                "turn {turn}: no response from the model in {} s (Agent::with_turn_timeout)",
                d.as_secs_f64()
            ),
        }
    }
}

impl std::error::Error for AgentError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            AgentErrorKind::Model(e) => Some(&**e),
            AgentErrorKind::Response(e) => Some(e),
            AgentErrorKind::Timeout(_) => None,
        }
    }
}

/// The model requests a loop makes unless set: 10.
pub const DEFAULT_MAX_TURNS: usize = 10;
/// How long a loop waits for one response unless set: 10 minutes.
pub const DEFAULT_TURN_TIMEOUT: Duration = Duration::from_secs(600);

/// A registry's tools in a loop with one provider's model.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use toolprism::provider::{Agent, End, Model, ModelError, Provider, Request};
///
/// /// Calls `missing` once, then answers.
/// struct Scripted;
/// impl Model for Scripted {
///     async fn respond(&self, request: &Request) -> Result<String, ModelError> {
///         Ok(if request.turn() == 0 {
///             r#"{"choices":[{"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
///                "tool_calls":[{"id":"call_1","type":"function","function":{"name":"missing","arguments":"{}"}}]}}]}"#
///         } else {
///             r#"{"choices":[{"finish_reason":"stop","message":{"role":"assistant","content":"no such tool"}}]}"#
///         }.into())
///     }
/// }
///
/// let registry = toolprism::Registry::builder().build().unwrap();
/// let run = Agent::new(&registry, Provider::OpenAiChat)
///     .run(&Scripted, vec![Provider::OpenAiChat.user_message("go")])
///     .await
///     .unwrap();
/// assert_eq!(run.end(), &End::Answered);
/// assert_eq!(run.turns(), 2);
/// assert_eq!(run.calls()[0].outcome.code().unwrap(), "UNKNOWN_TOOL");
/// assert_eq!(run.text(), "no such tool");
/// // user, assistant (echoed), tool, assistant.
/// assert_eq!(run.messages().len(), 4);
/// # });
/// ```
#[derive(Clone)]
pub struct Agent {
    registry: Registry,
    provider: Provider,
    strict: bool,
    accepts: Accepts,
    max_turns: usize,
    turn_timeout: Duration,
    options: CallOptions,
    /// The projected definitions, made on the first request.
    tools: std::sync::OnceLock<std::sync::Arc<Tools>>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("provider", &self.provider)
            .field("strict", &self.strict)
            .field("accepts", &self.accepts)
            .field("max_turns", &self.max_turns)
            .field("turn_timeout", &self.turn_timeout)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// A loop over `registry`'s tools, speaking `provider`'s wire format.
    pub fn new(registry: &Registry, provider: Provider) -> Self {
        Agent {
            registry: registry.clone(),
            provider,
            strict: false,
            accepts: provider.accepts(),
            max_turns: DEFAULT_MAX_TURNS,
            turn_timeout: DEFAULT_TURN_TIMEOUT,
            options: CallOptions::new(),
            tools: std::sync::OnceLock::new(),
        }
    }

    /// Sends the definitions in the provider's strict dialect (Anthropic
    /// strict tool use); the arguments are read back through the same
    /// dialect, which restores what strict mode made every schema say.
    /// OpenAI's dialects are strict wherever they can be, always.
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self.tools = std::sync::OnceLock::new();
        self
    }

    /// At most `turns` model requests (at least 1).
    pub fn with_max_turns(mut self, turns: usize) -> Self {
        self.max_turns = turns.max(1);
        self
    }

    /// How long one response may take.
    pub fn with_turn_timeout(mut self, timeout: Duration) -> Self {
        self.turn_timeout = timeout;
        self
    }

    /// What the provider's results can carry, instead of its default table
    /// (an older Gemini model takes no media in a function response).
    pub fn with_accepts(mut self, accepts: Accepts) -> Self {
        self.accepts = accepts;
        self
    }

    /// The options every call runs with: a session log, the client that
    /// answers approvals, forms and progress, the verified caller, a
    /// cancellation token (which also ends the loop). The dialect is the
    /// loop's own.
    pub fn with_options(mut self, options: CallOptions) -> Self {
        self.options = options;
        self
    }

    /// The definitions the loop sends, with the dialect's notes and the
    /// tools it could not express (left out of every request).
    pub fn definitions(&self) -> Definitions {
        dialect::definitions(self.dialect(), self.registry.definitions())
    }

    fn dialect(&self) -> dialect::Dialect {
        self.provider.dialect(self.strict)
    }

    fn tools(&self) -> std::sync::Arc<Tools> {
        std::sync::Arc::clone(self.tools.get_or_init(|| {
            let json = self.project_tools();
            let text = json.to_string();
            std::sync::Arc::new(Tools { json, text })
        }))
    }

    fn project_tools(&self) -> Value {
        let tools = self.definitions().json();
        match self.provider {
            Provider::Gemini => match tools.as_array().map(Vec::len) {
                Some(0) | None => Value::Array(Vec::new()),
                Some(_) => serde_json::json!([{"functionDeclarations": tools}]),
            },
            _ => tools,
        }
    }

    /// The first request of a conversation (what [`run`](Self::run) sends
    /// first), to look at or send by hand.
    pub fn request(&self, messages: Vec<Box<RawValue>>) -> Request {
        Request {
            provider: self.provider,
            turn: 0,
            tools: self.tools(),
            messages,
        }
    }

    /// Runs the loop from `messages` (a conversation in the provider's
    /// shape, e.g. one [`Provider::user_message`]) until the model makes no
    /// call, the turn limit, or cancellation.
    pub async fn run<M: Model>(
        &self,
        model: &M,
        messages: Vec<Box<RawValue>>,
    ) -> Result<Run, AgentError> {
        let mut request = self.request(messages);
        let mut run_calls = Vec::new();
        let cancel = self.options.cancel().cloned();
        let mut last: Option<(Stop, String)> = None;
        let options = self.options.clone().with_dialect(self.dialect());
        let finish = |request: Request, calls, end, last: Option<(Stop, String)>| {
            let (stop, text) = last.map_or((None, String::new()), |(s, t)| (Some(s), t));
            Run {
                turns: request.turn,
                messages: request.messages,
                calls,
                end,
                stop,
                text,
            }
        };
        loop {
            if request.turn >= self.max_turns {
                return Ok(finish(request, run_calls, End::TurnLimit, last));
            }
            if cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                return Ok(finish(request, run_calls, End::Cancelled, last));
            }
            let asked = tokio::time::timeout(self.turn_timeout, model.respond(&request));
            let answer = match &cancel {
                Some(token) => tokio::select! {
                    answer = asked => answer,
                    () = token.cancelled() => return Ok(finish(request, run_calls, End::Cancelled, last)),
                },
                None => asked.await,
            };
            let body = match answer {
                Ok(Ok(body)) => body,
                Ok(Err(e)) => {
                    return Err(self.failed(
                        AgentErrorKind::Model(e),
                        finish(request, run_calls, End::Answered, last),
                    ));
                }
                Err(_) => {
                    let kind = AgentErrorKind::Timeout(self.turn_timeout);
                    return Err(self.failed(kind, finish(request, run_calls, End::Answered, last)));
                }
            };
            let turn = match self.provider.read_turn(&body, request.turn) {
                Ok(turn) => turn,
                Err(e) => {
                    return Err(self.failed(
                        AgentErrorKind::Response(e),
                        finish(request, run_calls, End::Answered, last),
                    ));
                }
            };
            drop(body);
            let number = request.turn;
            request.turn += 1;
            request.messages.extend(turn.echo);
            last = Some((turn.stop.clone(), turn.text));
            if turn.calls.is_empty() {
                if turn.stop == Stop::Paused {
                    continue;
                }
                return Ok(finish(request, run_calls, End::Answered, last));
            }
            let outcomes = self.call_all(&turn.calls, &options).await;
            let results: Vec<(ModelCall, ToolOutcome)> =
                turn.calls.into_iter().zip(outcomes).collect();
            request
                .messages
                .extend(self.provider.write_results(&results, self.accepts));
            run_calls.extend(results.into_iter().map(|(call, outcome)| LoopCall {
                turn: number,
                call,
                outcome,
            }));
        }
    }

    fn failed(&self, kind: AgentErrorKind, run: Run) -> AgentError {
        AgentError {
            kind,
            run: Box::new(run),
        }
    }

    fn read_only(&self, name: &str) -> bool {
        self.registry
            .definition(name)
            .is_some_and(|d| d.annotations.read_only)
    }

    /// Runs a turn's calls: consecutive read-only ones together, the
    /// others one at a time, in order.
    async fn call_all(&self, calls: &[ModelCall], options: &CallOptions) -> Vec<ToolOutcome> {
        let mut outcomes = Vec::with_capacity(calls.len());
        let mut i = 0;
        while i < calls.len() {
            let mut j = i + 1;
            if self.read_only(&calls[i].name) {
                while j < calls.len() && self.read_only(&calls[j].name) {
                    j += 1;
                }
            }
            let group: Vec<_> = calls[i..j]
                .iter()
                .map(|c| Box::pin(self.call_one(c, options)))
                .collect();
            outcomes.extend(join_all(group).await);
            i = j;
        }
        outcomes
    }

    fn call_one<'a>(
        &'a self,
        call: &ModelCall,
        options: &'a CallOptions,
    ) -> impl Future<Output = ToolOutcome> + Send + 'a {
        let call = ToolCall::new(call.id.clone(), call.name.clone(), call.arguments.clone());
        self.registry.call_with(call, options)
    }
}

/// Polls every future until all are done; the outputs in their order.
async fn join_all<F: Future + Unpin>(futures: Vec<F>) -> Vec<F::Output> {
    let mut slots: Vec<(F, Option<F::Output>)> = futures.into_iter().map(|f| (f, None)).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, out) in slots.iter_mut() {
            if out.is_none() {
                match Pin::new(future).poll(cx) {
                    Poll::Ready(v) => *out = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    slots
        .into_iter()
        .map(|(_, out)| out.expect("every future finished"))
        .collect()
}
