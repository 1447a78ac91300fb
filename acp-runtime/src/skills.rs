//! Skills (MCP-60..MCP-70) in the agent loop: mcp-adapter's [`SkillCatalog`] gives the system
//! prompt section and answers the built-in `read_skill` (READ risk, CAT-65), offered only in
//! unscoped sessions outside CHAT mode (CAT-38, CAT-52, CAT-70).

use std::sync::Arc;

use capability_model::{
    CallError, CancelToken, Capability, CapabilityId, CapabilitySource, ListError, Listing, Risk,
    Source, ToolOutput,
};
use futures::stream::BoxStream;
use mcp_adapter::SkillCatalog;
use mcp_adapter::skills::{READ_SKILL_TOOL, read_skill_input_schema};
use serde_json::{Map, Value};

use crate::config::SkillsProvider;

/// A [`SkillCatalog`] snapshot as the runtime's [`SkillsProvider`].
#[derive(Debug, Clone)]
pub struct CatalogSkills {
    catalog: Arc<SkillCatalog>,
}

impl CatalogSkills {
    /// Wraps a catalog snapshot.
    pub fn new(catalog: SkillCatalog) -> Self {
        Self {
            catalog: Arc::new(catalog),
        }
    }
}

impl SkillsProvider for CatalogSkills {
    fn prompt_section(&self) -> Option<String> {
        self.catalog.system_prompt_section()
    }

    fn read_skill(&self) -> Arc<dyn CapabilitySource> {
        Arc::new(ReadSkill {
            catalog: Arc::clone(&self.catalog),
        })
    }
}

/// The built-in `read_skill` tool.
struct ReadSkill {
    catalog: Arc<SkillCatalog>,
}

fn id() -> CapabilityId {
    CapabilityId::new(Source::Builtin, "", "", READ_SKILL_TOOL)
}

#[async_trait::async_trait]
impl CapabilitySource for ReadSkill {
    fn source(&self) -> Source {
        Source::Builtin
    }

    async fn list(&self) -> Result<Listing, ListError> {
        if self.catalog.is_empty() {
            return Ok(Listing::default());
        }
        let mut cap = Capability::new(
            id(),
            "Read a Skill listed in the system prompt: its SKILL.md, or one file of it.",
        );
        cap.input_schema = read_skill_input_schema();
        cap.base_risk = Risk::Read;
        Ok(Listing {
            capabilities: vec![cap],
            issues: Vec::new(),
        })
    }

    async fn call(
        &self,
        id_: &CapabilityId,
        arguments: Map<String, Value>,
        _cancel: CancelToken,
    ) -> Result<ToolOutput, CallError> {
        if *id_ != id() {
            return Err(CallError::UnknownTool);
        }
        Ok(match self.catalog.call(&arguments) {
            Ok(text) => ToolOutput::text(text),
            Err(e) => ToolOutput::error(format!("[agentos:tool_failed] {e}")),
        })
    }

    fn changes(&self) -> BoxStream<'static, ()> {
        Box::pin(futures::stream::pending())
    }
}
