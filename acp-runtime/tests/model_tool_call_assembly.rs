//! Streamed tool-call fragments assembled by index into complete calls, against a hand-made
//! SSE server that splits lines and fragments awkwardly across TCP writes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod model_support;

use std::time::Duration;

use acp_runtime::model::{FinishReason, ModelError, ModelEvent, ToolCallRequest};
use model_support::{client, request, run};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Serves one connection: reads the request, then writes `head` and each piece of `pieces`
/// as a separate write with a short pause (so they arrive as separate reads).
async fn raw_server(head: &'static str, pieces: Vec<Vec<u8>>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut buf = vec![0u8; 65536];
        let mut got = Vec::new();
        // Read the head, then the Content-Length body.
        loop {
            let n = s.read(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
            if let Some(p) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..p]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map(|v| v.trim().parse().unwrap())
                    .unwrap_or(0);
                while got.len() < p + 4 + len {
                    let n = s.read(&mut buf).await.unwrap();
                    got.extend_from_slice(&buf[..n]);
                }
                break;
            }
        }
        s.write_all(head.as_bytes()).await.unwrap();
        for p in pieces {
            s.write_all(&p).await.unwrap();
            s.flush().await.unwrap();
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    });
    format!("http://{addr}/v1")
}

const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";

fn chunk(delta: &str, finish: Option<&str>) -> String {
    let finish = finish.map_or("null".to_owned(), |f| format!("\"{f}\""));
    format!(
        "data: {{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\r\n\r\n"
    )
}

/// Splits `body` at the given byte offsets (inside lines, inside JSON strings, inside a
/// multi-byte character).
fn split_at(body: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut last = 0;
    for &c in cuts {
        let c = c.min(body.len());
        out.push(body[last..c].to_vec());
        last = c;
    }
    out.push(body[last..].to_vec());
    out
}

#[tokio::test]
async fn interleaved_fragments_split_mid_line_assemble_by_index() {
    let mut body = String::new();
    body.push_str(": comment line\r\n\r\n");
    body.push_str(&chunk(
        r#"{"role":"assistant","content":"Let me löok "}"#,
        None,
    ));
    // Call 1 starts before call 0; names and ids split over fragments; args in pieces.
    body.push_str(&chunk(
        r#"{"tool_calls":[{"index":1,"id":"call_B","type":"function","function":{"name":"mcp__aci_w__svc__fore","arguments":""}}]}"#,
        None,
    ));
    body.push_str(&chunk(
        r#"{"tool_calls":[{"index":0,"id":"call_","function":{"name":"mcp__notes__main__","arguments":"{\"ti"}}]}"#,
        None,
    ));
    body.push_str(&chunk(
        r#"{"tool_calls":[{"index":0,"id":"A","function":{"name":"add","arguments":"tle\":\"h\u00e9"}},{"index":1,"function":{"name":"cast","arguments":"{\"days\""}}]}"#,
        None,
    ));
    body.push_str("event: message\r\nid: 7\r\n");
    body.push_str(&chunk(
        r#"{"tool_calls":[{"index":1,"function":{"arguments":":3}"}},{"index":0,"function":{"arguments":"llo\"}"}}]}"#,
        None,
    ));
    body.push_str(&chunk(r#"{}"#, Some("tool_calls")));
    body.push_str("data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"total_tokens\":5}}\r\n\r\n");
    body.push_str("data: [DONE]\r\n\r\n");
    let bytes = body.as_bytes();
    let mid = body.find("\u{f6}").unwrap();
    let cuts = vec![
        3,
        25,
        mid + 1,
        140,
        141,
        260,
        261,
        262,
        400,
        555,
        700,
        bytes.len() - 3,
    ];
    let url = raw_server(SSE_HEAD, split_at(bytes, &cuts)).await;
    let (events, err) = run(&client(&url), request("hi", &[])).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta("Let me l\u{f6}ok ".into()),
            ModelEvent::ToolCall(ToolCallRequest {
                id: "call_A".into(),
                name: "mcp__notes__main__add".into(),
                arguments: "{\"title\":\"h\u{e9}llo\"}".into(),
            }),
            ModelEvent::ToolCall(ToolCallRequest {
                id: "call_B".into(),
                name: "mcp__aci_w__svc__forecast".into(),
                arguments: "{\"days\":3}".into(),
            }),
            ModelEvent::Finished(FinishReason::ToolCalls),
        ]
    );
}

