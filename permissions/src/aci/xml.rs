//! `aci_permissions.xml`: the provider's layer-4 policy and capability-level requirements.
//! The format is documented in `docs/aci-permissions.md`.
//!
//! Parsing is strict and fails closed: a file over 1 MiB, a DOCTYPE (no DTDs, so no entity
//! expansion at all), an unknown element or attribute, text content, an unknown entity
//! reference, a bad value or a newer version is an error naming the rule broken, never a
//! partial policy.

use std::collections::BTreeMap;
use std::path::Path;

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};

use crate::identity::{CertDigest, Identity};
use crate::limits::ACI_PERMISSIONS_XML_MAX_BYTES;

/// The format version this build reads.
pub const ACI_PERMISSIONS_VERSION: u32 = 1;
/// The root element.
pub const ROOT_ELEMENT: &str = "aci-permissions";

/// Allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Let the call through this layer.
    Allow,
    /// Refuse it.
    Deny,
}

/// One `<allow>` / `<deny>` rule. Absent matchers match anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Allow or deny.
    pub effect: Effect,
    /// Caller package to match.
    pub package: Option<String>,
    /// Caller signing-certificate digest to match.
    pub cert: Option<CertDigest>,
    /// Capability id to match (`None` = every capability).
    pub capability: Option<String>,
}

impl Rule {
    fn matches(&self, caller: &Identity, capability: &str) -> bool {
        self.package.as_ref().is_none_or(|p| *p == caller.package)
            && self.cert.is_none_or(|c| c == caller.signing_cert_sha256)
            && self.capability.as_ref().is_none_or(|c| c == capability)
    }
}

/// `<capability id=… requirePermission=… requireUserConfirm=…/>`: layer-5 requirements added
/// on top of what the capability itself declares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapabilityRule {
    /// Permissions the caller must hold (each `requirePermission`, space separated).
    pub require_permissions: Vec<String>,
    /// Ask the user on every call.
    pub require_user_confirm: bool,
}

/// A parsed `aci_permissions.xml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AciPolicy {
    /// Effect when no rule matches.
    pub default: Effect,
    /// Rules in file order.
    pub rules: Vec<Rule>,
    /// Capability-level requirements by capability id.
    pub capabilities: BTreeMap<String, CapabilityRule>,
}

/// Why a policy file was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AciPolicyError {
    /// Larger than 1 MiB.
    #[error("aci_permissions.xml is {size} bytes; the limit is {max}")]
    TooLarge {
        /// Size found.
        size: u64,
        /// Limit.
        max: usize,
    },
    /// Not UTF-8.
    #[error("aci_permissions.xml is not UTF-8")]
    NotUtf8,
    /// Could not be read.
    #[error("cannot read aci_permissions.xml: {0}")]
    Io(String),
    /// Not well-formed XML.
    #[error("aci_permissions.xml is malformed at byte {position}: {detail}")]
    Malformed {
        /// Byte offset.
        position: u64,
        /// Parser message.
        detail: String,
    },
    /// A DOCTYPE: DTDs and entity declarations are never processed.
    #[error("aci_permissions.xml must not contain a DOCTYPE (entity declarations are refused)")]
    Doctype,
    /// An element the format does not define.
    #[error("aci_permissions.xml: unknown element <{0}>")]
    UnknownElement(String),
    /// An attribute the element does not define.
    #[error("aci_permissions.xml: unknown attribute `{attribute}` on <{element}>")]
    UnknownAttribute {
        /// Element.
        element: String,
        /// Attribute.
        attribute: String,
    },
    /// A required attribute is missing.
    #[error("aci_permissions.xml: <{element}> needs attribute `{attribute}`")]
    MissingAttribute {
        /// Element.
        element: String,
        /// Attribute.
        attribute: &'static str,
    },
    /// An attribute value is invalid (the value is not echoed).
    #[error("aci_permissions.xml: invalid `{attribute}` on <{element}>: {rule}")]
    InvalidValue {
        /// Element.
        element: String,
        /// Attribute.
        attribute: String,
        /// What a valid value looks like.
        rule: &'static str,
    },
    /// Text, CDATA or entity references outside attribute values.
    #[error("aci_permissions.xml: text content is not allowed (in <{0}>)")]
    UnexpectedText(String),
    /// An element in the wrong place (nesting, a second root).
    #[error("aci_permissions.xml: <{0}> is not allowed here")]
    Misplaced(String),
    /// The root is missing or is not `<aci-permissions>`.
    #[error("aci_permissions.xml: the root element must be <aci-permissions>")]
    BadRoot,
    /// A version newer than this build reads.
    #[error("aci_permissions.xml: version {0} is not supported (this build reads version 1)")]
    UnsupportedVersion(String),
    /// Two `<capability>` elements for one id.
    #[error("aci_permissions.xml: capability `{0}` is declared twice")]
    DuplicateCapability(String),
}

