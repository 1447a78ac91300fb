//! [`ChannelTransport`]: rmcp's [`Transport`] over a binder-channel-v1 [`Channel`], so rmcp's
//! own client and server (its service layer) speak MCP over the same carriers capbridge uses
//! (in-memory pair, rsbinder RPC over a Unix socket, kernel Binder). One JSON-RPC message per
//! channel message (CH-03), the 65,536-unit limit applied the binder-channel way (CH-12/CH-13),
//! and input that is not JSON-RPC answered as binder-channel's framing layer answers it (CH-10)
//! with the channel left open.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use capability_model::{Annotations, ToolOutput};
//! use mcp_adapter::McpServer;
//! use mcp_adapter::rmcp_transport::ChannelTransport;
//! use rmcp::ServiceExt;
//! use serde_json::json;
//!
//! let server = McpServer::new("notes", |r| {
//!     r.tool("note_count", None, "Count the notes.", json!({"type": "object"}),
//!         Annotations::default(), |_, _| async { Ok(ToolOutput::json(json!({"count": 3}))) })?;
//!     Ok(())
//! })?;
//! let (host_end, plugin_end) = binder_channel::memory::pair(1_000, 10_123)?;
//! server.serve(plugin_end);
//! // rmcp's client (the unit handler) over the binder-channel end.
//! let client = ().serve(ChannelTransport::new(host_end)).await?;
//! let tools = client.peer().list_all_tools().await?;
//! assert_eq!(tools[0].name, "note_count");
//! client.cancel().await?;
//! # Ok(()) }
//! ```

use std::borrow::Cow;
use std::marker::PhantomData;

use binder_channel::jsonrpc::{self, Message, code};
use binder_channel::limits::MAX_MESSAGE_CHARS;
use binder_channel::text::utf16_len;
use binder_channel::{Channel, SendError};
use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// Why [`ChannelTransport`] could not send a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The channel refused the message (closed, closing, or backlog overflow).
    #[error("binder-channel refused the message: {0}")]
    Channel(#[from] SendError),
    /// An outbound request is longer than 65,536 UTF-16 units; it was never sent (CH-13).
    #[error("request of {chars} chars exceeds the binder-channel limit")]
    RequestTooLarge {
        /// Length in UTF-16 units.
        chars: usize,
    },
    /// The message could not be encoded as JSON.
    #[error("the message could not be encoded")]
    Encode,
}

/// rmcp's [`Transport`] over one binder-channel [`Channel`], for either role
/// ([`rmcp::RoleClient`] or [`rmcp::RoleServer`]).
///
/// Outbound, an over-long message follows CH-13: a response is replaced by an error response
/// with the same id, a notification is dropped (and logged), a request fails with
/// [`TransportError::RequestTooLarge`] without being sent. Inbound, a message rmcp cannot read
/// is answered like binder-channel's framing layer answers it (parse error / invalid request,
/// only when the message was a request) and skipped; the channel stays open.
#[derive(Debug)]
pub struct ChannelTransport<R> {
    channel: Channel,
    _role: PhantomData<fn() -> R>,
}

impl<R> ChannelTransport<R> {
    /// A transport over `channel` (an opened binder-channel: in-memory, rsbinder, kernel Binder).
    pub fn new(channel: Channel) -> ChannelTransport<R> {
        ChannelTransport {
            channel,
            _role: PhantomData,
        }
    }

    /// The channel underneath (peer identity, stats, close reason).
    pub fn channel(&self) -> &Channel {
        &self.channel
    }
}

/// Encodes `item`, applying CH-13 when it is over the limit. `Ok(None)`: dropped.
fn encode<R: ServiceRole>(item: &TxJsonRpcMessage<R>) -> Result<Option<String>, TransportError> {
    let text = serde_json::to_string(item).map_err(|_| TransportError::Encode)?;
    let chars = utf16_len(&text);
    if chars <= MAX_MESSAGE_CHARS {
        return Ok(Some(text));
    }
    tracing::warn!(
        chars,
        limit = MAX_MESSAGE_CHARS,
        "outbound mcp message over the limit"
    );
    match item {
        JsonRpcMessage::Request(_) => Err(TransportError::RequestTooLarge { chars }),
        JsonRpcMessage::Notification(_) => Ok(None),
        JsonRpcMessage::Response(response) => {
            let error = TxJsonRpcMessage::<R>::error(
                ErrorData::new(
                    ErrorCode::INTERNAL_ERROR,
                    jsonrpc::Framing::binder_channel().oversize_text(chars),
                    None,
                ),
                Some(response.id.clone()),
            );
            serde_json::to_string(&error)
                .map(Some)
                .map_err(|_| TransportError::Encode)
        }
        // An error object large enough to break the limit: send a short one with its id.
        JsonRpcMessage::Error(error) => {
            let short = TxJsonRpcMessage::<R>::error(
                ErrorData::new(
                    ErrorCode::INTERNAL_ERROR,
                    jsonrpc::Framing::binder_channel().oversize_text(chars),
                    None,
                ),
                error.id.clone(),
            );
            serde_json::to_string(&short)
                .map(Some)
                .map_err(|_| TransportError::Encode)
        }
    }
}

impl<R: ServiceRole> Transport<R> for ChannelTransport<R> {
    type Error = TransportError;

    fn name() -> Cow<'static, str> {
        Cow::Borrowed("binder-channel-v1")
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Queuing never blocks (CH-21), so the work is done now and the future only reports.
        let result = encode::<R>(&item).and_then(|text| match text {
            Some(text) => self.channel.send(text).map_err(TransportError::from),
            None => Ok(()),
        });
        std::future::ready(result)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        loop {
            // `Channel::recv` takes a message and returns it in the same poll, so a receive
            // dropped by rmcp's select loop loses nothing.
            let text = self.channel.recv().await?;
            match serde_json::from_str::<RxJsonRpcMessage<R>>(&text) {
                Ok(message) => return Some(message),
                Err(_) => self.reject(&text),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.channel.close().await;
        Ok(())
    }
}

impl<R> ChannelTransport<R> {
    /// Answers a message rmcp could not read, the way binder-channel's framing does (CH-10):
    /// not JSON-RPC → its rejection; JSON-RPC of a shape rmcp does not know → invalid request
    /// with the request's id (requests only; nothing answers a notification or a response).
    fn reject(&self, text: &str) {
        let reply = match jsonrpc::parse(text) {
            Err(rejection) => rejection.reply,
            Ok(Message::Request { id, .. }) => Some(
                Message::error(
                    Some(id),
                    code::INVALID_REQUEST,
                    "Invalid Request: not an MCP message",
                )
                .to_json(),
            ),
            Ok(_) => None,
        };
        tracing::debug!(
            uid = self.channel.peer().uid,
            chars = utf16_len(text),
            answered = reply.is_some(),
            "unreadable mcp message skipped"
        );
        if let Some(reply) = reply {
            let _ = self.channel.send(reply);
        }
    }
}
