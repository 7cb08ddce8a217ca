//! Bounded reads of program strings: a thrown 100 MB string is never copied
//! whole out of the JavaScript heap.

use rquickjs::function::This;
use rquickjs::{Ctx, String as JsString, Value};

use super::kit::{Intrinsic, Kit};

/// Reads at most `max` bytes of `s` for display, with lone surrogates shown
/// as U+FFFD. Returns the text and whether it was cut.
///
/// Only `max + 1` UTF-16 units are copied (with the `String.prototype.slice`
/// captured before the program ran), so the cost is bounded by `max`
/// whatever the string's length. Those are JavaScript calls, so the
/// interrupt handler can stop them: the uncatchable exception is returned
/// as the error, for the caller to throw on (swallowing it would let the
/// program run on after a limit).
pub(crate) fn read_bounded<'js>(
    ctx: &Ctx<'js>,
    kit: &Kit,
    s: &JsString<'js>,
    max: usize,
) -> Result<(String, bool), Value<'js>> {
    let units = max.saturating_add(1).min(u32::MAX as usize) as f64;
    let read = || -> rquickjs::Result<String> {
        let slice = kit
            .function(ctx, Intrinsic::StringSlice)
            .ok_or(rquickjs::Error::Unknown)?;
        let piece: JsString = slice.call((This(s.clone()), 0, units))?;
        let well_formed = kit
            .function(ctx, Intrinsic::StringToWellFormed)
            .ok_or(rquickjs::Error::Unknown)?;
        let piece: JsString = well_formed.call((This(piece),))?;
        piece.to_string()
    };
    match read() {
        Ok(text) => Ok(cut(text, max)),
        Err(_) => {
            let exception = ctx.catch();
            if exception.is_uncatchable_error() {
                Err(exception)
            } else {
                Ok(("<unreadable string>".to_owned(), false))
            }
        }
    }
}

/// Cuts `text` to at most `max` bytes at a character boundary.
pub(crate) fn cut(mut text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    (text, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_respects_char_boundaries() {
        assert_eq!(cut("aé".into(), 2), ("a".into(), true));
        assert_eq!(cut("aé".into(), 3), ("aé".into(), false));
    }
}
