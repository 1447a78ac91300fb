//! The typed `http_request` result and its ACI result map (HTTP-04, HTTP-05, HTTP-06, G-11).

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use capability_model::ToolOutput;
use serde_json::{Map, Value};

use crate::body::BodyEncoding;
use crate::render::{format_http, key, model_output};

/// What `http_request` returns. Serializes (serde) to exactly the ACI result map of
/// [`HttpResult::to_aci_result`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResult {
    /// The HTTP status code of the final response.
    pub status_code: u16,
    /// Response headers: lowercased name → values in arrival order (G-11).
    pub response_headers: BTreeMap<String, Vec<String>>,
    /// The body as text, at most 150,000 UTF-16 units (HTTP-05); base64 for binary bodies.
    pub response_body: String,
    /// Whether `response_body` is shorter than the body (HTTP-05), or the body was cut at the
    /// byte cap.
    pub truncated: bool,
    /// [`BodyEncoding::Base64`] when the body is binary (G-11).
    pub body_encoding: BodyEncoding,
    /// gzip of the UTF-8 of the whole body text, when at most 900 KiB (HTTP-06, E.7).
    pub response_body_gz: Option<Vec<u8>>,
}

impl HttpResult {
    /// The ACI result map: `status_code`, `response_headers` (JSON object), `response_body`,
    /// `truncated`, `response_body_gz` (base64, when present) and `body_encoding: "base64"`
    /// for binary bodies.
    pub fn to_aci_result(&self) -> Map<String, Value> {
        let mut m = self.to_map_without_gz();
        if let Some(gz) = &self.response_body_gz {
            m.insert(
                key::RESPONSE_BODY_GZ.into(),
                Value::String(BASE64.encode(gz)),
            );
        }
        m
    }

    fn to_map_without_gz(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(key::STATUS_CODE.into(), Value::from(self.status_code));
        m.insert(key::RESPONSE_HEADERS.into(), self.headers_value());
        m.insert(
            key::RESPONSE_BODY.into(),
            Value::String(self.response_body.clone()),
        );
        m.insert(key::TRUNCATED.into(), Value::Bool(self.truncated));
        if self.body_encoding == BodyEncoding::Base64 {
            m.insert(key::BODY_ENCODING.into(), Value::String("base64".into()));
        }
        m
    }

    fn headers_value(&self) -> Value {
        Value::Object(
            self.response_headers
                .iter()
                .map(|(k, vs)| {
                    (
                        k.clone(),
                        Value::Array(vs.iter().cloned().map(Value::String).collect()),
                    )
                })
                .collect(),
        )
    }

    /// The HTTP-14 text for the model (what [`crate::render_http_result`] produces from
    /// [`to_aci_result`](Self::to_aci_result)).
    pub fn render(&self) -> String {
        format_http(
            i64::from(self.status_code),
            &self.headers_value().to_string(),
            &self.response_body,
            self.truncated,
        )
    }

    /// The model-bound tool output: the untrusted-data label, the rendered text (capped at
    /// 32,768 U16, HTTP-13), and the result map without the gzip as structured content.
    pub fn to_tool_output(&self) -> ToolOutput {
        model_output(
            &self.render(),
            Some(Value::Object(self.to_map_without_gz())),
        )
    }
}

impl serde::Serialize for HttpResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_aci_result().serialize(serializer)
    }
}
