//! Skills in the agent loop (CAT-38, CAT-65, CAT-70, MCP-65..MCP-68): an unscoped session
//! gets the Skills section in its system prompt and the READ built-in `read_skill` (runs
//! without consent); a scoped session gets neither. The Skill comes from mcp-adapter's
//! `notes` plugin fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use acp_runtime::model::ChatMessage;
use acp_runtime::skills::CatalogSkills;
use common::*;
use mcp_adapter::skills::SkillProvider;
use mcp_adapter::{PluginPackage, SkillCatalog};
use permissions::{FixedSurface, Principal};
use serde_json::json;

fn skills() -> CatalogSkills {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp-adapter/tests/fixtures/plugins/notes");
    let cat = SkillCatalog::build([SkillProvider {
        package: Arc::new(PluginPackage::read(&dir)),
        usable: true,
    }]);
    assert_eq!(cat.len(), 1, "fixture has one Skill");
    CatalogSkills::new(cat)
}

#[tokio::test]
async fn cat38_read_skill_and_the_skills_section_only_without_scope() {
    let model = ScriptModel::new(vec![
        tool_reply("read_skill", r#"{"name":"notes-howto"}"#),
        text_reply("read it"),
        text_reply("scoped"),
    ]);
    let dir = Arc::new(tempfile::tempdir().unwrap());
    // Consent would deny: a READ tool must not need it.
    let h = Harness::start_with(
        dir,
        model.clone(),
        vec![],
        Arc::new(FixedSurface::deny()),
        |cfg| {
            cfg.skills = Some(Arc::new(skills()));
        },
    )
    .await;
    let mut c = h.connect(Principal::Desktop);
    let open = c.new_session(None).await;
    let (notes, r) = c.prompt(&open, "how do I use notes?").await;
    assert_eq!(r["result"]["stopReason"], "end_turn");
    let ups = updates(&notes);
    assert_eq!(
        kinds(&ups),
        [
            "tool_call:pending",
            "tool_call_update:in_progress",
            "tool_call_update:completed",
            "agent_message_chunk"
        ]
    );
    assert!(
        !ups[2]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .is_empty()
    );

    let scoped = c.new_session(Some(json!({"toolScope": []}))).await;
    let (_, r) = c.prompt(&scoped, "hi").await;
    assert_eq!(r["result"]["stopReason"], "end_turn");

    let requests = model.requests.lock().unwrap().clone();
    let system = |i: usize| match &requests[i].messages[0] {
        ChatMessage::System(s) => s.clone(),
        m => panic!("{m:?}"),
    };
    assert!(
        system(0).contains("notes-howto"),
        "skills section in the unscoped prompt"
    );
    assert!(requests[0].tools.iter().any(|t| t.name == "read_skill"));
    assert!(
        !system(2).contains("notes-howto"),
        "no skills section when scoped"
    );
    assert!(requests[2].tools.is_empty(), "no read_skill when scoped");
}
