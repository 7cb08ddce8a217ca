//! `acme_ticket`: a tool as a third party would write it, with no
//! presenters and no meta. It gets the generic cards: the call card is its
//! name over the raw arguments, the result card its name over the content.
//! Nothing is lost: the content is what the model read, and replay draws
//! the same generic cards from the log.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolprism::{ContentBlock, ToolContext, ToolError, tool};

/// Arguments of `acme_ticket`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TicketArgs {
    /// The ticket id, e.g. `ACME-42`.
    pub id: String,
}

/// A ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ticket {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// `open`, `in-progress` or `closed`.
    pub status: String,
    /// Who holds it.
    pub assignee: Option<String>,
    /// Its labels.
    pub labels: Vec<String>,
}

/// A ticket tracker held in memory.
#[derive(Debug, Clone)]
pub struct AcmeTicketTool {
    tickets: BTreeMap<String, Ticket>,
}

impl AcmeTicketTool {
    /// A tracker holding `tickets`.
    pub fn new(tickets: impl IntoIterator<Item = Ticket>) -> Self {
        AcmeTicketTool {
            tickets: tickets.into_iter().map(|t| (t.id.clone(), t)).collect(),
        }
    }
}

impl Default for AcmeTicketTool {
    /// A few sample tickets.
    fn default() -> Self {
        let ticket =
            |id: &str, title: &str, status: &str, assignee: Option<&str>, labels: &[&str]| Ticket {
                id: id.to_owned(),
                title: title.to_owned(),
                status: status.to_owned(),
                assignee: assignee.map(str::to_owned),
                labels: labels.iter().map(|l| (*l).to_owned()).collect(),
            };
        AcmeTicketTool::new([
            ticket(
                "ACME-7",
                "Export fails on empty reports",
                "closed",
                Some("radia"),
                &["bug"],
            ),
            ticket(
                "ACME-42",
                "Checkout page times out under load",
                "in-progress",
                Some("grace"),
                &["bug", "perf", "p1"],
            ),
            ticket(
                "ACME-51",
                "Dark mode for the dashboard",
                "open",
                None,
                &["feature"],
            ),
        ])
    }
}

/// Look up a ticket in the ACME tracker by id (e.g. ACME-42): title,
/// status, assignee and labels.
#[tool(name = "acme_ticket")]
impl AcmeTicketTool {
    async fn execute(&self, args: TicketArgs, _cx: &ToolContext<'_>) -> Result<Ticket, ToolError> {
        let id = args.id.trim().to_ascii_uppercase();
        self.tickets.get(&id).cloned().ok_or_else(|| {
            let known: Vec<&str> = self.tickets.keys().map(String::as_str).collect();
            ToolError::new(format!(
                "no ticket \"{id}\"; known tickets: {}",
                known.join(", ")
            ))
            .with_code("NO_SUCH_TICKET")
        })
    }

    fn render(_args: &TicketArgs, ticket: &Ticket) -> Vec<ContentBlock> {
        vec![ContentBlock::text(format!(
            "{} [{}] {}\nassignee: {}\nlabels: {}",
            ticket.id,
            ticket.status,
            ticket.title,
            ticket.assignee.as_deref().unwrap_or("(nobody)"),
            ticket.labels.join(", ")
        ))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolprism::card::ResultCard;
    use toolprism::{CallCard, Registry, ToolCall};

    #[tokio::test]
    async fn generic_cards_over_args_and_content() {
        let registry = Registry::builder()
            .tool(AcmeTicketTool::default())
            .build()
            .unwrap();
        let out = registry
            .call(ToolCall::new("c", "acme_ticket", r#"{"id":"acme-42"}"#))
            .await;
        assert!(!out.is_error());
        assert_eq!(
            out.value_as::<Ticket>().unwrap().assignee.as_deref(),
            Some("grace")
        );
        assert!(out.meta().is_none());
        assert_eq!(
            out.call_card().unwrap(),
            &CallCard::generic(
                "acme_ticket",
                Some(toolprism::ToolKind::Other),
                Some(serde_json::json!({"id": "acme-42"}))
            )
        );
        assert_eq!(
            out.result_card().unwrap(),
            &ResultCard::generic(Some("acme_ticket".into()), out.content().to_vec())
        );
        let out = registry
            .call(ToolCall::new("c", "acme_ticket", r#"{"id":"ACME-1"}"#))
            .await;
        assert_eq!(out.error().unwrap().code.as_str(), "NO_SUCH_TICKET");
        assert!(out.error().unwrap().message.contains("ACME-42"));
    }
}
