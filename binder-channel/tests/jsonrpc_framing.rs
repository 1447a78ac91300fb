//! JSON-RPC framing (CH-10, CH-13, BR-02): classification, rejection with the right error
//! while keeping the connection, standard members only, oversize handling.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use binder_channel::jsonrpc::{Framing, Id, Message, Outbound, code, parse};
use serde_json::{Value, json};

fn reply(text: &str) -> Value {
    let rejection = parse(text).unwrap_err();
    serde_json::from_str(rejection.reply.as_deref().expect("a reply")).unwrap()
}

#[test]
fn classifies_requests_notifications_and_responses() {
    assert_eq!(
        parse(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}"#).unwrap(),
        Message::Request {
            id: Id::Number(1),
            method: "m".into(),
            params: Some(json!({"a":1}))
        }
    );
    assert_eq!(
        parse(r#"{"jsonrpc":"2.0","method":"n","params":[1]}"#).unwrap(),
        Message::Notification {
            method: "n".into(),
            params: Some(json!([1]))
        }
    );
    assert_eq!(
        parse(r#"{"jsonrpc":"2.0","id":"x","result":{"ok":true}}"#).unwrap(),
        Message::Response {
            id: Some(Id::String("x".into())),
            outcome: Ok(json!({"ok":true}))
        }
    );
    let error =
        parse(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#).unwrap();
    assert!(matches!(error, Message::Response { outcome: Err(ref e), .. } if e.code == -32601));
}

#[test]
fn ch10_unknown_members_are_ignored() {
    let msg = parse(
        r#"{"jsonrpc":"2.0","id":1,"method":"m","type":"com.x.JsonRpcRequest","extra":{"deep":[1]}}"#,
    )
    .unwrap();
    assert_eq!(msg.to_json(), r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#);
}

#[test]
fn invalid_json_gets_parse_error_with_null_id() {
    assert_eq!(
        reply(r#"{"jsonrpc":"2.0","id":1,"method":"m""#),
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
    );
}

#[test]
fn ch10_batches_are_rejected_as_invalid_request() {
    let r = reply(r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#);
    assert_eq!(r["error"]["code"], json!(code::INVALID_REQUEST));
    assert_eq!(r["id"], Value::Null);
}

#[test]
fn non_2_0_version_is_an_invalid_request_answered_with_its_id() {
    for text in [
        r#"{"jsonrpc":"1.0","id":5,"method":"m"}"#,
        r#"{"id":5,"method":"m"}"#,
        r#"{"jsonrpc":2.0,"id":5,"method":"m"}"#,
    ] {
        let r = reply(text);
        assert_eq!(r["error"]["code"], json!(-32600), "{text}");
        assert_eq!(r["id"], json!(5), "{text}");
    }
}

#[test]
fn bad_ids_are_invalid_requests_answered_with_null_id() {
    for text in [
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
    ] {
        let r = reply(text);
        assert_eq!(r["error"]["code"], json!(-32600), "{text}");
        assert_eq!(r["id"], Value::Null, "{text}");
    }
}

#[test]
fn bad_method_or_params_are_invalid_requests() {
    assert_eq!(
        reply(r#"{"jsonrpc":"2.0","id":3,"method":7}"#)["id"],
        json!(3)
    );
    assert_eq!(
        reply(r#"{"jsonrpc":"2.0","id":3,"method":"m","params":"s"}"#)["error"]["code"],
        json!(-32600)
    );
}

#[test]
fn malformed_responses_and_notifications_are_never_answered() {
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#"{"jsonrpc":"2.0","result":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#,
        r#"{"jsonrpc":"1.0","method":"notify"}"#,
    ] {
        let rejection = parse(text).unwrap_err();
        assert_eq!(rejection.code, -32600, "{text}");
        assert_eq!(rejection.reply, None, "{text}");
    }
}

#[test]
fn ch10_encoding_writes_only_standard_members_in_one_line() {
    let msg = Message::Request {
        id: Id::String("a\nb".into()),
        method: "m".into(),
        params: Some(json!({"text":"line1\nline2\r"})),
    };
    let text = msg.to_json();
    assert!(!text.contains('\n') && !text.contains('\r'));
    let value: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    for key in keys {
        assert!(["jsonrpc", "id", "method", "params"].contains(&key.as_str()));
    }
    assert_eq!(parse(&text).unwrap(), msg);
    let response = Message::error(None, -32700, "Parse error").to_json();
    assert_eq!(
        response,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
    );
}

fn big(chars: usize) -> Value {
    json!("x".repeat(chars))
}

#[test]
fn ch13_messages_within_the_limit_are_sent_unchanged() {
    let framing = Framing::binder_channel();
    let msg = Message::Notification {
        method: "n".into(),
        params: Some(json!([big(100)])),
    };
    assert_eq!(framing.fit(&msg), Outbound::Send(msg.to_json()));
}

#[test]
fn ch13_exactly_65536_fits_65537_does_not() {
    let framing = Framing::binder_channel();
    // {"jsonrpc":"2.0","method":"n","params":["…"]} has 41 chars of envelope.
    let envelope = Message::Notification {
        method: "n".into(),
        params: Some(json!([""])),
    }
    .to_json()
    .len();
    let fits = Message::Notification {
        method: "n".into(),
        params: Some(json!([big(65_536 - envelope)])),
    };
    assert!(matches!(framing.fit(&fits), Outbound::Send(t) if t.len() == 65_536));
    let over = Message::Notification {
        method: "n".into(),
        params: Some(json!([big(65_537 - envelope)])),
    };
    assert_eq!(framing.fit(&over), Outbound::Dropped);
}

#[test]
fn ch13_oversize_request_becomes_a_local_32603_error() {
    let framing = Framing::binder_channel();
    let msg = Message::Request {
        id: Id::Number(9),
        method: "tools/call".into(),
        params: Some(json!({"data": big(70_000)})),
    };
    let chars = msg.to_json().len();
    let Outbound::LocalError(Message::Response {
        id,
        outcome: Err(error),
    }) = framing.fit(&msg)
    else {
        panic!("expected a local error");
    };
    assert_eq!(id, Some(Id::Number(9)));
    assert_eq!(error.code, -32603);
    assert_eq!(
        error.message,
        format!("binder-channel-v1: message of {chars} chars exceeds 65536")
    );
}

#[test]
fn ch13_oversize_response_is_replaced_by_an_error_with_the_same_id() {
    let framing = Framing::binder_channel();
    let msg = Message::Response {
        id: Some(Id::String("r1".into())),
        outcome: Ok(json!({"content": big(80_000)})),
    };
    let Outbound::Replace(text) = framing.fit(&msg) else {
        panic!("expected a replacement");
    };
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["id"], json!("r1"));
    assert_eq!(value["error"]["code"], json!(-32603));
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("binder-channel-v1: message of ")
    );
}

#[test]
fn ch13_oversize_notifications_are_dropped_and_counted() {
    let framing = Framing::binder_channel();
    let msg = Message::Notification {
        method: "session/update".into(),
        params: Some(json!({"text": big(66_000)})),
    };
    assert_eq!(framing.fit(&msg), Outbound::Dropped);
    assert_eq!(framing.fit(&msg), Outbound::Dropped);
    assert_eq!(framing.dropped_notifications(), 2);
}

#[test]
fn ch13_size_counts_utf16_units_of_the_encoded_message() {
    let framing = Framing::binder_channel();
    // 32,700 emoji are 65,400 units (plus the envelope) but 130,800 UTF-8 bytes: it fits.
    let msg = Message::Notification {
        method: "n".into(),
        params: Some(json!(["😀".repeat(32_700)])),
    };
    assert!(matches!(framing.fit(&msg), Outbound::Send(_)));
    // 32,748 emoji straddle the limit by their second unit: dropped.
    let over = Message::Notification {
        method: "n".into(),
        params: Some(json!(["😀".repeat(32_748)])),
    };
    assert_eq!(framing.fit(&over), Outbound::Dropped);
}

#[test]
fn br02_line_framing_uses_the_acp_line_prefix() {
    let framing = Framing::acp_line();
    let msg = Message::Request {
        id: Id::Number(1),
        method: "m".into(),
        params: Some(json!([big(70_000)])),
    };
    let Outbound::LocalError(Message::Response {
        outcome: Err(error),
        ..
    }) = framing.fit(&msg)
    else {
        panic!("expected a local error");
    };
    assert!(error.message.starts_with("acp-line: message of "));
}
