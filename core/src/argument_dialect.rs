//! [`ArgumentDialect`]: the form a model's wire gives the arguments it
//! sends, undone before the registry reads them.

use std::fmt;

use serde_json::Value;

/// A form of the arguments other than the canonical one, and the way back.
///
/// A provider's request format may change a tool's input schema (OpenAI's
/// strict mode makes every property required, and the optional ones
/// nullable), so a model speaking it sends arguments the canonical schema
/// refuses. A call made with
/// [`CallOptions::with_dialect`](crate::CallOptions::with_dialect) has its
/// arguments passed through [`restore`](Self::restore) after they are read
/// as lossless JSON and before the input schema checks them; the session
/// log records the dialect's [`name`](Self::name) with the call, and
/// replay reads the arguments the same way with the dialect of that name
/// the registry knows ([`Registry::add_dialect`](crate::Registry::add_dialect)).
///
/// The core knows no provider: the dialects themselves live in the
/// provider crate (`toolprism::dialect`, feature `provider`), whose
/// `Dialect` implements this trait.
///
/// ```
/// use serde_json::{Value, json};
/// use toolprism::ArgumentDialect;
///
/// /// A wire that sends every argument as a string.
/// #[derive(Debug)]
/// struct Stringly;
/// impl ArgumentDialect for Stringly {
///     fn name(&self) -> &str { "stringly" }
///     fn restore(&self, _schema: &Value, mut arguments: Value) -> Value {
///         if let Some(map) = arguments.as_object_mut() {
///             for v in map.values_mut() {
///                 if let Some(n) = v.as_str().and_then(|s| s.parse::<i64>().ok()) {
///                     *v = json!(n);
///                 }
///             }
///         }
///         arguments
///     }
/// }
/// assert_eq!(Stringly.restore(&json!({}), json!({"n": "3"})), json!({"n": 3}));
/// ```
pub trait ArgumentDialect: fmt::Debug + Send + Sync + 'static {
    /// The name the session log records, unique among the dialects a
    /// registry knows (`openai`, say).
    fn name(&self) -> &str;

    /// The arguments as the canonical `input_schema` expects them. Pure and
    /// total: it never fails; what it cannot restore it leaves for the
    /// input schema to refuse.
    fn restore(&self, input_schema: &Value, arguments: Value) -> Value;
}
