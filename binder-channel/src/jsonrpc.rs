//! JSON-RPC 2.0 framing for binder-channel-v1 and the line carriers (CH-10, CH-13, BR-02).
//!
//! - [`parse`] classifies one inbound message as a request, notification or response. Unknown
//!   members are ignored (CH-10). Invalid JSON, batches, a `jsonrpc` other than `"2.0"` and
//!   bad ids become a [`Rejection`] carrying the JSON-RPC error response to send back, if any
//!   — the connection is kept.
//! - [`Message::to_json`] writes only the standard members (`jsonrpc`, `id`, `method`,
//!   `params`, `result`, `error`) and never a line break.
//! - [`Framing::fit`] applies CH-13 to an outbound message longer than the channel's limit:
//!   a request gets a local `-32603` error, a response is replaced by an error response with
//!   the same id, a notification is dropped and counted.
//!
//! ```
//! use binder_channel::jsonrpc::{parse, Message};
//!
//! let msg = parse(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","x-unknown":1}"#)?;
//! assert!(matches!(msg, Message::Request { ref method, .. } if method == "tools/list"));
//!
//! let bad = parse(r#"{"jsonrpc":"1.0","id":7,"method":"m"}"#).unwrap_err();
//! assert_eq!(bad.code, -32600);
//! assert_eq!(bad.reply.as_deref(), Some(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid Request: jsonrpc must be \"2.0\""}}"#));
//! # Ok::<(), binder_channel::jsonrpc::Rejection>(())
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::limits::MAX_MESSAGE_CHARS;
use crate::text::utf16_len;

/// JSON-RPC 2.0 error codes used by the framing layer (ACP-61: passed through as-is).
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32_700;
    /// The JSON is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32_600;
    /// The method does not exist.
    pub const METHOD_NOT_FOUND: i64 = -32_601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32_602;
    /// Internal error; also the CH-13 oversize error.
    pub const INTERNAL_ERROR: i64 = -32_603;
}

/// The version string every message carries.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request or response id: a string or an integer (JSON-RPC 2.0 §4; fractional numbers,
/// objects, arrays and booleans are rejected).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl Id {
    fn to_value(&self) -> Value {
        match self {
            Id::Number(n) => Value::from(*n),
            Id::String(s) => Value::from(s.clone()),
        }
    }

    fn from_value(value: &Value) -> Option<Id> {
        match value {
            Value::String(s) => Some(Id::String(s.clone())),
            Value::Number(n) => n.as_i64().map(Id::Number),
            _ => None,
        }
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorObject {
    /// The error code.
    pub code: i64,
    /// A short sentence.
    pub message: String,
    /// Optional structured data.
    pub data: Option<Value>,
}

/// One JSON-RPC 2.0 message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A call that expects a response.
    Request {
        /// The request id.
        id: Id,
        /// The method name.
        method: String,
        /// Parameters (an object or array), if any.
        params: Option<Value>,
    },
    /// A call without an id; never answered.
    Notification {
        /// The method name.
        method: String,
        /// Parameters (an object or array), if any.
        params: Option<Value>,
    },
    /// A response: the result or the error of a request. The id is `None` only for an
    /// error response to a message whose id could not be read.
    Response {
        /// The id of the request answered.
        id: Option<Id>,
        /// `Ok(result)` or `Err(error)`.
        outcome: Result<Value, ErrorObject>,
    },
}

impl Message {
    /// An error response to `id`.
    pub fn error(id: Option<Id>, code: i64, message: impl Into<String>) -> Message {
        Message::Response {
            id,
            outcome: Err(ErrorObject {
                code,
                message: message.into(),
                data: None,
            }),
        }
    }

    /// The id of a request or response.
    pub fn id(&self) -> Option<&Id> {
        match self {
            Message::Request { id, .. } => Some(id),
            Message::Response { id, .. } => id.as_ref(),
            Message::Notification { .. } => None,
        }
    }