impl AciPolicy {
    /// The policy of a provider without an `aci_permissions.xml`: ACI's permissive default
    /// (layer 4 passes; the other layers still apply).
    pub fn allow_all() -> Self {
        Self {
            default: Effect::Allow,
            rules: Vec::new(),
            capabilities: BTreeMap::new(),
        }
    }

    /// The policy used when the file exists but is unusable: every call is refused.
    pub fn deny_all() -> Self {
        Self {
            default: Effect::Deny,
            rules: Vec::new(),
            capabilities: BTreeMap::new(),
        }
    }

    /// Layer 4: a matching `deny` wins over a matching `allow`; without a match, the default.
    pub fn evaluate(&self, caller: &Identity, capability: &str) -> Effect {
        let mut allowed = false;
        for r in self.rules.iter().filter(|r| r.matches(caller, capability)) {
            match r.effect {
                Effect::Deny => return Effect::Deny,
                Effect::Allow => allowed = true,
            }
        }
        if allowed { Effect::Allow } else { self.default }
    }

    /// Capability-level requirements declared in the file.
    pub fn capability(&self, id: &str) -> Option<&CapabilityRule> {
        self.capabilities.get(id)
    }

    /// Reads and parses a file (size checked before reading).
    pub fn load(path: &Path) -> Result<Self, AciPolicyError> {
        let meta = std::fs::metadata(path).map_err(|e| AciPolicyError::Io(e.kind().to_string()))?;
        if meta.len() > ACI_PERMISSIONS_XML_MAX_BYTES as u64 {
            return Err(AciPolicyError::TooLarge {
                size: meta.len(),
                max: ACI_PERMISSIONS_XML_MAX_BYTES,
            });
        }
        let bytes = std::fs::read(path).map_err(|e| AciPolicyError::Io(e.kind().to_string()))?;
        Self::parse_bytes(&bytes)
    }

