//! `capbridge serve --stdio --model fake`: a real process speaking ACP on stdin/stdout.
//! stdout carries only JSON-RPC lines (ACP-01); a prompt streams and ends with end_turn
//! (ACP-30); the session is stored in --data (0700) and loadable by the next process (ACP-14).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

struct Agent {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    raw: Vec<String>,
}

impl Agent {
    fn start(data: &std::path::Path) -> Agent {
        let mut child = Command::new(env!("CARGO_BIN_EXE_capbridge"))
            .args([
                "serve",
                "--stdio",
                "--model",
                "fake",
                "--consent",
                "deny",
                "--data",
            ])
            .arg(data)
            .env("RUST_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Agent {
            child,
            stdin,
            lines,
            raw: Vec::new(),
        }
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn until_response(&mut self, id: u64) -> (Vec<Value>, Value) {
        let mut notes = Vec::new();
        loop {
            let line = self.lines.next().expect("agent closed stdout").unwrap();
            self.raw.push(line.clone());
            let v: Value = serde_json::from_str(&line).expect("stdout carries only JSON");
            if v["id"] == json!(id) {
                return (notes, v);
            }
            notes.push(v);
        }
    }

    fn finish(mut self) -> Vec<String> {
        drop(self.stdin);
        for line in self.lines.by_ref() {
            self.raw.push(line.unwrap());
        }
        assert!(self.child.wait().unwrap().success());
        self.raw
    }
}

#[test]
fn cli_serve_stdio_runs_a_turn_and_keeps_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("state");
    let mut a = Agent::start(&data);
    a.send(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}));
    let (_, init) = a.until_response(1);
    assert_eq!(init["result"]["protocolVersion"], 1);
    a.send(
        json!({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}),
    );
    let (_, new) = a.until_response(2);
    let session = new["result"]["sessionId"].as_str().unwrap().to_owned();
    a.send(json!({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId": session, "prompt":[{"type":"text","text":"hello there"}]}}));
    let (notes, done) = a.until_response(3);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let text: String = notes
        .iter()
        .map(|n| {
            n["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert_eq!(text, "echo: hello there");
    a.send(json!({"jsonrpc":"2.0","id":4,"method":"no/such_method"}));
    let (_, r) = a.until_response(4);
    assert_eq!(r["error"]["code"], -32601);
    for line in a.finish() {
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&data).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }

    // The next process loads the stored session.
    let mut b = Agent::start(&data);
    b.send(json!({"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId": session, "cwd":"/","mcpServers":[]}}));
    let (replayed, r) = b.until_response(1);
    assert!(r["result"].is_object(), "{r}");
    assert_eq!(
        replayed[0]["params"]["update"]["sessionUpdate"],
        "user_message_chunk"
    );
    assert_eq!(
        replayed[0]["params"]["update"]["content"]["text"],
        "hello there"
    );
    b.finish();
}
