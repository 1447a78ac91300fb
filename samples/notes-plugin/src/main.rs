//! `notes-plugin`: a sample AgentOS MCP plugin — a notes provider (add, get, list, search,
//! append, update, tag, archive, trash/restore) built on `mcp_adapter::McpServer`, served as
//! its own process as an `IMcpService` over rsbinder RPC on a Unix socket (the Linux host's
//! stand-in for Binder), keeping its notes in a JSON file replaced atomically so state
//! survives restarts. Its Agent Plugins 1.0 package is `agent-plugin/` next to this crate.
//!
//! ```text
//! notes-plugin --socket /run/user/1000/notes.sock --data ~/.local/share/notes.json
//! ```

mod store;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use binder_channel::binder::{AdmitAll, ServiceKind, rpc_uri, serve_channels};
use clap::Parser;
use mcp_adapter::McpServer;

use crate::store::NotesFile;
use crate::tools::Notebook;

/// The server name: the key under `extensions."org.agentos".mcpServers` in plugin.json, the
/// MCP `serverInfo.name`, and the rsbinder service name on the socket.
const SERVER_NAME: &str = "notes";

/// A notes MCP plugin served over rsbinder RPC (binder-channel-v1) on a Unix socket.
#[derive(Debug, Parser)]
#[command(name = "notes-plugin", version, about, long_about = None)]
struct Args {
    /// Unix socket to serve the `IMcpService` on (created; a stale one is replaced).
    #[arg(long, value_name = "PATH")]
    socket: PathBuf,
    /// JSON file holding the notes (created on the first change).
    #[arg(long, value_name = "FILE")]
    data: PathBuf,
    /// TEST AID, not for real use: every tool call first announces itself on stderr and
    /// waits this many milliseconds (cancellable), so tests can act while a call is in flight.
    #[arg(long, value_name = "MS")]
    slow_ms: Option<u64>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("notes-plugin: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("notes-plugin: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let file = NotesFile::new(&args.data);
    let notes = file.load().map_err(|e| e.to_string())?;
    let count = notes.notes.len();
    let book = Notebook::new(notes, file, args.slow_ms.map(Duration::from_millis));
    let server = McpServer::with_version(SERVER_NAME, env!("CARGO_PKG_VERSION"), move |r| {
        tools::register(r, &book)
    })
    .map_err(|e| format!("tool registration failed: {e}"))?;
    let uri = rpc_uri(&args.socket, SERVER_NAME);
    let (_guard, incoming) = serve_channels(uri, ServiceKind::Mcp, AdmitAll)
        .map_err(|e| format!("cannot serve on {}: {e}", args.socket.display()))?;
    server.serve_incoming(incoming);
    // One line on stdout when ready (scripts and tests wait for it).
    println!(
        "notes-plugin: ready, serving `{SERVER_NAME}` on {} ({count} notes in {})",
        args.socket.display(),
        args.data.display()
    );
    shutdown_signal().await;
    Ok(())
}

/// SIGINT or SIGTERM. Every change is on disk before its answer, so stopping needs no flush.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
