//! ACP-21 in `capbridge serve --stdio`: with `--model fake` the model selector offers the fake
//! model and `session/set_config_option` accepts it; with a user-defined endpoint the list is
//! only the current model and a change is `unsupported`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

struct Agent {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    next_id: u64,
}

impl Agent {
    fn start(data: &std::path::Path, model: &str) -> Agent {
        let mut child = Command::new(env!("CARGO_BIN_EXE_capbridge"))
            .args(["serve", "--stdio", "--model", model, "--consent", "deny"])
            .arg("--data")
            .arg(data)
            .env_remove("CAPBRIDGE_MODEL_URL")
            .env_remove("CAPBRIDGE_MODEL")
            .env_remove("CAPBRIDGE_MODEL_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Agent {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
        )
        .unwrap();
        stdin.flush().unwrap();
        loop {
            let line = self.lines.next().expect("agent closed stdout").unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    fn new_session(&mut self) -> Value {
        self.request("initialize", json!({"protocolVersion": 1}));
        self.request("session/new", json!({"cwd": "/", "mcpServers": []}))["result"].clone()
    }

    fn finish(mut self) {
        drop(self.stdin.take());
        assert!(self.child.wait().unwrap().success());
    }
}

fn model_option(result: &Value) -> Value {
    result["configOptions"]
        .as_array()
        .unwrap_or_else(|| panic!("no configOptions: {result}"))
        .iter()
        .find(|o| o["id"] == "model")
        .cloned()
        .unwrap()
}

fn values(opt: &Value) -> Vec<String> {
    opt["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn acp21_serve_fake_offers_the_fake_model_as_a_choice() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = Agent::start(&dir.path().join("state"), "fake");
    let new = a.new_session();
    let s = new["sessionId"].as_str().unwrap().to_owned();
    let model = model_option(&new);
    assert_eq!(model["category"], "model");
    assert_eq!(model["currentValue"], "fake-model");
    assert_eq!(values(&model), ["fake-model"]);
    let r = a.request(
        "session/set_config_option",
        json!({"sessionId": s, "configId": "model", "value": "fake-model"}),
    );
    assert_eq!(
        model_option(&r["result"])["currentValue"],
        "fake-model",
        "{r}"
    );
    let r = a.request(
        "session/set_config_option",
        json!({"sessionId": s, "configId": "model", "value": "not-offered"}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["agentosCode"], "invalid_params");
    a.finish();
}

#[test]
fn acp21_serve_user_defined_endpoint_refuses_a_model_change() {
    let dir = tempfile::tempdir().unwrap();
    // Never contacted: no prompt is sent.
    let mut a = Agent::start(&dir.path().join("state"), "http://127.0.0.1:9/v1");
    let new = a.new_session();
    let s = new["sessionId"].as_str().unwrap().to_owned();
    let model = model_option(&new);
    assert_eq!(values(&model), [model["currentValue"].as_str().unwrap()]);
    let r = a.request(
        "session/set_config_option",
        json!({"sessionId": s, "configId": "model", "value": model["currentValue"]}),
    );
    assert_eq!(r["error"]["data"]["agentosCode"], "unsupported", "{r}");
    a.finish();
}
