//! The terminal surface: prompts on a writer, answers from a reader (desktop `capbridge`).
//!
//! Input is read line by line on a dedicated thread. Lines typed *before* a prompt appears are
//! discarded when it appears, so an answer typed ahead can never approve a prompt the user has
//! not seen. End of input counts as "deny".

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Mutex, PoisonError};

use tokio::sync::mpsc;

use super::text::{CallerPrompt, ToolPrompt};
use super::{CallerChoice, Choice, ConsentId, ConsentSurface, DenyReason};

/// Invalid answers tolerated before the prompt counts as dismissed.
const MAX_INVALID_ANSWERS: usize = 3;
/// Longest input line considered; longer lines are invalid answers.
const MAX_ANSWER_BYTES: usize = 64;

/// Prompts on a terminal (or any reader/writer pair).
pub struct TerminalSurface {
    lines: tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>,
    out: Mutex<Box<dyn Write + Send>>,
}

impl std::fmt::Debug for TerminalSurface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalSurface").finish_non_exhaustive()
    }
}

impl TerminalSurface {
    /// A surface reading answers from `input` and writing prompts to `output`.
    pub fn new<R, W>(input: R, output: W) -> Self
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let spawned = std::thread::Builder::new()
            .name("consent-input".into())
            .spawn(move || {
                let mut reader = BufReader::new(input);
                let mut line = String::new();
                loop {
                    line.clear();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            if tx.send(line.trim().to_owned()).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        if let Err(e) = spawned {
            // Without a reader every prompt sees end of input: everything is denied.
            tracing::warn!(error = %e, "cannot start the consent input thread; denying all");
        }
        Self {
            lines: tokio::sync::Mutex::new(rx),
            out: Mutex::new(Box::new(output)),
        }
    }

    /// Standard input and standard error.
    pub fn stdio() -> Self {
        Self::new(std::io::stdin(), std::io::stderr())
    }

    fn write(&self, text: &str) {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    async fn read_answer<T: Copy>(
        &self,
        prompt_text: &str,
        parse: impl Fn(&str) -> Option<T>,
        hint: &str,
    ) -> Option<T> {
        let mut lines = self.lines.lock().await;
        while lines.try_recv().is_ok() {} // discard type-ahead
        self.write(prompt_text);
        for _ in 0..MAX_INVALID_ANSWERS {
            self.write(hint);
            let line = lines.recv().await?;
            if line.len() <= MAX_ANSWER_BYTES
                && let Some(v) = parse(&line.to_ascii_lowercase())
            {
                return Some(v);
            }
            self.write("Not a valid answer.\n");
        }
        self.write("No valid answer; treating it as deny.\n");
        None
    }
}

fn parse_tool_choice(line: &str, choices: &[Choice]) -> Option<Choice> {
    if let Ok(n) = line.parse::<usize>() {
        return n.checked_sub(1).and_then(|i| choices.get(i)).copied();
    }
    let wanted = match line {
        "o" | "once" | "y" | "yes" => Choice::AllowOnce,
        "s" | "session" => Choice::DontAskAgainThisSession,
        "a" | "always" => Choice::AlwaysAllow,
        "d" | "deny" | "n" | "no" => Choice::Deny,
        _ => return None,
    };
    choices.contains(&wanted).then_some(wanted)
}

fn parse_caller_choice(line: &str) -> Option<CallerChoice> {
    match line {
        "1" | "allow" | "a" | "y" | "yes" => Some(CallerChoice::Allow),
        // Empty input picks the default, which is Deny (AUT-04).
        "" | "2" | "deny" | "d" | "n" | "no" => Some(CallerChoice::Deny),
        _ => None,
    }
}

#[async_trait::async_trait]
impl ConsentSurface for TerminalSurface {
    async fn ask_tool(&self, prompt: &ToolPrompt) -> Option<Choice> {
        let text = format!(
            "\n[capbridge consent #{}]\n{}\n",
            prompt.id,
            prompt.render()
        );
        let hint = format!("Answer 1-{}: ", prompt.choices.len());
        let choices = prompt.choices.clone();
        self.read_answer(&text, |l| parse_tool_choice(l, &choices), &hint)
            .await
    }

    async fn ask_caller(&self, prompt: &CallerPrompt) -> Option<CallerChoice> {
        let text = format!("\n[capbridge authorization]\n{}\n", prompt.render());
        self.read_answer(&text, parse_caller_choice, "Answer 1 or 2 [2]: ")
            .await
    }

    fn withdrawn(&self, id: ConsentId, reason: DenyReason) {
        let why = match reason {
            DenyReason::Timeout => "timed out",
            DenyReason::Caller => "denied by the caller",
            _ => "withdrawn",
        };
        self.write(&format!(
            "\n[capbridge consent #{id}] {why}; the call was not run.\n"
        ));
    }
}
