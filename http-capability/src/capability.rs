//! The `http_request` capability record (HTTP-01, HTTP-02, HTTP-04, HTTP-09): what the catalog
//! lists and what the ACI adapter exports.

use capability_model::{
    AciFlag, AciInfo, AciParam, AciResultField, AciType, Capability, CapabilityId, Source,
};
use serde_json::{Value, json};

use crate::render::key;
use crate::request::param;

/// The capability id (HTTP-01; aci-core v1.0.14).
pub const CAPABILITY_ID: &str = "http_request";
/// The provider segment of the built-in capability's id.
pub const BUILTIN_PROVIDER: &str = "capbridge";
/// The server segment of the built-in capability's id.
pub const BUILTIN_SERVER: &str = "builtin";

/// Description for the model (ACI-11: natural language, not a version).
pub const DESCRIPTION: &str = "Send an HTTP request and return the status code, response headers \
and response body. Reaches web APIs and, where the user enabled it, devices on the local network \
such as routers, NAS, home automation and IoT devices. Methods: GET (default), POST, PUT, DELETE, \
PATCH, HEAD or a custom method. The response body is truncated at 150000 characters.";

/// The capability id of the built-in: `builtin:capbridge/builtin/http_request`.
pub fn capability_id() -> CapabilityId {
    CapabilityId::new(
        Source::Builtin,
        BUILTIN_PROVIDER,
        BUILTIN_SERVER,
        CAPABILITY_ID,
    )
}

/// The ACI description: params `url` (required), `method`, `headers`, `body`, all strings
/// (HTTP-02); results `status_code` int, `response_headers` json, `response_body` string,
/// `truncated` boolean, `response_body_gz` byte[] (HTTP-04, HTTP-06, E.7), plus `body_encoding`
/// for binary bodies (G-11).
pub fn aci_info() -> AciInfo {
    let p = |name: &str, required: bool, description: &str| AciParam {
        name: name.into(),
        ty: AciType::String,
        required,
        description: description.into(),
    };
    let r = |name: &str, ty: AciType, description: &str| AciResultField {
        name: name.into(),
        ty,
        description: description.into(),
    };
    AciInfo {
        version: "1.0".into(),
        params: vec![
            p(param::URL, true, "Target URL (http or https)"),
            p(param::METHOD, false, "HTTP method, default GET"),
            p(
                param::HEADERS,
                false,
                "Request headers as a JSON object encoded in a string",
            ),
            p(param::BODY, false, "Request body, sent as is"),
        ],
        result: vec![
            r(key::STATUS_CODE, AciType::Int, "HTTP status code"),
            r(
                key::RESPONSE_HEADERS,
                AciType::Json,
                "Response headers: lowercased name to array of values",
            ),
            r(
                key::RESPONSE_BODY,
                AciType::String,
                "Response body, truncated at 150000 characters",
            ),
            r(
                key::TRUNCATED,
                AciType::Boolean,
                "Whether the body was truncated",
            ),
            r(
                key::RESPONSE_BODY_GZ,
                AciType::Bytes,
                "gzip of the whole body text, present while at most 900 KB",
            ),
            r(
                key::BODY_ENCODING,
                AciType::String,
                "\"base64\" when the body is binary; absent for text",
            ),
        ],
        flags: vec![
            AciFlag::BackgroundExecutable,
            AciFlag::NoUiRequired,
            AciFlag::DangerousAction,
        ],
    }
}

/// JSON Schema of the arguments (ACI-42 mapping of [`aci_info`]'s params).
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            param::URL: {"type": "string", "description": "Target URL (http or https)"},
            param::METHOD: {"type": "string", "description": "HTTP method, default GET"},
            param::HEADERS: {"type": "string", "description": "Request headers as a JSON object encoded in a string, e.g. {\"Accept\":\"application/json\"}"},
            param::BODY: {"type": "string", "description": "Request body, sent as is"}
        },
        "required": [param::URL],
        "additionalProperties": false
    })
}

/// JSON Schema of the structured result.
pub fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            key::STATUS_CODE: {"type": "integer"},
            key::RESPONSE_HEADERS: {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
            key::RESPONSE_BODY: {"type": "string"},
            key::TRUNCATED: {"type": "boolean"},
            key::RESPONSE_BODY_GZ: {"type": "string", "contentEncoding": "base64"},
            key::BODY_ENCODING: {"type": "string", "enum": ["base64"]}
        },
        "required": [key::STATUS_CODE, key::RESPONSE_HEADERS, key::RESPONSE_BODY, key::TRUNCATED]
    })
}

/// The catalog record of the built-in `http_request`. Its effective risk is HIGH with
/// `openWorldHint = true` (HTTP-09, ACI-43): every call gets "allow once / deny".
pub fn http_request_capability() -> Capability {
    let mut c = Capability::new(capability_id(), DESCRIPTION);
    c.title = Some("HTTP request".into());
    c.input_schema = input_schema();
    c.output_schema = Some(output_schema());
    c.annotations.open_world_hint = Some(true);
    c.aci = Some(aci_info());
    c.require_user_confirm = true;
    c
}
