//! The echo tool every corpus type is registered with, and the registry.

#![allow(dead_code)]

use std::marker::PhantomData;

use toolprism::{ContentBlock, NoMeta, Registry, Tool, ToolContext, ToolError, ToolInfo};

use crate::corpus::*;
use crate::for_each_case;

/// A tool whose arguments carry a corpus value and whose value is it.
pub(crate) struct Echo<T>(PhantomData<fn() -> T>);

impl<T> Echo<T> {
    pub(crate) fn new() -> Self {
        Echo(PhantomData)
    }
}

impl<T: Case> Tool for Echo<T> {
    type Args = T::Args;
    type Value = T;
    type Meta = NoMeta;
    const INFO: ToolInfo = ToolInfo::new(T::NAME, "Echo the argument back as the value.");

    async fn execute(&self, args: T::Args, _cx: &ToolContext<'_>) -> Result<T, ToolError> {
        Ok(T::from_args(args))
    }

    fn render(_: &T::Args, _: &T) -> Vec<ContentBlock> {
        vec![ContentBlock::text("ok")]
    }
}

/// A registry with one echo tool per corpus type.
pub(crate) fn registry() -> Registry {
    let mut builder = Registry::builder();
    macro_rules! add {
        ($t:ty) => {
            builder = builder.tool(Echo::<$t>::new());
        };
    }
    for_each_case!(add);
    builder.build().expect("every corpus tool registers")
}
