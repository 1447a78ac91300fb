//! `capbridge catalog show FILE...`: capability description files → the unified catalog.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use capability_model::naming::{aci_virtual_plugin, aci_virtual_server};
use capability_model::{Capability, Catalog, Listing, Source, aci, mcp};
use serde_json::{Value, json};

use crate::naming_cmd::CliError;

/// Largest description file read (a 2 MB capability list is legal; this leaves room).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Loads every file, builds one catalog, prints it. Files that cannot be read or parsed are
/// reported on `err` and the rest still load; then the exit status is 2.
pub(crate) fn show(
    files: &[std::path::PathBuf],
    as_json: bool,
    out: &mut impl Write,
    err: &mut impl Write,
) -> Result<ExitCode, CliError> {
    let mut caps: Vec<Capability> = Vec::new();
    let mut failed = false;
    let mut left_out = 0;
    for path in files {
        match load(path) {
            Ok(listing) => {
                left_out += listing.issues.len();
                for issue in &listing.issues {
                    writeln!(err, "capbridge: {}: {issue}", path.display())?;
                }
                caps.extend(listing.capabilities);
            }
            Err(m) => {
                failed = true;
                writeln!(err, "capbridge: {}: {m}", path.display())?;
            }
        }
    }
    let catalog = Catalog::build(caps);
    for i in catalog.issues() {
        writeln!(err, "capbridge: {}: {}", i.id, i.issue)?;
    }
    if as_json {
        let v: Vec<Value> = catalog.entries().iter().map(entry_json).collect();
        writeln!(out, "{}", Value::Array(v))?;
    } else {
        print_table(&catalog, left_out + catalog.issues().len(), out)?;
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

fn load(path: &Path) -> Result<Listing, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {}", e.kind()))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {}", e.kind()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("malformed JSON ({e})"))?;
    let stem = path
        .file_name()
        .and_then(|s| s.to_str())
        .map(|s| s.trim_end_matches(".json"))
        .unwrap_or("unnamed");
    let (stem_provider, stem_server) = match stem.split_once('@') {
        Some((p, s)) => (p, Some(s)),
        None => (stem, None),
    };
    let str_field = |o: &serde_json::Map<String, Value>, k: &str| -> Result<String, String> {
        o.get(k)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("missing string field \"{k}\""))
    };
    match &v {
        Value::Object(o) if o.contains_key("capabilities") => {
            let package = str_field(o, "package")?;
            let service = str_field(o, "service")?;
            Ok(aci_listing(&package, &service, &o["capabilities"]))
        }
        Value::Object(o) if o.contains_key("plugin") => {
            let plugin = str_field(o, "plugin")?;
            let server = str_field(o, "server")?;
            let tools = o.get("result").unwrap_or(&v);
            Ok(mcp::capabilities_from_tools_list(
                Source::Mcp,
                &plugin,
                &server,
                tools,
            ))
        }
        Value::Object(_) => Ok(mcp::capabilities_from_tools_list(
            Source::Mcp,
            stem_provider,
            stem_server.unwrap_or("main"),
            &v,
        )),
        Value::Array(_) => Ok(aci_listing(
            stem_provider,
            stem_server.unwrap_or("ACIService"),
            &v,
        )),
        _ => Err("neither an ACI capability list nor an MCP tools/list result".into()),
    }
}

/// An ACI list may hold capability objects or the JSON strings `getCapabilities()` returns.
fn aci_listing(package: &str, service: &str, caps: &Value) -> Listing {
    let plugin = aci_virtual_plugin(package);
    let server = aci_virtual_server(service);
    match caps.as_array() {
        Some(a) if a.iter().all(Value::is_string) && !a.is_empty() => {
            let strings: Vec<String> = a
                .iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect();
            aci::capabilities_from_strings(&plugin, &server, &strings)
        }
        _ => aci::capabilities_from_array(&plugin, &server, caps),
    }
}

pub(crate) fn entry_json(e: &capability_model::Entry) -> Value {
    let c = &e.capability;
    let mut v = json!({
        "name": e.name,
        "source": c.id.source.as_str(),
        "plugin": c.id.provider,
        "server": c.id.server,
        "tool": c.id.name,
        "risk": c.risk().as_str(),
        "description": c.description,
        "inputSchema": c.input_schema,
    });
    if let Value::Object(o) = &mut v {
        if let Some(t) = &c.title {
            o.insert("title".into(), Value::String(t.clone()));
        }
        let a = c.effective_annotations();
        if !a.is_empty() {
            o.insert(
                "annotations".into(),
                serde_json::to_value(a).unwrap_or(Value::Null),
            );
        }
        if let Some(s) = &c.output_schema {
            o.insert("outputSchema".into(), s.clone());
        }
        if let Some(p) = &c.require_permission {
            o.insert("requirePermission".into(), Value::String(p.clone()));
        }
        if c.require_user_confirm {
            o.insert("requireUserConfirm".into(), Value::Bool(true));
        }
    }
    v
}

pub(crate) fn print_table(
    catalog: &Catalog,
    left_out: usize,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let rows: Vec<[String; 4]> = catalog
        .entries()
        .iter()
        .map(|e| {
            let c = &e.capability;
            let title = c
                .title
                .clone()
                .unwrap_or_else(|| c.description.lines().next().unwrap_or_default().to_owned());
            [
                e.name.clone(),
                c.id.source.as_str().to_owned(),
                c.risk().as_str().to_owned(),
                one_line(&title, 60),
            ]
        })
        .collect();
    let head = ["NAME", "SOURCE", "RISK", "TITLE"];
    let mut w = head.map(str::len);
    for r in &rows {
        for (i, cell) in r.iter().enumerate() {
            w[i] = w[i].max(cell.chars().count());
        }
    }
    writeln!(
        out,
        "{:<w0$}  {:<w1$}  {:<w2$}  {}",
        head[0],
        head[1],
        head[2],
        head[3],
        w0 = w[0],
        w1 = w[1],
        w2 = w[2]
    )?;
    for r in &rows {
        writeln!(
            out,
            "{:<w0$}  {:<w1$}  {:<w2$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2]
        )?;
    }
    writeln!(out, "{} tools, {left_out} left out", catalog.len())
}

/// Control characters removed and the text cut to `max` characters, for a table cell.
fn one_line(s: &str, max: usize) -> String {
    let clean: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if clean.chars().count() <= max {
        clean
    } else {
        let mut t: String = clean.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}
