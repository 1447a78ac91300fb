//! The catalog: one snapshot of every capability, named, indexed, filtered and validated
//! (CAT-03..CAT-06, CAT-14..CAT-17, CAT-31..CAT-39, CAT-51..CAT-53, CAT-70).
//!
//! ```
//! use capability_model::{Capability, CapabilityId, Catalog, SessionMode, ToolScope};
//! use capability_model::scope::ScopeEntry;
//! let cat = Catalog::build(vec![
//!     Capability::new(CapabilityId::mcp("com.example.notes", "main", "list"), "List notes."),
//!     Capability::new(CapabilityId::mcp("com.example.notes", "main", "add"), "Add a note."),
//! ]);
//! let scope = ToolScope::restricted([ScopeEntry { plugin: "com.example.notes".into(), tool: "list".into() }]);
//! let visible: Vec<_> = cat.visible(&scope, SessionMode::Default).map(|e| e.name.as_str()).collect();
//! assert_eq!(visible, ["mcp__com_example_notes__main__list"]);
//! assert!(cat.resolve("mcp__com_example_notes__main__add", &scope, SessionMode::Default).is_err());
//! ```

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::capability::Capability;
use crate::id::{CapabilityId, Source};
use crate::issues::{IssueKind, ProviderIssue};
use crate::limits::MAX_JSON_DEPTH;
use crate::naming::{self, NameFamily, NameKeyRef};
use crate::risk::Risk;
use crate::scope::{ScopeEntry, SessionMode, ToolScope};
use crate::validate::{exceeds_depth, tool_name_problem};

/// One named catalog entry.
#[derive(Debug)]
pub struct Entry {
    /// The final model-facing name (never persisted as a key, CAT-18).
    pub name: String,
    /// The capability.
    pub capability: Capability,
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl Entry {
    fn new(name: String, capability: Capability) -> Self {
        Self {
            name,
            capability,
            validator: OnceLock::new(),
        }
    }

    /// Validates call arguments against the input schema. `null` counts as `{}`. The error is
    /// one sentence naming the field, never echoing a value.
    pub fn validate_arguments(
        &self,
        arguments: &Value,
    ) -> Result<Map<String, Value>, ArgumentError> {
        let args = match arguments {
            Value::Null => Map::new(),
            Value::Object(m) => m.clone(),
            _ => return Err(ArgumentError("the arguments must be a JSON object".into())),
        };
        if exceeds_depth(arguments, MAX_JSON_DEPTH) {
            return Err(ArgumentError(format!(
                "the arguments are nested deeper than {MAX_JSON_DEPTH} levels"
            )));
        }
        let validator = self
            .validator
            .get_or_init(|| {
                jsonschema::validator_for(&self.capability.input_schema)
                    .map_err(|_| "the tool's input schema is not a valid JSON Schema".to_owned())
            })
            .as_ref()
            .map_err(|e| ArgumentError(e.clone()))?;
        let value = Value::Object(args);
        if let Some(err) = validator.iter_errors(&value).next() {
            return Err(ArgumentError(describe_error(&err)));
        }
        match value {
            Value::Object(m) => Ok(m),
            _ => Ok(Map::new()),
        }
    }
}

/// Arguments that do not match the tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArgumentError(pub String);

/// The tool is not in the catalog, not in the session's scope, or hidden by the mode. One
/// error for all three, so a caller cannot tell them apart (CAT-37, CAT-53).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool_not_in_catalog: no tool with this name is available in this session")]
pub struct NotInCatalog;

/// A capability left out of the catalog, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogIssue {
    /// The capability's id.
    pub id: CapabilityId,
    /// What is wrong.
    pub issue: ProviderIssue,
}

/// An immutable catalog snapshot (CAT-04: rebuilt whole on every change).
#[derive(Debug, Default)]
pub struct Catalog {
    /// Sorted by name: lookups are binary searches, no key copies.
    entries: Vec<Entry>,
    /// Indices of plugin and ACI entries, sorted by (plugin, raw tool).
    by_plugin_tool: Vec<usize>,
    /// Indices of session and built-in entries (not subject to toolScope).
    unscoped: Vec<usize>,
    issues: Vec<CatalogIssue>,
}