    /// Encodes the message with the standard members only, in one line (CH-10). Members come
    /// in a fixed order: `jsonrpc`, `id`, `method`, `params`, `result`, `error`.
    pub fn to_json(&self) -> String {
        let mut wire = Wire {
            jsonrpc: JSONRPC_VERSION,
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        };
        let id_value;
        match self {
            Message::Request { id, method, params } => {
                id_value = id.to_value();
                wire.id = Some(&id_value);
                wire.method = Some(method);
                wire.params = params.as_ref();
            }
            Message::Notification { method, params } => {
                wire.method = Some(method);
                wire.params = params.as_ref();
            }
            Message::Response { id, outcome } => {
                id_value = id.as_ref().map_or(Value::Null, Id::to_value);
                wire.id = Some(&id_value);
                match outcome {
                    Ok(result) => wire.result = Some(result),
                    Err(error) => {
                        wire.error = Some(WireError {
                            code: error.code,
                            message: &error.message,
                            data: error.data.as_ref(),
                        });
                    }
                }
            }
        }
        // serde_json escapes control characters inside strings, so the text has no raw line
        // break. Serializing plain values to a String cannot fail; fall back to an empty
        // object rather than panic.
        serde_json::to_string(&wire).unwrap_or_else(|_| String::from("{}"))
    }
}

#[derive(serde::Serialize)]
struct Wire<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<WireError<'a>>,
}

#[derive(serde::Serialize)]
struct WireError<'a> {
    code: i64,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a Value>,
}

/// An inbound message that is not valid JSON-RPC 2.0. The channel stays open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("JSON-RPC {code}: {message}")]
pub struct Rejection {
    /// The JSON-RPC error code (`-32700` or `-32600`).
    pub code: i64,
    /// A short description (never message content).
    pub message: String,
    /// The encoded error response to send back, or `None` when nothing may be answered (a
    /// malformed response or notification).
    pub reply: Option<String>,
}

impl Rejection {
    fn new(code: i64, message: &str, id: Option<Id>, answer: bool) -> Rejection {
        let reply = answer.then(|| Message::error(id, code, message).to_json());
        Rejection {
            code,
            message: message.to_owned(),
            reply,
        }
    }
}

/// Classifies one inbound message (CH-10): unknown members are ignored; anything that is not
/// one well-formed JSON-RPC 2.0 object is rejected with the matching error.
pub fn parse(text: &str) -> Result<Message, Rejection> {
    let value: Value = serde_json::from_str(text)
        .map_err(|_| Rejection::new(code::PARSE_ERROR, "Parse error", None, true))?;
    let Value::Object(object) = value else {
        let what = if value.is_array() {
            "Invalid Request: batches are not supported"
        } else {
            "Invalid Request: not an object"
        };
        return Err(Rejection::new(code::INVALID_REQUEST, what, None, true));
    };
    let has_method = object.contains_key("method");
    // The id as far as it can be read, to answer with it.
    let raw_id = object.get("id");
    let id = raw_id.and_then(Id::from_value);
    let bad_id = raw_id.is_some_and(|v| !v.is_null() && id.is_none());
    // Only requests are answered; a broken response or notification gets no reply.
    let answerable = has_method && raw_id.is_some();
    let invalid = |message: &str, id: Option<Id>| {
        Rejection::new(code::INVALID_REQUEST, message, id, answerable)
    };

    if object.get("jsonrpc").and_then(Value::as_str) != Some(JSONRPC_VERSION) {
        let id = if bad_id { None } else { id };
        return Err(invalid("Invalid Request: jsonrpc must be \"2.0\"", id));
    }
    if bad_id {
        return Err(invalid(
            "Invalid Request: id must be a string or an integer",
            None,
        ));
    }
    if has_method {
        let Some(method) = object.get("method").and_then(Value::as_str) else {
            return Err(invalid("Invalid Request: method must be a string", id));
        };
        let params = match object.get("params") {
            None => None,
            Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p.clone()),
            Some(_) => {
                return Err(invalid(
                    "Invalid Request: params must be an object or an array",
                    id,
                ));
            }
        };
        let method = method.to_owned();
        return Ok(match raw_id {
            None => Message::Notification { method, params },
            Some(_) => match id {
                Some(id) => Message::Request { id, method, params },
                // "id": null on a request is not a usable id.
                None => {
                    return Err(invalid(
                        "Invalid Request: id must be a string or an integer",
                        None,
                    ));
                }
            },
        });
    }
    // A response: exactly one of result / error, and an id (null only with an error).
    let outcome = match (object.get("result"), object.get("error")) {
        (Some(result), None) => Ok(result.clone()),
        (None, Some(error)) => Err(parse_error_object(error)
            .ok_or_else(|| invalid("Invalid Request: malformed error object", None))?),
        _ => {
            return Err(invalid(
                "Invalid Request: a response needs exactly one of result or error",
                None,
            ));
        }
    };
    if raw_id.is_none() || (id.is_none() && outcome.is_ok()) {
        return Err(invalid("Invalid Request: response without id", None));
    }
    Ok(Message::Response { id, outcome })
}

