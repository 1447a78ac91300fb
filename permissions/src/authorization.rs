//! Caller authorization (AUT-02, AUT-06, AUT-08, AUT-09, ACP-55): a sans-IO state machine keyed
//! by package, each decision bound to the signing digest it was made for.
//!
//! | state on `open`                           | result                                      |
//! |-------------------------------------------|---------------------------------------------|
//! | allowed, same digest                      | [`OpenOutcome::Allowed`]                    |
//! | none, digest changed, denied ≥ 10 min ago | pending: prompt shown once, `authorization_pending` |
//! | pending                                   | `authorization_pending`, no second prompt   |
//! | denied < 10 min ago                       | `denied`, no prompt                         |
//! | revoked in settings                       | `denied`, no prompt, until allowed/removed  |
//!
//! A pending prompt nobody answers within 90 s becomes a denial, starting the cooldown. The
//! machine returns [`AuthEffect`]s; the shell persists records, shows prompts and notifies the
//! runtime of revocations.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::clock::Millis;
use crate::consent::CallerChoice;
use crate::identity::{CertDigest, Identity, ResolvedCaller};
use crate::limits::{AUTHORIZATION_PENDING_TIMEOUT, DENIAL_COOLDOWN};
use crate::outcome::AgentosCode;
use crate::store::{CallerRecord, CallerState};

/// The result of `open` for an app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenOutcome {
    /// The channel opens.
    Allowed,
    /// `authorization_pending`: retry later (AUT-03 retries every second).
    Pending,
    /// `denied`: no prompt. `retry_after` is the rest of the cooldown (None for revoked).
    Denied {
        /// Remaining cooldown.
        retry_after: Option<Duration>,
    },
    /// `not_open`: the authorization store is unusable, nobody is admitted (AUT-08).
    NotOpen,
}

impl OpenOutcome {
    /// The channel-level reason code, or `None` when allowed.
    pub fn code(&self) -> Option<AgentosCode> {
        match self {
            OpenOutcome::Allowed => None,
            OpenOutcome::Pending => Some(AgentosCode::AuthorizationPending),
            OpenOutcome::Denied { .. } => Some(AgentosCode::Denied),
            OpenOutcome::NotOpen => Some(AgentosCode::NotOpen),
        }
    }
}

/// A caller whose authorization was revoked: the runtime closes its channels and cancels its
/// running and queued tasks (ACP-55).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevokedCaller {
    /// The package.
    pub package: String,
    /// The digest that had been allowed.
    pub cert: CertDigest,
}

/// What the shell must do after a transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthEffect {
    /// Persist this record.
    Persist(CallerRecord),
    /// Delete the record of this package.
    Forget(String),
    /// Show the authorization prompt for this (package, digest), once.
    ShowPrompt {
        /// Package.
        package: String,
        /// Digest.
        cert: CertDigest,
        /// Label for display.
        label: Option<String>,
        /// When the pending request expires.
        deadline: Millis,
    },
    /// Close the caller's channels and cancel its tasks.
    Revoked(RevokedCaller),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    cert: CertDigest,
    since: Millis,
}

/// A row of the "authorized apps" settings list (AUT-06).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerStatus {
    /// Package.
    pub package: String,
    /// Label (display only).
    pub label: Option<String>,
    /// The decision.
    pub state: CallerState,
    /// For `Denied`: cooldown left (zero when over).
    pub cooldown_left: Option<Duration>,
    /// When the decision was made.
    pub decided_at: Millis,
}

/// The caller authorization state machine.
#[derive(Debug, Clone, Default)]
pub struct CallerAuthorization {
    records: BTreeMap<String, CallerRecord>,
    pending: BTreeMap<String, Pending>,
    failed_closed: bool,
}

impl CallerAuthorization {
    /// A machine over loaded records.
    pub fn new(records: impl IntoIterator<Item = CallerRecord>) -> Self {
        Self {
            records: records
                .into_iter()
                .map(|r| (r.package.clone(), r))
                .collect(),
            ..Self::default()
        }
    }

    /// A machine that admits nobody (the store could not be read, AUT-08, SEC-21).
    pub fn fail_closed() -> Self {
        Self {
            failed_closed: true,
            ..Self::default()
        }
    }

    fn cooldown(&self) -> Duration {
        DENIAL_COOLDOWN
    }

    fn pending_timeout(&self) -> Duration {
        AUTHORIZATION_PENDING_TIMEOUT
    }

    /// Whether the machine is failing closed.
    pub fn is_failed_closed(&self) -> bool {
        self.failed_closed
    }

    /// `open` from an app (AUT-02).
    pub fn on_open(
        &mut self,
        caller: &ResolvedCaller,
        now: Millis,
    ) -> (OpenOutcome, Vec<AuthEffect>) {
        if self.failed_closed {
            return (OpenOutcome::NotOpen, Vec::new());
        }
        let mut effects = self.on_tick(now);
        let id = &caller.identity;
        let pkg = &id.package;
        let cert = id.signing_cert_sha256;

        // A record for another digest is ignored: the signer changed, ask again (AUT-02).
        if let Some(rec) = self.records.get(pkg)
            && rec.cert == cert
        {
            match rec.state {
                CallerState::Allowed => return (OpenOutcome::Allowed, effects),
                CallerState::Revoked => {
                    return (OpenOutcome::Denied { retry_after: None }, effects);
                }
                CallerState::Denied => {
                    let elapsed = now.since(rec.decided_at);
                    if elapsed < self.cooldown() {
                        return (
                            OpenOutcome::Denied {
                                retry_after: Some(self.cooldown() - elapsed),
                            },
                            effects,
                        );
                    }
                    // Cooldown over: treated as none (AUT-02, G-21).
                }
            }
        }

        if let Some(p) = self.pending.get(pkg)
            && p.cert == cert
        {
            return (OpenOutcome::Pending, effects);
        }
        self.pending
            .insert(pkg.clone(), Pending { cert, since: now });
        effects.push(AuthEffect::ShowPrompt {
            package: pkg.clone(),
            cert,
            label: caller.label.clone(),
            deadline: now.plus(self.pending_timeout()),
        });
        (OpenOutcome::Pending, effects)
    }

