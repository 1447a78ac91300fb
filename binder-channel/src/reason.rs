//! Why a channel closed (CH-45) and the errors a producer sees.

use std::fmt;

/// A flow-control or protocol violation by the peer (CH-45 class `violation`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// An inbound call came from another UID than the one bound at `open` (CH-08).
    WrongUid {
        /// UID bound at `open`.
        expected: u32,
        /// UID the kernel reported for this call.
        actual: u32,
    },
    /// A message longer than [`crate::limits::MAX_MESSAGE_CHARS`] UTF-16 units (CH-12).
    Oversize {
        /// Length of the message, in UTF-16 units.
        chars: usize,
    },
    /// The peer sent past the window: too many unacked messages or chars (CH-32).
    Window {
        /// Received messages not covered by an ack sent.
        unacked_messages: usize,
        /// Their total length in UTF-16 units.
        unacked_chars: usize,
    },
    /// `ack(n)` with n greater than the number of messages sent, or negative (CH-25).
    AckBeyondSent {
        /// The acked count.
        acked: i64,
        /// Messages sent so far.
        sent: u64,
    },
    /// `ack(n)` lower than an earlier ack (CH-25, (P)).
    AckBackwards {
        /// The acked count.
        acked: i64,
        /// The previous ack.
        previous: u64,
    },
    /// A message that is not valid UTF-16 (a lone surrogate) or, on a line carrier, not valid
    /// UTF-8. It cannot be a JSON text, so the peer does not speak the protocol.
    InvalidText,
    /// A line-carrier line that grew past the bounded read buffer without a terminator.
    EndlessLine,
}

/// A local failure that ends the channel (CH-45 class `failure`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// Handing a message to the carrier failed.
    SendFailed,
    /// The window stayed full without an advancing ack for [`crate::limits::ACK_TIMEOUT`]
    /// (CH-23).
    AckTimeout,
    /// The local backlog grew past [`crate::limits::MAX_BACKLOG_CHARS`] (CH-22).
    BacklogOverflow {
        /// Backlog length including the message that overflowed it, in UTF-16 units.
        chars: usize,
    },
    /// Reading from the carrier failed (line carrier I/O error).
    ReadFailed,
}

/// Why a channel closed (CH-45).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// This side called `close`.
    Local,
    /// The peer called `close` (or, on a line carrier, ended its stream).
    Remote,
    /// The peer died (death notification; on a stream, a reset connection) (CH-42).
    PeerDied,
    /// The peer broke the protocol.
    Violation(Violation),
    /// This side failed.
    Failure(Failure),
}

/// The five close classes of CH-45; logs record the class only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseClass {
    /// `local`
    Local,
    /// `remote`
    Remote,
    /// `peer_died`
    PeerDied,
    /// `violation`
    Violation,
    /// `failure`
    Failure,
}

impl CloseClass {
    /// The class name as logged and as sent in `close(reason)`.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseClass::Local => "local",
            CloseClass::Remote => "remote",
            CloseClass::PeerDied => "peer_died",
            CloseClass::Violation => "violation",
            CloseClass::Failure => "failure",
        }
    }
}

impl fmt::Display for CloseClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl CloseReason {
    /// The CH-45 class of this reason.
    pub fn class(&self) -> CloseClass {
        match self {
            CloseReason::Local => CloseClass::Local,
            CloseReason::Remote => CloseClass::Remote,
            CloseReason::PeerDied => CloseClass::PeerDied,
            CloseReason::Violation(_) => CloseClass::Violation,
            CloseReason::Failure(_) => CloseClass::Failure,
        }
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class().as_str())
    }
}

/// Why [`crate::Channel::send`] refused a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// The message is longer than [`crate::limits::MAX_MESSAGE_CHARS`]; nothing was sent and
    /// the channel stays open (CH-12; the JSON-RPC layer applies CH-13).
    #[error(
        "message of {chars} chars exceeds {}",
        crate::limits::MAX_MESSAGE_CHARS
    )]
    TooLarge {
        /// Length in UTF-16 units.
        chars: usize,
    },
    /// A line carrier cannot carry a message with a line break in it (BR-02, CH-10).
    #[error("message contains a line break")]
    LineBreak,
    /// The channel is closed or closing; the message was not queued (CH-41).
    #[error("channel closed ({0})")]
    Closed(CloseClass),
    /// Queuing the message pushed the backlog past [`crate::limits::MAX_BACKLOG_CHARS`]; the
    /// channel closed with `failure` (CH-22).
    #[error("local backlog overflow")]
    BacklogOverflow,
}
