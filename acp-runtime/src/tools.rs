//! The unified catalog the agent loop offers: every source listed, one [`Catalog`] snapshot,
//! rebuilt whole when a source reports a change (CAT-04), and dispatch by capability id.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use capability_model::{CapabilityId, CapabilitySource, Catalog};
use futures::StreamExt;

/// One catalog snapshot with the source of every entry.
pub(crate) struct Snapshot {
    /// The catalog.
    pub catalog: Catalog,
    owners: HashMap<CapabilityId, usize>,
    sources: Arc<[Arc<dyn CapabilitySource>]>,
}

impl Snapshot {
    /// The source serving `id`.
    pub(crate) fn source_of(&self, id: &CapabilityId) -> Option<Arc<dyn CapabilitySource>> {
        self.owners.get(id).map(|&i| Arc::clone(&self.sources[i]))
    }
}

/// Holds the sources and the current snapshot.
pub(crate) struct Tools {
    sources: Arc<[Arc<dyn CapabilitySource>]>,
    current: tokio::sync::Mutex<Option<Arc<Snapshot>>>,
    dirty: Arc<AtomicBool>,
}

impl Tools {
    /// Watches every source's change stream (must run inside a tokio runtime).
    pub(crate) fn new(sources: Vec<Arc<dyn CapabilitySource>>) -> Self {
        let dirty = Arc::new(AtomicBool::new(true));
        for s in &sources {
            let mut changes = s.changes();
            let dirty = Arc::clone(&dirty);
            tokio::spawn(async move {
                while changes.next().await.is_some() {
                    dirty.store(true, Ordering::SeqCst);
                }
            });
        }
        Self {
            sources: sources.into(),
            current: tokio::sync::Mutex::new(None),
            dirty,
        }
    }

    /// The current snapshot, re-listing the sources when one changed since the last build.
    /// A source that cannot list contributes nothing (it is logged, never fatal).
    pub(crate) async fn snapshot(&self) -> Arc<Snapshot> {
        let mut current = self.current.lock().await;
        if let Some(s) = current.as_ref()
            && !self.dirty.load(Ordering::SeqCst)
        {
            return Arc::clone(s);
        }
        self.dirty.store(false, Ordering::SeqCst);
        let listings = futures::future::join_all(self.sources.iter().map(|s| s.list())).await;
        let mut owners = HashMap::new();
        let mut caps = Vec::new();
        for (i, listing) in listings.into_iter().enumerate() {
            match listing {
                Ok(l) => {
                    for c in l.capabilities {
                        owners.insert(c.id.clone(), i);
                        caps.push(c);
                    }
                }
                Err(e) => {
                    tracing::warn!(source = %self.sources[i].source(), error = %e, "source could not list");
                    // Try again next turn.
                    self.dirty.store(true, Ordering::SeqCst);
                }
            }
        }
        let catalog = Catalog::build(caps);
        tracing::debug!(
            tools = catalog.len(),
            issues = catalog.issues().len(),
            "catalog built"
        );
        let snap = Arc::new(Snapshot {
            catalog,
            owners,
            sources: Arc::clone(&self.sources),
        });
        *current = Some(Arc::clone(&snap));
        snap
    }
}