impl Catalog {
    /// Builds a catalog from capabilities of any number of sources. Invalid or duplicate
    /// capabilities are left out and reported in [`Catalog::issues`]; the rest always builds.
    /// Names depend only on the set of ids (CAT-15); entries are sorted by name.
    pub fn build(capabilities: impl IntoIterator<Item = Capability>) -> Self {
        let mut issues = Vec::new();
        let mut named: Vec<Capability> = Vec::new();
        let mut builtin: Vec<Capability> = Vec::new();
        for cap in capabilities {
            match check(&cap) {
                Some(issue) => issues.push(CatalogIssue {
                    id: cap.id.clone(),
                    issue,
                }),
                None if cap.id.source == Source::Builtin => builtin.push(cap),
                None => named.push(cap),
            }
        }
        let duplicate = |c: &Capability| CatalogIssue {
            id: c.id.clone(),
            issue: ProviderIssue::new(
                IssueKind::DuplicateName,
                "the same tool id was listed twice; every copy is left out",
            )
            .entry(&c.id.name),
        };

        // Naming finds repeated ids too (CAT-16): every copy is left out, whatever the order.
        let assignment = {
            let keys: Vec<NameKeyRef<'_>> = named.iter().map(name_key).collect();
            naming::assign_lenient(&keys)
        };
        for &i in &assignment.duplicates {
            issues.push(duplicate(&named[i]));
        }
        for &i in &assignment.unresolved {
            issues.push(CatalogIssue {
                id: named[i].id.clone(),
                issue: ProviderIssue::new(
                    IssueKind::DuplicateName,
                    "tool names could not be made unique",
                ),
            });
        }
        // Entries in final-name order (the assignment already sorted them), built-ins merged in.
        let mut slots: Vec<Option<(String, Capability)>> = assignment
            .names
            .into_iter()
            .zip(named)
            .map(|(name, cap)| name.map(|n| (n, cap)))
            .collect();
        let mut entries: Vec<Entry> = Vec::with_capacity(assignment.sorted.len() + builtin.len());
        for i in assignment.sorted {
            if let Some((name, cap)) = slots[i].take() {
                entries.push(Entry::new(name, cap));
            }
        }
        drop(slots);
        // Built-ins keep their own names; repeats are left out like any other.
        builtin.sort_by(|a, b| a.id.name.cmp(&b.id.name));
        let mut builtin = builtin.into_iter().peekable();
        while let Some(first) = builtin.next() {
            let mut run = vec![first];
            while let Some(next) = builtin.next_if(|c| c.id.name == run[0].id.name) {
                run.push(next);
            }
            if run.len() == 1 {
                let c = run.remove(0);
                let pos = entries.partition_point(|e| e.name < c.id.name);
                entries.insert(pos, Entry::new(c.id.name.clone(), c));
            } else {
                issues.extend(run.iter().map(duplicate));
            }
        }
        debug_assert!(entries.is_sorted_by(|a, b| a.name < b.name));
        let mut by_plugin_tool = Vec::with_capacity(entries.len());
        let mut unscoped = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            match e.capability.id.source {
                Source::Mcp | Source::Aci => by_plugin_tool.push(i),
                Source::SessionMcp | Source::Builtin => unscoped.push(i),
            }
        }
        by_plugin_tool.sort_by(|&a, &b| {
            let (x, y) = (&entries[a].capability.id, &entries[b].capability.id);
            (x.provider.as_str(), x.name.as_str()).cmp(&(y.provider.as_str(), y.name.as_str()))
        });
        Self {
            entries,
            by_plugin_tool,
            unscoped,
            issues,
        }
    }

    /// Every entry, sorted by name.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the catalog has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Capabilities left out, with reasons.
    pub fn issues(&self) -> &[CatalogIssue] {
        &self.issues
    }

    /// Looks up a name in the whole catalog, ignoring scope and mode.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| e.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// Entries of plugin or ACI tools with this (plugin, raw tool) pair (one per server).
    fn plugin_tool<'a>(
        &'a self,
        plugin: &'a str,
        tool: &'a str,
    ) -> impl Iterator<Item = usize> + 'a {
        let key = (plugin, tool);
        let id = |i: usize| {
            let id = &self.entries[i].capability.id;
            (id.provider.as_str(), id.name.as_str())
        };
        let start = self.by_plugin_tool.partition_point(|&i| id(i) < key);
        self.by_plugin_tool[start..]
            .iter()
            .copied()
            .take_while(move |&i| id(i) == key)
    }

    /// The entry with this raw id, if any.
    pub fn by_id(&self, id: &CapabilityId) -> Option<&Entry> {
        match id.source {
            Source::Mcp | Source::Aci => self
                .plugin_tool(&id.provider, &id.name)
                .map(|i| &self.entries[i])
                .find(|e| &e.capability.id == id),
            _ => self
                .unscoped
                .iter()
                .map(|&i| &self.entries[i])
                .find(|e| &e.capability.id == id),
        }
    }

    /// Whether `entry` is visible under `scope` and `mode` (CAT-31, CAT-38, CAT-39, CAT-51,
    /// CAT-52, CAT-70, SMS-09).
    pub fn is_visible(entry: &Entry, scope: &ToolScope, mode: SessionMode) -> bool {
        let cap = &entry.capability;
        let in_scope = match cap.id.source {
            Source::Mcp | Source::Aci => scope.allows(&cap.id.provider, &cap.id.name),
            Source::SessionMcp => true,
            Source::Builtin => scope.is_unrestricted(),
        };
        in_scope
            && match mode {
                SessionMode::Default => true,
                SessionMode::ReadOnly => {
                    cap.id.source != Source::SessionMcp && cap.risk() == Risk::Read
                }
                SessionMode::Chat => false,
            }
    }

    /// The entries the model may see in a session, sorted by name.
    pub fn visible<'a>(
        &'a self,
        scope: &ToolScope,
        mode: SessionMode,
    ) -> Box<dyn Iterator<Item = &'a Entry> + 'a> {
        if mode == SessionMode::Chat {
            return Box::new(std::iter::empty());
        }
        match scope.entries() {
            None => Box::new(
                self.entries
                    .iter()
                    .filter(move |e| Self::is_visible(e, &ToolScope::UNRESTRICTED, mode)),
            ),
            Some(set) => {
                let mut idx: Vec<usize> = set
                    .iter()
                    .flat_map(|ScopeEntry { plugin, tool }| self.plugin_tool(plugin, tool))
                    .chain(self.unscoped.iter().copied())
                    .filter(|&i| Self::is_visible(&self.entries[i], scope, mode))
                    .collect();
                idx.sort_unstable();
                idx.dedup();
                Box::new(idx.into_iter().map(move |i| &self.entries[i]))
            }
        }
    }

    /// Resolves a model-facing name for dispatch: step 1 of CAT-69. A name outside the catalog,
    /// outside the scope or hidden by the mode gets the same [`NotInCatalog`].
    pub fn resolve(
        &self,
        name: &str,
        scope: &ToolScope,
        mode: SessionMode,
    ) -> Result<&Entry, NotInCatalog> {
        self.get(name)
            .filter(|e| Self::is_visible(e, scope, mode))
            .ok_or(NotInCatalog)
    }

    /// `ToolCall.ref` (CAT-42): the scope entry a call matches, only in restricted sessions.
    pub fn scope_ref(entry: &Entry, scope: &ToolScope) -> Option<ScopeEntry> {
        let id = &entry.capability.id;
        match (scope.entries(), id.source) {
            (Some(_), Source::Mcp | Source::Aci) if scope.allows(&id.provider, &id.name) => {
                Some(ScopeEntry {
                    plugin: id.provider.clone(),
                    tool: id.name.clone(),
                })
            }
            _ => None,
        }
    }
}

