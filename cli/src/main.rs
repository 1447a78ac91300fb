//! `capbridge`: the command line of capbridge.
//!
//! Subcommands so far: `tool-name` (single-tool naming), `catalog assign` (catalog-level
//! naming with collision handling) and `catalog show` (the unified catalog of ACI and MCP
//! capability descriptions). Every failure is one line on stderr and exit status 2.

mod catalog_files;
mod live_catalog;
mod naming_cmd;

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
