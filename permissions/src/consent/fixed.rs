//! A surface that always gives the same answer (tests, headless runs).

use super::text::{CallerPrompt, ToolPrompt};
use super::{CallerChoice, Choice, ConsentSurface};

/// Answers every prompt the same way. "Allow" means "allow once" for tools: a fixed policy never
/// remembers anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedSurface {
    allow: bool,
}

impl FixedSurface {
    /// Allows every tool call once and every caller.
    pub fn allow() -> Self {
        Self { allow: true }
    }

    /// Denies everything.
    pub fn deny() -> Self {
        Self { allow: false }
    }
}

#[async_trait::async_trait]
impl ConsentSurface for FixedSurface {
    async fn ask_tool(&self, prompt: &ToolPrompt) -> Option<Choice> {
        tracing::debug!(consent = %prompt.id, allow = self.allow, "fixed consent policy answered");
        Some(if self.allow {
            Choice::AllowOnce
        } else {
            Choice::Deny
        })
    }

    async fn ask_caller(&self, _prompt: &CallerPrompt) -> Option<CallerChoice> {
        Some(if self.allow {
            CallerChoice::Allow
        } else {
            CallerChoice::Deny
        })
    }
}
