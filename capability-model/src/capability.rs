//! The unified capability record every adapter produces and the runtime consumes (CAT-02).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::id::{CapabilityId, Source};
use crate::risk::{Annotations, OPEN_WORLD_HIGH_RISK_IDS, Risk};

/// One tool in the catalog, whatever its source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capability {
    /// Raw identity (never the model-facing name).
    pub id: CapabilityId,
    /// Optional human title (MCP `title`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description written for the model. Untrusted third-party text (SEC-04, ACI-51).
    pub description: String,
    /// JSON Schema of the arguments; always an object schema (`"type": "object"`, MCP-05).
    pub input_schema: Value,
    /// JSON Schema of the structured result, when the provider declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// MCP annotations, passed through unchanged (CAT-66).
    #[serde(default, skip_serializing_if = "Annotations::is_empty")]
    pub annotations: Annotations,
    /// ACI-specific description (params with their ACI types, result fields, flags), for ACI
    /// capabilities and for capabilities exported over ACI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aci: Option<AciInfo>,
    /// A platform permission the caller must hold (ACI `requirePermission`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_permission: Option<String>,
    /// The provider asks for explicit user confirmation on every call (ACI `requireUserConfirm`).
    #[serde(default)]
    pub require_user_confirm: bool,
    /// The level this tool starts from before annotations and flags raise it: [`Risk::Write`]
    /// for every third-party source (CAT-61, ACI-43, CAT-64); built-ins set their own (CAT-65).
    pub base_risk: Risk,
}

impl Capability {
    /// A capability with an empty object schema and the default base risk of its source.
    pub fn new(id: CapabilityId, description: impl Into<String>) -> Self {
        let base_risk = default_base_risk(id.source);
        Self {
            id,
            title: None,
            description: description.into(),
            input_schema: empty_object_schema(),
            output_schema: None,
            annotations: Annotations::default(),
            aci: None,
            require_permission: None,
            require_user_confirm: false,
            base_risk,
        }
    }

    /// The effective risk (CAT-60..CAT-65, ACI-43): the base risk, raised — never lowered — by
    /// `destructiveHint = true`, the ACI `DANGEROUS_ACTION` flag, and the open-world ids
    /// (`http_request`, `browser_script`). `readOnlyHint` never lowers it.
    pub fn risk(&self) -> Risk {
        let mut risk = self.base_risk;
        if self.annotations.destructive_hint == Some(true) {
            risk = risk.max(Risk::High);
        }
        if let Some(aci) = &self.aci
            && aci.flags.contains(&AciFlag::DangerousAction)
        {
            risk = risk.max(Risk::High);
        }
        if self.is_open_world_high_risk() {
            risk = risk.max(Risk::High);
        }
        if self.id.source == Source::SessionMcp {
            risk = risk.max(Risk::Write);
        }
        risk
    }

    /// The annotations the catalog shows: as declared, except that the open-world high-risk ids
    /// always carry `openWorldHint = true` (ACI-43).
    pub fn effective_annotations(&self) -> Annotations {
        let mut a = self.annotations;
        if self.is_open_world_high_risk() {
            a.open_world_hint = Some(true);
        }
        a
    }

    fn is_open_world_high_risk(&self) -> bool {
        matches!(self.id.source, Source::Aci | Source::Builtin)
            && OPEN_WORLD_HIGH_RISK_IDS.contains(&self.id.name.as_str())
    }
}

/// The base risk of a source before annotations: every third-party source is WRITE (CAT-61,
/// CAT-64, ACI-43); built-ins default to WRITE too and lower it explicitly where they are READ.
pub fn default_base_risk(_source: Source) -> Risk {
    Risk::Write
}

/// `{"type":"object","properties":{}}`.
pub fn empty_object_schema() -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::String("object".into()));
    m.insert("properties".into(), Value::Object(Map::new()));
    Value::Object(m)
}

/// What ACI says about a capability beyond the common fields (Appendix E.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AciInfo {
    /// The capability version string (ACI fixes it at `"1.0"`; kept, never used for caching).
    pub version: String,
    /// Declared parameters, in declaration order, with their ACI types.
    pub params: Vec<AciParam>,
    /// Declared result fields.
    pub result: Vec<AciResultField>,
    /// Flags (`BACKGROUND_EXECUTABLE`, `NO_UI_REQUIRED`, `DANGEROUS_ACTION`, others verbatim).
    pub flags: Vec<AciFlag>,
}

