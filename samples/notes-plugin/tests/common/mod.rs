//! The notes plugin as a real process: start it on a socket in a temp dir, wait for its ready
//! line, watch its stderr, kill it, start it again on the same socket and data file.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use binder_channel::binder::rpc_uri;
use capability_model::CapabilityId;
use mcp_adapter::{McpSource, binder_connector};
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, Command};

pub const BIN: &str = env!("CARGO_BIN_EXE_notes-plugin");

/// A temp dir holding the socket and the data file, shared by successive processes.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("notes.sock")
    }
    pub fn data(&self) -> PathBuf {
        self.dir.path().join("notes.json")
    }
    /// A source reaching the plugin the way discovery does (service name = server name).
    pub fn source(&self) -> McpSource {
        McpSource::new(
            "notes",
            "notes",
            binder_connector(rpc_uri(self.socket(), "notes")),
        )
        .with_call_timeout(Duration::from_secs(20))
    }
}

/// One running plugin process.
pub struct Plugin {
    pub child: Child,
    pub stderr: Lines<BufReader<ChildStderr>>,
}

impl Plugin {
    /// Starts the binary and waits (at most 20 s) for its ready line.
    pub async fn start(home: &Home, extra: &[&str]) -> Plugin {
        let mut child = Command::new(BIN)
            .arg("--socket")
            .arg(home.socket())
            .arg("--data")
            .arg(home.data())
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(Duration::from_secs(20), stdout.next_line())
            .await
            .expect("no ready line within 20 s")
            .unwrap()
            .expect("the plugin exited before it was ready");
        assert!(ready.contains("ready"), "{ready}");
        let stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        Plugin { child, stderr }
    }

    /// Waits (at most 20 s) for a stderr line containing `needle`.
    pub async fn stderr_line(&mut self, needle: &str) -> String {
        tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                match self.stderr.next_line().await.unwrap() {
                    Some(line) if line.contains(needle) => return line,
                    Some(_) => continue,
                    None => panic!("stderr ended before {needle:?}"),
                }
            }
        })
        .await
        .expect("stderr line not seen within 20 s")
    }

    /// SIGKILL, and reap.
    pub async fn kill(mut self) {
        self.child.start_kill().unwrap();
        self.child.wait().await.unwrap();
    }

    /// SIGTERM (a clean stop), and reap; the exit must be a success.
    pub async fn stop(mut self) {
        let pid = self.child.id().unwrap();
        let status = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()
            .unwrap();
        assert!(status.success());
        let exit = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("no exit within 20 s after SIGTERM")
            .unwrap();
        assert!(exit.success(), "{exit:?}");
    }
}

pub fn id(tool: &str) -> CapabilityId {
    CapabilityId::mcp("notes", "notes", tool)
}

pub fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

pub fn data_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub type Shared<T> = Arc<T>;
