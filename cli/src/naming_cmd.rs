//! `capbridge tool-name` and `capbridge catalog assign`.

use std::io::{self, Write};
use std::process::ExitCode;

use capability_model::naming::{self, NameFamily, NameKey, NamingError};
use serde::Deserialize;
use serde_json::{Value, json};

/// A command-line failure: one line on stderr, exit status 2.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    #[error("line {line}: {message}")]
    BadLine { line: usize, message: String },
    #[error("{0}")]
    BadInput(String),
    #[error("I/O error: {0}")]
    Io(String),
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError::Io(e.kind().to_string())
    }
}

#[derive(Debug, Deserialize)]
struct Triple {
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    plugin: Option<String>,
    server: String,
    tool: String,
}

impl Triple {
    fn family(&self) -> Result<NameFamily, String> {
        match self.source.as_deref() {
            None | Some("plugin") | Some("mcp") | Some("aci") => Ok(NameFamily::Plugin),
            Some("session") => Ok(NameFamily::Session),
            Some(_) => Err("\"source\" must be \"plugin\" or \"session\"".into()),
        }
    }

    fn key(&self) -> Result<NameKey, String> {
        Ok(match self.family()? {
            NameFamily::Plugin => {
                let plugin = self
                    .plugin
                    .as_deref()
                    .ok_or("missing string field \"plugin\"")?;
                NameKey::plugin(plugin, &self.server, &self.tool)
            }
            NameFamily::Session => NameKey::session(&self.server, &self.tool),
        })
    }
}

fn parse_triple(v: Value) -> Result<Triple, String> {
    serde_json::from_value(v).map_err(|e| {
        // serde's message names the field and the expected type, not the value.
        let m = e.to_string();
        m.split(" at line").next().unwrap_or(&m).to_owned()
    })
}

/// One `{"name"}` line per input line.
pub(crate) fn tool_name(
    lines: impl Iterator<Item = io::Result<String>>,
    out: &mut impl Write,
) -> Result<ExitCode, CliError> {
    for (i, line) in lines.enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| CliError::BadLine {
            line: i + 1,
            message,
        };
        let v: Value =
            serde_json::from_str(&line).map_err(|e| bad(format!("malformed JSON ({e})")))?;
        let key = parse_triple(v).and_then(|t| t.key()).map_err(bad)?;
        writeln!(out, "{}", json!({ "name": naming::single_name(&key) }))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The whole array, named together.
pub(crate) fn assign(input: &str, out: &mut impl Write) -> Result<ExitCode, CliError> {
    let v: Value = serde_json::from_str(input)
        .map_err(|e| CliError::BadInput(format!("malformed JSON ({e})")))?;
    let Value::Array(items) = v else {
        return Err(CliError::BadInput("the input must be a JSON array".into()));
    };
    let mut triples = Vec::with_capacity(items.len());
    let mut keys = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let bad = |m: String| CliError::BadInput(format!("entry {i}: {m}"));
        let t = parse_triple(item).map_err(bad)?;
        let key = t.key().map_err(bad)?;
        if (key.family == NameFamily::Plugin && key.plugin.is_empty())
            || key.server.is_empty()
            || key.tool.is_empty()
        {
            return Err(bad("plugin, server and tool names must not be empty".into()));
        }
        triples.push(t);
        keys.push(key);
    }
    let names = naming::assign(&keys).map_err(|e| match e {
        NamingError::DuplicateId { .. } => CliError::BadInput(e.to_string()),
        other => CliError::BadInput(other.to_string()),
    })?;
    let result: Vec<Value> = triples
        .into_iter()
        .zip(names)
        .map(|(t, name)| {
            let mut o = serde_json::Map::new();
            if let Some(s) = t.source {
                o.insert("source".into(), Value::String(s));
            }
            if let Some(p) = t.plugin {
                o.insert("plugin".into(), Value::String(p));
            }
            o.insert("server".into(), Value::String(t.server));
            o.insert("tool".into(), Value::String(t.tool));
            o.insert("name".into(), Value::String(name));
            Value::Object(o)
        })
        .collect();
    writeln!(out, "{}", Value::Array(result))?;
    Ok(ExitCode::SUCCESS)
}
