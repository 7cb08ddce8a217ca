//! [`Fault`]: why the checking serializer (or the key serializer it calls)
//! stopped, and where, as the error type both implement `serde::ser` with.

use std::fmt;

use serde::ser;

use super::{LosslessError, Reason, Segment, path_of};
use crate::path::Keys;

/// Why serialization stopped, and where: boxed, so a `Result` of a value
/// stays small on the success path.
pub(super) struct Fault(Box<FaultInner>);

struct FaultInner {
    reason: Reason,
    /// Innermost first: pushed while the error travels back up.
    segments: Vec<Segment>,
}

impl Fault {
    pub(super) fn new(reason: Reason) -> Self {
        Fault(Box::new(FaultInner {
            reason,
            segments: Vec::new(),
        }))
    }

    pub(super) fn at(mut self, segment: Segment) -> Self {
        self.0.segments.push(segment);
        self
    }

    pub(super) fn into_error(self, root: &str, keys: Keys<'_>) -> LosslessError {
        let FaultInner { reason, segments } = *self.0;
        LosslessError {
            path: path_of(root, segments.into_iter().rev(), keys),
            reason: reason.text(),
        }
    }
}

impl fmt::Debug for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fault")
            .field("reason", &self.0.reason)
            .field("segments", &self.0.segments)
            .finish()
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.reason {
            Reason::Custom(message) => f.write_str(message),
            other => write!(f, "{other:?}"),
        }
    }
}

impl std::error::Error for Fault {}

impl ser::Error for Fault {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Fault::new(Reason::Custom(msg.to_string()))
    }
}
