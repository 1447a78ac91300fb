//! Tool consent (CNS) and the surfaces that ask the user.
//!
//! - [`queue`]: the sans-IO FIFO with per-request deadlines (CNS-04..06, CNS-09).
//! - [`broker`]: the async shell that shows the head of the queue on a [`ConsentSurface`].
//! - [`text`]: the prompt text, built only from sanitized third-party strings (SEC-04, CNS-08).
//! - Surfaces: [`TerminalSurface`] (desktop `capbridge`), [`FixedSurface`] (tests, headless),
//!   [`ScriptedSurface`] (tests).

pub mod broker;
mod fixed;
pub mod queue;
mod scripted;
mod terminal;
pub mod text;

use std::fmt;

use capability_model::Risk;

pub use broker::{ConsentBroker, ConsentTicket};
pub use fixed::FixedSurface;
pub use queue::{ConsentQueue, QueueFull};
pub use scripted::{ScriptStep, ScriptedSurface};
pub use terminal::TerminalSurface;
pub use text::{CallerPrompt, ConsentRequest, Initiator, ToolPrompt};

/// Identifies one consent request within a broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConsentId(pub u64);

impl fmt::Display for ConsentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What the user can answer to a tool prompt (CNS-02).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Choice {
    /// Run this call.
    AllowOnce,
    /// Run this call and do not ask again for this triple in this session (WRITE only).
    DontAskAgainThisSession,
    /// Run this call and never ask again for this triple (WRITE only; persisted, CNS-03).
    AlwaysAllow,
    /// Do not run it.
    Deny,
}

impl Choice {
    /// The choices offered for a risk level (CNS-02): WRITE gets four, HIGH (and every tool
    /// that may not be remembered) gets "allow once" and "deny".
    pub fn offered(rememberable: bool) -> Vec<Choice> {
        if rememberable {
            vec![
                Choice::AllowOnce,
                Choice::DontAskAgainThisSession,
                Choice::AlwaysAllow,
                Choice::Deny,
            ]
        } else {
            vec![Choice::AllowOnce, Choice::Deny]
        }
    }

    /// A short English label.
    pub fn label(self) -> &'static str {
        match self {
            Choice::AllowOnce => "allow once",
            Choice::DontAskAgainThisSession => "don't ask again in this session",
            Choice::AlwaysAllow => "always allow",
            Choice::Deny => "deny",
        }
    }
}

/// The user's answer to a caller authorization prompt (AUT-04: only these two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallerChoice {
    /// Let this app use the agent.
    Allow,
    /// Refuse it (10-minute cooldown).
    Deny,
}

/// How the caller (the ACP client) answered `session/request_permission` (CNS-09).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallerVerdict {
    /// An "allow"-type answer: ignored, the caller cannot approve.
    Allow,
    /// A "reject"-type answer: denies the call.
    Reject,
}

/// How a consent request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConsentOutcome {
    /// The user allowed it, with the scope chosen.
    Allowed(Choice),
    /// It was not allowed.
    Denied(DenyReason),
    /// More than 16 were pending: refused at once, no UI (CNS-06, `tool_unavailable`).
    Unavailable,
}

impl ConsentOutcome {
    /// Whether the call may run.
    pub fn is_allowed(self) -> bool {
        matches!(self, ConsentOutcome::Allowed(_))
    }
}

/// Why a consent request was denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DenyReason {
    /// The user chose "deny" (or dismissed the prompt).
    User,
    /// 60 s passed since the request was created (CNS-04).
    Timeout,
    /// The caller added a denial (CNS-09).
    Caller,
    /// The surface answered with a choice that was not offered; treated as a denial.
    InvalidChoice,
    /// The request was withdrawn (the waiting task went away).
    Cancelled,
}

/// Where consent and authorization prompts are shown.
///
/// Implementations only display text this crate built from sanitized strings and report what
/// the user chose. A future that never completes is fine: the broker's deadline wins and the
/// future is dropped.
#[async_trait::async_trait]
pub trait ConsentSurface: Send + Sync {
    /// Shows a tool prompt; `None` means dismissed without an answer (a denial).
    async fn ask_tool(&self, prompt: &ToolPrompt) -> Option<Choice>;

    /// Shows a caller authorization prompt; `None` means dismissed (a denial).
    async fn ask_caller(&self, prompt: &CallerPrompt) -> Option<CallerChoice>;

    /// Told when a shown prompt is withdrawn without an answer (timeout, caller denial).
    fn withdrawn(&self, _id: ConsentId, _reason: DenyReason) {}
}

/// The risk label a prompt shows.
pub(crate) fn risk_label(r: Risk) -> &'static str {
    match r {
        Risk::Read => "read",
        Risk::Write => "write",
        Risk::High => "HIGH",
    }
}
