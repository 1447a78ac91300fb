//! Directives (`{"fake":{…}}` in the last user message) and the reply they ask for. Pure: a
//! request body in, a [`Plan`] out. The rules are documented in `docs/fake-model.md`.

use capability_model::naming::{PLUGIN_PREFIX, SESSION_PREFIX, aci_virtual_plugin, sanitize};
use serde::Deserialize;
use serde_json::Value;

/// Most characters one reply may stream (`chunks × chunkChars`).
pub(crate) const MAX_REPLY_CHARS: u64 = 4_000_000;
/// Longest `delayMs`.
const MAX_DELAY_MS: u64 = 10_000;

/// One directive, as written.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Directive {
    text: Option<String>,
    chunks: Option<u64>,
    chunk_chars: Option<u64>,
    thought: Option<String>,
    #[serde(default)]
    tools: Vec<ToolAsk>,
    tool_loop: Option<u64>,
    #[serde(default)]
    await_abort: bool,
    fail: Option<String>,
    status: Option<u16>,
    retry_after: Option<u64>,
    #[serde(default)]
    max_tokens: bool,
    #[serde(default)]
    refuse: bool,
    delay_ms: Option<u64>,
}

/// One tool call asked for.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolAsk {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    id: Option<String>,
}

/// One tool call in a reply (the id is assigned by the server when `None`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlannedCall {
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    pub(crate) arguments: String,
}

/// What the server answers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Plan {
    /// A normal reply (200).
    Reply {
        thought: Option<String>,
        chunks: Vec<String>,
        calls: Vec<PlannedCall>,
        /// `finish_reason`; `None` with `hold` (the reply never finishes).
        finish: Option<&'static str>,
        /// Keep the connection open after the chunks until the client leaves.
        hold: bool,
        delay_ms: u64,
    },
    /// 200, some chunks, then the connection is cut mid-body.
    Interrupt { chunks: Vec<String> },
    /// 200 with a body that is not the API.
    Garbage,
    /// Close the connection without any response.
    Drop,
    /// An error status with an OpenAI-style error body.
    Fail {
        status: u16,
        retry_after: Option<u64>,
        kind: &'static str,
        message: &'static str,
    },
    /// The directive itself is wrong (400, with the reason in the error body).
    BadDirective(String),
}

/// The text of a message's `content` (a string, or the `text` parts of an array).
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Finds the directive in a text: the first `{` that is followed (after optional whitespace)
/// by `"fake"` and at which a complete JSON object parses. `None` when there is none;
/// `Some(Err)` when the object's `fake` member is not a valid directive.
pub(crate) fn find_directive(text: &str) -> Option<Result<Directive, String>> {
    for (at, _) in text.match_indices('{') {
        let rest = &text[at..];
        if !rest[1..].trim_start().starts_with("\"fake\"") {
            continue;
        }
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let Some(Ok(Value::Object(mut obj))) = values.next() else {
            continue;
        };
        let Some(fake) = obj.remove("fake") else {
            continue;
        };
        return Some(
            serde_json::from_value::<Directive>(fake)
                .map_err(|e| format!("bad fake directive: {e}")),
        );
    }
    None
}

