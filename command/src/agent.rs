//! `agent`: the registry's tools in a loop with a model API, from the
//! command line, and [`HttpModel`], the [`Model`] it posts with.
//!
//! Each call the model makes runs through the pipeline (and the session
//! log, with `--log`) and is drawn as `call` draws it; the model's answer
//! ends the output. The API key is read from an environment variable
//! (`--api-key-env`) and sent only as the provider's header: never
//! printed, never logged.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolprism_core::log::SessionLog;
use toolprism_core::{CallOptions, Registry};
use toolprism_provider::{Agent, AgentErrorKind, End, Model, ModelError, Provider, Request};

use crate::exit::{Failure, Status};
use crate::prompt::Terminal;
use toolprism_core::client::LogLevel;

/// The most of a response body `HttpModel` reads: 32 MiB.
const MAX_RESPONSE: u64 = 32 << 20;

/// A model API over HTTP(S): the request body posted as JSON to one URL
/// with fixed headers, the response body returned as received.
///
/// `https://` needs the feature `agent-https` (rustls, the platform's
/// webpki roots); `http://` (a local server, a proxy) works without it.
/// A status other than 2xx is an error quoting the body's start.
///
/// ```no_run
/// use toolprism::cli::agent::HttpModel;
/// use toolprism::provider::Provider;
/// let model = HttpModel::new(Provider::Anthropic, "https://api.anthropic.com/v1/messages")
///     .with_header("x-api-key", std::env::var("ANTHROPIC_API_KEY").unwrap())
///     .with_header("anthropic-version", "2023-06-01")
///     .with_body(serde_json::json!({"model": "claude-sonnet-4-5", "max_tokens": 4096}));
/// # let _ = model;
/// ```
#[derive(Clone)]
pub struct HttpModel {
    url: String,
    headers: Vec<(String, String)>,
    body: Value,
    agent: ureq::Agent,
}

impl std::fmt::Debug for HttpModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers' values hold the API key: only their names are shown.
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("HttpModel")
            .field("url", &self.url)
            .field("headers", &names)
            .field("body", &self.body)
            .finish_non_exhaustive()
    }
}

impl HttpModel {
    /// Posts to `url`; the body's base is `{}` until [`with_body`](Self::with_body).
    pub fn new(provider: Provider, url: impl Into<String>) -> Self {
        let _ = provider;
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("toolprism-agent/", env!("CARGO_PKG_VERSION")))
            .build();
        HttpModel {
            url: url.into(),
            headers: Vec::new(),
            body: json!({}),
            agent: ureq::Agent::new_with_config(config),
        }
    }

    /// Sends this header with every request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The body every request starts from (the model, the token limit, a
    /// system prompt): [`Request::body`] sets the tools and the
    /// conversation in it.
    pub fn with_body(mut self, body: Value) -> Self {
        self.body = body;
        self
    }

    fn post(&self, body: String) -> Result<String, ModelError> {
        let mut request = self.agent.post(&self.url).content_type("application/json");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let mut response = request
            .send(body)
            .map_err(|e| format!("POST {}: {e}", self.url))?;
        let status = response.status().as_u16();
        let mut text = String::new();
        response
            .body_mut()
            .as_reader()
            .take(MAX_RESPONSE)
            .read_to_string(&mut text)
            .map_err(|e| {
                format!(
                    "POST {}: the response body could not be read: {e}",
                    self.url
                )
            })?;
        if !(200..300).contains(&status) {
            let mut end = text.len().min(500);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            return Err(format!("POST {}: status {status}: {}", self.url, &text[..end]).into());
        }
        Ok(text)
    }
}

impl Model for HttpModel {
    async fn respond(&self, request: &Request) -> Result<String, ModelError> {
        let body = request.body(self.body.clone())?;
        let model = self.clone();
        tokio::task::spawn_blocking(move || model.post(body))
            .await
            .map_err(|e| format!("the request's thread failed: {e}"))?
    }
}

/// `agent`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct AgentArgs {
    /// What to ask.
    #[arg(value_name = "PROMPT")]
    prompt: String,
    /// The model API: anthropic (Messages), openai-chat (Chat Completions),
    /// openai-responses (Responses) or gemini (generateContent).
    #[arg(long, value_name = "PROVIDER", value_parser = providers())]
    provider: Provider,
    /// The model's name (in the body; for gemini, in the URL).
    #[arg(long, value_name = "NAME")]
    model: String,
    /// The endpoint [default: the provider's own: api.anthropic.com/v1/messages,
    /// api.openai.com/v1/chat/completions, api.openai.com/v1/responses,
    /// generativelanguage.googleapis.com/v1beta/models/MODEL:generateContent].
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The environment variable holding the API key [default: ANTHROPIC_API_KEY,
    /// OPENAI_API_KEY or GEMINI_API_KEY]; no key is sent when it is unset.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// The system prompt.
    #[arg(long, value_name = "TEXT")]
    system: Option<String>,
    /// The most tokens one turn may write.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    max_tokens: u32,
    /// The most model requests.
    #[arg(long, value_name = "N", default_value_t = toolprism_provider::agent::DEFAULT_MAX_TURNS)]
    max_turns: usize,
    /// How long one response may take, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    turn_timeout: u64,
    /// Send the definitions in the provider's strict dialect (Anthropic).
    #[arg(long)]
    strict: bool,
    /// Append every call and result to this session log (`replay` draws it).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Print the whole conversation as one JSON object ({provider, end,
    /// turns, messages}) instead of the cards.
    #[arg(long)]
    json: bool,
    /// Approve every call that asks for approval, without a prompt.
    #[arg(long)]
    yes: bool,
}

