//! `Capability.create(id, description).addParam(…).addFlag(…)` (ACI-11, ACI-13, Appendix E.3),
//! named [`CapabilitySpec`] so it does not clash with [`capability_model::Capability`].

use serde_json::{Map, Value, json};

use crate::wire::DEFAULT_VERSION;

/// One declared parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamSpec {
    /// Bundle key.
    pub name: String,
    /// ACI type: `string`, `int`, `boolean`, `double`, `byte[]` or `json`.
    pub ty: String,
    /// Whether a call must carry it (non-blank, for strings).
    pub required: bool,
    /// Description for the model.
    pub description: String,
}

/// One declared result field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultSpec {
    /// Bundle key.
    pub name: String,
    /// ACI type.
    pub ty: String,
    /// Description.
    pub description: String,
}

/// A capability as a provider declares it; [`CapabilitySpec::to_json`] is the E.3 JSON that
/// `getCapabilities()` returns.
///
/// ```
/// use aci_adapter::provider::CapabilitySpec;
/// let cap = CapabilitySpec::create("get_weather", "Current weather for a city.")
///     .add_param("city", "string", true, "City name")
///     .add_flag(CapabilitySpec::FLAG_BACKGROUND);
/// let json = cap.to_json();
/// assert_eq!(json["version"], "1.0");
/// assert_eq!(json["params"][0]["required"], true);
/// assert_eq!(json["flags"][0], "BACKGROUND_EXECUTABLE");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapabilitySpec {
    id: String,
    description: String,
    params: Vec<ParamSpec>,
    result: Vec<ResultSpec>,
    flags: Vec<String>,
    require_permission: Option<String>,
    require_user_confirm: bool,
}

impl CapabilitySpec {
    /// `FLAG_BACKGROUND` of seed 003: background execution is supported.
    pub const FLAG_BACKGROUND: &'static str = "BACKGROUND_EXECUTABLE";
    /// The capability needs no UI.
    pub const FLAG_NO_UI_REQUIRED: &'static str = "NO_UI_REQUIRED";
    /// The capability is dangerous: callers need `ai.aci.permission.CALL_DANGEROUS`.
    pub const FLAG_DANGEROUS_ACTION: &'static str = "DANGEROUS_ACTION";

    /// `Capability.create(id, description)`: `description` is text for the model, not a
    /// version (ACI-11); the version is always `"1.0"`.
    pub fn create(id: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            description: description.into(),
            params: Vec::new(),
            result: Vec::new(),
            flags: Vec::new(),
            require_permission: None,
            require_user_confirm: false,
        }
    }

    /// `addParam(name, type, required, description)` (ACI-13).
    pub fn add_param(
        mut self,
        name: impl Into<String>,
        ty: impl Into<String>,
        required: bool,
        description: impl Into<String>,
    ) -> Self {
        self.params.push(ParamSpec {
            name: name.into(),
            ty: ty.into(),
            required,
            description: description.into(),
        });
        self
    }

    /// Declares a result field.
    pub fn add_result(
        mut self,
        name: impl Into<String>,
        ty: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.result.push(ResultSpec {
            name: name.into(),
            ty: ty.into(),
            description: description.into(),
        });
        self
    }

    /// `addFlag(flag)`; seed 003's `FLAG_BACKGROUND` spelling is written as
    /// `BACKGROUND_EXECUTABLE`. A repeated flag is kept once.
    pub fn add_flag(mut self, flag: impl Into<String>) -> Self {
        let mut flag = flag.into();
        if flag == "FLAG_BACKGROUND" {
            flag = Self::FLAG_BACKGROUND.to_owned();
        }
        if !self.flags.contains(&flag) {
            self.flags.push(flag);
        }
        self
    }

    /// A permission the caller must hold (layer 5, enforced by capbridge, E.6).
    pub fn require_permission(mut self, permission: impl Into<String>) -> Self {
        self.require_permission = Some(permission.into());
        self
    }

    /// Ask the user on every call (layer 5, through the consent broker).
    pub fn require_user_confirm(mut self, yes: bool) -> Self {
        self.require_user_confirm = yes;
        self
    }

    /// The id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Declared parameters.
    pub fn params(&self) -> &[ParamSpec] {
        &self.params
    }

    /// Declared result fields.
    pub fn results(&self) -> &[ResultSpec] {
        &self.result
    }

    /// Flags.
    pub fn flags(&self) -> &[String] {
        &self.flags
    }

    /// Whether a flag is set.
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// The E.3 capability JSON.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("id".into(), json!(self.id));
        o.insert("version".into(), json!(DEFAULT_VERSION));
        o.insert("description".into(), json!(self.description));
        o.insert(
            "params".into(),
            Value::Array(
                self.params
                    .iter()
                    .map(|p| {
                        json!({"name": p.name, "type": p.ty, "required": p.required,
                               "description": p.description})
                    })
                    .collect(),
            ),
        );
        o.insert(
            "result".into(),
            Value::Array(
                self.result
                    .iter()
                    .map(|r| json!({"name": r.name, "type": r.ty, "description": r.description}))
                    .collect(),
            ),
        );
        o.insert("flags".into(), json!(self.flags));
        if let Some(p) = &self.require_permission {
            o.insert("requirePermission".into(), json!(p));
        }
        o.insert(
            "requireUserConfirm".into(),
            json!(self.require_user_confirm),
        );
        Value::Object(o)
    }

    /// [`CapabilitySpec::to_json`] as compact text (one `getCapabilities()` entry).
    pub fn to_json_string(&self) -> String {
        self.to_json().to_string()
    }
}