    /// The user's answer to the prompt for (package, digest). Answers for a prompt that is no
    /// longer pending (expired, replaced by a new digest) are ignored.
    pub fn on_answer(
        &mut self,
        package: &str,
        cert: CertDigest,
        choice: CallerChoice,
        label: Option<String>,
        now: Millis,
    ) -> Vec<AuthEffect> {
        let mut effects = self.on_tick(now);
        match self.pending.get(package) {
            Some(p) if p.cert == cert => {}
            _ => return effects,
        }
        self.pending.remove(package);
        let state = match choice {
            CallerChoice::Allow => CallerState::Allowed,
            CallerChoice::Deny => CallerState::Denied,
        };
        effects.push(self.set_record(package, cert, state, now, label));
        effects
    }

    /// Expires pending prompts older than 90 s into denials whose cooldown starts at expiry.
    pub fn on_tick(&mut self, now: Millis) -> Vec<AuthEffect> {
        let timeout = self.pending_timeout();
        let expired: Vec<(String, Pending)> = self
            .pending
            .iter()
            .filter(|(_, p)| now >= p.since.plus(timeout))
            .map(|(k, p)| (k.clone(), p.clone()))
            .collect();
        let mut effects = Vec::new();
        for (pkg, p) in expired {
            self.pending.remove(&pkg);
            let label = self.records.get(&pkg).and_then(|r| r.label.clone());
            effects.push(self.set_record(
                &pkg,
                p.cert,
                CallerState::Denied,
                p.since.plus(timeout),
                label,
            ));
        }
        effects
    }

    fn set_record(
        &mut self,
        package: &str,
        cert: CertDigest,
        state: CallerState,
        at: Millis,
        label: Option<String>,
    ) -> AuthEffect {
        let rec = CallerRecord {
            package: package.to_owned(),
            cert,
            state,
            decided_at: at,
            label,
        };
        self.records.insert(package.to_owned(), rec.clone());
        AuthEffect::Persist(rec)
    }

    /// Whether `identity` is allowed right now (AUT-09: checked on every inbound request).
    pub fn is_allowed(&self, identity: &Identity) -> bool {
        !self.failed_closed
            && self.records.get(&identity.package).is_some_and(|r| {
                r.state == CallerState::Allowed && r.cert == identity.signing_cert_sha256
            })
    }

    /// Settings → revoke (AUT-06, ACP-55). Returns the effects, including
    /// [`AuthEffect::Revoked`] when the caller had been allowed.
    pub fn revoke(&mut self, package: &str, now: Millis) -> Vec<AuthEffect> {
        let Some(rec) = self.records.get(package).cloned() else {
            return Vec::new();
        };
        self.pending.remove(package);
        let mut effects =
            vec![self.set_record(package, rec.cert, CallerState::Revoked, now, rec.label)];
        if rec.state == CallerState::Allowed {
            effects.push(AuthEffect::Revoked(RevokedCaller {
                package: package.to_owned(),
                cert: rec.cert,
            }));
        }
        effects
    }

    /// Settings → switch back to allowed (for the digest on record).
    pub fn allow(&mut self, package: &str, now: Millis) -> Vec<AuthEffect> {
        let Some(rec) = self.records.get(package).cloned() else {
            return Vec::new();
        };
        self.pending.remove(package);
        vec![self.set_record(package, rec.cert, CallerState::Allowed, now, rec.label)]
    }

    /// Settings → remove: the next `open` asks again. Revokes first if it was allowed.
    pub fn remove(&mut self, package: &str) -> Vec<AuthEffect> {
        self.pending.remove(package);
        let Some(rec) = self.records.remove(package) else {
            return Vec::new();
        };
        let mut effects = vec![AuthEffect::Forget(package.to_owned())];
        if rec.state == CallerState::Allowed {
            effects.push(AuthEffect::Revoked(RevokedCaller {
                package: package.to_owned(),
                cert: rec.cert,
            }));
        }
        effects
    }

    /// The settings list (AUT-06).
    pub fn statuses(&self, now: Millis) -> Vec<CallerStatus> {
        self.records
            .values()
            .map(|r| CallerStatus {
                package: r.package.clone(),
                label: r.label.clone(),
                state: r.state,
                cooldown_left: (r.state == CallerState::Denied)
                    .then(|| self.cooldown().saturating_sub(now.since(r.decided_at))),
                decided_at: r.decided_at,
            })
            .collect()
    }

    /// Whether a prompt is pending for `package`.
    pub fn is_pending(&self, package: &str) -> bool {
        self.pending.contains_key(package)
    }
}
