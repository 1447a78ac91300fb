//! [`Runtime`]: sessions, the task queue and the connections that reach them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use capability_model::{CancelToken, CapabilitySource, SessionMode, ToolScope};
use permissions::{Permissions, Principal, SqliteStore, TokioClock};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;

use crate::config::RuntimeConfig;
use crate::connection::Connection;
use crate::errors::{RpcError, RuntimeError};
use crate::store::{SessionRow, Store};
use crate::tools::Tools;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The owner key of a principal (ACP-11): apps by UID, one shared `desktop`, `self`.
pub fn owner_key(p: &Principal) -> String {
    match p {
        Principal::App(c) => format!("app:{}", c.identity.uid.0),
        Principal::SelfUi => "self".to_owned(),
        Principal::Desktop => "desktop".to_owned(),
    }
}

/// Whether `p` may see a session owned by `owner` (SELF sees all, ACP-11).
pub fn may_see(p: &Principal, owner: &str) -> bool {
    matches!(p, Principal::SelfUi) || owner_key(p) == owner
}

/// One unfinished task of a session.
#[derive(Debug, Clone)]
pub(crate) struct ActiveTask {
    pub id: String,
    pub owner: String,
    pub cancel: CancelToken,
}

/// Mutable session settings.
#[derive(Debug, Clone)]
pub(crate) struct SessionSettings {
    pub mode: SessionMode,
    pub model: String,
}

/// A session held in memory.
pub(crate) struct LiveSession {
    pub id: String,
    pub owner: String,
    pub cwd: String,
    pub scope: ToolScope,
    pub settings: Mutex<SessionSettings>,
    /// FIFO order of turns (tokio's mutex is fair).
    pub queue: tokio::sync::Mutex<()>,
    pub active: Mutex<Vec<ActiveTask>>,
    /// Per-session MCP servers: memory only, passed again on load/resume (SMS-05, SMS-06).
    pub servers: Mutex<Option<Arc<mcp_adapter::session_http::SessionMcpServers>>>,
}

impl LiveSession {
    pub(crate) fn from_row(row: &SessionRow) -> Self {
        Self {
            id: row.id.clone(),
            owner: row.owner.clone(),
            cwd: row.cwd.clone(),
            scope: ToolScope::from_stored(&row.scope),
            settings: Mutex::new(SessionSettings {
                mode: SessionMode::from_stored(&row.mode),
                model: row.model.clone(),
            }),
            queue: tokio::sync::Mutex::new(()),
            active: Mutex::new(Vec::new()),
            servers: Mutex::new(None),
        }
    }

    pub(crate) fn active_task_id(&self) -> Option<String> {
        lock(&self.active).first().map(|t| t.id.clone())
    }

    /// Replaces the session's servers (closing the old ones in the background).
    pub(crate) fn set_servers(
        &self,
        servers: Option<Arc<mcp_adapter::session_http::SessionMcpServers>>,
    ) {
        let old = std::mem::replace(&mut *lock(&self.servers), servers);
        if let Some(old) = old {
            tokio::spawn(async move { old.close().await });
        }
    }

    pub(crate) fn cancel_all(&self) {
        for t in lock(&self.active).iter() {
            t.cancel.cancel();
        }
    }
}

struct ConnEntry {
    package: Option<String>,
    close: CancelToken,
}

/// The ACP agent runtime.
pub struct Runtime {
    pub(crate) cfg: RuntimeConfig,
    pub(crate) store: Store,
    pub(crate) perms: Permissions,
    pub(crate) tools: Tools,
    pub(crate) sessions: Mutex<HashMap<String, Arc<LiveSession>>>,
    conns: Mutex<HashMap<u64, ConnEntry>>,
    next_conn: AtomicU64,
    pub(crate) tasks: Mutex<Vec<JoinHandle<()>>>,
    pub(crate) closing: CancelToken,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("data_dir", &self.cfg.data_dir)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Opens the store in `config.data_dir` (0700, files 0600), marks tasks left unfinished
    /// by an earlier run `abandoned` (ACP-56), opens the permissions store beside it and
    /// starts watching the sources. Must be called inside a tokio runtime.
    pub async fn start(config: RuntimeConfig) -> Result<Arc<Runtime>, RuntimeError> {
        let store = Store::open(&config.data_dir)?;
        let policy = SqliteStore::open(&config.data_dir)?;
        let perms = Permissions::new(
            config.permissions,
            Box::new(policy),
            Arc::clone(&config.resolver),
            Arc::clone(&config.consent),
            Arc::new(TokioClock::new()),
        );
        let mut sources: Vec<Arc<dyn CapabilitySource>> = config.sources.clone();
        if let Some(h) = &config.http_request {
            sources.push(Arc::clone(h));
        }
        if let Some(s) = &config.skills {
            sources.push(s.read_skill());
        }
        let rt = Arc::new(Runtime {
            tools: Tools::new(sources),
            cfg: config,
            store,
            perms,
            sessions: Mutex::new(HashMap::new()),
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(1),
            tasks: Mutex::new(Vec::new()),
            closing: CancelToken::new(),
        });
        let weak = Arc::downgrade(&rt);
        rt.perms.on_revoked(Arc::new(move |revoked| {
            if let Some(rt) = weak.upgrade() {
                rt.revoke_package(&revoked.package);
            }
        }));
        tracing::info!(data_dir = %rt.cfg.data_dir.display(), "runtime started");
        Ok(rt)
    }