fn providers() -> impl clap::builder::TypedValueParser<Value = Provider> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Provider::ALL.map(Provider::name))
        .map(|name| name.parse::<Provider>().expect("a listed provider"))
}

/// The provider's own endpoint.
fn default_url(provider: Provider, model: &str) -> String {
    match provider {
        Provider::Anthropic => "https://api.anthropic.com/v1/messages".into(),
        Provider::OpenAiChat => "https://api.openai.com/v1/chat/completions".into(),
        Provider::OpenAiResponses => "https://api.openai.com/v1/responses".into(),
        Provider::Gemini => format!(
            "https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent"
        ),
        _ => String::new(),
    }
}

/// The request body's base, each provider's way.
fn base_body(args: &AgentArgs) -> Value {
    let system = args.system.as_deref();
    match args.provider {
        Provider::Anthropic => {
            let mut body = json!({"model": args.model, "max_tokens": args.max_tokens});
            if let Some(system) = system {
                body["system"] = system.into();
            }
            body
        }
        Provider::OpenAiChat => {
            json!({"model": args.model, "max_completion_tokens": args.max_tokens})
        }
        Provider::OpenAiResponses => {
            let mut body =
                json!({"model": args.model, "max_output_tokens": args.max_tokens, "store": false});
            if let Some(system) = system {
                body["instructions"] = system.into();
            }
            body
        }
        _ => {
            let mut body = json!({"generationConfig": {"maxOutputTokens": args.max_tokens}});
            if let Some(system) = system {
                body["systemInstruction"] = json!({"parts": [{"text": system}]});
            }
            body
        }
    }
}

/// The model, with the provider's key header.
fn http_model(args: &AgentArgs) -> Result<HttpModel, Failure> {
    let url = args
        .url
        .clone()
        .unwrap_or_else(|| default_url(args.provider, &args.model));
    if url.starts_with("https://") && !cfg!(feature = "agent-https") {
        return Err(Failure::Usage(format!(
            "--url {url}: this build has no TLS; build with toolprism's feature `agent-https`, or use an http:// endpoint (a local server or proxy)"
        )));
    }
    let var = args.api_key_env.clone().unwrap_or_else(|| {
        match args.provider {
            Provider::Anthropic => "ANTHROPIC_API_KEY",
            Provider::Gemini => "GEMINI_API_KEY",
            _ => "OPENAI_API_KEY",
        }
        .to_owned()
    });
    let mut model = HttpModel::new(args.provider, url).with_body(base_body(args));
    if args.provider == Provider::Anthropic {
        model = model.with_header("anthropic-version", "2023-06-01");
    }
    if let Ok(key) = std::env::var(&var) {
        model = match args.provider {
            Provider::Anthropic => model.with_header("x-api-key", key),
            Provider::Gemini => model.with_header("x-goog-api-key", key),
            _ => model.with_header("authorization", format!("Bearer {key}")),
        };
    }
    Ok(model)
}

pub(crate) fn run(
    registry: &Registry,
    args: AgentArgs,
    runtime: &tokio::runtime::Runtime,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let model = http_model(&args)?;
    let mut options =
        CallOptions::new().with_client(Arc::new(Terminal::new(LogLevel::Info, args.yes, None)));
    if let Some(path) = &args.log {
        let log = SessionLog::create(path)
            .map_err(|e| Failure::Usage(format!("--log {}: {e}", path.display())))?;
        options = options.with_log(log);
    }
    let agent = Agent::new(registry, args.provider)
        .with_strict(args.strict)
        .with_max_turns(args.max_turns)
        .with_turn_timeout(Duration::from_secs(args.turn_timeout))
        .with_options(options);
    for refused in agent.definitions().refused() {
        eprintln!("note: {refused} (left out of the requests)");
    }
    let mut messages = Vec::new();
    if let (Provider::OpenAiChat, Some(system)) = (args.provider, &args.system) {
        let system = json!({"role": "system", "content": system});
        messages.push(serde_json::value::to_raw_value(&system).map_err(io::Error::from)?);
    }
    messages.push(args.provider.user_message(&args.prompt));
    let (run, error) = match runtime.block_on(agent.run(&model, messages)) {
        Ok(run) => (run, None),
        Err(e) => {
            let message = e.to_string();
            let timeout = matches!(e.kind(), AgentErrorKind::Timeout(_));
            (e.into_run(), Some((message, timeout)))
        }
    };
    if args.json {
        let messages: Vec<&serde_json::value::RawValue> =
            run.messages().iter().map(|m| &**m).collect();
        let end = match (&error, run.end()) {
            (Some(_), _) => "error",
            (None, End::Answered) => "answered",
            (None, End::TurnLimit) => "turn-limit",
            (None, _) => "cancelled",
        };
        let object = json!({"provider": args.provider.name(), "end": end, "turns": run.turns(), "messages": messages});
        serde_json::to_writer(&mut *out, &object).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        for call in run.calls() {
            writeln!(out, "turn {} · {}", call.turn + 1, call.call.id)?;
            crate::call::show(
                out,
                registry,
                &call.call.name,
                &call.call.arguments,
                &call.outcome,
                call.outcome.warnings(),
            )?;
        }
        if !run.text().is_empty() {
            writeln!(out, "{}", run.text())?;
        }
    }
    if let Some((message, _)) = error {
        return Err(Failure::Failed(message));
    }
    Ok(match run.end() {
        End::Answered => Status::Ok,
        End::TurnLimit => {
            eprintln!(
                "the model was still calling tools after {} turns (--max-turns)",
                run.turns()
            );
            Status::Failed
        }
        _ => Status::Failed,
    })
}
