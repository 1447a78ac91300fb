//! Every notes tool through the real process (rsbinder RPC, `McpSource` as the host uses it),
//! with the failing cases the seed asks each tool to cover (000 §5.12 step 1: normal, missing
//! argument, invalid value, unknown id), honest annotations in `tools/list`, and the state
//! surviving a clean stop (SIGTERM) and a SIGKILL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use capability_model::{CallError, CancelToken, CapabilitySource, ToolOutput};
use common::{Home, Plugin, args, data_json, id};
use mcp_adapter::McpSource;
use serde_json::{Value, json};

async fn call(source: &McpSource, tool: &str, arguments: Value) -> ToolOutput {
    source
        .call(&id(tool), args(arguments), CancelToken::new())
        .await
        .unwrap()
}

/// The structured result of a successful call.
async fn ok(source: &McpSource, tool: &str, arguments: Value) -> Value {
    let out = call(source, tool, arguments.clone()).await;
    assert!(!out.is_error, "{tool} {arguments}: {}", out.joined_text());
    out.structured_content.unwrap()
}

/// The one-sentence error of a refused call.
async fn refused(source: &McpSource, tool: &str, arguments: Value) -> String {
    let out = call(source, tool, arguments.clone()).await;
    assert!(out.is_error, "{tool} {arguments} should fail");
    out.joined_text()
}

