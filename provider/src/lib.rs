//! The provider edge of [toolprism](https://docs.rs/toolprism): everything
//! that knows a model API.
//!
//! - [`dialect`]: each tool's definition in the exact request shape a
//!   provider or protocol expects, and the way back for the arguments a
//!   model sends in it.
//!
//! Depend on `toolprism` with the feature `provider`, not on this crate:
//! it re-exports this one as `toolprism::provider`, and its dialects as
//! `toolprism::dialect`. The core (`toolprism-core`) knows no provider;
//! this crate builds on its public API only.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod dialect;
