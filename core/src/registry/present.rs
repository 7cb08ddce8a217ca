//! Step 10, and replay: the cards a tool's presenters draw from what is
//! persisted (C6), or the generic cards when a tool has none, its meta no
//! longer reads back, or a presenter panics. Live calls and replay draw
//! through these same functions, so their cards are the same (C13).

use serde::Deserialize;
use serde_json::Value;

use super::arguments::Input;
use super::kernel::Kernel;
use crate::card::ResultCard;
use crate::guard::{discard, guard};
use crate::lossless::check_value_with;
use crate::path::Keys;
use crate::result::{CallCardSlot, ToolResult};

/// The call card: the tool's `present_call` over arguments that read, or
/// the generic card over `input` (the arguments as JSON, or as sent) when
/// they did not read, the tool has no presenter, or it panics. The generic
/// card is drawn when first asked for.
pub(crate) fn call_card<K: Kernel>(tool: &K, args: Option<&K::Args>, input: Input) -> CallCardSlot {
    let drawn = args.and_then(|args| guard(|| tool.present_call(args)).ok().flatten());
    match drawn {
        Some(card) => {
            if let Input::Json(json) = input {
                discard(json);
            }
            CallCardSlot::Drawn(Box::new(card))
        }
        None => CallCardSlot::generic(Some(tool.facts().kind), input),
    }
}

/// The result card `present_result` draws from what is persisted, or
/// `None` for the generic card (no presenter, meta that no longer reads
/// back, a panic).
pub(crate) fn draw_result_card<K: Kernel>(
    tool: &K,
    args: &K::Args,
    result: &mut ToolResult,
) -> Option<ResultCard> {
    let meta = read_meta::<K>(result.meta.as_ref()).ok()?;
    // Lend the content to the typed view instead of cloning it.
    let typed = ToolResult {
        content: std::mem::take(&mut result.content),
        is_error: result.is_error,
        meta,
    };
    let card = guard(|| tool.present_result(args, &typed));
    let ToolResult { content, meta, .. } = typed;
    result.content = content;
    if let Some(meta) = meta {
        discard(meta);
    }
    card.ok().flatten()
}

/// Persisted meta read back as the tool's meta type, as a presenter sees
/// it; `Err` when it does not read back (too deep, wrong shape, a panicking
/// `Deserialize`).
pub(crate) fn read_meta<K: Kernel>(meta: Option<&Value>) -> Result<Option<K::Meta>, ()> {
    let Some(meta) = meta else {
        return Ok(None);
    };
    check_value_with(meta, "meta", Keys::Hidden).map_err(|_| ())?;
    match guard(|| K::Meta::deserialize(meta)) {
        Ok(Ok(meta)) => Ok(Some(meta)),
        _ => Err(()),
    }
}

/// The generic result card: the tool's name over the content.
pub(crate) fn generic_result(name: &str, result: &ToolResult) -> ResultCard {
    ResultCard::generic(Some(name.to_owned()), result.content.clone())
}
