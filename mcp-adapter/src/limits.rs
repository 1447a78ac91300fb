//! Every numeric limit of the MCP adapter as a named constant (GEN-01, SPEC Appendix C
//! "Catalog, MCP and Skills"). Values marked CFG are defaults of configuration.

use std::time::Duration;

/// At most this many `tools/call` requests are in flight per server; further calls wait in a
/// FIFO queue, and the time spent queued counts against the caller's timeout (MCP-24).
pub const MAX_CALLS_IN_FLIGHT: usize = 8;

/// A host connection idle for this long is closed (MCP-27, SPEC Appendix C "MCP idle
/// disconnect").
pub const IDLE_DISCONNECT: Duration = Duration::from_secs(30);

/// Tools per server before the server is marked `too_many_tools` and contributes none
/// (MCP-32, CFG default).
pub const TOOLS_PER_SERVER_DEFAULT: usize = capability_model::limits::TOOLS_PER_SERVER_DEFAULT;

/// `serverInfo.version` when the provider does not set one (MCP-03).
pub const DEFAULT_SERVER_VERSION: &str = "1.0.0";

/// Default deadline of one `tools/call`, queue time included (local choice; callers pass
/// their own).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Deadline of the `initialize` and `tools/list` round trips (local choice).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// After `notifications/cancelled`, a handler that has not returned within this long is
/// dropped so it cannot hold one of the [`MAX_CALLS_IN_FLIGHT`] slots forever (local choice).
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// `tools/list` pages followed before the listing is cut off (local choice; guards against a
/// provider that returns a `nextCursor` forever).
pub const MAX_LIST_PAGES: usize = 32;

/// Longest provider error sentence passed on to the model, in UTF-16 units (local choice;
/// longer text is cut on a character boundary, GEN-02).
pub const MAX_PROVIDER_MESSAGE_CHARS: usize = 512;

#[cfg(test)]
mod tests {
    use super::*;

    /// GEN-01: every constant against SPEC Appendix C / the cited requirement.
    #[test]
    fn constants_match_the_spec() {
        assert_eq!(MAX_CALLS_IN_FLIGHT, 8); // MCP-24
        assert_eq!(IDLE_DISCONNECT, Duration::from_secs(30)); // MCP-27
        assert_eq!(TOOLS_PER_SERVER_DEFAULT, 128); // MCP-32
        assert_eq!(DEFAULT_SERVER_VERSION, "1.0.0"); // MCP-03
    }
}