    /// The permissions facade (settings, revocation, usage).
    pub fn permissions(&self) -> &Permissions {
        &self.perms
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.cfg.data_dir
    }

    /// One ACP connection over line-delimited JSON-RPC (stdio, a Unix socket, a test pipe).
    /// `caller` is the kernel-derived identity of the other end (stdio: the local user →
    /// [`Principal::Desktop`]). Returns when the reader ends or the connection is closed
    /// (revocation, shutdown). Tasks started on it keep running (ACP-53).
    pub async fn serve_lines<R, W>(
        self: &Arc<Self>,
        reader: R,
        writer: W,
        caller: Principal,
    ) -> Result<(), RuntimeError>
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let id = self.next_conn.fetch_add(1, Ordering::SeqCst);
        let close = CancelToken::new();
        lock(&self.conns).insert(
            id,
            ConnEntry {
                package: caller.app().map(|c| c.identity.package.clone()),
                close: close.clone(),
            },
        );
        tracing::info!(caller = caller.log_name(), conn = id, "connection opened");
        let conn = Connection::new(Arc::clone(self), caller, writer);
        let r = conn.run(reader, close).await;
        lock(&self.conns).remove(&id);
        tracing::info!(conn = id, "connection closed");
        r
    }

    /// Closes every channel of `package` and cancels its running and queued tasks; other
    /// owners are untouched (ACP-55).
    pub fn revoke_package(&self, package: &str) {
        for c in lock(&self.conns).values() {
            if c.package.as_deref() == Some(package) {
                c.close.cancel();
            }
        }
        // Tasks are keyed by UID owner; find the owners whose connections were this package.
        let sessions: Vec<Arc<LiveSession>> = lock(&self.sessions).values().cloned().collect();
        for s in sessions {
            for t in lock(&s.active).iter() {
                if self.owner_is_package(&t.owner, package) {
                    t.cancel.cancel();
                }
            }
        }
    }

    fn owner_is_package(&self, owner: &str, package: &str) -> bool {
        let Some(uid) = owner
            .strip_prefix("app:")
            .and_then(|u| u.parse::<u32>().ok())
        else {
            return false;
        };
        self.cfg
            .resolver
            .resolve(permissions::Uid(uid))
            .is_ok_and(|c| c.identity.package == package)
    }

    /// Stops: closes every connection and aborts running tasks. Tasks cut off here stay
    /// unfinished in the store and become `abandoned` at the next start (ACP-56).
    pub async fn shutdown(&self) {
        self.closing.cancel();
        for c in lock(&self.conns).values() {
            c.close.cancel();
        }
        let handles: Vec<JoinHandle<()>> = std::mem::take(&mut *lock(&self.tasks));
        for h in &handles {
            h.abort();
        }
        for h in handles {
            let _ = h.await;
        }
        tracing::info!("runtime stopped");
    }

    /// Waits until every task started so far has ended (prompts finish, nothing is
    /// cancelled). `capbridge serve --stdio` calls it after the client went away (ACP-53).
    pub async fn wait_idle(&self) {
        loop {
            let handles: Vec<JoinHandle<()>> = {
                let mut tasks = lock(&self.tasks);
                tasks.retain(|h| !h.is_finished());
                if tasks.is_empty() {
                    return;
                }
                std::mem::take(&mut *tasks)
            };
            for h in handles {
                let _ = h.await;
            }
        }
    }

    /// A session visible to `caller`, loading it from the store when needed. Foreign,
    /// deleted, unknown and malformed ids all get the same `session_not_found` (ACP-12).
    pub(crate) fn session_for(
        &self,
        caller: &Principal,
        id: &str,
    ) -> Result<Arc<LiveSession>, RpcError> {
        if !crate::ids::is_session_id(id) {
            return Err(RpcError::session_not_found());
        }
        if let Some(s) = lock(&self.sessions).get(id) {
            return if may_see(caller, &s.owner) {
                Ok(Arc::clone(s))
            } else {
                Err(RpcError::session_not_found())
            };
        }
        let row = self
            .store
            .session(id)
            .map_err(|_| RpcError::store_failed())?
            .ok_or_else(RpcError::session_not_found)?;
        if !may_see(caller, &row.owner) {
            return Err(RpcError::session_not_found());
        }
        let live = Arc::new(LiveSession::from_row(&row));
        let mut map = lock(&self.sessions);
        let entry = map.entry(id.to_owned()).or_insert(live);
        Ok(Arc::clone(entry))
    }

    pub(crate) fn track(&self, handle: JoinHandle<()>) {
        let mut tasks = lock(&self.tasks);
        tasks.retain(|h| !h.is_finished());
        tasks.push(handle);
    }
}