/// Plans the reply to one request body (`messages`, `tools`).
pub(crate) fn plan(body: &Value) -> Plan {
    let empty = Vec::new();
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let offered: Vec<&str> = body
        .get("tools")
        .and_then(Value::as_array)
        .unwrap_or(&empty)
        .iter()
        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
        .collect();
    let role = |m: &Value| {
        m.get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let last_user = messages.iter().rposition(|m| role(m) == "user");
    let user_text = last_user
        .map(|i| content_text(messages[i].get("content")))
        .unwrap_or_default();
    let after = last_user.map_or(&messages[..], |i| &messages[i + 1..]);
    let trailing_results = after.iter().rev().take_while(|m| role(m) == "tool").count();
    let rounds = after
        .iter()
        .filter(|m| {
            role(m) == "assistant"
                && m.get("tool_calls")
                    .and_then(Value::as_array)
                    .is_some_and(|c| !c.is_empty())
        })
        .count() as u64;

    let directive = match find_directive(&user_text) {
        None => {
            let text = if trailing_results > 0 {
                done_text(trailing_results)
            } else {
                format!("echo: {user_text}")
            };
            return text_reply(vec![text], "stop");
        }
        Some(Err(reason)) => return Plan::BadDirective(reason),
        Some(Ok(d)) => d,
    };
    if let Some(code) = &directive.fail {
        return fail_plan(code, &directive);
    }
    let delay_ms = directive.delay_ms.unwrap_or(0).min(MAX_DELAY_MS);
    if trailing_results > 0 {
        let again = directive.tool_loop.is_some_and(|n| rounds < n);
        if !again {
            return text_reply(vec![done_text(trailing_results)], "stop");
        }
        return match loop_call(&directive, &offered) {
            Some(call) => tool_reply(vec![call], delay_ms),
            None => text_reply(vec!["no tools offered".to_owned()], "stop"),
        };
    }
    if directive.tool_loop.is_some_and(|n| n > 0) {
        return match loop_call(&directive, &offered) {
            Some(call) => tool_reply(vec![call], delay_ms),
            None => text_reply(vec!["no tools offered".to_owned()], "stop"),
        };
    }
    let chunks = match chunks_of(&directive) {
        Ok(c) => c,
        Err(reason) => return Plan::BadDirective(reason),
    };
    let calls: Vec<PlannedCall> = directive
        .tools
        .iter()
        .map(|t| planned_call(t, &offered))
        .collect();
    let nothing_else =
        calls.is_empty() && !directive.await_abort && !directive.refuse && directive.text.is_none();
    let chunks = if nothing_else && chunks.is_empty() {
        vec!["ok".to_owned()]
    } else {
        chunks
    };
    let finish = if directive.await_abort {
        None
    } else if directive.refuse {
        Some("content_filter")
    } else if directive.max_tokens {
        Some("length")
    } else if !calls.is_empty() {
        Some("tool_calls")
    } else {
        Some("stop")
    };
    Plan::Reply {
        thought: directive.thought.clone(),
        chunks,
        calls,
        finish,
        hold: directive.await_abort,
        delay_ms,
    }
}

fn done_text(results: usize) -> String {
    format!("done: {results} tool results")
}

fn text_reply(chunks: Vec<String>, finish: &'static str) -> Plan {
    Plan::Reply {
        thought: None,
        chunks,
        calls: Vec::new(),
        finish: Some(finish),
        hold: false,
        delay_ms: 0,
    }
}

fn tool_reply(calls: Vec<PlannedCall>, delay_ms: u64) -> Plan {
    Plan::Reply {
        thought: None,
        chunks: Vec::new(),
        calls,
        finish: Some("tool_calls"),
        hold: false,
        delay_ms,
    }
}

/// The call a `toolLoop` round asks for: the directive's first `tools` entry, else the first
/// offered tool with `{}`.
fn loop_call(d: &Directive, offered: &[&str]) -> Option<PlannedCall> {
    if let Some(first) = d.tools.first() {
        return Some(planned_call(first, offered));
    }
    offered.first().map(|name| PlannedCall {
        id: None,
        name: (*name).to_owned(),
        arguments: "{}".to_owned(),
    })
}

fn planned_call(t: &ToolAsk, offered: &[&str]) -> PlannedCall {
    PlannedCall {
        id: t.id.clone(),
        name: resolve_tool(&t.name, offered),
        arguments: t
            .arguments
            .as_ref()
            .map_or_else(|| "{}".to_owned(), Value::to_string),
    }
}

/// Resolves a `plugin/tool` name against the offered tools; any other name (or one that
/// matches nothing) is used as written.
///
/// The first offered name (in request order) wins that is, with `P = sanitize(plugin)`,
/// `A = sanitize(aci_virtual_plugin(plugin))` and `T = sanitize(tool)`: `mcp__P__<server>__T`,
/// `mcp__A__<server>__T` or `ses__P__T` (a per-session server named `plugin`).
pub(crate) fn resolve_tool(name: &str, offered: &[&str]) -> String {
    let Some((plugin, tool)) = name.split_once('/') else {
        return name.to_owned();
    };
    let tail = format!("__{}", sanitize(tool));
    let heads = [
        format!("{PLUGIN_PREFIX}{}__", sanitize(plugin)),
        format!("{PLUGIN_PREFIX}{}__", sanitize(&aci_virtual_plugin(plugin))),
    ];
    let session = format!("{SESSION_PREFIX}{}{tail}", sanitize(plugin));
    offered
        .iter()
        .find(|o| {
            **o == session
                || heads.iter().any(|h| {
                    o.len() > h.len() + tail.len()
                        && o.starts_with(h.as_str())
                        && o.ends_with(&tail)
                })
        })
        .map_or_else(|| name.to_owned(), |o| (*o).to_owned())
}

/// The streamed text: `chunks` pieces of `chunkChars` characters (Unicode scalar values)
/// cycling through `text`.
fn chunks_of(d: &Directive) -> Result<Vec<String>, String> {
    let text = d.text.clone().unwrap_or_default();
    let chars: Vec<char> = text.chars().collect();
    if d.chunks.is_none() && d.chunk_chars.is_none() {
        return Ok(if text.is_empty() {
            Vec::new()
        } else {
            vec![text]
        });
    }
    if chars.is_empty() {
        return Err("bad fake directive: chunks/chunkChars need a non-empty text".to_owned());
    }
    let n = d.chunks.unwrap_or(1);
    let size = d.chunk_chars.unwrap_or(chars.len() as u64);
    if size == 0 || n.saturating_mul(size) > MAX_REPLY_CHARS {
        return Err(format!(
            "bad fake directive: chunks × chunkChars must be 1..={MAX_REPLY_CHARS}"
        ));
    }
    let mut cycle = chars.iter().cycle();
    Ok((0..n)
        .map(|_| cycle.by_ref().take(size as usize).collect())
        .collect())
}

/// The reply a real provider sends for one Appendix B code.
fn fail_plan(code: &str, d: &Directive) -> Plan {
    let fail = |default: u16, kind, message| Plan::Fail {
        status: d.status.unwrap_or(default),
        retry_after: None,
        kind,
        message,
    };
    match code {
        "model_rate_limited" => Plan::Fail {
            status: d.status.unwrap_or(429),
            retry_after: Some(d.retry_after.unwrap_or(2)),
            kind: "rate_limit_exceeded",
            message: "Rate limit reached for requests. Please try again later.",
        },
        "model_auth_failed" => fail(401, "invalid_api_key", "Incorrect API key provided."),
        "model_quota_exhausted" => fail(
            402,
            "insufficient_quota",
            "You exceeded your current quota, please check your plan and billing details.",
        ),
        "model_request_too_large" => fail(
            413,
            "request_too_large",
            "Request too large for this model.",
        ),
        "model_bad_request" => fail(
            400,
            "invalid_request_error",
            "Invalid request: the request was malformed.",
        ),
        "model_unavailable" => fail(
            503,
            "server_error",
            "The server is overloaded or not ready yet.",
        ),
        "model_timeout" => fail(408, "timeout", "The request timed out."),
        "model_stream_interrupted" => Plan::Interrupt {
            chunks: chunks_of(d)
                .ok()
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| vec!["partial".to_owned()]),
        },
        "model_protocol" => Plan::Garbage,
        "model_network" => Plan::Drop,
        other => Plan::BadDirective(format!(
            "bad fake directive: unknown fail code {other:?} (the fake server can produce \
             model_rate_limited, model_auth_failed, model_quota_exhausted, \
             model_request_too_large, model_bad_request, model_unavailable, model_timeout, \
             model_stream_interrupted, model_protocol, model_network)"
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn directive_is_found_inside_text() {
        let d = find_directive(r#"please { not this } then { "fake" : {"text":"x"}} trailing"#);
        assert_eq!(
            d,
            Some(Ok(Directive {
                text: Some("x".into()),
                ..Directive::default()
            }))
        );
        assert_eq!(find_directive(r#"{"other":1,"fake":{}}"#), None);
        assert!(matches!(
            find_directive(r#"{"fake":{"txet":"x"}}"#),
            Some(Err(_))
        ));
        assert_eq!(find_directive(r#"{"fake": broken"#), None);
    }

    #[test]
    fn chunks_cycle_through_text() {
        let body = json!({"messages":[{"role":"user","content":
            r#"{"fake":{"text":"abc","chunks":3,"chunkChars":2}}"#}]});
        let Plan::Reply { chunks, .. } = plan(&body) else {
            panic!("not a reply")
        };
        assert_eq!(chunks, vec!["ab", "ca", "bc"]);
    }

    #[test]
    fn plugin_tool_resolves_the_capbridge_way() {
        let offered = [
            "read_skill",
            "mcp__com_example_notes__main__list",
            "mcp__aci_com_example_weather__weatherservice__forecast",
            "ses__files__read",
        ];
        assert_eq!(
            resolve_tool("com.example.notes/list", &offered),
            "mcp__com_example_notes__main__list"
        );
        assert_eq!(
            resolve_tool("com.example.Weather/forecast", &offered),
            "mcp__aci_com_example_weather__weatherservice__forecast"
        );
        assert_eq!(resolve_tool("files/read", &offered), "ses__files__read");
        assert_eq!(resolve_tool("nope/list", &offered), "nope/list");
        assert_eq!(resolve_tool("read_skill", &offered), "read_skill");
    }

    #[test]
    fn tool_loop_counts_rounds_after_the_last_user_message() {
        let call = json!({"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"t","arguments":"{}"}}]});
        let result = json!({"role":"tool","tool_call_id":"c","content":"r"});
        let user = json!({"role":"user","content":r#"{"fake":{"toolLoop":2}}"#});
        let tools = json!([{"type":"function","function":{"name":"t","parameters":{}}}]);
        let one = json!({"messages":[user, call, result], "tools": tools});
        assert!(matches!(
            plan(&one),
            Plan::Reply {
                finish: Some("tool_calls"),
                ..
            }
        ));
        let two = json!({"messages":[user, call, result, call, result], "tools": tools});
        assert_eq!(
            plan(&two),
            text_reply(vec!["done: 1 tool results".into()], "stop")
        );
    }
}
