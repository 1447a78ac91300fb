//! The OpenAI client against the fake model server, one directive at a time (issue 8 items 2
//! and 3; `docs/fake-model.md`). Everything goes over a real loopback socket.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use acp_runtime::model::{ChatMessage, FakeModelServer, FinishReason, ModelEvent, ToolCallRequest};
use model_support::{client, request, run, text_of};
use serde_json::{Value, json};

#[tokio::test]
async fn plain_text_is_echoed() {
    let server = FakeModelServer::start_local().await.unwrap();
    let (events, err) = run(&client(&server.url()), request("hello there", &[])).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta("echo: hello there".into()),
            ModelEvent::Finished(FinishReason::Stop)
        ]
    );
    // The request the server saw is the OpenAI shape.
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["stream"], json!(true));
    assert_eq!(seen[0]["model"], json!("fake"));
    assert_eq!(
        seen[0]["messages"][1],
        json!({"role": "user", "content": "hello there"})
    );
    server.shutdown().await;
}

#[tokio::test]
async fn chunks_stream_repeated_text() {
    let server = FakeModelServer::start_local().await.unwrap();
    let prompt = r#"say it: {"fake":{"chunks":30,"chunkChars":4,"text":"abcd"}} thanks"#;
    let (events, err) = run(&client(&server.url()), request(prompt, &[])).await;
    assert_eq!(err, None);
    let deltas: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::TextDelta(_)))
        .collect();
    assert_eq!(deltas.len(), 30);
    assert!(
        deltas
            .iter()
            .all(|d| **d == ModelEvent::TextDelta("abcd".into()))
    );
    assert_eq!(text_of(&events), "abcd".repeat(30));
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finished(FinishReason::Stop))
    );
}

#[tokio::test]
async fn thought_is_streamed_as_reasoning() {
    let server = FakeModelServer::start_local().await.unwrap();
    let prompt = r#"{"fake":{"thought":"hmm","text":"yes"}}"#;
    let (events, err) = run(&client(&server.url()), request(prompt, &[])).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::ThoughtDelta("hmm".into()),
            ModelEvent::TextDelta("yes".into()),
            ModelEvent::Finished(FinishReason::Stop)
        ]
    );
}

#[tokio::test]
async fn tools_are_requested_by_model_name_and_by_plugin_slash_tool() {
    let server = FakeModelServer::start_local().await.unwrap();
    let offered = [
        "read_skill",
        "mcp__com_example_notes__main__add_note",
        "mcp__aci_com_example_weather__weatherservice__forecast",
    ];
    let prompt = r#"{"fake":{"tools":[
        {"name":"com.example.notes/add_note","arguments":{"title":"a \"quoted\" title","n":12345678}},
        {"name":"com.example.weather/forecast"},
        {"name":"read_skill","arguments":{"name":"x"}},
        {"name":"mcp__not__offered__tool"}]}}"#;
    let (events, err) = run(&client(&server.url()), request(prompt, &offered)).await;
    assert_eq!(err, None);
    let calls: Vec<&ToolCallRequest> = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "mcp__com_example_notes__main__add_note",
            "mcp__aci_com_example_weather__weatherservice__forecast",
            "read_skill",
            "mcp__not__offered__tool"
        ]
    );
    let args: Value = serde_json::from_str(&calls[0].arguments).unwrap();
    assert_eq!(args, json!({"title": "a \"quoted\" title", "n": 12345678}));
    assert_eq!(calls[1].arguments, "{}");
    let mut ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 4, "call ids are distinct");
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finished(FinishReason::ToolCalls))
    );
    // The tools were offered as OpenAI functions.
    let seen = &server.requests()[0];
    assert_eq!(seen["tools"][1]["type"], json!("function"));
    assert_eq!(
        seen["tools"][1]["function"]["name"],
        json!("mcp__com_example_notes__main__add_note")
    );
}

#[tokio::test]
async fn tool_results_are_summarized() {
    let server = FakeModelServer::start_local().await.unwrap();
    let client = client(&server.url());
    let prompt = r#"{"fake":{"tools":[{"name":"t1"},{"name":"t2"}]}}"#;
    let mut req = request(prompt, &["t1", "t2"]);
    let (events, _) = run(&client, req.clone()).await;
    let calls: Vec<ToolCallRequest> = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCall(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    req.messages.push(ChatMessage::Assistant {
        text: String::new(),
        tool_calls: calls.clone(),
    });
    for c in &calls {
        req.messages.push(ChatMessage::Tool {
            call_id: c.id.clone(),
            content: "result".into(),
        });
    }
    let (events, err) = run(&client, req).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta("done: 2 tool results".into()),
            ModelEvent::Finished(FinishReason::Stop)
        ]
    );
    // The assistant's tool calls and the results went out in the OpenAI shape.
    let seen = server.requests().pop().unwrap();
    assert_eq!(
        seen["messages"][2]["tool_calls"][0]["id"],
        json!(calls[0].id)
    );
    assert_eq!(seen["messages"][3]["role"], json!("tool"));
    assert_eq!(seen["messages"][3]["tool_call_id"], json!(calls[0].id));
}

