//! The retry of a call waiting for its client's input, when it reaches
//! another replica than the one running the call (W16 in
//! `docs/contract.md`).
//!
//! The call stays where it runs (a future cannot move). The replica the
//! retry reached takes the `requestState` out of the store (good for one
//! retry, and only for the caller that made the call), and sends the
//! answers to the running replica's inbox ([`Message::Resume`]); that
//! replica hands them to the call and drives it through the round as it
//! would for its own request, sending what the call tells its client
//! (log messages, progress) and the round's end (the result, the next
//! requests with a new `requestState`, or an error) back to the relaying
//! replica's inbox, which answers its request with them. If the request
//! goes away, the call is cancelled ([`Message::Stop`]); if the running
//! replica's lease lapses meanwhile, the request gets an error saying it
//! stopped.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InputRequiredResult,
    LoggingMessageNotificationParam,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use toolprism_core::Progress;
use toolprism_core::client::ClientError;

use super::{McpServer, Shared, json_of, not_issued, other_call};
use crate::client::encode;
use crate::drive::{Round, To, progress};
use crate::replica::Replica;
use crate::store::{Message, Relayed, RoundEnd, StateRecord, Store, Wants};

impl McpServer {
    /// Relays the retry of a call another replica runs.
    pub(super) async fn relay(
        &self,
        state: &str,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        owner: Option<String>,
    ) -> Result<CallToolResponse, ErrorData> {
        let backend = self.replica.backend();
        let record = match backend.take_state(state).await {
            Ok(Some(record)) => record,
            Ok(None) => return Err(not_issued(state)),
            Err(e) => return Err(super::tasks::store_error(&e)),
        };
        if record.owner != owner {
            // Not this caller's: left for its own, as if never seen here.
            let ttl = self.client_timeout.saturating_mul(2);
            let _ = backend.park_state(state, &record, ttl).await;
            return Err(not_issued(state));
        }
        if !same_call(&record, &request) {
            let abandon = Message::Resume {
                state: state.to_owned(),
                round: String::new(),
                reply: String::new(),
                answers: Default::default(),
                wants: Wants {
                    version: None,
                    cards: false,
                    app: false,
                    level: 0,
                    progress: false,
                },
            };
            let _ = backend.send(&record.runner, &abandon).await;
            return Err(other_call());
        }
        self.start_replica();
        let round = uuid::Uuid::new_v4().simple().to_string();
        let to = format!("round:{round}");
        let mut mailbox = self.replica.mailboxes.open(to.clone());
        let token = context.meta.get_progress_token();
        let resume = Message::Resume {
            state: state.to_owned(),
            round: round.clone(),
            reply: self.replica.id.clone(),
            answers: request.input_responses.unwrap_or_default(),
            wants: Wants {
                version: context
                    .protocol_version()
                    .map(|version| version.as_str().to_owned()),
                cards: self.cards.wanted(context),
                app: crate::app::declared(context),
                level: encode(context.meta.log_level()),
                progress: token.is_some(),
            },
        };
        if let Err(e) = backend.send(&record.runner, &resume).await {
            return Err(super::tasks::store_error(&e));
        }
        // From here the call runs for this request: stopped if it goes.
        let mut stop = Stop {
            store: self.replica.store.clone(),
            runner: record.runner.clone(),
            to: to.clone(),
            armed: true,
        };
        let lease = self.replica.lease;
        let mut check = tokio::time::interval(lease);
        check.tick().await;
        loop {
            tokio::select! {
                message = mailbox.recv() => match message {
                    Some(Message::Event { event, .. }) => match event {
                        Relayed::Log(param) => {
                            if let Ok(param) = serde_json::from_value::<LoggingMessageNotificationParam>(param) {
                                let _ = context.peer.notify_logging_message(param).await;
                            }
                        }
                        Relayed::Progress { done, total, message } => {
                            if let Some(token) = &token {
                                let mut report = Progress::new(done);
                                report.total = total;
                                report.message = message;
                                let _ = context.peer.notify_progress(progress(token, report)).await;
                            }
                        }
                    },
                    Some(Message::End { end, .. }) => {
                        stop.armed = false;
                        return answer(end);
                    }
                    Some(_) => {}
                    None => return Err(ErrorData::internal_error("the relay's mailbox closed", None)),
                },
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error("the request was cancelled", None));
                }
                _ = check.tick() => {
                    if let Ok(false) = backend.alive(&record.runner).await {
                        stop.armed = false;
                        return Err(ErrorData::internal_error(
                            "the server running this call stopped before it answered (its lease in the task store lapsed); call the tool again",
                            None,
                        ));
                    }
                }
            }
        }
    }
}

