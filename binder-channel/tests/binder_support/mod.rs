//! Shared by the `binder_*` tests: the second process (`binder_channel_peer`) and where it
//! listens.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a peer may take to print an expected line.
pub const LINE_TIMEOUT: Duration = Duration::from_secs(60);

/// The UID the second process runs as: another one than ours when we are root, so identity
/// checks see two real UIDs; otherwise our own.
pub fn other_uid() -> u32 {
    let me = my_uid();
    if me == 0 { 65_534 } else { me }
}

/// This process's effective UID, as the kernel reports it.
pub fn my_uid() -> u32 {
    std::fs::metadata("/proc/self").unwrap().uid()
}

/// A directory both processes can create sockets in.
pub fn socket_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// The rsbinder RPC URI string for `name` at `path`.
pub fn uri_string(path: &Path, name: &str) -> String {
    format!("unix://{}?profile=android13plus#{name}", path.display())
}

/// The peer program `uid` can run: the built binary, or a world-readable copy of it in `dir`.
fn program_for(dir: &Path, uid: u32) -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_binder_channel_peer"));
    if uid == my_uid() {
        return built;
    }
    let copy = dir.join("binder_channel_peer");
    if !copy.exists() {
        std::fs::copy(&built, &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    copy
}

/// `ETXTBSY`: the program is open for writing somewhere.
const EXECUTABLE_FILE_BUSY: i32 = 26;

/// Spawns `command`, retrying while its program is "busy": a copy just written by one test can
/// still be open for writing in a child another test forked at that moment, until that child
/// execs.
fn spawn_retrying(command: &mut Command) -> Child {
    let mut attempts = 0;
    loop {
        match command.spawn() {
            Ok(child) => return child,
            Err(err) if err.raw_os_error() == Some(EXECUTABLE_FILE_BUSY) && attempts < 100 => {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(err) => panic!("cannot start binder_channel_peer: {err}"),
        }
    }
}

/// A running `binder_channel_peer`, killed when dropped.
pub struct Peer {
    child: Child,
    lines: mpsc::Receiver<String>,
    pub seen: Vec<String>,
}

impl Peer {
    /// Starts `binder_channel_peer args…` as `uid`, from a copy in `dir` when `uid` is not
    /// ours (the build directory may not be reachable by another user).
    pub fn spawn(dir: &Path, args: &[&str], uid: u32) -> Peer {
        let mut command = Command::new(program_for(dir, uid));
        command
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if uid != my_uid() {
            command.uid(uid).gid(uid);
        }
        let mut child = spawn_retrying(&mut command);
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for a line starting with `prefix` and returns it.
    pub fn expect(&mut self, prefix: &str) -> String {
        loop {
            match self.lines.recv_timeout(LINE_TIMEOUT) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.starts_with(prefix) {
                        return line;
                    }
                }
                Err(err) => panic!(
                    "no line starting with {prefix:?} ({err}); peer printed {:?}",
                    self.seen
                ),
            }
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the process (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the process to exit and returns whether it succeeded.
    pub fn wait_success(&mut self) -> bool {
        self.child.wait().unwrap().success()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts a provider as `uid` serving `name` in `dir`; returns it once it listens.
pub fn spawn_provider(dir: &Path, name: &str, uid: u32, extra: &[&str]) -> (Peer, PathBuf) {
    let path = dir.join(format!("{name}.sock"));
    let uri = uri_string(&path, name);
    let mut args = vec!["provide", uri.as_str()];
    args.extend_from_slice(extra);
    let mut peer = Peer::spawn(dir, &args, uid);
    peer.expect("READY");
    (peer, path)
}
