//! Running a call while serving what it sends its client (W8 in
//! `docs/contract.md`): log messages, progress reports and requests, all
//! from the request's own task.
//!
//! One task does it all, so every notification made before the call
//! returned has been handed to the transport before the response is (over
//! HTTP they travel on the request's own stream, which the response
//! closes), and every server-to-client request is sent from the request's
//! task, which is how rmcp's Streamable HTTP server knows which stream it
//! belongs on. A tool on another thread (a blocking tool) is served the
//! same way: its requests cross a channel to this task.

#![allow(deprecated)] // Logging, sampling: deprecated by SEP-2577, still in the protocol.

use std::future::Future;

use rmcp::RoleServer;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, CreateMessageRequest, ElicitRequest,
    ProgressNotificationParam, ProgressToken, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::client::{Ask, AskRequest, Event};
use crate::store::{Backend, Message, Relayed};
use toolprism_core::client::ClientError;
use toolprism_core::{Progress, ToolOutcome};

/// Where one request's share of a call goes.
pub(crate) struct Round<'a> {
    /// The request's client, or the replica relaying it.
    pub(crate) to: To<'a>,
    /// The request's `progressToken`; without one, progress goes nowhere.
    pub(crate) progress: Option<ProgressToken>,
    /// Before `2026-07-28`: send requests to the client as requests. From
    /// then on (where rmcp refuses them): stop at the first one, for an
    /// `InputRequiredResult`.
    pub(crate) forward_asks: bool,
}

/// Who a round's events go to.
pub(crate) enum To<'a> {
    /// The request's peer.
    Peer(&'a Peer<RoleServer>),
    /// Another replica, which relays the round to its request (W16): the
    /// events go to its inbox, as [`Message::Event`]s for the round.
    Relay {
        /// The store.
        backend: &'a dyn Backend,
        /// The relaying replica.
        replica: &'a str,
        /// `round:<id>`.
        round: &'a str,
        /// Whether its request has a progress token.
        progress: bool,
    },
}

/// How a round ended.
// Made once per round and moved once: boxing the outcome would cost an
// allocation per call instead.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Step {
    /// The call is over (`None`: its task failed, which the registry never
    /// makes happen).
    Done(Option<ToolOutcome>),
    /// The call waits for these answers (only when not `forward_asks`).
    Input(Vec<Ask>),
}

/// Polls `call` to its end, or (when not forwarding asks) to its first
/// request, while serving its events.
pub(crate) async fn drive<F>(
    call: &mut F,
    events: &mut mpsc::UnboundedReceiver<Event>,
    round: &Round<'_>,
) -> Step
where
    F: Future<Output = Option<ToolOutcome>> + Unpin,
{
    loop {
        let event = tokio::select! {
            biased;
            Some(event) = events.recv() => event,
            outcome = &mut *call => {
                drain(events, round).await;
                return Step::Done(outcome);
            }
        };
        match event {
            Event::Ask(ask) if !round.forward_asks => {
                return Step::Input(gather(ask, events, round).await);
            }
            event => serve(event, round).await,
        }
    }
}

/// The first ask and those made with it (a tool that asks twice at once):
/// one `InputRequiredResult` carries them all.
async fn gather(
    first: Ask,
    events: &mut mpsc::UnboundedReceiver<Event>,
    round: &Round<'_>,
) -> Vec<Ask> {
    let mut asks = vec![first];
    tokio::task::yield_now().await;
    while let Ok(event) = events.try_recv() {
        match event {
            Event::Ask(ask) => asks.push(ask),
            event => serve(event, round).await,
        }
    }
    asks
}

/// The events made between the last one served and the call's end; a
/// request made then has nobody waiting for it.
async fn drain(events: &mut mpsc::UnboundedReceiver<Event>, round: &Round<'_>) {
    events.close();
    while let Ok(event) = events.try_recv() {
        match event {
            Event::Ask(ask) => {
                let _ = ask
                    .reply
                    .send(Err(ClientError::Failed("the call is over".to_owned())));
            }
            event => serve(event, round).await,
        }
    }
}