/// One declared ACI parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AciParam {
    /// Parameter name (Bundle key).
    pub name: String,
    /// ACI value type.
    #[serde(rename = "type")]
    pub ty: AciType,
    /// Whether the provider requires it.
    pub required: bool,
    /// Description for the model.
    pub description: String,
}

/// One declared ACI result field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AciResultField {
    /// Result key.
    pub name: String,
    /// ACI value type.
    #[serde(rename = "type")]
    pub ty: AciType,
    /// Description.
    pub description: String,
}

/// ACI value types (Appendix E.3 plus seed 003's `json`). Serialized as the ACI spelling.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum AciType {
    /// `string` → JSON Schema `string`.
    String,
    /// `int` → `integer` (32-bit).
    Int,
    /// `boolean` → `boolean`.
    Boolean,
    /// `double` → `number`.
    Double,
    /// `byte[]` → base64 `string`.
    Bytes,
    /// `json` → any JSON; serialized to compact text in the Bundle (ACI-42).
    Json,
    /// A type capbridge does not know, kept verbatim; accepts any JSON (ACI-42).
    Other(String),
}

impl AciType {
    /// Parses an ACI type name; unknown names become [`AciType::Other`].
    pub fn parse(s: &str) -> Self {
        match s {
            "string" | "String" => AciType::String,
            "int" | "integer" | "Integer" => AciType::Int,
            "boolean" | "bool" | "Boolean" => AciType::Boolean,
            "double" | "Double" => AciType::Double,
            "byte[]" | "bytes" => AciType::Bytes,
            "json" | "JSON" => AciType::Json,
            other => AciType::Other(other.to_owned()),
        }
    }

    /// The canonical ACI spelling.
    pub fn as_str(&self) -> &str {
        match self {
            AciType::String => "string",
            AciType::Int => "int",
            AciType::Boolean => "boolean",
            AciType::Double => "double",
            AciType::Bytes => "byte[]",
            AciType::Json => "json",
            AciType::Other(s) => s,
        }
    }
}

impl From<String> for AciType {
    fn from(s: String) -> Self {
        AciType::parse(&s)
    }
}

impl From<AciType> for String {
    fn from(t: AciType) -> Self {
        t.as_str().to_owned()
    }
}

/// ACI capability flags (Appendix E.3). Serialized as the wire spelling.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum AciFlag {
    /// `BACKGROUND_EXECUTABLE` (seed 003: `FLAG_BACKGROUND`): catalog metadata, not shown to
    /// the model (ACI-43).
    BackgroundExecutable,
    /// `NO_UI_REQUIRED`.
    NoUiRequired,
    /// `DANGEROUS_ACTION`: risk HIGH, caller needs `ai.aci.permission.CALL_DANGEROUS`.
    DangerousAction,
    /// Any other flag, kept verbatim.
    Other(String),
}

impl AciFlag {
    /// Parses a flag name (accepting seed 003's `FLAG_BACKGROUND` spelling).
    pub fn parse(s: &str) -> Self {
        match s {
            "BACKGROUND_EXECUTABLE" | "FLAG_BACKGROUND" | "BACKGROUND" => {
                AciFlag::BackgroundExecutable
            }
            "NO_UI_REQUIRED" => AciFlag::NoUiRequired,
            "DANGEROUS_ACTION" => AciFlag::DangerousAction,
            other => AciFlag::Other(other.to_owned()),
        }
    }

    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            AciFlag::BackgroundExecutable => "BACKGROUND_EXECUTABLE",
            AciFlag::NoUiRequired => "NO_UI_REQUIRED",
            AciFlag::DangerousAction => "DANGEROUS_ACTION",
            AciFlag::Other(s) => s,
        }
    }
}

impl From<String> for AciFlag {
    fn from(s: String) -> Self {
        AciFlag::parse(&s)
    }
}

impl From<AciFlag> for String {
    fn from(f: AciFlag) -> Self {
        f.as_str().to_owned()
    }
}
