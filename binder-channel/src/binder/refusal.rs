//! Refusing `open` (CH-06) and reading a refusal on the client (CH-07).

use std::fmt;

/// The reason codes `open` may refuse with (CH-06).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RefusalReason {
    /// The caller's authorization is pending a user decision; retry later.
    AuthorizationPending,
    /// The caller is not allowed.
    Denied,
    /// The service is not open for channels.
    NotOpen,
}

impl RefusalReason {
    /// The wire code (`agentos.acp.<code>: …`).
    pub fn code(self) -> &'static str {
        match self {
            RefusalReason::AuthorizationPending => "authorization_pending",
            RefusalReason::Denied => "denied",
            RefusalReason::NotOpen => "not_open",
        }
    }

    /// The reason for a wire code; `None` for an unknown one.
    pub fn from_code(code: &str) -> Option<RefusalReason> {
        match code {
            "authorization_pending" => Some(RefusalReason::AuthorizationPending),
            "denied" => Some(RefusalReason::Denied),
            "not_open" => Some(RefusalReason::NotOpen),
            _ => None,
        }
    }
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A refused `open`: thrown as `SecurityException("agentos.acp.<reason>: <text>")` (CH-06).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Why.
    pub reason: RefusalReason,
    /// A short human-readable explanation (never secrets or message content).
    pub text: String,
}

impl Refusal {
    /// A refusal for `reason` with `text`.
    pub fn new(reason: RefusalReason, text: impl Into<String>) -> Refusal {
        Refusal {
            reason,
            text: text.into(),
        }
    }

    /// The exception message: `agentos.acp.<reason>: <text>`.
    pub fn message(&self) -> String {
        format!("agentos.acp.{}: {}", self.reason.code(), self.text)
    }

    /// The `SecurityException` status `open` returns.
    pub(crate) fn to_status(&self) -> rsbinder::Status {
        rsbinder::Status::from((rsbinder::ExceptionCode::Security, self.message().as_str()))
    }
}

/// What a client makes of the exception message of a failed `open` (CH-07): the reason
/// matched by `^agentos\.acp\.([a-z_]+):`, or `None` — an unknown or missing reason is a
/// generic failure.
pub fn parse_refusal(message: &str) -> Option<RefusalReason> {
    let rest = message.strip_prefix("agentos.acp.")?;
    let end = rest.find(|c: char| !(c.is_ascii_lowercase() || c == '_'))?;
    if end == 0 || !rest[end..].starts_with(':') {
        return None;
    }
    RefusalReason::from_code(&rest[..end])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn ch06_the_message_has_the_agentos_acp_prefix() {
        let refusal = Refusal::new(RefusalReason::AuthorizationPending, "ask the user");
        assert_eq!(
            refusal.message(),
            "agentos.acp.authorization_pending: ask the user"
        );
    }

    #[test]
    fn ch07_every_known_reason_round_trips() {
        for reason in [
            RefusalReason::AuthorizationPending,
            RefusalReason::Denied,
            RefusalReason::NotOpen,
        ] {
            let message = Refusal::new(reason, "x").message();
            assert_eq!(parse_refusal(&message), Some(reason));
        }
    }

    #[test]
    fn ch07_unknown_or_malformed_reasons_are_generic_failures() {
        assert_eq!(parse_refusal("agentos.acp.rate_limited: slow down"), None);
        assert_eq!(parse_refusal("agentos.acp.denied"), None);
        assert_eq!(parse_refusal("agentos.acp.Denied: no"), None);
        assert_eq!(parse_refusal("agentos.acp.: no"), None);
        assert_eq!(parse_refusal("java.lang.SecurityException: denied"), None);
        assert_eq!(parse_refusal(" agentos.acp.denied: no"), None);
    }
}
