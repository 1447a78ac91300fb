//! ACI capability JSON (SPEC Appendix E.3, seed 003 §6.3) ⇄ [`Capability`] (ACI-40..ACI-43).
//!
//! ```
//! use capability_model::aci;
//! let listing = aci::capabilities_from_strings(
//!     "aci.com.example.weather", "weatherservice",
//!     &[r#"{"id":"get_weather","description":"Current weather for a city.",
//!            "params":[{"name":"city","type":"string","required":true,"description":"City"}]}"#.to_string()],
//! );
//! assert!(listing.issues.is_empty());
//! let cap = &listing.capabilities[0];
//! assert_eq!(cap.input_schema["required"][0], "city");
//! ```

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::capability::{AciFlag, AciInfo, AciParam, AciResultField, AciType, Capability};
use crate::id::{CapabilityId, Source};
use crate::issues::{IssueKind, ProviderIssue};
use crate::limits::MAX_JSON_DEPTH;
use crate::source::Listing;
use crate::validate::{description_problem, exceeds_depth, tool_name_problem};

/// The version every ACI capability carries (ACI-11).
pub const ACI_CAPABILITY_VERSION: &str = "1.0";

/// Minimum and maximum of an ACI `int` (a Java `int`).
const INT_MIN: i64 = i32::MIN as i64;
const INT_MAX: i64 = i32::MAX as i64;

/// Converts what `getCapabilities()` returned (one JSON object per string) into capabilities of
/// the virtual plugin `(plugin, server)`. A broken entry becomes an issue; the others still load
/// (Appendix E.3). Ids must be unique per provider: every entry of a duplicated id is left out.
pub fn capabilities_from_strings(plugin: &str, server: &str, entries: &[String]) -> Listing {
    let parsed: Vec<Result<Value, ProviderIssue>> = entries
        .iter()
        .enumerate()
        .map(|(i, s)| {
            serde_json::from_str::<Value>(s).map_err(|e| {
                ProviderIssue::new(
                    IssueKind::MalformedEntry,
                    format!("the capability is not valid JSON ({})", e.classify_name()),
                )
                .at(i)
            })
        })
        .collect();
    collect(plugin, server, parsed)
}

/// Converts a JSON array of capability objects (a file in `samples/catalog/`, or a decoded
/// `getCapabilities()` list).
pub fn capabilities_from_array(plugin: &str, server: &str, value: &Value) -> Listing {
    let Some(arr) = value.as_array() else {
        return Listing {
            capabilities: vec![],
            issues: vec![ProviderIssue::new(
                IssueKind::MalformedEntry,
                "the capability list is not a JSON array",
            )],
        };
    };
    collect(plugin, server, arr.iter().cloned().map(Ok).collect())
}

trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "I/O error",
            serde_json::error::Category::Syntax => "syntax error",
            serde_json::error::Category::Data => "wrong data",
            serde_json::error::Category::Eof => "unexpected end",
        }
    }
}

fn collect(plugin: &str, server: &str, entries: Vec<Result<Value, ProviderIssue>>) -> Listing {
    let mut listing = Listing::default();
    let mut caps: Vec<(usize, Capability)> = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        match entry.and_then(|v| capability_from_value(plugin, server, &v, &mut listing.issues, i))
        {
            Ok(c) => caps.push((i, c)),
            Err(issue) => listing.issues.push(issue.at(i)),
        }
    }
    listing.push_unique(caps, "capabilities of this provider");
    listing
}