#[tokio::test]
async fn one_byte_writes_give_the_same_events() {
    let mut body = String::new();
    body.push_str(&chunk(r#"{"reasoning":"think"}"#, None));
    body.push_str(&chunk(
        r#"{"tool_calls":[{"index":0,"id":"c0","function":{"name":"t","arguments":"{\"a\":"}}]}"#,
        None,
    ));
    // A provider that repeats the id and name in every fragment.
    body.push_str(&chunk(
        r#"{"tool_calls":[{"index":0,"id":"c0","function":{"name":"t","arguments":"1}"}}]}"#,
        None,
    ));
    body.push_str(&chunk(r#"{}"#, Some("tool_calls")));
    body.push_str("data: [DONE]\n\n");
    let pieces: Vec<Vec<u8>> = body.as_bytes().chunks(1).map(<[u8]>::to_vec).collect();
    let url = raw_server(SSE_HEAD, pieces).await;
    let (events, err) = run(&client(&url), request("hi", &[])).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::ThoughtDelta("think".into()),
            ModelEvent::ToolCall(ToolCallRequest {
                id: "c0".into(),
                name: "t".into(),
                arguments: "{\"a\":1}".into(),
            }),
            ModelEvent::Finished(FinishReason::ToolCalls),
        ]
    );
}

#[tokio::test]
async fn eof_after_finish_reason_without_done_is_accepted() {
    let body = chunk(r#"{"content":"hi"}"#, None) + &chunk(r#"{}"#, Some("stop"));
    let url = raw_server(SSE_HEAD, vec![body.into_bytes()]).await;
    let (events, err) = run(&client(&url), request("hi", &[])).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta("hi".into()),
            ModelEvent::Finished(FinishReason::Stop)
        ]
    );
}

#[tokio::test]
async fn eof_mid_reply_is_stream_interrupted() {
    let body = chunk(r#"{"content":"hi"}"#, None) + "data: {\"choices\":[{\"delta\":{\"con";
    let url = raw_server(SSE_HEAD, vec![body.into_bytes()]).await;
    let (_, err) = run(&client(&url), request("hi", &[])).await;
    // The half line is not JSON: garbage at the end of a cut body.
    assert!(
        matches!(
            err,
            Some(ModelError::StreamInterrupted | ModelError::Protocol)
        ),
        "{err:?}"
    );
    let body = chunk(r#"{"content":"hi"}"#, None);
    let url = raw_server(SSE_HEAD, vec![body.into_bytes()]).await;
    let (_, err) = run(&client(&url), request("hi", &[])).await;
    assert_eq!(err, Some(ModelError::StreamInterrupted));
}

#[tokio::test]
async fn html_error_page_with_200_is_protocol() {
    let url = raw_server(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n",
        vec![b"<html><body>Bad gateway</body></html>\n".to_vec()],
    )
    .await;
    let (_, err) = run(&client(&url), request("hi", &[])).await;
    assert_eq!(err, Some(ModelError::Protocol));
}

#[tokio::test]
async fn error_object_inside_the_stream_maps_its_code() {
    let body = chunk(r#"{"content":"a"}"#, None)
        + "data: {\"error\":{\"message\":\"overloaded\",\"code\":529}}\n\n";
    let url = raw_server(SSE_HEAD, vec![body.into_bytes()]).await;
    let (_, err) = run(&client(&url), request("hi", &[])).await;
    assert_eq!(err, Some(ModelError::Unavailable { status: 529 }));
}

#[tokio::test]
async fn too_many_tool_calls_is_protocol() {
    let mut body = String::new();
    for i in 0..=acp_runtime::model::openai::MAX_TOOL_CALLS {
        body.push_str(&chunk(
            &format!(r#"{{"tool_calls":[{{"index":{i},"id":"c{i}","function":{{"name":"t","arguments":"{{}}"}}}}]}}"#),
            None,
        ));
    }
    let url = raw_server(SSE_HEAD, vec![body.into_bytes()]).await;
    let (_, err) = run(&client(&url), request("hi", &[])).await;
    assert_eq!(err, Some(ModelError::Protocol));
}

/// A provider that ignores `stream: true` and answers one `chat.completion` document.
#[tokio::test]
async fn non_streamed_json_reply_is_read_whole() {
    let body = r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi","reasoning_content":"r","tool_calls":[{"id":"c9","type":"function","function":{"name":"t","arguments":"{\"a\":2}"}}]},"finish_reason":"tool_calls"}]}"#;
    let head: &'static str = Box::leak(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_boxed_str(),
    );
    let url = raw_server(head, vec![body.as_bytes().to_vec()]).await;
    let (events, err) = run(&client(&url), request("hi", &[])).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::ThoughtDelta("r".into()),
            ModelEvent::TextDelta("hi".into()),
            ModelEvent::ToolCall(ToolCallRequest {
                id: "c9".into(),
                name: "t".into(),
                arguments: "{\"a\":2}".into(),
            }),
            ModelEvent::Finished(FinishReason::ToolCalls),
        ]
    );
}
