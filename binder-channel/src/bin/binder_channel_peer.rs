//! A second process for the cross-process binder-channel tests, the kernel-Binder VM run and
//! the RPC benchmark. It speaks binder-channel-v1 through the rsbinder carrier
//! (`binder_channel::binder`) and reports what happened as one line per event on stdout:
//!
//! ```text
//! binder_channel_peer provide <uri> [--deny-uid UID]
//!     serve IMcpService; per channel print `OPENED uid=<uid>` and `CLOSED <class> uid=<uid>`
//! binder_channel_peer stream <uri> [--count N] [--size CHARS] [--expect-uid UID]
//!     open, send N messages and ask for N back (both flow-controlled), close; `RESULT ok …`
//! binder_channel_peer hang <uri> [--expect-uid UID]
//!     open, send a few messages, print `READY`, wait for the channel to end (peer-death
//!     tests kill this process or its peer) and print `CLOSED <class>`
//! binder_channel_peer leak <uri> <leak-name> [--expect-uid UID]
//!     kernel Binder: open, register the provider's receiving end with the service manager as
//!     <leak-name> for another process, print `LEAKED`, wait for the channel to close
//! binder_channel_peer intrude <leak-name>
//!     kernel Binder: call `send` on the leaked receiving end from this process's UID
//! binder_channel_peer echo-socket <path>
//!     the benchmark baseline: a bare tokio Unix-socket line echo server
//! binder_channel_peer as-uid <uid> <command…>
//!     run <command…> as <uid> in this process (root only; for harnesses without `su`)
//! ```
//!
//! `<uri>` is `binder://name` (kernel Binder) or `unix:///path?profile=android13plus#name`
//! (rsbinder RPC). Exit status 0 means the scenario passed.

use std::process::ExitCode;
use std::time::Instant;

use binder_channel::binder::{
    self, ConnectOptions, Refusal, RefusalReason, ServiceKind, aidl::org::agentos::channel,
};
use binder_channel::{Channel, PeerIdentity};
use serde_json::{Value, json};

/// Messages `hang` sends before it waits to be killed.
const HANG_MESSAGES: u64 = 5;
/// Default message count of `stream` (the VM run needs ≥ 10,000).
const DEFAULT_COUNT: u64 = 10_000;
/// Default message size of `stream`, in characters.
const DEFAULT_SIZE: usize = 100;
/// Producer back-pressure mark (CH-24 suggests 16,384 U16).
const WRITABLE_MARK: usize = 16_384;

type Failure = Box<dyn std::error::Error + Send + Sync>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [as_uid, uid, rest @ ..] = args.as_slice()
        && as_uid == "as-uid"
    {
        return exec_as(uid, rest);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            println!("RESULT fail runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            println!("RESULT fail {err}");
            ExitCode::FAILURE
        }
    }
}

/// `as-uid <uid> <command…>`: become `uid` (user and group, no supplementary groups) and run
/// `<command…>` in this same process (same PID), so a test harness without `su` can start
/// peers under different UIDs. Needs root.
fn exec_as(uid: &str, rest: &[String]) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let Ok(uid) = uid.parse::<u32>() else {
        println!("RESULT fail as-uid: bad uid {uid}");
        return ExitCode::FAILURE;
    };
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(err) => {
            println!("RESULT fail as-uid: {err}");
            return ExitCode::FAILURE;
        }
    };
    let err = std::process::Command::new(program)
        .args(rest)
        .uid(uid)
        .gid(uid)
        .exec();
    println!("RESULT fail as-uid: {err}");
    ExitCode::FAILURE
}

/// Command-line options after the positional arguments.
struct Options {
    positional: Vec<String>,
    count: u64,
    size: usize,
    expect_uid: Option<u32>,
    deny_uid: Option<u32>,
}

fn parse_options(args: &[String]) -> Result<Options, Failure> {
    let mut options = Options {
        positional: Vec::new(),
        count: DEFAULT_COUNT,
        size: DEFAULT_SIZE,
        expect_uid: None,
        deny_uid: None,
    };
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let mut value = || iter.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--count" => options.count = value()?.parse()?,
            "--size" => options.size = value()?.parse()?,
            "--expect-uid" => options.expect_uid = Some(value()?.parse()?),
            "--deny-uid" => options.deny_uid = Some(value()?.parse()?),
            _ => options.positional.push(arg.clone()),
        }
    }
    Ok(options)
}

