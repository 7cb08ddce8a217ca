//! The client the official MCP conformance suite runs for its client
//! scenarios (`conformance client --command <this> --scenario S`), built on
//! toolprism's import only: `Import::http` (with `OAuth` for the `auth/`
//! scenarios), its tools registered in a `Registry`, each called through
//! the registry's pipeline with a client that answers forms.
//!
//! The suite starts a server for the scenario and runs this program with
//! its URL as the last argument, the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO` and, for some, a JSON context in
//! `MCP_CONFORMANCE_CONTEXT` (the credentials the scenario registered).
//! What this program does for every scenario is what a hub does: connect
//! (the OAuth flow when the server asks for it), list the tools, call each
//! one. Nothing here knows a scenario's expected answer.
//!
//! The person of a login is played by [`Headless`]: it opens the
//! authorization URL the way a browser would, following the authorization
//! server's redirect to the loopback listener toolprism started.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolprism::client::{Client, ClientFuture, ElicitRequest, ElicitResponse};
use toolprism::mcp::import::{Import, OAuth};
use toolprism::{CallOptions, Registry, ToolCall};

/// The client ID metadata document of this client: the URL the suite's
/// authorization servers expect for one (they do not fetch it).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Opens the authorization URL as a browser does: a GET that follows
/// redirects, so the authorization server's answer reaches toolprism's
/// loopback listener. On a thread of its own, as a browser is a process
/// of its own.
struct Headless;

impl toolprism::mcp::import::Browser for Headless {
    fn open(&self, url: &str) -> Result<(), String> {
        let url = url.to_owned();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the browser");
            runtime.block_on(async {
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::limited(10))
                    .build()
                    .expect("an HTTP client");
                if let Err(e) = client.get(&url).send().await {
                    eprintln!("browser: {e}");
                }
            });
        });
        Ok(())
    }
}

/// The user of the forms: accepts each with its fields' defaults (the
/// schema's `default`s), as a person pressing Enter on every field would.
struct Defaults;

impl Client for Defaults {
    fn elicit(&self, request: ElicitRequest) -> ClientFuture<'_, ElicitResponse> {
        let mut answer = Map::new();
        if let Some(properties) = request.requested_schema["properties"].as_object() {
            for (name, field) in properties {
                if let Some(default) = field.get("default") {
                    answer.insert(name.clone(), default.clone());
                }
            }
        }
        Box::pin(async move { Ok(ElicitResponse::Accept(Value::Object(answer))) })
    }
}

/// Arguments for a tool: the schema's defaults and examples, else a value
/// of each required property's type.
fn arguments(schema: &Value) -> Value {
    let mut out = Map::new();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if let Some(properties) = schema["properties"].as_object() {
        for (name, field) in properties {
            let value = field.get("default").cloned().or_else(|| {
                required
                    .contains(&name.as_str())
                    .then(|| match field["type"].as_str() {
                        Some("number" | "integer") => json!(2),
                        Some("boolean") => json!(true),
                        Some("array") => json!([]),
                        Some("object") => json!({}),
                        _ => json!("conformance"),
                    })
            });
            if let Some(value) = value {
                out.insert(name.clone(), value);
            }
        }
    }
    Value::Object(out)
}

fn main() -> ExitCode {
    #[allow(deprecated)] // ring, as the library's own TLS (see src/import/http.rs)
    let _ = rustls::crypto::ring::default_provider().install_default();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: MCP_CONFORMANCE_SCENARIO=S conformance_client URL");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let tokens = tempfile::tempdir().expect("a directory for the tokens");
    let mut import = Import::http(&url)
        .name("conformance")
        .connect_timeout(Duration::from_secs(20))
        .timeout(Duration::from_secs(20));
    if scenario.starts_with("auth/") {
        let id = context["client_id"].as_str().map(str::to_owned);
        let secret = context["client_secret"].as_str().map(str::to_owned);
        let mut oauth = OAuth::new()
            .token_dir(tokens.path())
            .login_timeout(Duration::from_secs(15));
        oauth = match (scenario.as_str(), id, secret) {
            ("auth/client-credentials-basic", Some(id), Some(secret)) => {
                oauth.client_credentials(id, secret)
            }
            (_, Some(id), secret) => oauth.client(id, secret).browser(Headless),
            _ => oauth
                .client_name("toolprism-conformance")
                .client_metadata_url(CLIENT_METADATA_URL)
                .browser(Headless),
        };
        import = import.oauth(oauth);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let failed = runtime.block_on(async move {
        let imported = match import.connect().await {
            Ok(imported) => imported,
            Err(e) => {
                eprintln!("error: {e}");
                return true;
            }
        };
        let registry = match imported.register_in(Registry::builder()).build() {
            Ok(registry) => registry,
            Err(e) => {
                eprintln!("error: {e}");
                return true;
            }
        };
        let options = CallOptions::new().with_client(Arc::new(Defaults));
        let mut failed = false;
        let names: Vec<(String, Value)> = registry
            .definitions()
            .map(|d| (d.name.clone(), arguments(&d.input_schema)))
            .collect();
        for (i, (name, arguments)) in names.into_iter().enumerate() {
            let call = ToolCall::new(format!("c{i}"), &name, arguments.to_string());
            let outcome = registry.call_with(call, &options).await;
            let text = toolprism::content_text(outcome.content());
            println!("{name}: {text}");
            if outcome.is_error() {
                eprintln!("error: {name}: {:?}: {text}", outcome.code());
                failed = true;
            }
        }
        failed
    });
    drop(tokens);
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