/// Converts one capability JSON object. Non-fatal problems (an unknown param type) are pushed to
/// `issues`; fatal ones are returned as the error.
pub fn capability_from_value(
    plugin: &str,
    server: &str,
    value: &Value,
    issues: &mut Vec<ProviderIssue>,
    index: usize,
) -> Result<Capability, ProviderIssue> {
    let malformed = |msg: &str| ProviderIssue::new(IssueKind::MalformedEntry, msg.to_owned());
    if exceeds_depth(value, MAX_JSON_DEPTH) {
        return Err(malformed("the capability is nested too deeply"));
    }
    let obj = value
        .as_object()
        .ok_or_else(|| malformed("the capability is not a JSON object"))?;
    if obj.is_empty() {
        return Err(malformed("the capability is an empty object"));
    }
    let id = obj
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("the capability has no string \"id\""))?;
    if let Some(p) = tool_name_problem(id) {
        return Err(ProviderIssue::new(IssueKind::InvalidName, p).entry(id));
    }
    let description = match obj.get("description") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => {
            return Err(malformed("the capability's \"description\" is not a string").entry(id));
        }
    };
    if let Some(p) = description_problem(description) {
        return Err(ProviderIssue::new(IssueKind::BadDescription, p).entry(id));
    }
    let version = match obj.get("version") {
        None | Some(Value::Null) => ACI_CAPABILITY_VERSION.to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };

    let params =
        parse_fields(obj.get("params"), "params", true).map_err(|m| malformed(&m).entry(id))?;
    let result =
        parse_fields(obj.get("result"), "result", false).map_err(|m| malformed(&m).entry(id))?;
    let flags = match obj.get("flags") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(a)) => {
            let mut flags = Vec::with_capacity(a.len());
            for f in a {
                match f.as_str() {
                    Some(s) => flags.push(AciFlag::parse(s)),
                    None => return Err(malformed("a flag is not a string").entry(id)),
                }
            }
            flags
        }
        Some(_) => return Err(malformed("\"flags\" is not an array").entry(id)),
    };
    let require_permission = match obj.get("requirePermission") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(malformed("\"requirePermission\" is not a string").entry(id)),
    };
    let require_user_confirm = match obj.get("requireUserConfirm") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(malformed("\"requireUserConfirm\" is not a boolean").entry(id)),
    };

    let params: Vec<AciParam> = params
        .into_iter()
        .map(|(name, ty, required, description)| AciParam {
            name,
            ty,
            required,
            description,
        })
        .collect();
    let result: Vec<AciResultField> = result
        .into_iter()
        .map(|(name, ty, _, description)| AciResultField {
            name,
            ty,
            description,
        })
        .collect();
    for p in &params {
        if let AciType::Other(_) = p.ty {
            issues.push(
                ProviderIssue::new(
                    IssueKind::UnknownParamType,
                    "a parameter has a type capbridge does not know; it accepts any JSON",
                )
                .at(index)
                .entry(id),
            );
        }
    }

    let mut cap = Capability::new(
        CapabilityId::new(Source::Aci, plugin, server, id),
        description,
    );
    cap.input_schema = params_schema(&params);
    cap.output_schema = (!result.is_empty()).then(|| result_schema(&result));
    cap.require_permission = require_permission;
    cap.require_user_confirm = require_user_confirm;
    cap.aci = Some(AciInfo {
        version,
        params,
        result,
        flags,
    });
    Ok(cap)
}

type Field = (String, AciType, bool, String);

fn parse_fields(v: Option<&Value>, what: &str, with_required: bool) -> Result<Vec<Field>, String> {
    let arr = match v {
        None | Some(Value::Null) => return Ok(vec![]),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(format!("\"{what}\" is not an array")),
    };
    let mut out = Vec::with_capacity(arr.len());
    let mut names = HashSet::new();
    for p in arr {
        let o = p
            .as_object()
            .ok_or_else(|| format!("an entry of \"{what}\" is not an object"))?;
        let name = o
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("an entry of \"{what}\" has no name"))?;
        if !names.insert(name) {
            return Err(format!("two entries of \"{what}\" share a name"));
        }
        let ty = match o.get("type") {
            None | Some(Value::Null) => AciType::String,
            Some(Value::String(s)) => AciType::parse(s),
            Some(_) => return Err(format!("an entry of \"{what}\" has a non-string type")),
        };
        let required = if with_required {
            match o.get("required") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => {
                    return Err(format!(
                        "an entry of \"{what}\" has a non-boolean \"required\""
                    ));
                }
            }
        } else {
            false
        };
        let description = o
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        out.push((name.to_owned(), ty, required, description));
    }
    Ok(out)
}

