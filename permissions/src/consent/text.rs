//! Prompt text. Every third-party string (tool and plugin names, argument names and values, app
//! labels) goes through SEC-04 before it reaches a surface; the package name is sanitized but
//! never truncated (CNS-08).

use capability_model::{CapabilityId, Risk};
use serde_json::{Map, Value};

use super::{CallerChoice, Choice, ConsentId, risk_label};
use crate::identity::{CertDigest, Principal};
use crate::limits::CONSENT_ARGUMENTS_SHOWN;
use crate::sanitize::{SanitizeConfig, sanitize_field, sanitize_untruncated};

/// Who started the work a tool call belongs to, as the prompt names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Initiator {
    /// A third-party app: its real, kernel-resolved package and display label.
    App {
        /// Package (never truncated).
        package: String,
        /// Label (display only).
        label: Option<String>,
    },
    /// capbridge's own UI.
    SelfUi,
    /// A paired desktop client.
    Desktop,
}

impl Initiator {
    /// The initiator of work started by `p`.
    pub fn of(p: &Principal) -> Self {
        match p {
            Principal::App(c) => Initiator::App {
                package: c.identity.package.clone(),
                label: c.label.clone(),
            },
            Principal::SelfUi => Initiator::SelfUi,
            Principal::Desktop => Initiator::Desktop,
        }
    }
}

/// Everything a consent prompt is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsentRequest {
    /// The tool's raw triple.
    pub capability: CapabilityId,
    /// Human title of the tool, when it has one (third-party text).
    pub title: Option<String>,
    /// Effective risk.
    pub risk: Risk,
    /// The arguments the model passed (third-party text).
    pub arguments: Map<String, Value>,
    /// Who started it.
    pub initiator: Initiator,
    /// The choices to offer (from the decision pipeline).
    pub choices: Vec<Choice>,
}

/// A tool prompt as a surface shows it: sanitized lines and the offered choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPrompt {
    /// The request id.
    pub id: ConsentId,
    /// The risk level.
    pub risk: Risk,
    /// First line.
    pub title: String,
    /// Further lines (source, initiator, arguments).
    pub lines: Vec<String>,
    /// The choices offered, in display order.
    pub choices: Vec<Choice>,
}

impl ToolPrompt {
    /// Builds the prompt text for `req`.
    pub fn build(id: ConsentId, req: &ConsentRequest, cfg: SanitizeConfig) -> Self {
        let tool = sanitize_field(&req.capability.name, cfg);
        let title = match &req.title {
            Some(t) => format!("Allow tool {tool} ({}) to run?", sanitize_field(t, cfg)),
            None => format!("Allow tool {tool} to run?"),
        };
        let mut lines = Vec::new();
        let id_ = &req.capability;
        if id_.provider.is_empty() {
            lines.push(format!(
                "Source: {} server {}",
                id_.source,
                sanitize_field(&id_.server, cfg)
            ));
        } else {
            lines.push(format!(
                "Source: {} plugin {} server {}",
                id_.source,
                sanitize_field(&id_.provider, cfg),
                sanitize_field(&id_.server, cfg)
            ));
        }
        lines.push(format!("Risk: {}", risk_label(req.risk)));
        lines.push(match &req.initiator {
            Initiator::App { package, label } => match label {
                Some(l) => format!(
                    "Initiated by {} ({})",
                    sanitize_field(l, cfg),
                    sanitize_untruncated(package)
                ),
                None => format!("Initiated by {}", sanitize_untruncated(package)),
            },
            Initiator::SelfUi => "Initiated by you in capbridge".to_owned(),
            Initiator::Desktop => "Initiated by the paired desktop client".to_owned(),
        });
        if req.arguments.is_empty() {
            lines.push("Arguments: none".to_owned());
        } else {
            lines.push("Arguments:".to_owned());
            for (k, v) in req.arguments.iter().take(CONSENT_ARGUMENTS_SHOWN) {
                let value = match v {
                    Value::String(s) => sanitize_field(s, cfg),
                    other => sanitize_field(&other.to_string(), cfg),
                };
                lines.push(format!("  {}: {}", sanitize_field(k, cfg), value));
            }
            let more = req.arguments.len().saturating_sub(CONSENT_ARGUMENTS_SHOWN);
            if more > 0 {
                lines.push(format!("  … and {more} more argument(s) not shown"));
            }
        }
        Self {
            id,
            risk: req.risk,
            title,
            lines,
            choices: req.choices.clone(),
        }
    }

    /// The whole prompt as text, one line per entry, choices numbered from 1.
    pub fn render(&self) -> String {
        let mut s = self.title.clone();
        for l in &self.lines {
            s.push('\n');
            s.push_str(l);
        }
        for (i, c) in self.choices.iter().enumerate() {
            s.push_str(&format!("\n  [{}] {}", i + 1, c.label()));
        }
        s
    }
}

/// The caller authorization prompt (AUT-04): app label, package, first 12 digest characters;
/// only Allow and Deny, Deny being the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerPrompt {
    /// The package asking (real, kernel-resolved).
    pub package: String,
    /// The digest it is signed with.
    pub cert: CertDigest,
    /// `允许「App」使用 AgentOS 吗？`
    pub title: String,
    /// Body lines.
    pub lines: Vec<String>,
    /// Always `[Allow, Deny]`.
    pub choices: [CallerChoice; 2],
    /// Always `Deny` (AUT-04 "默认焦点在拒绝").
    pub default_choice: CallerChoice,
}

impl CallerPrompt {
    /// Builds the prompt for a caller.
    pub fn build(
        package: &str,
        cert: CertDigest,
        label: Option<&str>,
        cfg: SanitizeConfig,
    ) -> Self {
        let shown_name = match label {
            Some(l) => sanitize_field(l, cfg),
            None => sanitize_untruncated(package),
        };
        let title = format!("允许{shown_name}使用 AgentOS 吗？");
        let lines = vec![
            format!("App: {shown_name}"),
            format!("Package: {}", sanitize_untruncated(package)),
            format!("Signing certificate SHA-256: {}…", cert.short()),
            // C-18: the seed's "every tool asks each time" is inaccurate; say what is true.
            "它可以让 AgentOS 替你回答问题；工具调用会按你的确认设置再问你。".to_owned(),
        ];
        Self {
            package: package.to_owned(),
            cert,
            title,
            lines,
            choices: [CallerChoice::Allow, CallerChoice::Deny],
            default_choice: CallerChoice::Deny,
        }
    }

    /// The prompt as text.
    pub fn render(&self) -> String {
        let mut s = self.title.clone();
        for l in &self.lines {
            s.push('\n');
            s.push_str(l);
        }
        s.push_str("\n  [1] allow\n  [2] deny (default)");
        s
    }
}