fn parse_error_object(value: &Value) -> Option<ErrorObject> {
    let object = value.as_object()?;
    Some(ErrorObject {
        code: object.get("code")?.as_i64()?,
        message: object.get("message")?.as_str()?.to_owned(),
        data: object.get("data").cloned(),
    })
}

/// What to do with an outbound message (CH-13).
#[derive(Debug, Clone, PartialEq)]
pub enum Outbound {
    /// Send this text; it fits.
    Send(String),
    /// The request was too large and was not sent: hand this error response to the local
    /// caller as the request's answer.
    LocalError(Message),
    /// The response was too large: send this error response, with the same id, instead.
    Replace(String),
    /// The notification was too large and was dropped (and counted).
    Dropped,
}

/// Outbound framing for one channel: its size limit, the prefix of the CH-13 error text, and
/// the count of dropped notifications.
#[derive(Debug)]
pub struct Framing {
    prefix: &'static str,
    max_chars: usize,
    dropped_notifications: AtomicU64,
}

impl Framing {
    /// Framing for binder-channel-v1: 65,536 UTF-16 units, errors prefixed
    /// `binder-channel-v1:` (CH-13).
    pub fn binder_channel() -> Framing {
        Framing::new("binder-channel-v1", MAX_MESSAGE_CHARS)
    }

    /// Framing for the line-delimited ACP transport: errors prefixed `acp-line:` (BR-02).
    pub fn acp_line() -> Framing {
        Framing::new("acp-line", MAX_MESSAGE_CHARS)
    }

    /// Framing with a custom prefix and limit.
    pub fn new(prefix: &'static str, max_chars: usize) -> Framing {
        Framing {
            prefix,
            max_chars,
            dropped_notifications: AtomicU64::new(0),
        }
    }

    /// Notifications dropped for size so far.
    pub fn dropped_notifications(&self) -> u64 {
        self.dropped_notifications.load(Ordering::Relaxed)
    }

    /// The CH-13 error text for a message of `chars` UTF-16 units.
    pub fn oversize_text(&self, chars: usize) -> String {
        format!(
            "{}: message of {chars} chars exceeds {}",
            self.prefix, self.max_chars
        )
    }

    /// Encodes `message` and applies CH-13 if it is longer than the limit.
    pub fn fit(&self, message: &Message) -> Outbound {
        let text = message.to_json();
        let chars = utf16_len(&text);
        if chars <= self.max_chars {
            return Outbound::Send(text);
        }
        tracing::warn!(
            chars,
            limit = self.max_chars,
            "outbound message over the limit"
        );
        match message {
            Message::Request { id, .. } => Outbound::LocalError(Message::error(
                Some(id.clone()),
                code::INTERNAL_ERROR,
                self.oversize_text(chars),
            )),
            Message::Response { id, .. } => Outbound::Replace(
                Message::error(id.clone(), code::INTERNAL_ERROR, self.oversize_text(chars))
                    .to_json(),
            ),
            Message::Notification { .. } => {
                self.dropped_notifications.fetch_add(1, Ordering::Relaxed);
                Outbound::Dropped
            }
        }
    }
}
