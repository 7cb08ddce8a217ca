//! The provider edge of [toolprism](https://docs.rs/toolprism): everything
//! that knows a model API.
//!
//! - [`dialect`]: each tool's definition in the exact request shape a
//!   provider or protocol expects, and the way back for the arguments a
//!   model sends in it.
//! - Calls in ([`Provider::read_turn`]): a model's response, as received,
//!   read into its [`ModelCall`]s and the assistant [`Turn`] to echo back.
//! - Results out ([`Provider::write_results`]): a turn's outcomes as the
//!   provider's tool-result message or messages, within what its results
//!   can carry ([`Accepts`]).
//! - A bounded loop ([`Agent`]) over a [`Model`] you call with any HTTP
//!   client.
//! - With the feature `rig`, the module `rig`: the registry's tools in a
//!   [rig](https://docs.rs/rig-core) agent's `ToolSet`, each call through
//!   the registry's pipeline.
//!
//! Four wire formats: [`Provider::Anthropic`] (Messages),
//! [`Provider::OpenAiChat`] (Chat Completions), [`Provider::OpenAiResponses`]
//! (Responses) and [`Provider::Gemini`] (generateContent).
//!
//! Depend on `toolprism` with the feature `provider`, not on this crate:
//! it re-exports this one as `toolprism::provider`, and its dialects as
//! `toolprism::dialect`. The core (`toolprism-core`) knows no provider;
//! this crate builds on its public API only.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod dialect;
pub mod reply;
#[cfg(feature = "rig")]
pub mod rig;
pub mod turn;
pub mod wire;

pub use agent::{
    Agent, AgentError, AgentErrorKind, End, LoopCall, Model, ModelError, Request, Run,
};
pub use turn::{ModelCall, Stop, Turn, TurnError};
pub use wire::{Accepts, ImageSlot, Provider, UnknownProvider};
