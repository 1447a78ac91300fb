//! The `CapabilitySource` trait every adapter implements, and the types it speaks.

use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Poll, Waker};

use futures::stream::BoxStream;
use serde_json::{Map, Value};

use crate::capability::Capability;
use crate::id::{CapabilityId, Source};
use crate::issues::{IssueKind, ProviderIssue};
use crate::output::ToolOutput;

/// What a source lists: the capabilities it can offer now, and what it had to leave out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    /// Valid capabilities.
    pub capabilities: Vec<Capability>,
    /// Broken entries and provider-level problems, never silently dropped.
    pub issues: Vec<ProviderIssue>,
}

impl Listing {
    /// Adds converted entries `(index in the provider's list, capability)`, leaving out every
    /// entry whose raw name is shared with another (names are unique per server, MCP-05 /
    /// ACI-41): which copy is right cannot be known, so none is kept, whatever the order.
    pub fn push_unique(&mut self, entries: Vec<(usize, Capability)>, what: &str) {
        let mut count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (_, c) in &entries {
            *count.entry(c.id.name.as_str()).or_insert(0) += 1;
        }
        let repeated: std::collections::HashSet<String> = count
            .into_iter()
            .filter(|&(_, n)| n > 1)
            .map(|(name, _)| name.to_owned())
            .collect();
        for (i, c) in entries {
            if repeated.contains(&c.id.name) {
                self.issues.push(
                    ProviderIssue::new(
                        IssueKind::DuplicateName,
                        format!("two {what} share the name; both are left out"),
                    )
                    .at(i)
                    .entry(&c.id.name),
                );
            } else {
                self.capabilities.push(c);
            }
        }
    }
}

/// Why a call did not produce a [`ToolOutput`]. The four transport outcomes of seed 000 §5.12
/// are distinct variants because they mean different things for side effects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The provider answered with a protocol error: the tool was not executed.
    #[error("the provider refused the call: {message}")]
    Rejected {
        /// One sentence from the provider, sanitized by the adapter.
        message: String,
    },
    /// The connection closed before a result arrived. `dispatched` says whether the request had
    /// left this process (side effects possible) or not.
    #[error("the connection to the provider closed")]
    Closed {
        /// The request was sent before the connection closed.
        dispatched: bool,
    },
    /// No result within the deadline; side effects unknown.
    #[error("the provider did not answer in time")]
    Timeout,
    /// The request was too large for the transport and was never sent.
    #[error("the request is too large to send")]
    TooLarge,
    /// The provider cannot be reached at all (not running, not enabled, queue full).
    #[error("the provider is unavailable: {reason}")]
    Unavailable {
        /// Short reason code.
        reason: String,
    },
    /// The arguments do not match the input schema; nothing was sent.
    #[error("{0}")]
    InvalidArguments(String),
    /// The source has no such capability.
    #[error("unknown tool")]
    UnknownTool,
    /// The caller cancelled the call.
    #[error("the call was cancelled")]
    Cancelled,
    /// The provider denied the call by its own permission rules (ACI five layers).
    #[error("the provider denied the call")]
    ProviderDenied,
    /// The request was sent and the connection is alive, but the answer could not be read:
    /// the call may have run (side effects unknown, like [`CallError::Timeout`]).
    #[error("the provider's answer could not be read")]
    InvalidResult,
}

/// Why a source could not list its capabilities.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ListError {
    /// The provider could not be reached.
    #[error("the provider is unavailable: {reason}")]
    Unavailable {
        /// Short reason code.
        reason: String,
    },
    /// The provider answered something that is not a capability list.
    #[error("the provider sent an invalid capability list: {0}")]
    Invalid(String),
}

/// A provider of capabilities: an MCP host connection, an ACI controller, a session MCP server,
/// or the built-ins. Implemented by the adapters; the runtime only sees this trait.
#[async_trait::async_trait]
pub trait CapabilitySource: Send + Sync {
    /// Which ecosystem this source serves.
    fn source(&self) -> Source;

    /// Lists the capabilities available now.
    async fn list(&self) -> Result<Listing, ListError>;

    /// Calls one capability. `arguments` were validated against the input schema by the
    /// catalog; the source may validate again. Dropping the future abandons the call; firing
    /// `cancel` asks the source to tell the provider.
    async fn call(
        &self,
        id: &CapabilityId,
        arguments: Map<String, Value>,
        cancel: CancelToken,
    ) -> Result<ToolOutput, CallError>;

    /// A stream that yields once every time the source's capability list changes (the catalog
    /// then re-lists and pushes a whole snapshot, CAT-04).
    fn changes(&self) -> BoxStream<'static, ()>;
}

/// A runtime-independent cancellation signal shared between a caller and a source.
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<Mutex<CancelState>>,
}

#[derive(Debug, Default)]
struct CancelState {
    cancelled: bool,
    wakers: Vec<Waker>,
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the token; every waiter wakes. Idempotent.
    pub fn cancel(&self) {
        let wakers = {
            let mut st = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            st.cancelled = true;
            std::mem::take(&mut st.wakers)
        };
        for w in wakers {
            w.wake();
        }
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .cancelled
    }

    /// Resolves once the token is cancelled.
    pub async fn cancelled(&self) {
        futures::future::poll_fn(|cx| {
            let mut st = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            if st.cancelled {
                Poll::Ready(())
            } else {
                if !st.wakers.iter().any(|w| w.will_wake(cx.waker())) {
                    st.wakers.push(cx.waker().clone());
                }
                Poll::Pending
            }
        })
        .await
    }
}
