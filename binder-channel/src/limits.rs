//! Every numeric limit of binder-channel-v1 as a named constant (GEN-01, SPEC Appendix C
//! "Transport and protocol"). Lengths are in UTF-16 code units (CH-11, SPEC §0.3 "U16").

use std::time::Duration;

/// Largest message one `send` may carry, in UTF-16 units (CH-12). 65,536 is accepted,
/// 65,537 is a violation.
pub const MAX_MESSAGE_CHARS: usize = 65_536;

/// A message may be sent only while fewer than this many messages are in flight (CH-20).
pub const MAX_INFLIGHT_MESSAGES: usize = 32;

/// In-flight chars plus the next message may not exceed this, unless nothing is in flight
/// (CH-20).
pub const MAX_INFLIGHT_CHARS: usize = 32_768;

/// The receiver acks after this many processed messages since its last ack (CH-31).
pub const ACK_EVERY_MESSAGES: u64 = 8;

/// The receiver acks after this many processed UTF-16 units since its last ack (CH-31).
pub const ACK_EVERY_CHARS: u64 = 8_192;

/// Unacked received messages beyond this count are a flow-control violation (CH-32).
pub const VIOLATION_UNACKED_MESSAGES: usize = 32;

/// Unacked received chars beyond this (with more than one message unacked) are a violation
/// (CH-32).
pub const VIOLATION_UNACKED_CHARS: usize = 32_768;

/// Local backlog (enqueued, not yet handed to the carrier) above this closes the channel with
/// `failure` (CH-22).
pub const MAX_BACKLOG_CHARS: usize = 4_194_304;

/// With the window full, no advancing ack for this long closes the channel with `failure`
/// (CH-23).
pub const ACK_TIMEOUT: Duration = Duration::from_secs(30);

/// A local close flushes the backlog for at most this long before calling `close` (CH-40).
pub const CLOSE_FLUSH_TIMEOUT: Duration = Duration::from_secs(2);

/// Suggested producer high-water mark for `await_writable` (CH-24), in UTF-16 units.
pub const PRODUCER_HIGH_WATER_CHARS: usize = 16_384;

/// Retry delays of a failed `ack` or `close` call (CH-33, CH-44). After the last entry the
/// last delay repeats.
pub const RETRY_BACKOFF: [Duration; 5] = [
    Duration::from_millis(10),
    Duration::from_millis(50),
    Duration::from_millis(200),
    Duration::from_millis(1_000),
    Duration::from_millis(3_000),
];

/// The receiver's Binder async buffer the window protects, in KiB (CH-47, rationale only).
pub const BINDER_ASYNC_BUFFER_KIB: usize = 508;

/// Largest line of the line-delimited carrier, excluding the terminator, in UTF-16 units
/// (BR-02; the same figure as CH-12).
pub const MAX_LINE_CHARS: usize = MAX_MESSAGE_CHARS;

/// UTF-8 bytes a line of [`MAX_LINE_CHARS`] UTF-16 units can take at most (every unit a
/// three-byte BMP character), plus one byte for a `\r` before the `\n`. The line reader never
/// buffers more than this, so an endless line cannot grow memory (derived from BR-02).
pub const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 3 + 1;

/// Messages the line-delimited carrier reads ahead of its consumer before it stops reading
/// (the stream's own back-pressure then holds the peer). Chosen equal to the Binder window so
/// both carriers buffer alike.
pub const LINE_READ_AHEAD_MESSAGES: usize = MAX_INFLIGHT_MESSAGES;

#[cfg(test)]
mod tests {
    use super::*;

    /// GEN-01: every constant against SPEC Appendix C, "Transport and protocol".
    #[test]
    fn constants_match_spec_appendix_c() {
        assert_eq!(MAX_MESSAGE_CHARS, 65_536);
        assert_eq!(MAX_INFLIGHT_MESSAGES, 32);
        assert_eq!(MAX_INFLIGHT_CHARS, 32_768);
        assert_eq!(ACK_EVERY_MESSAGES, 8);
        assert_eq!(ACK_EVERY_CHARS, 8_192);
        assert_eq!(VIOLATION_UNACKED_MESSAGES, 32);
        assert_eq!(VIOLATION_UNACKED_CHARS, 32_768);
        assert_eq!(MAX_BACKLOG_CHARS, 4_194_304);
        assert_eq!(ACK_TIMEOUT, Duration::from_secs(30));
        assert_eq!(CLOSE_FLUSH_TIMEOUT, Duration::from_secs(2));
        assert_eq!(PRODUCER_HIGH_WATER_CHARS, 16_384);
        let backoff_ms: Vec<u128> = RETRY_BACKOFF.iter().map(Duration::as_millis).collect();
        assert_eq!(backoff_ms, [10, 50, 200, 1_000, 3_000]);
        assert_eq!(BINDER_ASYNC_BUFFER_KIB, 508);
        assert_eq!(MAX_LINE_CHARS, 65_536);
        assert_eq!(MAX_LINE_BYTES, 196_609);
    }
}
