//! `capbridge`: the command line of capbridge.
//!
//! Subcommands so far: `tool-name` (single-tool naming), `catalog assign` (catalog-level
//! naming with collision handling) and `catalog show` (the unified catalog of ACI and MCP
//! capability descriptions). Every failure is one line on stderr and exit status 2.

mod call;
mod catalog_files;
mod config;
mod demo;
mod fake_model_cmd;
mod live_catalog;
mod naming_cmd;
mod serve;
mod sources;

use std::io::{self, BufRead, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// capbridge: one capability catalog over AgentOS MCP plugins and ACI providers.
#[derive(Debug, Parser)]
#[command(name = "capbridge", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Reads JSON lines {"plugin","server","tool"} (or {"source":"session","server","tool"}) on
    /// stdin and prints {"name": …} for each: the model-facing name of that one tool (CAT-10..13).
    ToolName,
    /// Catalog commands. Without a subcommand: the live catalog of the host registry
    /// (--registry PATH or $CAPBRIDGE_REGISTRY), with a status line per plugin.
    Catalog {
        #[command(subcommand)]
        command: Option<CatalogCommand>,
        #[command(flatten)]
        live: live_catalog::LiveArgs,
    },
    /// Calls one tool through the live catalog and the permissions pipeline (no model) and
    /// prints its result. NAME is a model-facing name (mcp__…, aci__…) or PLUGIN/TOOL.
    /// Exit status: 0 ok, 1 the tool failed, 3 refused or denied, 2 usage/config errors.
    Call {
        /// Model-facing tool name, or PLUGIN/TOOL (plugin name or ACI package, raw tool name).
        name: String,
        /// The arguments, one JSON object (default: {}).
        #[arg(default_value = "{}")]
        arguments: String,
        /// Host registry (a file, or a directory holding registry.json).
        #[arg(long)]
        registry: Option<PathBuf>,
        /// How consent is answered: ask (on /dev/tty), allow or deny.
        #[arg(long, value_parser = parse_consent)]
        consent: Option<config::ConsentMode>,
        /// Print the whole result (content, structuredContent, isError) as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// The README's demo: starts the sample notes plugin (MCP) and the sample ACI provider as
    /// processes, the fake model (unless a real one is configured) and the ACP runtime, and runs
    /// one turn that uses both, printing the events and consent prompts. PROMPT is used only
    /// with a real model (CAPBRIDGE_MODEL_URL / capbridge.toml).
    Demo {
        /// The prompt for a real model.
        prompt: Option<String>,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// The ACP agent runtime: `--stdio` serves one ACP client on stdin/stdout (stdout carries
    /// only JSON-RPC, logs go to stderr); `--binder PATH` serves IAcpService on an rsbinder RPC
    /// socket until Ctrl-C.
    Serve {
        /// One ACP connection on stdin/stdout.
        #[arg(long)]
        stdio: bool,
        /// Serve IAcpService on this rsbinder RPC socket (callers identified by kernel UID).
        #[arg(long, value_name = "SOCKET")]
        binder: Option<PathBuf>,
        /// `fake` (in-process fake model server) or an OpenAI-compatible base URL.
        #[arg(long)]
        model: Option<String>,
        /// Host registry (a file, or a directory holding registry.json).
        #[arg(long)]
        registry: Option<PathBuf>,
        /// How consent is answered: ask (on /dev/tty, deny without one), allow or deny.
        #[arg(long, value_parser = parse_consent)]
        consent: Option<config::ConsentMode>,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Runs the fake model server (docs/fake-model.md) until Ctrl-C.
    FakeModel {
        /// Loopback address to listen on, e.g. 127.0.0.1:8089 (port 0 picks a free one).
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: std::net::SocketAddr,
    },
}

/// Options every subcommand that reads capbridge.toml takes.
#[derive(Debug, clap::Args)]
struct ConfigArgs {
    /// Config file (default: ./capbridge.toml, else $XDG_CONFIG_HOME/capbridge/capbridge.toml).
    #[arg(long = "config", value_name = "FILE")]
    file: Option<PathBuf>,
    /// State directory (permission decisions; default: none for `call`).
    #[arg(long = "data", value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

fn parse_consent(s: &str) -> Result<config::ConsentMode, String> {
    config::ConsentMode::parse(s).ok_or_else(|| "expected ask, allow or deny".to_owned())
}

/// Layers capbridge.toml, the environment and these flags; a bad config exits 2.
fn settings(
    args: &ConfigArgs,
    registry: Option<PathBuf>,
    consent: Option<config::ConsentMode>,
) -> Result<config::Settings, config::ConfigError> {
    let flags = config::Overrides {
        config: args.file.clone(),
        registry,
        data_dir: args.data_dir.clone(),
        consent,
        ..config::Overrides::default()
    };
    config::load(&flags, &config::ProcessEnv)
}

/// Logs go to stderr, filtered by RUST_LOG (default: warnings).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .try_init();
}

/// Runs a subcommand that reports its own exit code; errors are one line and status 2.
fn finish<E: std::fmt::Display>(result: Result<ExitCode, E>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("capbridge: {e}");
            ExitCode::from(2)
        }
    }
}

#[derive(Debug, Subcommand)]
enum CatalogCommand {
    /// Reads one JSON array of {"plugin","server","tool"} (optionally "source":"session") on
    /// stdin and prints the array with a "name" added to each, in input order, with
    /// catalog-level collision handling (CAT-14..17).
    Assign,
    /// Loads capability description files and prints the unified catalog.
    ///
    /// Each FILE is one of:
    ///   {"package","service","capabilities":[…]}  an ACI provider (capability JSON objects or strings);
    ///   {"plugin","server","tools":[…]}           an MCP server's tools/list result;
    ///   a bare JSON array (ACI) or {"tools":[…]} (MCP), named PROVIDER@SERVER.json
    ///   (without "@", the server is "ACIService" for ACI and "main" for MCP).
    Show {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Capability description files (e.g. samples/catalog/*). Without files: the live
        /// catalog of the host registry.
        files: Vec<PathBuf>,
        /// Host registry for the live catalog (a file, or a directory holding registry.json).
        #[arg(long, value_name = "PATH")]
        registry: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command {
        Command::ToolName => {
            let stdin = io::stdin();
            naming_cmd::tool_name(stdin.lock().lines(), &mut out)
        }
        Command::Catalog {
            command: None,
            live,
        } => live_catalog::run(&live, &mut out, &mut io::stderr()),
        Command::Catalog {
            command: Some(CatalogCommand::Assign),
            ..
        } => {
            let mut input = String::new();
            match io::stdin().read_to_string(&mut input) {
                Ok(_) => naming_cmd::assign(&input, &mut out),
                Err(e) => Err(naming_cmd::CliError::Io(e.kind().to_string())),
            }
        }
        Command::Catalog {
            command:
                Some(CatalogCommand::Show {
                    json,
                    files,
                    registry,
                }),
            ..
        } => {
            if files.is_empty() {
                let live = live_catalog::LiveArgs { registry, json };
                live_catalog::run(&live, &mut out, &mut io::stderr())
            } else {
                catalog_files::show(&files, json, &mut out, &mut io::stderr())
            }
        }
        Command::Call {
            name,
            arguments,
            registry,
            consent,
            json,
            config,
        } => {
            init_logging();
            let settings = match settings(&config, registry, consent) {
                Ok(s) => s,
                Err(e) => return finish::<String>(Err(e.to_string())),
            };
            return finish(call::run(call::CallOptions {
                name,
                arguments,
                json,
                settings,
            }));
        }
        Command::Demo { prompt, config } => {
            // The demo prints from several threads; don't hold stdout's lock here.
            drop(out);
            init_logging();
            let settings = match settings(&config, None, None) {
                Ok(s) => s,
                Err(e) => return finish::<String>(Err(e.to_string())),
            };
            return finish(demo::run(demo::DemoOptions { prompt, settings }));
        }
        Command::Serve {
            stdio,
            binder,
            model,
            registry,
            consent,
            config,
        } => {
            init_logging();
            let settings = match settings(&config, registry, consent) {
                Ok(s) => s,
                Err(e) => return finish::<String>(Err(e.to_string())),
            };
            return finish(serve::run(serve::ServeOptions {
                stdio,
                binder,
                model,
                settings,
            }));
        }
        Command::FakeModel { listen } => {
            init_logging();
            return finish(fake_model_cmd::run(listen));
        }
    };
    let _ = out.flush();
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("capbridge: {e}");
            ExitCode::from(2)
        }
    }
}