/// Whether `request` repeats the call `record` waits in.
fn same_call(record: &StateRecord, request: &CallToolRequestParams) -> bool {
    let empty = rmcp::model::JsonObject::new();
    record.name == request.name
        && record.arguments.as_ref().unwrap_or(&empty)
            == request.arguments.as_ref().unwrap_or(&empty)
}

/// The response a relayed round's end makes.
fn answer(end: RoundEnd) -> Result<CallToolResponse, ErrorData> {
    let malformed = |e: serde_json::Error| {
        ErrorData::internal_error(format!("the relayed answer was malformed: {e}"), None)
    };
    match end {
        RoundEnd::Result(result) => serde_json::from_value::<CallToolResult>(result)
            .map(CallToolResponse::from)
            .map_err(malformed),
        RoundEnd::Input(input) => serde_json::from_value::<InputRequiredResult>(input)
            .map(CallToolResponse::from)
            .map_err(malformed),
        RoundEnd::Error(error) => Err(serde_json::from_value(error).map_err(malformed)?),
    }
}

/// Tells the running replica to cancel the call when the relaying request
/// goes away before the round ended.
struct Stop {
    store: Store,
    runner: String,
    to: String,
    armed: bool,
}

impl Drop for Stop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (store, runner) = (self.store.clone(), std::mem::take(&mut self.runner));
        let message = Message::Stop {
            to: std::mem::take(&mut self.to),
        };
        tokio::spawn(async move {
            let _ = store.backend().send(&runner, &message).await;
        });
    }
}

/// Serves a [`Message::Resume`] on the replica running the call: the
/// round, relayed; or, for a resume with no round (a retry of another
/// call), the call cancelled.
pub(super) async fn serve_resume(
    shared: Arc<Shared>,
    replica: Arc<Replica>,
    client_timeout: Duration,
    message: Message,
) {
    let Message::Resume {
        state,
        round,
        reply,
        answers,
        wants,
    } = message
    else {
        return;
    };
    let taken = shared.waiting.take(&state);
    if round.is_empty() {
        if let Some((call, _)) = taken {
            call.cancel.cancel();
        }
        return;
    }
    let to = format!("round:{round}");
    let end = match taken {
        None => RoundEnd::Error(json_of(&not_issued(&state))),
        Some((suspended, replies)) => {
            for (key, reply) in replies {
                let answer = answers.get(&key).cloned().ok_or_else(|| {
                    ClientError::Failed(format!("the client's retry carried no answer for {key:?}"))
                });
                let _ = reply.send(answer);
            }
            suspended.client.set_request_level(wants.level);
            let mut stops = replica.mailboxes.open(to.clone());
            let stop = suspended.cancel.clone().drop_guard();
            let round = Round {
                to: To::Relay {
                    backend: replica.backend(),
                    replica: &reply,
                    round: &to,
                    progress: wants.progress,
                },
                progress: None,
                forward_asks: false,
            };
            let ended = tokio::select! {
                ended = shared.run_round(suspended, &round, &wants, &replica, client_timeout) => ended,
                // The relaying request went away: the guard cancels.
                _ = stops.recv() => return,
            };
            stop.disarm();
            ended
        }
    };
    let message = Message::End { to, end };
    // The relaying replica waits for it: tried again while the store is
    // away, for a minute.
    let give_up = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut pause = Duration::from_millis(50);
    while replica.backend().send(&reply, &message).await.is_err() {
        if tokio::time::Instant::now() + pause > give_up {
            tracing::warn!(round = %round, "the end of a relayed round could not be sent");
            return;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(2));
    }
}