    /// Parses file bytes.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self, AciPolicyError> {
        if bytes.len() > ACI_PERMISSIONS_XML_MAX_BYTES {
            return Err(AciPolicyError::TooLarge {
                size: bytes.len() as u64,
                max: ACI_PERMISSIONS_XML_MAX_BYTES,
            });
        }
        let text = std::str::from_utf8(bytes).map_err(|_| AciPolicyError::NotUtf8)?;
        Self::parse(text)
    }

    /// Parses the XML text.
    pub fn parse(text: &str) -> Result<Self, AciPolicyError> {
        if text.len() > ACI_PERMISSIONS_XML_MAX_BYTES {
            return Err(AciPolicyError::TooLarge {
                size: text.len() as u64,
                max: ACI_PERMISSIONS_XML_MAX_BYTES,
            });
        }
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut reader = quick_xml::Reader::from_str(text);
        {
            let cfg = reader.config_mut();
            cfg.trim_text(true);
            cfg.check_end_names = true;
            cfg.expand_empty_elements = false;
        }
        let mut st = ParseState::default();
        loop {
            let event = reader.read_event().map_err(|e| AciPolicyError::Malformed {
                position: reader.error_position(),
                detail: e.to_string(),
            })?;
            match event {
                Event::Eof => break,
                Event::Decl(_) | Event::Comment(_) => {}
                Event::DocType(_) => return Err(AciPolicyError::Doctype),
                Event::PI(_) => return Err(AciPolicyError::Misplaced("?pi?".into())),
                Event::Text(_) | Event::CData(_) | Event::GeneralRef(_) => {
                    return Err(AciPolicyError::UnexpectedText(st.current_element()));
                }
                Event::Start(e) => st.element(&e, false)?,
                Event::Empty(e) => st.element(&e, true)?,
                Event::End(_) => st.end(),
            }
        }
        match (st.policy, st.depth) {
            (Some(p), Depth::AfterRoot) => Ok(p),
            _ => Err(AciPolicyError::BadRoot),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Depth {
    #[default]
    BeforeRoot,
    InRoot,
    InChild,
    AfterRoot,
}

#[derive(Debug, Default)]
struct ParseState {
    policy: Option<AciPolicy>,
    depth: Depth,
    open_child: String,
}

impl ParseState {
    fn current_element(&self) -> String {
        match self.depth {
            Depth::InChild => self.open_child.clone(),
            _ => ROOT_ELEMENT.to_owned(),
        }
    }

    fn element(&mut self, e: &BytesStart<'_>, is_empty: bool) -> Result<(), AciPolicyError> {
        let name = e.name().as_ref().to_owned();
        match self.depth {
            Depth::BeforeRoot => {
                if name != ROOT_ELEMENT {
                    return Err(if is_known_child(&name) {
                        AciPolicyError::BadRoot
                    } else {
                        AciPolicyError::UnknownElement(name)
                    });
                }
                self.policy = Some(parse_root(e)?);
                self.depth = if is_empty {
                    Depth::AfterRoot
                } else {
                    Depth::InRoot
                };
            }
            Depth::InRoot => {
                let p = self.policy.as_mut().ok_or(AciPolicyError::BadRoot)?;
                match name.as_str() {
                    "allow" => p.rules.push(parse_rule(e, Effect::Allow, &name)?),
                    "deny" => p.rules.push(parse_rule(e, Effect::Deny, &name)?),
                    "capability" => {
                        let (id, rule) = parse_capability(e)?;
                        if p.capabilities.insert(id.clone(), rule).is_some() {
                            return Err(AciPolicyError::DuplicateCapability(id));
                        }
                    }
                    ROOT_ELEMENT => return Err(AciPolicyError::Misplaced(name)),
                    _ => return Err(AciPolicyError::UnknownElement(name)),
                }
                if !is_empty {
                    self.depth = Depth::InChild;
                    self.open_child = name;
                }
            }
            Depth::InChild | Depth::AfterRoot => {
                return Err(if is_known_child(&name) || name == ROOT_ELEMENT {
                    AciPolicyError::Misplaced(name)
                } else {
                    AciPolicyError::UnknownElement(name)
                });
            }
        }
        Ok(())
    }

    fn end(&mut self) {
        self.depth = match self.depth {
            Depth::InChild => {
                self.open_child.clear();
                Depth::InRoot
            }
            Depth::InRoot => Depth::AfterRoot,
            other => other,
        };
    }
}

fn is_known_child(name: &str) -> bool {
    matches!(name, "allow" | "deny" | "capability")
}

fn attributes(e: &BytesStart<'_>, element: &str) -> Result<Vec<(String, String)>, AciPolicyError> {
    let mut out = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(|err| AciPolicyError::Malformed {
            position: 0,
            detail: err.to_string(),
        })?;
        let key = a.key.as_ref().to_owned();
        let value = a
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|_| AciPolicyError::InvalidValue {
                element: element.to_owned(),
                attribute: key.clone(),
                rule: "only the five predefined XML entities may be used",
            })?
            .into_owned();
        out.push((key, value));
    }
    Ok(out)
}

fn invalid(element: &str, attribute: &str, rule: &'static str) -> AciPolicyError {
    AciPolicyError::InvalidValue {
        element: element.to_owned(),
        attribute: attribute.to_owned(),
        rule,
    }
}

