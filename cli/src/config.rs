//! `capbridge.toml`: the settings `demo`, `call` and `serve` share.
//!
//! Lookup: `--config FILE`, else `./capbridge.toml`, else
//! `$XDG_CONFIG_HOME/capbridge/capbridge.toml` (`~/.config/capbridge/capbridge.toml` when
//! `XDG_CONFIG_HOME` is unset). A missing file is fine (everything has a default or comes from
//! the environment); a file given with `--config` must exist.
//!
//! Precedence: flags override the environment, the environment overrides the file.
//!
//! ```toml
//! registry = "/etc/capbridge/registry.json"   # CAPBRIDGE_REGISTRY
//! data_dir = "/var/lib/capbridge"             # CAPBRIDGE_DATA_DIR
//! consent = "ask"                             # CAPBRIDGE_CONSENT: ask | allow | deny
//!
//! [model]
//! url = "https://api.example.com/v1"          # CAPBRIDGE_MODEL_URL
//! name = "some-model"                         # CAPBRIDGE_MODEL
//! ```
//!
//! The model key is read only from the environment (`CAPBRIDGE_MODEL_KEY`), never from the
//! file: a `key` in the file is refused with an error that says where to put it. Unknown keys
//! are refused with an error naming the key; errors never quote the file's text.

use std::fmt;
use std::path::{Path, PathBuf};

/// The largest config file read (anything bigger is refused, not read whole).
pub(crate) const CONFIG_MAX_BYTES: u64 = 64 * 1024;

/// How tool-call consent is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConsentMode {
    /// Ask on the terminal (`/dev/tty`); deny when there is none.
    Ask,
    /// Allow every call that reaches consent (headless, tests).
    Allow,
    /// Deny every call that reaches consent.
    Deny,
}

impl ConsentMode {
    /// Parses `ask`, `allow` or `deny`.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "ask" => Some(Self::Ask),
            "allow" => Some(Self::Allow),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// The model key. Its `Debug` never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ModelKey(String);

impl ModelKey {
    /// The key itself, for the `Authorization` header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ModelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ModelKey(<redacted>)")
    }
}

/// The effective settings after file, environment and flags were layered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Settings {
    /// The config file that was read, if any.
    pub(crate) file: Option<PathBuf>,
    /// Host registry (a file, or a directory holding `registry.json`).
    pub(crate) registry: Option<PathBuf>,
    /// State directory (SQLite store).
    pub(crate) data_dir: Option<PathBuf>,
    /// Consent mode.
    pub(crate) consent: Option<ConsentMode>,
    /// OpenAI-compatible endpoint base URL.
    pub(crate) model_url: Option<String>,
    /// Model id.
    pub(crate) model_name: Option<String>,
    /// Model key (environment only).
    pub(crate) model_key: Option<ModelKey>,
}

/// Flag values that override the environment and the file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overrides {
    /// `--config FILE`.
    pub(crate) config: Option<PathBuf>,
    /// `--registry PATH`.
    pub(crate) registry: Option<PathBuf>,
    /// `--data DIR`.
    pub(crate) data_dir: Option<PathBuf>,
    /// `--consent MODE`.
    pub(crate) consent: Option<ConsentMode>,
    /// `--model-url URL`.
    pub(crate) model_url: Option<String>,
    /// `--model NAME`.
    pub(crate) model_name: Option<String>,
}