async fn run(args: Vec<String>) -> Result<(), Failure> {
    let (command, rest) = args.split_first().ok_or("no command")?;
    let options = parse_options(rest)?;
    let arg = |i: usize| {
        options
            .positional
            .get(i)
            .cloned()
            .ok_or_else(|| format!("{command}: missing argument {i}"))
    };
    match command.as_str() {
        "provide" => provide(arg(0)?.parse()?, options.deny_uid).await,
        "stream" => stream(arg(0)?.parse()?, &options).await,
        "hang" => hang(arg(0)?.parse()?, &options).await,
        "leak" => leak(arg(0)?.parse()?, &arg(1)?, &options).await,
        "intrude" => intrude(&arg(0)?).await,
        "echo-socket" => echo_socket(&arg(0)?).await,
        other => Err(format!("unknown command {other}").into()),
    }
}

fn connect_options(options: &Options) -> ConnectOptions {
    let mut connect = ConnectOptions::default();
    connect.expected_peer_uid = options.expect_uid;
    connect
}

// ---- provider ----

async fn provide(uri: rsbinder::Uri, deny_uid: Option<u32>) -> Result<(), Failure> {
    let admission = move |peer: PeerIdentity| match deny_uid {
        Some(uid) if uid == peer.uid => Err(Refusal::new(
            RefusalReason::Denied,
            "this UID is not allowed",
        )),
        _ => Ok(()),
    };
    let socket = match uri.endpoint() {
        rsbinder::Endpoint::Unix(path) => Some(path.clone()),
        _ => None,
    };
    let (_guard, mut incoming) = binder::serve_channels(uri, ServiceKind::Mcp, admission)?;
    if let Some(path) = socket {
        // Callers run under other UIDs: let them connect (`open` still checks who they are).
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o666))?;
    }
    println!("READY");
    while let Some(channel) = incoming.accept().await {
        println!("OPENED uid={}", channel.peer().uid);
        tokio::spawn(serve_channel(channel));
    }
    Ok(())
}

/// Handles one channel on the provider: counts `seq` notifications, echoes `echo`
/// notifications, answers `summary` and `stream` requests.
async fn serve_channel(channel: Channel) {
    let uid = channel.peer().uid;
    let mut received: u64 = 0;
    let mut in_order = true;
    while let Some(message) = channel.recv().await {
        let Ok(value) = serde_json::from_str::<Value>(&message) else {
            continue;
        };
        match value["method"].as_str() {
            Some("seq") => {
                in_order &= value["params"]["n"].as_u64() == Some(received);
                received += 1;
            }
            Some("echo") => {
                let echoed = channel.await_writable(WRITABLE_MARK).await.is_ok()
                    && channel.send(message).is_ok();
                if !echoed {
                    break;
                }
            }
            Some("summary") => {
                let reply = json!({"jsonrpc": "2.0", "id": value["id"],
                    "result": {"received": received, "in_order": in_order, "peer_uid": uid}});
                if channel.send(reply.to_string()).is_err() {
                    break;
                }
            }
            Some("stream") => {
                let count = value["params"]["count"].as_u64().unwrap_or(0);
                let size = value["params"]["size"]
                    .as_u64()
                    .and_then(|s| usize::try_from(s).ok())
                    .unwrap_or(0);
                if send_sequence(&channel, count, size).await.is_err() {
                    break;
                }
                let done = json!({"jsonrpc": "2.0", "id": value["id"], "result": {"sent": count}});
                if channel.send(done.to_string()).is_err() {
                    break;
                }
            }
            _ => {}
        }
    }
    let reason = channel.closed().await;
    println!(
        "CLOSED {} uid={uid} received={received} detail={reason:?}",
        reason.class()
    );
}

/// A `seq` notification padded to exactly `size` characters when `size` allows.
fn seq_message(n: u64, size: usize) -> String {
    let bare =
        json!({"jsonrpc": "2.0", "method": "seq", "params": {"n": n, "pad": ""}}).to_string();
    let pad = size.saturating_sub(bare.len());
    json!({"jsonrpc": "2.0", "method": "seq", "params": {"n": n, "pad": "x".repeat(pad)}})
        .to_string()
}