/// The JSON Schema of one ACI type (ACI-42, Appendix E.3).
pub fn type_schema(ty: &AciType) -> Map<String, Value> {
    let v = match ty {
        AciType::String => json!({"type": "string"}),
        AciType::Int => json!({"type": "integer", "minimum": INT_MIN, "maximum": INT_MAX}),
        AciType::Boolean => json!({"type": "boolean"}),
        AciType::Double => json!({"type": "number"}),
        AciType::Bytes => json!({"type": "string", "contentEncoding": "base64"}),
        AciType::Json | AciType::Other(_) => json!({}),
    };
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// `{"type":"object","properties":{…},"required":[…],"additionalProperties":false}` (ACI-42).
pub fn params_schema(params: &[AciParam]) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for p in params {
        props.insert(p.name.clone(), field_schema(&p.ty, &p.description));
        if p.required {
            required.push(Value::String(p.name.clone()));
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), Value::Bool(false));
    Value::Object(schema)
}

/// The output schema of the declared result fields.
pub fn result_schema(result: &[AciResultField]) -> Value {
    let props: Map<String, Value> = result
        .iter()
        .map(|r| (r.name.clone(), field_schema(&r.ty, &r.description)))
        .collect();
    json!({"type": "object", "properties": props})
}

/// The schema of one field: its type's schema plus the description, when there is one.
fn field_schema(ty: &AciType, description: &str) -> Value {
    let mut s = type_schema(ty);
    if !description.is_empty() {
        s.insert("description".into(), Value::String(description.to_owned()));
    }
    Value::Object(s)
}

/// The ACI capability JSON of a capability (what `getCapabilities()` returns for it). For a
/// capability that did not come from ACI, params are derived from its input schema's top-level
/// properties (`integer` → `int`, `number` → `double`, base64 string → `byte[]`, other
/// non-string types → `json`).
pub fn to_aci_json(cap: &Capability) -> Value {
    let (version, params, result, flags) = match &cap.aci {
        Some(a) => (
            a.version.clone(),
            a.params.clone(),
            a.result.clone(),
            a.flags.clone(),
        ),
        None => (
            ACI_CAPABILITY_VERSION.to_owned(),
            params_from_schema(&cap.input_schema),
            vec![],
            vec![],
        ),
    };
    let mut o = Map::new();
    o.insert("id".into(), Value::String(cap.id.name.clone()));
    o.insert("version".into(), Value::String(version));
    o.insert("description".into(), Value::String(cap.description.clone()));
    o.insert(
        "params".into(),
        Value::Array(
            params
                .iter()
                .map(|p| {
                    json!({"name": p.name, "type": p.ty.as_str(), "required": p.required, "description": p.description})
                })
                .collect(),
        ),
    );
    o.insert(
        "result".into(),
        Value::Array(
            result
                .iter()
                .map(|r| json!({"name": r.name, "type": r.ty.as_str(), "description": r.description}))
                .collect(),
        ),
    );
    o.insert(
        "flags".into(),
        Value::Array(
            flags
                .iter()
                .map(|f| Value::String(f.as_str().to_owned()))
                .collect(),
        ),
    );
    if let Some(p) = &cap.require_permission {
        o.insert("requirePermission".into(), Value::String(p.clone()));
    }
    o.insert(
        "requireUserConfirm".into(),
        Value::Bool(cap.require_user_confirm),
    );
    Value::Object(o)
}

/// ACI params derived from the top-level properties of an object schema.
pub fn params_from_schema(schema: &Value) -> Vec<AciParam> {
    let required: HashSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return vec![];
    };
    props
        .iter()
        .map(|(name, s)| {
            let ty = match s.get("type").and_then(Value::as_str) {
                Some("string")
                    if s.get("contentEncoding").and_then(Value::as_str) == Some("base64") =>
                {
                    AciType::Bytes
                }
                Some("string") => AciType::String,
                Some("integer") => AciType::Int,
                Some("boolean") => AciType::Boolean,
                Some("number") => AciType::Double,
                _ => AciType::Json,
            };
            AciParam {
                name: name.clone(),
                ty,
                required: required.contains(name.as_str()),
                description: s
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            }
        })
        .collect()
}