/// Why the settings could not be built. Messages name files and keys, never values.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// The OS error kind.
        reason: String,
    },
    /// The file is too large.
    #[error("config file {path} is larger than {max} bytes")]
    TooLarge {
        /// The file.
        path: String,
        /// The limit.
        max: u64,
    },
    /// Not valid TOML.
    #[error("config file {path} is not valid TOML (line {line}): {message}")]
    Syntax {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// The parser's message (no file text).
        message: String,
    },
    /// A key this version does not know.
    #[error("config file {path}: unknown key `{key}` (known: {known})")]
    UnknownKey {
        /// The file.
        path: String,
        /// The dotted key.
        key: String,
        /// The keys allowed at that level.
        known: &'static str,
    },
    /// A key with a value of the wrong type or spelling.
    #[error("config file {path}: `{key}` must be {expected}")]
    BadValue {
        /// The file.
        path: String,
        /// The dotted key.
        key: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A model key in the file.
    #[error(
        "config file {path}: `model.key` is not read from files; set CAPBRIDGE_MODEL_KEY in the environment instead"
    )]
    KeyInFile {
        /// The file.
        path: String,
    },
    /// An environment variable with a bad value.
    #[error("environment variable {name} must be {expected}")]
    BadEnv {
        /// The variable.
        name: &'static str,
        /// What it must be.
        expected: &'static str,
    },
}

const TOP_KEYS: &str = "registry, data_dir, consent, [model]";
const MODEL_KEYS: &str = "url, name";

/// Where the settings come from: the environment (injectable for tests) and the current
/// directory.
pub(crate) trait Environment {
    /// One variable; `None` when unset or empty.
    fn var(&self, name: &str) -> Option<String>;
    /// The current directory.
    fn cwd(&self) -> Option<PathBuf>;
}

/// The process environment.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ProcessEnv;

impl Environment for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
    fn cwd(&self) -> Option<PathBuf> {
        std::env::current_dir().ok()
    }
}

/// A map-backed environment (tests).
#[cfg(test)]
#[derive(Debug, Clone, Default)]
pub(crate) struct MapEnv {
    /// Variables.
    pub(crate) vars: std::collections::BTreeMap<String, String>,
    /// Current directory.
    pub(crate) cwd: Option<PathBuf>,
}

#[cfg(test)]
impl Environment for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).filter(|v| !v.is_empty()).cloned()
    }
    fn cwd(&self) -> Option<PathBuf> {
        self.cwd.clone()
    }
}

/// Finds the config file: `--config`, `./capbridge.toml`, `$XDG_CONFIG_HOME/capbridge/…`.
pub(crate) fn locate(explicit: Option<&Path>, env: &dyn Environment) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(cwd) = env.cwd() {
        let local = cwd.join("capbridge.toml");
        if local.is_file() {
            return Some(local);
        }
    }
    let base = env
        .var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| env.var("HOME").map(|h| Path::new(&h).join(".config")))?;
    let user = base.join("capbridge").join("capbridge.toml");
    user.is_file().then_some(user)
}

/// Layers file, environment and flags into [`Settings`].
pub(crate) fn load(flags: &Overrides, env: &dyn Environment) -> Result<Settings, ConfigError> {
    let mut s = Settings::default();
    if let Some(path) = locate(flags.config.as_deref(), env) {
        let text = read_bounded(&path)?;
        apply_file(&mut s, &text, &path)?;
        s.file = Some(path);
    }
    // Environment over file.
    if let Some(v) = env.var("CAPBRIDGE_REGISTRY") {
        s.registry = Some(PathBuf::from(v));
    }
    if let Some(v) = env.var("CAPBRIDGE_DATA_DIR") {
        s.data_dir = Some(PathBuf::from(v));
    }
    if let Some(v) = env.var("CAPBRIDGE_CONSENT") {
        s.consent = Some(ConsentMode::parse(&v).ok_or(ConfigError::BadEnv {
            name: "CAPBRIDGE_CONSENT",
            expected: "ask, allow or deny",
        })?);
    }
    if let Some(v) = env.var("CAPBRIDGE_MODEL_URL") {
        s.model_url = Some(v);
    }
    if let Some(v) = env.var("CAPBRIDGE_MODEL") {
        s.model_name = Some(v);
    }
    if let Some(v) = env.var("CAPBRIDGE_MODEL_KEY") {
        s.model_key = Some(ModelKey(v));
    }
    // Flags over environment.
    if let Some(v) = &flags.registry {
        s.registry = Some(v.clone());
    }
    if let Some(v) = &flags.data_dir {
        s.data_dir = Some(v.clone());
    }
    if let Some(v) = flags.consent {
        s.consent = Some(v);
    }
    if let Some(v) = &flags.model_url {
        s.model_url = Some(v.clone());
    }
    if let Some(v) = &flags.model_name {
        s.model_name = Some(v.clone());
    }
    Ok(s)
}

