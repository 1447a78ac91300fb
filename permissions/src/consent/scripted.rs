//! A surface that follows a script and records what it was shown (tests).

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::text::{CallerPrompt, ToolPrompt};
use super::{CallerChoice, Choice, ConsentId, ConsentSurface, DenyReason};

/// One scripted reaction to a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptStep<T> {
    /// Answer at once (`None` = dismiss).
    Answer(Option<T>),
    /// Answer after a delay (tokio time, so paused-time tests stay deterministic).
    After(Duration, Option<T>),
    /// Never answer (the broker's deadline decides).
    Never,
}

#[derive(Debug, Default)]
struct Script {
    tool_steps: VecDeque<ScriptStep<Choice>>,
    caller_steps: VecDeque<ScriptStep<CallerChoice>>,
    shown_tools: Vec<ToolPrompt>,
    shown_callers: Vec<CallerPrompt>,
    withdrawn: Vec<(ConsentId, DenyReason)>,
}

/// Plays scripted steps in order; when a script runs out, prompts are never answered.
#[derive(Debug, Default)]
pub struct ScriptedSurface {
    script: Mutex<Script>,
}

impl ScriptedSurface {
    /// An empty script.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut Script) -> R) -> R {
        f(&mut self.script.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Appends a reaction to the next tool prompt.
    pub fn push_tool(&self, step: ScriptStep<Choice>) -> &Self {
        self.with(|s| s.tool_steps.push_back(step));
        self
    }

    /// Appends a reaction to the next caller prompt.
    pub fn push_caller(&self, step: ScriptStep<CallerChoice>) -> &Self {
        self.with(|s| s.caller_steps.push_back(step));
        self
    }

    /// Tool prompts shown so far, in order.
    pub fn shown_tools(&self) -> Vec<ToolPrompt> {
        self.with(|s| s.shown_tools.clone())
    }

    /// Caller prompts shown so far, in order.
    pub fn shown_callers(&self) -> Vec<CallerPrompt> {
        self.with(|s| s.shown_callers.clone())
    }

    /// Prompts withdrawn without an answer.
    pub fn withdrawn(&self) -> Vec<(ConsentId, DenyReason)> {
        self.with(|s| s.withdrawn.clone())
    }
}

async fn play<T: Copy>(step: ScriptStep<T>) -> Option<T> {
    match step {
        ScriptStep::Answer(a) => a,
        ScriptStep::After(d, a) => {
            tokio::time::sleep(d).await;
            a
        }
        ScriptStep::Never => std::future::pending().await,
    }
}

#[async_trait::async_trait]
impl ConsentSurface for ScriptedSurface {
    async fn ask_tool(&self, prompt: &ToolPrompt) -> Option<Choice> {
        let step = self.with(|s| {
            s.shown_tools.push(prompt.clone());
            s.tool_steps.pop_front().unwrap_or(ScriptStep::Never)
        });
        play(step).await
    }

    async fn ask_caller(&self, prompt: &CallerPrompt) -> Option<CallerChoice> {
        let step = self.with(|s| {
            s.shown_callers.push(prompt.clone());
            s.caller_steps.pop_front().unwrap_or(ScriptStep::Never)
        });
        play(step).await
    }

    fn withdrawn(&self, id: ConsentId, reason: DenyReason) {
        self.with(|s| s.withdrawn.push((id, reason)));
    }
}