/// Sends `count` `seq` notifications behind the producer back-pressure gate (CH-24).
async fn send_sequence(channel: &Channel, count: u64, size: usize) -> Result<(), Failure> {
    for n in 0..count {
        channel.await_writable(WRITABLE_MARK).await?;
        channel.send(seq_message(n, size))?;
    }
    Ok(())
}

// ---- opener scenarios ----

async fn open(uri: rsbinder::Uri, options: &Options) -> Result<Channel, Failure> {
    let opened = binder::connect(uri, ServiceKind::Mcp, connect_options(options)).await?;
    Ok(opened.channel)
}

/// Waits for the response with `id`, counting the `seq` notifications before it.
async fn await_response(channel: &Channel, id: u64) -> Result<(Value, u64, bool), Failure> {
    let mut seen: u64 = 0;
    let mut in_order = true;
    while let Some(message) = channel.recv().await {
        let value: Value = serde_json::from_str(&message)?;
        if value["method"] == "seq" {
            in_order &= value["params"]["n"].as_u64() == Some(seen);
            seen += 1;
        } else if value["id"] == id {
            return Ok((value, seen, in_order));
        }
    }
    Err(format!(
        "channel closed ({:?}) before response {id}",
        channel.close_reason()
    )
    .into())
}

async fn stream(uri: rsbinder::Uri, options: &Options) -> Result<(), Failure> {
    let channel = open(uri, options).await?;
    let started = Instant::now();
    send_sequence(&channel, options.count, options.size).await?;
    channel.send(json!({"jsonrpc": "2.0", "id": 1, "method": "summary"}).to_string())?;
    let (summary, _, _) = await_response(&channel, 1).await?;
    let result = &summary["result"];
    if result["received"].as_u64() != Some(options.count) || result["in_order"] != true {
        return Err(format!("provider saw {result}").into());
    }
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "stream",
        "params": {"count": options.count, "size": options.size}});
    channel.send(request.to_string())?;
    let (_, back, in_order) = await_response(&channel, 2).await?;
    if back != options.count || !in_order {
        return Err(format!(
            "received {back} of {} (in order: {in_order})",
            options.count
        )
        .into());
    }
    let elapsed = started.elapsed();
    let reason = channel.close().await;
    println!(
        "RESULT ok sent={} received={back} size={} my_uid_seen_by_provider={} secs={:.3} close={reason}",
        options.count,
        options.size,
        result["peer_uid"],
        elapsed.as_secs_f64()
    );
    Ok(())
}

async fn hang(uri: rsbinder::Uri, options: &Options) -> Result<(), Failure> {
    let channel = open(uri, options).await?;
    send_sequence(&channel, HANG_MESSAGES, DEFAULT_SIZE).await?;
    println!("READY");
    let reason = channel.closed().await;
    println!("CLOSED {}", reason.class());
    Ok(())
}

async fn leak(uri: rsbinder::Uri, name: &str, options: &Options) -> Result<(), Failure> {
    let opened = binder::connect(uri, ServiceKind::Mcp, connect_options(options)).await?;
    rsbinder::hub::add_service(name, opened.peer_binder().clone())
        .map_err(|status| format!("add_service: {status}"))?;
    println!("LEAKED");
    let reason = opened.channel.closed().await;
    println!("RESULT ok close={reason}");
    Ok(())
}

async fn intrude(name: &str) -> Result<(), Failure> {
    let name = name.to_owned();
    tokio::task::spawn_blocking(move || -> Result<(), Failure> {
        rsbinder::ProcessState::init_default().map_err(|e| e.to_string())?;
        let leaked: rsbinder::Strong<dyn channel::IChannel::IChannel> =
            rsbinder::hub::wait_for_interface(&name)?;
        leaked.r#send(r#"{"jsonrpc":"2.0","method":"intruder"}"#)?;
        Ok(())
    })
    .await??;
    println!("RESULT ok sent from uid {}", rustix_uid());
    Ok(())
}

/// This process's real UID, as the kernel reports it (`/proc/self/status`).
fn rustix_uid() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().next().map(str::to_owned))
        })
        .unwrap_or_else(|| "?".to_owned())
}

// ---- benchmark baseline ----

async fn echo_socket(path: &str) -> Result<(), Failure> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let _ = std::fs::remove_file(path);
    let listener = tokio::net::UnixListener::bind(path)?;
    println!("READY");
    loop {
        let (stream, _) = listener.accept().await?;
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(mut line)) = lines.next_line().await {
                line.push('\n');
                if write.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
    }
}