fn parse_root(e: &BytesStart<'_>) -> Result<AciPolicy, AciPolicyError> {
    let mut version = None;
    let mut default = Effect::Deny;
    for (k, v) in attributes(e, ROOT_ELEMENT)? {
        match k.as_str() {
            "version" => version = Some(v),
            "default" => {
                default = match v.as_str() {
                    "allow" => Effect::Allow,
                    "deny" => Effect::Deny,
                    _ => return Err(invalid(ROOT_ELEMENT, "default", "`allow` or `deny`")),
                }
            }
            "xmlns" => {}
            _ => {
                return Err(AciPolicyError::UnknownAttribute {
                    element: ROOT_ELEMENT.to_owned(),
                    attribute: k,
                });
            }
        }
    }
    match version.as_deref() {
        None => {
            return Err(AciPolicyError::MissingAttribute {
                element: ROOT_ELEMENT.to_owned(),
                attribute: "version",
            });
        }
        Some("1") => {}
        Some(v) if v.parse::<u32>().is_ok_and(|n| n > ACI_PERMISSIONS_VERSION) => {
            return Err(AciPolicyError::UnsupportedVersion(v.to_owned()));
        }
        Some(_) => return Err(invalid(ROOT_ELEMENT, "version", "`1`")),
    }
    Ok(AciPolicy {
        default,
        rules: Vec::new(),
        capabilities: BTreeMap::new(),
    })
}

fn valid_package(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.split('.').all(|seg| {
            !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

fn valid_capability_id(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

fn valid_permission(s: &str) -> bool {
    valid_package(s)
}

fn parse_rule(e: &BytesStart<'_>, effect: Effect, element: &str) -> Result<Rule, AciPolicyError> {
    let mut rule = Rule {
        effect,
        package: None,
        cert: None,
        capability: None,
    };
    for (k, v) in attributes(e, element)? {
        match k.as_str() {
            "package" => {
                if !valid_package(&v) {
                    return Err(invalid(
                        element,
                        "package",
                        "a package name like com.example.app",
                    ));
                }
                rule.package = Some(v);
            }
            "cert" => {
                rule.cert = Some(CertDigest::parse(&v).map_err(|_| {
                    invalid(
                        element,
                        "cert",
                        "a SHA-256 digest: 64 hex digits, `:` optional",
                    )
                })?);
            }
            "capability" => {
                if v != "*" {
                    if !valid_capability_id(&v) {
                        return Err(invalid(
                            element,
                            "capability",
                            "`*` or [A-Za-z0-9_.-]{1,128}",
                        ));
                    }
                    rule.capability = Some(v);
                }
            }
            _ => {
                return Err(AciPolicyError::UnknownAttribute {
                    element: element.to_owned(),
                    attribute: k,
                });
            }
        }
    }
    Ok(rule)
}

fn parse_capability(e: &BytesStart<'_>) -> Result<(String, CapabilityRule), AciPolicyError> {
    const EL: &str = "capability";
    let mut id = None;
    let mut rule = CapabilityRule::default();
    for (k, v) in attributes(e, EL)? {
        match k.as_str() {
            "id" => {
                if !valid_capability_id(&v) {
                    return Err(invalid(EL, "id", "[A-Za-z0-9_.-]{1,128}"));
                }
                id = Some(v);
            }
            "requirePermission" => {
                for p in v.split_whitespace() {
                    if !valid_permission(p) {
                        return Err(invalid(
                            EL,
                            "requirePermission",
                            "permission names like com.example.permission.X, space separated",
                        ));
                    }
                    rule.require_permissions.push(p.to_owned());
                }
            }
            "requireUserConfirm" => {
                rule.require_user_confirm = match v.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(invalid(EL, "requireUserConfirm", "`true` or `false`")),
                }
            }
            _ => {
                return Err(AciPolicyError::UnknownAttribute {
                    element: EL.to_owned(),
                    attribute: k,
                });
            }
        }
    }
    let id = id.ok_or(AciPolicyError::MissingAttribute {
        element: EL.to_owned(),
        attribute: "id",
    })?;
    Ok((id, rule))
}
