//! Provider-side validation rules shared by every source (MCP-05, ACI-12, ACI-41).

use serde_json::Value;

use crate::limits::{MAX_JSON_DEPTH, RAW_TOOL_NAME_MAX, RAW_TOOL_NAME_MIN};

/// True when `name` is a valid raw tool name: `^[A-Za-z0-9_.-]{1,128}$` (MCP-05, ACI-41).
pub fn is_valid_tool_name(name: &str) -> bool {
    (RAW_TOOL_NAME_MIN..=RAW_TOOL_NAME_MAX).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

/// Why a tool name is invalid, as one sentence (never echoing the name).
pub fn tool_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("the tool name is empty")
    } else if name.chars().count() > RAW_TOOL_NAME_MAX {
        Some("the tool name is longer than 128 characters")
    } else if !is_valid_tool_name(name) {
        Some("the tool name may only contain A-Z, a-z, 0-9, '_', '.' and '-'")
    } else {
        None
    }
}

/// Checks that `schema` is an object schema (`"type": "object"`) of sane depth; returns a
/// one-sentence problem otherwise (MCP-05).
pub fn input_schema_problem(schema: &Value) -> Option<String> {
    let Some(obj) = schema.as_object() else {
        return Some("the input schema is not a JSON object".into());
    };
    match obj.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(_) => return Some("the input schema's \"type\" is not \"object\"".into()),
        None => return Some("the input schema has no \"type\": \"object\"".into()),
    }
    if exceeds_depth(schema, MAX_JSON_DEPTH) {
        return Some(format!(
            "the input schema is nested deeper than {MAX_JSON_DEPTH} levels"
        ));
    }
    if let Err(e) = jsonschema::validator_for(schema) {
        // The compiler's message names the keyword; it does not contain argument values.
        return Some(format!(
            "the input schema is not a valid JSON Schema ({})",
            schema_error_kind(&e)
        ));
    }
    None
}

fn schema_error_kind(e: &jsonschema::ValidationError<'_>) -> String {
    let path = e.schema_path().to_string();
    if path.is_empty() {
        "invalid schema".into()
    } else {
        format!("at {path}")
    }
}

/// ACI-12: an empty description, or one that is a version number (`^v?\d+(\.\d+)*$`).
pub fn description_problem(description: &str) -> Option<&'static str> {
    let d = description.trim();
    if d.is_empty() {
        return Some("the description is empty");
    }
    let digits = d.strip_prefix('v').unwrap_or(d);
    let looks_like_version = !digits.is_empty()
        && digits
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    if looks_like_version {
        return Some("the description is a version number, not text for the model");
    }
    None
}

/// Nesting depth of a JSON value, computed without recursion.
pub fn json_depth(value: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    max
}

/// True when `value` nests deeper than `limit` levels. Recursion stops at the limit, so the
/// stack stays bounded whatever the input, and no memory is allocated.
pub fn exceeds_depth(value: &Value, limit: usize) -> bool {
    if limit == 0 {
        return true;
    }
    match value {
        Value::Array(a) => a.iter().any(|x| exceeds_depth(x, limit - 1)),
        Value::Object(o) => o.values().any(|x| exceeds_depth(x, limit - 1)),
        _ => false,
    }
}