fn name_key(c: &Capability) -> NameKeyRef<'_> {
    let family = match c.id.source {
        Source::SessionMcp => NameFamily::Session,
        _ => NameFamily::Plugin,
    };
    NameKeyRef {
        family,
        plugin: &c.id.provider,
        server: &c.id.server,
        tool: &c.id.name,
    }
}

/// Structural checks of one capability before naming.
fn check(cap: &Capability) -> Option<ProviderIssue> {
    let id = &cap.id;
    if id.source == Source::Builtin {
        if !naming::is_valid_final_name(&id.name) {
            return Some(
                ProviderIssue::new(
                    IssueKind::InvalidName,
                    "a built-in tool name must match [A-Za-z0-9_-]{1,64}",
                )
                .entry(&id.name),
            );
        }
    } else {
        if let Some(p) = tool_name_problem(&id.name) {
            return Some(ProviderIssue::new(IssueKind::InvalidName, p).entry(&id.name));
        }
        if id.server.is_empty() || (id.source != Source::SessionMcp && id.provider.is_empty()) {
            return Some(
                ProviderIssue::new(IssueKind::InvalidName, "the plugin or server name is empty")
                    .entry(&id.name),
            );
        }
    }
    if let Some(p) = shallow_schema_problem(&cap.input_schema) {
        return Some(ProviderIssue::new(IssueKind::InvalidSchema, p).entry(&id.name));
    }
    None
}