#[tokio::test]
async fn tool_loop_asks_n_times_then_answers() {
    let server = FakeModelServer::start_local().await.unwrap();
    let client = client(&server.url());
    let mut req = request(r#"{"fake":{"toolLoop":3}}"#, &["first_tool", "second_tool"]);
    let mut rounds = 0;
    loop {
        let (events, err) = run(&client, req.clone()).await;
        assert_eq!(err, None);
        match events.last() {
            Some(ModelEvent::Finished(FinishReason::ToolCalls)) => {
                let calls: Vec<ToolCallRequest> = events
                    .iter()
                    .filter_map(|e| match e {
                        ModelEvent::ToolCall(c) => Some(c.clone()),
                        _ => None,
                    })
                    .collect();
                assert_eq!(calls.len(), 1);
                assert_eq!(calls[0].name, "first_tool");
                assert_eq!(calls[0].arguments, "{}");
                rounds += 1;
                req.messages.push(ChatMessage::Assistant {
                    text: String::new(),
                    tool_calls: calls.clone(),
                });
                req.messages.push(ChatMessage::Tool {
                    call_id: calls[0].id.clone(),
                    content: "ok".into(),
                });
            }
            Some(ModelEvent::Finished(FinishReason::Stop)) => {
                assert_eq!(text_of(&events), "done: 1 tool results");
                break;
            }
            other => panic!("unexpected end {other:?}"),
        }
        assert!(rounds <= 3, "asked more than toolLoop rounds");
    }
    assert_eq!(rounds, 3);
}

#[tokio::test]
async fn directive_only_counts_in_the_last_user_message() {
    let server = FakeModelServer::start_local().await.unwrap();
    let mut req = request(r#"{"fake":{"maxTokens":true}}"#, &[]);
    req.messages.push(ChatMessage::Assistant {
        text: "truncated".into(),
        tool_calls: Vec::new(),
    });
    req.messages.push(ChatMessage::User("again".into()));
    let (events, err) = run(&client(&server.url()), req).await;
    assert_eq!(err, None);
    assert_eq!(text_of(&events), "echo: again");
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finished(FinishReason::Stop))
    );
}

#[tokio::test]
async fn max_tokens_and_refuse_map_to_finish_reasons() {
    let server = FakeModelServer::start_local().await.unwrap();
    let client = client(&server.url());
    let (events, err) = run(
        &client,
        request(r#"{"fake":{"maxTokens":true,"text":"cut"}}"#, &[]),
    )
    .await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta("cut".into()),
            ModelEvent::Finished(FinishReason::Length)
        ]
    );
    let (events, err) = run(&client, request(r#"{"fake":{"refuse":true}}"#, &[])).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![ModelEvent::Finished(FinishReason::ContentFilter)]
    );
}

#[tokio::test]
async fn bad_directive_is_a_400() {
    let server = FakeModelServer::start_local().await.unwrap();
    let (_, err) = run(
        &client(&server.url()),
        request(r#"{"fake":{"chunkz":3}}"#, &[]),
    )
    .await;
    assert_eq!(
        err,
        Some(acp_runtime::model::ModelError::BadRequest { status: 400 })
    );
}

/// The server's bytes are plain valid HTTP: a non-streaming request with a stock reqwest
/// client gets a `chat.completion` JSON document.
#[tokio::test]
async fn non_streaming_request_with_plain_reqwest() {
    let server = FakeModelServer::start_local().await.unwrap();
    let body = json!({
        "model": "fake",
        "messages": [{"role": "user", "content": r#"{"fake":{"text":"xy","chunks":3,"chunkChars":2,"tools":[{"name":"t"}]}}"#}],
        "tools": [{"type":"function","function":{"name":"t","parameters":{"type":"object"}}}],
    });
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let resp = http
        .post(format!("{}/chat/completions", server.url()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let v: Value = serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap();
    assert_eq!(v["object"], json!("chat.completion"));
    assert_eq!(v["choices"][0]["message"]["content"], json!("xyxyxy"));
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        json!("t")
    );
    assert_eq!(v["choices"][0]["finish_reason"], json!("tool_calls"));

    let models = http
        .get(format!("{}/models", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(models.status().as_u16(), 200);
}

#[tokio::test]
async fn server_with_key_demands_the_bearer() {
    let server = FakeModelServer::start_with_key("127.0.0.1:0".parse().unwrap(), "sk-test-123")
        .await
        .unwrap();
    let (_, err) = run(&client(&server.url()), request("hi", &[])).await;
    assert_eq!(
        err,
        Some(acp_runtime::model::ModelError::AuthFailed { status: 401 })
    );
    let keyed = acp_runtime::model::OpenAiClient::new(
        acp_runtime::model::ModelConfig::new(server.url(), "fake").with_key("sk-test-123"),
    )
    .unwrap();
    let (events, err) = run(&keyed, request("hi", &[])).await;
    assert_eq!(err, None);
    assert_eq!(text_of(&events), "echo: hi");
}

#[tokio::test]
async fn shutdown_stops_accepting() {
    let server = FakeModelServer::start_local().await.unwrap();
    let url = server.url();
    server.shutdown().await;
    let (_, err) = run(&client(&url), request("hi", &[])).await;
    assert_eq!(err, Some(acp_runtime::model::ModelError::Network));
}
