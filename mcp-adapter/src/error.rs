//! The host client's typed errors: the four failure kinds of seed 000 §5.12 (MCP-22) plus
//! the ways a connection can fail to come up, and their mapping to
//! [`capability_model::CallError`] and the tool error codes of MCP-23.

use capability_model::CallError;

/// Why a request to a provider did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error: the request was not executed
    /// (`McpRpcException`).
    #[error("the provider answered with error {code}: {message}")]
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// The provider's sentence, cleaned (control characters removed, length capped).
        message: String,
    },
    /// The connection closed before an answer (`McpClosedException`). `dispatched` says
    /// whether the request had left this process (handed to the carrier: it may have
    /// arrived) or was still in the local backlog / never queued (it cannot have run).
    #[error("the connection to the provider closed")]
    Closed {
        /// The request was handed to the channel before the close.
        dispatched: bool,
    },
    /// The request was sent and no answer came in time; side effects unknown
    /// (`McpTimeoutException`).
    #[error("the provider did not answer in time")]
    Timeout,
    /// The request is longer than 65,536 UTF-16 units and was never sent
    /// (`McpRequestTooLargeException`).
    #[error("the request is too large to send")]
    TooLarge,
    /// The caller cancelled; `notifications/cancelled` was sent if the request had left.
    #[error("the call was cancelled")]
    Cancelled,
    /// The server answered `initialize` with a revision capbridge does not speak; the
    /// connection was closed (MCP-21 reason `protocol_version`).
    #[error("the provider speaks an unsupported protocol revision")]
    ProtocolVersion,
    /// The server's answer has the wrong shape.
    #[error("the provider sent an invalid {0} result")]
    InvalidResponse(&'static str),
}

impl ClientError {
    /// The tool error code the runtime shows the model (MCP-23).
    pub fn tool_error_code(&self) -> &'static str {
        match self {
            ClientError::Rpc { .. } | ClientError::TooLarge => "tool_failed",
            ClientError::Closed { dispatched: false } | ClientError::ProtocolVersion => {
                "tool_unavailable"
            }
            ClientError::Closed { dispatched: true } | ClientError::InvalidResponse(_) => {
                "tool_result_unknown"
            }
            ClientError::Timeout => "tool_timeout",
            ClientError::Cancelled => "cancelled",
        }
    }

    /// The catalog-level error (seed 000 §5.12's four kinds keep their meaning).
    pub fn into_call_error(self) -> CallError {
        match self {
            ClientError::Rpc { message, .. } => CallError::Rejected { message },
            ClientError::Closed { dispatched } => CallError::Closed { dispatched },
            ClientError::Timeout => CallError::Timeout,
            ClientError::TooLarge => CallError::TooLarge,
            ClientError::Cancelled => CallError::Cancelled,
            ClientError::ProtocolVersion => CallError::Unavailable {
                reason: "protocol_version".to_owned(),
            },
            // The call may have run; the result is unreadable.
            ClientError::InvalidResponse(_) => CallError::InvalidResult,
        }
    }
}

impl From<ClientError> for CallError {
    fn from(e: ClientError) -> CallError {
        e.into_call_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MCP-23: every client failure kind and its tool error code; MCP-22: the catalog error
    /// keeps the side-effect meaning.
    #[test]
    fn mcp23_each_failure_kind_maps_to_its_code() {
        let cases = [
            (
                ClientError::Rpc {
                    code: -32000,
                    message: "No.".into(),
                },
                "tool_failed",
                CallError::Rejected {
                    message: "No.".into(),
                },
            ),
            (
                ClientError::Closed { dispatched: false },
                "tool_unavailable",
                CallError::Closed { dispatched: false },
            ),
            (
                ClientError::Closed { dispatched: true },
                "tool_result_unknown",
                CallError::Closed { dispatched: true },
            ),
            (ClientError::Timeout, "tool_timeout", CallError::Timeout),
            (ClientError::TooLarge, "tool_failed", CallError::TooLarge),
            (
                ClientError::ProtocolVersion,
                "tool_unavailable",
                CallError::Unavailable {
                    reason: "protocol_version".into(),
                },
            ),
            (
                ClientError::InvalidResponse("tools/call"),
                "tool_result_unknown",
                CallError::InvalidResult,
            ),
        ];
        for (error, code, call_error) in cases {
            assert_eq!(error.tool_error_code(), code, "{error:?}");
            assert_eq!(CallError::from(error), call_error);
        }
    }
}