fn shallow_schema_problem(schema: &Value) -> Option<&'static str> {
    let Some(obj) = schema.as_object() else {
        return Some("the input schema is not a JSON object");
    };
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Some("the input schema's \"type\" is not \"object\"");
    }
    if exceeds_depth(schema, MAX_JSON_DEPTH) {
        return Some("the input schema is nested too deeply");
    }
    None
}

/// One sentence for a schema violation, naming the field and never the value.
fn describe_error(err: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    let path = err.instance_path().to_string();
    let field = path.trim_start_matches('/').replace('/', ".");
    let at = if field.is_empty() {
        "the arguments".to_owned()
    } else {
        format!("argument `{field}`")
    };
    let prefix = if field.is_empty() {
        String::new()
    } else {
        format!("{field}.")
    };
    match err.kind() {
        K::Required { property } => {
            let p = property
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| property.to_string());
            format!("missing required argument `{prefix}{p}`")
        }
        K::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected
                .iter()
                .map(|u| format!("`{prefix}{u}`"))
                .collect();
            format!("unexpected argument {}", names.join(", "))
        }
        K::Type { kind } => format!("{at} must be of type {}", type_kind_text(kind)),
        K::Enum { .. } | K::Constant { .. } => format!("{at} is not one of the allowed values"),
        K::MinLength { limit } => format!("{at} must be at least {limit} characters long"),
        K::MaxLength { limit } => format!("{at} must be at most {limit} characters long"),
        K::Minimum { limit } | K::ExclusiveMinimum { limit } => {
            format!("{at} is below the minimum {limit}")
        }
        K::Maximum { limit } | K::ExclusiveMaximum { limit } => {
            format!("{at} is above the maximum {limit}")
        }
        K::Pattern { .. } => format!("{at} does not match the required pattern"),
        K::Format { format } => format!("{at} is not a valid {format}"),
        K::MinItems { limit } => format!("{at} must have at least {limit} items"),
        K::MaxItems { limit } => format!("{at} must have at most {limit} items"),
        _ => format!("{at} does not match the tool's input schema"),
    }
}

fn type_kind_text(kind: &jsonschema::error::TypeKind) -> String {
    use jsonschema::error::TypeKind;
    match kind {
        TypeKind::Single(t) => t.to_string(),
        TypeKind::Multiple(set) => {
            let v: Vec<String> = set.iter().map(|t| t.to_string()).collect();
            v.join(" or ")
        }
    }
}
