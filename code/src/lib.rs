//! Code Mode for [toolprism](https://docs.rs/toolprism).
#![forbid(unsafe_code)]

pub mod sdk;