fn titles(listed: &Value) -> Vec<String> {
    listed["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap().to_owned())
        .collect()
}

/// Name, readOnlyHint, destructiveHint, idempotentHint.
type Hints = (String, Option<bool>, Option<bool>, Option<bool>);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_works_through_the_process_and_state_survives_restarts() {
    let home = Home::new();
    let plugin = Plugin::start(&home, &[]).await;
    let source = home.source();

    // tools/list: the ten tools and their hints.
    let listing = source.list().await.unwrap();
    assert!(listing.issues.is_empty(), "{:?}", listing.issues);
    let hints: Vec<Hints> = listing
        .capabilities
        .iter()
        .map(|c| {
            let a = c.annotations;
            (
                c.id.name.clone(),
                a.read_only_hint,
                a.destructive_hint,
                a.idempotent_hint,
            )
        })
        .collect();
    let expect = |n: &str, r, d, i| (n.to_owned(), Some(r), d, Some(i));
    assert_eq!(
        hints,
        [
            expect("note_add", false, Some(false), false),
            expect("note_get", true, None, true),
            expect("note_list", true, None, true),
            expect("note_search", true, None, true),
            expect("note_append", false, Some(false), false),
            expect("note_update", false, Some(true), true),
            expect("note_tag", false, Some(false), true),
            expect("note_archive", false, Some(false), true),
            expect("note_trash", false, Some(false), true),
            expect("note_restore", false, Some(false), true),
        ]
    );
    assert!(
        listing
            .capabilities
            .iter()
            .all(|c| c.annotations.open_world_hint == Some(false))
    );

    // note_add: normal, missing content, invalid value, extra field.
    let milk = ok(
        &source,
        "note_add",
        json!({"title": "Shopping", "content": "milk", "tags": ["home"]}),
    )
    .await;
    assert_eq!(milk["id"], 1);
    assert_eq!(milk["tags"], json!(["home"]));
    let call_note = ok(
        &source,
        "note_add",
        json!({"content": "Call Anna\nabout the trip"}),
    )
    .await;
    assert_eq!(call_note["id"], 2);
    assert_eq!(
        call_note["title"], "Call Anna",
        "title defaults to the first line"
    );
    refused(&source, "note_add", json!({"title": "no content"})).await;
    refused(&source, "note_add", json!({"content": 5})).await;
    refused(
        &source,
        "note_add",
        json!({"content": "x", "colour": "red"}),
    )
    .await;

    // note_get: normal, unknown id, invalid id.
    assert_eq!(
        ok(&source, "note_get", json!({"id": 1})).await["content"],
        "milk"
    );
    let e = refused(&source, "note_get", json!({"id": 99})).await;
    assert!(e.contains("No note has id 99"), "{e}");
    refused(&source, "note_get", json!({"id": 0})).await;
    refused(&source, "note_get", json!({})).await;

    // note_append: normal, unknown id, missing text.
    let appended = ok(&source, "note_append", json!({"id": 1, "text": "eggs"})).await;
    assert_eq!(appended["content"], "milk\neggs");
    refused(&source, "note_append", json!({"id": 42, "text": "x"})).await;
    refused(&source, "note_append", json!({"id": 1})).await;

    // note_update: replaces; needs title or content.
    let updated = ok(
        &source,
        "note_update",
        json!({"id": 2, "content": "Call Anna on Friday"}),
    )
    .await;
    assert_eq!(updated["content"], "Call Anna on Friday");
    assert_eq!(updated["title"], "Call Anna");
    let e = refused(&source, "note_update", json!({"id": 2})).await;
    assert!(e.contains("title"), "{e}");
    refused(&source, "note_update", json!({"id": 77, "title": "x"})).await;

    // note_tag: add and remove, case-insensitive, idempotent.
    let tagged = ok(
        &source,
        "note_tag",
        json!({"id": 2, "add": ["Work", "phone"]}),
    )
    .await;
    assert_eq!(tagged["tags"], json!(["Work", "phone"]));
    let again = ok(
        &source,
        "note_tag",
        json!({"id": 2, "add": ["work"], "remove": ["PHONE"]}),
    )
    .await;
    assert_eq!(again["tags"], json!(["Work"]));
    refused(&source, "note_tag", json!({"id": 2})).await;
    refused(&source, "note_tag", json!({"id": 2, "add": [""]})).await;

    // note_search: title, content, tags; case-insensitive.
    assert_eq!(
        titles(&ok(&source, "note_search", json!({"query": "EGGS"})).await),
        ["Shopping"]
    );
    assert_eq!(
        titles(&ok(&source, "note_search", json!({"query": "work"})).await),
        ["Call Anna"]
    );
    assert_eq!(
        ok(&source, "note_search", json!({"query": "nothing like it"})).await["total"],
        0
    );
    refused(&source, "note_search", json!({"query": ""})).await;

    // note_list: by tag; archived and trashed notes left out by default.
    assert_eq!(
        titles(&ok(&source, "note_list", json!({"tag": "home"})).await),
        ["Shopping"]
    );
    ok(&source, "note_archive", json!({"id": 1})).await;
    assert_eq!(
        titles(&ok(&source, "note_list", json!({})).await),
        ["Call Anna"]
    );
    assert_eq!(
        ok(&source, "note_search", json!({"query": "milk"})).await["total"],
        0
    );
    assert_eq!(
        ok(
            &source,
            "note_search",
            json!({"query": "milk", "includeArchived": true})
        )
        .await["total"],
        1
    );
    assert_eq!(
        ok(&source, "note_list", json!({"includeArchived": true})).await["total"],
        2
    );
    let unarchived = ok(&source, "note_archive", json!({"id": 1, "archived": false})).await;
    assert_eq!(unarchived["archived"], false);
    refused(&source, "note_list", json!({"limit": 0})).await;

    // note_trash / note_restore: trash instead of delete, restorable; a trashed note is read-only.
    let trashed = ok(&source, "note_trash", json!({"id": 2})).await;
    assert_eq!(trashed["trashed"], true);
    assert_eq!(
        titles(&ok(&source, "note_list", json!({})).await),
        ["Shopping"]
    );
    assert_eq!(
        titles(&ok(&source, "note_list", json!({"trash": true})).await),
        ["Call Anna"]
    );
    assert_eq!(
        ok(&source, "note_search", json!({"query": "Anna"})).await["total"],
        0
    );
    let e = refused(&source, "note_append", json!({"id": 2, "text": "x"})).await;
    assert!(e.contains("note_restore"), "{e}");
    assert_eq!(
        ok(&source, "note_get", json!({"id": 2})).await["trashed"],
        true
    );
    refused(&source, "note_trash", json!({"id": 5})).await;
    ok(&source, "note_trash", json!({"id": 2})).await; // idempotent
    assert_eq!(
        ok(&source, "note_restore", json!({"id": 2})).await["trashed"],
        false
    );
    refused(&source, "note_restore", json!({"id": 5})).await;
    ok(&source, "note_trash", json!({"id": 2})).await;

    // An unknown tool is the provider's JSON-RPC error.
    let e = source
        .call(
            &id("note_delete"),
            args(json!({"id": 1})),
            CancelToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::Rejected { .. }), "{e:?}");

    let before = ok(
        &source,
        "note_list",
        json!({"includeArchived": true, "limit": 200}),
    )
    .await;
    let before_trash = ok(&source, "note_list", json!({"trash": true})).await;
    let file = data_json(&home.data());
    assert_eq!(file["nextId"], 3);
    assert_eq!(file["notes"].as_array().unwrap().len(), 2);

    // A clean stop, then a restart: everything is still there.
    plugin.stop().await;
    let plugin = Plugin::start(&home, &[]).await;
    assert_eq!(
        ok(
            &source,
            "note_list",
            json!({"includeArchived": true, "limit": 200})
        )
        .await,
        before
    );
    assert_eq!(
        ok(&source, "note_list", json!({"trash": true})).await,
        before_trash
    );
    assert_eq!(
        ok(&source, "note_get", json!({"id": 1})).await["content"],
        "milk\neggs"
    );

    // SIGKILL right after a change: the change was on disk before its answer.
    ok(&source, "note_append", json!({"id": 1, "text": "bread"})).await;
    plugin.kill().await;
    let _plugin = Plugin::start(&home, &[]).await;
    assert_eq!(
        ok(&source, "note_get", json!({"id": 1})).await["content"],
        "milk\neggs\nbread"
    );
    assert_eq!(
        ok(&source, "note_add", json!({"content": "third"})).await["id"],
        3
    );
}

#[test]
fn help_names_every_option() {
    let out = std::process::Command::new(common::BIN)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for option in ["--socket", "--data", "--slow-ms", "TEST AID"] {
        assert!(
            text.contains(option),
            "{option} missing from --help:\n{text}"
        );
    }
}

#[test]
fn a_corrupt_data_file_stops_the_plugin_with_a_message() {
    let home = Home::new();
    std::fs::write(home.data(), "{not json").unwrap();
    let out = std::process::Command::new(common::BIN)
        .arg("--socket")
        .arg(home.socket())
        .arg("--data")
        .arg(home.data())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(text.contains("is not a notes file"), "{text}");
    assert_eq!(
        std::fs::read_to_string(home.data()).unwrap(),
        "{not json",
        "left untouched"
    );
}
