//! Helpers shared by the `model_*` tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use acp_runtime::model::{
    ChatMessage, ChatRequest, ModelClient, ModelConfig, ModelError, ModelEvent, OpenAiClient,
    ToolSpec,
};
use capability_model::CancelToken;
use futures::StreamExt;
use serde_json::json;

/// A client for `url` with model `fake`.
pub(crate) fn client(url: &str) -> OpenAiClient {
    OpenAiClient::new(ModelConfig::new(url, "fake")).unwrap()
}

/// A request with one user message and the given tool names on offer.
pub(crate) fn request(user: &str, tools: &[&str]) -> ChatRequest {
    ChatRequest {
        model: String::new(),
        messages: vec![
            ChatMessage::System("you are a test".into()),
            ChatMessage::User(user.into()),
        ],
        tools: tools.iter().map(|n| tool(n)).collect(),
        max_tokens: None,
    }
}

/// A tool spec with an object schema.
pub(crate) fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("the {name} tool"),
        parameters: json!({"type": "object", "properties": {}}),
    }
}

/// Runs one request to the end: the events, then the error that ended it (if any).
pub(crate) async fn run(
    client: &OpenAiClient,
    request: ChatRequest,
) -> (Vec<ModelEvent>, Option<ModelError>) {
    let mut stream = match client.stream(request, CancelToken::new()).await {
        Ok(s) => s,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(ev) => events.push(ev),
            Err(e) => return (events, Some(e)),
        }
    }
    (events, None)
}

/// The concatenated text deltas.
pub(crate) fn text_of(events: &[ModelEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}