fn read_bounded(path: &Path) -> Result<String, ConfigError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let io = |e: std::io::Error| ConfigError::Io {
        path: shown.clone(),
        reason: e.kind().to_string(),
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut text = String::new();
    file.take(CONFIG_MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    if text.len() as u64 > CONFIG_MAX_BYTES {
        return Err(ConfigError::TooLarge {
            path: shown,
            max: CONFIG_MAX_BYTES,
        });
    }
    Ok(text)
}

fn apply_file(s: &mut Settings, text: &str, path: &Path) -> Result<(), ConfigError> {
    let shown = path.display().to_string();
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e
            .span()
            .map(|r| text[..r.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(0);
        ConfigError::Syntax {
            path: shown.clone(),
            line,
            message: e.message().to_owned(),
        }
    })?;
    let string = |key: &str, v: &toml::Value| -> Result<String, ConfigError> {
        v.as_str().map(str::to_owned).ok_or(ConfigError::BadValue {
            path: shown.clone(),
            key: key.to_owned(),
            expected: "a string",
        })
    };
    for (key, value) in &table {
        match key.as_str() {
            "registry" => s.registry = Some(resolve_path(path, &string(key, value)?)),
            "data_dir" => s.data_dir = Some(resolve_path(path, &string(key, value)?)),
            "consent" => {
                s.consent = Some(ConsentMode::parse(&string(key, value)?).ok_or(
                    ConfigError::BadValue {
                        path: shown.clone(),
                        key: key.clone(),
                        expected: "\"ask\", \"allow\" or \"deny\"",
                    },
                )?)
            }
            "model" => {
                let model = value.as_table().ok_or(ConfigError::BadValue {
                    path: shown.clone(),
                    key: key.clone(),
                    expected: "a table ([model])",
                })?;
                for (mkey, mvalue) in model {
                    let dotted = format!("model.{mkey}");
                    match mkey.as_str() {
                        "url" => s.model_url = Some(string(&dotted, mvalue)?),
                        "name" => s.model_name = Some(string(&dotted, mvalue)?),
                        "key" | "api_key" | "apiKey" | "token" => {
                            return Err(ConfigError::KeyInFile { path: shown });
                        }
                        _ => {
                            return Err(ConfigError::UnknownKey {
                                path: shown,
                                key: dotted,
                                known: MODEL_KEYS,
                            });
                        }
                    }
                }
            }
            _ => {
                return Err(ConfigError::UnknownKey {
                    path: shown,
                    key: key.clone(),
                    known: TOP_KEYS,
                });
            }
        }
    }
    Ok(())
}

/// The configured OpenAI-compatible model client (URL and model from file/env/flags, key from
/// `CAPBRIDGE_MODEL_KEY` only).
pub(crate) fn real_model(
    s: &Settings,
) -> Result<std::sync::Arc<dyn acp_runtime::model::ModelClient>, acp_runtime::model::ModelError> {
    use acp_runtime::model::ModelError;
    use acp_runtime::model::openai::{ModelConfig, OpenAiClient};
    let url = s.model_url.as_deref().ok_or(ModelError::NotConfigured)?;
    let name = s.model_name.as_deref().ok_or(ModelError::NotConfigured)?;
    let mut cfg = ModelConfig::new(url, name);
    if let Some(key) = &s.model_key {
        cfg = cfg.with_key(key.expose());
    }
    Ok(std::sync::Arc::new(OpenAiClient::new(cfg)?))
}

/// Relative paths in a config file are relative to the file's directory.
fn resolve_path(file: &Path, value: &str) -> PathBuf {
    let p = PathBuf::from(value);
    if p.is_absolute() {
        return p;
    }
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(p),
        _ => p,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn env_in(dir: &Path) -> MapEnv {
        MapEnv {
            vars: std::collections::BTreeMap::new(),
            cwd: Some(dir.to_path_buf()),
        }
    }

    #[test]
    fn flags_over_env_over_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("capbridge.toml"),
            "registry = \"reg.json\"\nconsent = \"deny\"\n[model]\nurl = \"http://file\"\nname = \"file-model\"\n",
        )
        .unwrap();
        let mut env = env_in(dir.path());
        let s = load(&Overrides::default(), &env).unwrap();
        assert_eq!(s.registry, Some(dir.path().join("reg.json")));
        assert_eq!(s.consent, Some(ConsentMode::Deny));
        assert_eq!(s.model_url.as_deref(), Some("http://file"));

        env.vars
            .insert("CAPBRIDGE_MODEL_URL".into(), "http://env".into());
        env.vars.insert("CAPBRIDGE_CONSENT".into(), "allow".into());
        env.vars
            .insert("CAPBRIDGE_MODEL_KEY".into(), "sk-secret".into());
        let s = load(&Overrides::default(), &env).unwrap();
        assert_eq!(s.model_url.as_deref(), Some("http://env"));
        assert_eq!(s.model_name.as_deref(), Some("file-model"));
        assert_eq!(s.consent, Some(ConsentMode::Allow));
        assert!(!format!("{s:?}").contains("sk-secret"));

        let flags = Overrides {
            model_url: Some("http://flag".into()),
            consent: Some(ConsentMode::Ask),
            ..Overrides::default()
        };
        let s = load(&flags, &env).unwrap();
        assert_eq!(s.model_url.as_deref(), Some("http://flag"));
        assert_eq!(s.consent, Some(ConsentMode::Ask));
    }

    #[test]
    fn unknown_keys_are_named_and_values_never_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        std::fs::write(&f, "[model]\nurl = \"u\"\nmodle = \"secret-value\"\n").unwrap();
        let flags = Overrides {
            config: Some(f.clone()),
            ..Overrides::default()
        };
        let e = load(&flags, &env_in(dir.path())).unwrap_err().to_string();
        assert!(e.contains("`model.modle`"), "{e}");
        assert!(!e.contains("secret-value"), "{e}");

        std::fs::write(&f, "[model]\nkey = \"sk-123\"\n").unwrap();
        let e = load(&flags, &env_in(dir.path())).unwrap_err().to_string();
        assert!(
            e.contains("CAPBRIDGE_MODEL_KEY") && !e.contains("sk-123"),
            "{e}"
        );

        std::fs::write(&f, "consent = \"maybe\"\n").unwrap();
        let e = load(&flags, &env_in(dir.path())).unwrap_err().to_string();
        assert!(e.contains("`consent`") && !e.contains("maybe"), "{e}");

        std::fs::write(&f, "registry = \"x\nsk-999").unwrap();
        let e = load(&flags, &env_in(dir.path())).unwrap_err().to_string();
        assert!(e.contains("line") && !e.contains("sk-999"), "{e}");
    }

    #[test]
    fn lookup_order_is_flag_cwd_xdg() {
        let cwd = tempfile::tempdir().unwrap();
        let xdg = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(xdg.path().join("capbridge")).unwrap();
        std::fs::write(
            xdg.path().join("capbridge/capbridge.toml"),
            "consent = \"deny\"\n",
        )
        .unwrap();
        let mut env = env_in(cwd.path());
        env.vars
            .insert("XDG_CONFIG_HOME".into(), xdg.path().display().to_string());
        let s = load(&Overrides::default(), &env).unwrap();
        assert_eq!(s.consent, Some(ConsentMode::Deny));
        std::fs::write(cwd.path().join("capbridge.toml"), "consent = \"allow\"\n").unwrap();
        let s = load(&Overrides::default(), &env).unwrap();
        assert_eq!(s.consent, Some(ConsentMode::Allow));
        let missing = Overrides {
            config: Some(cwd.path().join("nope.toml")),
            ..Overrides::default()
        };
        assert!(matches!(load(&missing, &env), Err(ConfigError::Io { .. })));
    }
}