/// One event to the client. A notification that cannot be sent (the
/// client left) is dropped; the call goes on.
async fn serve(event: Event, round: &Round<'_>) {
    let peer = match &round.to {
        To::Peer(peer) => *peer,
        To::Relay {
            backend,
            replica,
            round: to,
            progress,
        } => {
            let event = match event {
                Event::Log(param) => {
                    Relayed::Log(serde_json::to_value(param).unwrap_or(Value::Null))
                }
                Event::Progress(report) if *progress => Relayed::Progress {
                    done: report.done,
                    total: report.total,
                    message: report.message,
                },
                Event::Progress(_) => return,
                Event::Ask(ask) => {
                    // A relayed round stops at its first request.
                    let _ = ask.reply.send(Err(ClientError::Failed(
                        "the call is relayed and cannot ask now".to_owned(),
                    )));
                    return;
                }
            };
            let message = Message::Event {
                to: (*to).to_owned(),
                event,
            };
            // A notification the relay cannot take is dropped, as one the
            // client cannot take.
            let _ = backend.send(replica, &message).await;
            return;
        }
    };
    match event {
        Event::Log(param) => {
            let _ = peer.notify_logging_message(param).await;
        }
        Event::Progress(report) => {
            if let Some(token) = &round.progress {
                let _ = peer.notify_progress(progress(token, report)).await;
            }
        }
        Event::Ask(ask) => forward(ask, peer).await,
    }
}

pub(crate) fn progress(token: &ProgressToken, report: Progress) -> ProgressNotificationParam {
    let mut param = ProgressNotificationParam::new(token.clone(), report.done as f64);
    param.total = report.total.map(|t| t as f64);
    param.message = report.message;
    param
}

/// Sends `ask` to the client as a request, from this (the request's) task,
/// and hands the answer back from a task of its own, so the call's other
/// events keep flowing meanwhile. If the tool stops waiting (its timeout,
/// a cancellation), the client is told with `notifications/cancelled`.
async fn forward(ask: Ask, peer: &Peer<RoleServer>) {
    let Ask { request, mut reply } = ask;
    let request = match request {
        AskRequest::Sample(params) => {
            ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params))
        }
        AskRequest::Elicit(params) => ServerRequest::ElicitRequest(ElicitRequest::new(params)),
    };
    let handle = match peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
    {
        Ok(handle) => handle,
        Err(e) => {
            let _ = reply.send(Err(client_error(e)));
            return;
        }
    };
    let (id, peer) = (handle.id.clone(), handle.peer.clone());
    tokio::spawn(async move {
        tokio::select! {
            answer = handle.await_response() => {
                let answer = answer.map_err(client_error).and_then(|result| match result {
                    ClientResult::CreateMessageResult(_) | ClientResult::ElicitResult(_) => {
                        serde_json::to_value(result).map_err(|e| ClientError::Failed(e.to_string()))
                    }
                    other => Err(ClientError::Failed(format!(
                        "the client answered with something else: {}",
                        serde_json::to_value(other).unwrap_or(Value::Null)
                    ))),
                });
                let _ = reply.send(answer);
            }
            () = reply.closed() => {
                let param = CancelledNotificationParam::new(
                    Some(id),
                    Some("the tool stopped waiting for the answer".to_owned()),
                );
                let _ = peer.notify_cancelled(param).await;
            }
        }
    });
}

/// Why the client's answer did not come, as the tool (or the approval) is
/// told: a JSON-RPC error keeps its code and message.
fn client_error(error: ServiceError) -> ClientError {
    match error {
        ServiceError::Timeout { .. } => ClientError::TimedOut,
        // The code says what kind of failure the client met; the message
        // alone would not.
        ServiceError::McpError(error) => ClientError::Failed(format!(
            "JSON-RPC error {}: {}",
            error.code.0, error.message
        )),
        ServiceError::TransportClosed => {
            ClientError::Failed("the client's connection closed".to_owned())
        }
        other => ClientError::Failed(other.to_string()),
    }
}
