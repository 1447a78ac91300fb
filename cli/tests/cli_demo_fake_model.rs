//! `capbridge fake-model --listen 127.0.0.1:PORT`: the demo's fake model as a standalone
//! server, answering the OpenAI-compatible API until it is stopped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

#[test]
fn fake_model_serves_until_stopped_and_refuses_non_loopback() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .args(["fake-model", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // "fake model listening on http://127.0.0.1:PORT/v1 (Ctrl-C to stop)"
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap();
    let hostport = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();

    let body = r#"{"model":"m","stream":false,"messages":[{"role":"user","content":"hi there"}]}"#;
    let mut s = std::net::TcpStream::connect(&hostport).unwrap();
    write!(
        s,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("echo: hi there"), "{reply}");

    child.kill().unwrap();
    child.wait().unwrap();

    let o = Command::new(env!("CARGO_BIN_EXE_capbridge"))
        .args(["fake-model", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("loopback"));
}
