//! Every numeric limit this crate enforces, as named constants (GEN-01, SPEC Appendix C).
//!
//! Values SPEC marks **CFG** are defaults: the matching config struct
//! ([`crate::quota::QuotaConfig`], [`crate::sanitize::SanitizeConfig`]) starts from them.

use std::time::Duration;

/// A consent request unanswered this long after its **creation** (queueing included) is denied
/// (CNS-04).
pub const CONSENT_TIMEOUT: Duration = Duration::from_secs(60);
/// At most this many consent requests may be pending; one more is refused at once (CNS-06).
pub const CONSENT_MAX_PENDING: usize = 16;
/// The SDK retries `open` this often while authorization is pending (AUT-03).
pub const AUTHORIZATION_RETRY_INTERVAL: Duration = Duration::from_secs(1);
/// A pending caller authorization nobody answers within this time counts as a denial (AUT-02,
/// AUT-03 `AUTHORIZATION_TIMEOUT_MILLIS`).
pub const AUTHORIZATION_PENDING_TIMEOUT: Duration = Duration::from_secs(90);
/// After a denial, `open` answers `denied` without prompting for this long (AUT-02).
pub const DENIAL_COOLDOWN: Duration = Duration::from_secs(10 * 60);
/// The authorization dialog ignores input this long after it appears (AUT-04).
pub const AUTHORIZATION_TAP_GUARD: Duration = Duration::from_millis(400);
/// Characters of the signing digest shown in the authorization prompt (AUT-04, G-25).
pub const SIGNING_DIGEST_SHOWN_CHARS: usize = 12;
/// Prompt text limit for third-party callers, in UTF-16 units (QTA-03, CFG).
pub const PROMPT_TEXT_MAX_U16: usize = 16_000;
/// Protocol prompt limit, in UTF-16 units (ACP-33); checked by the runtime after QTA-03.
pub const PROMPT_TEXT_PROTOCOL_MAX_U16: usize = 200_000;
/// Concurrent prompts per third-party app (QTA-02, CFG).
pub const CONCURRENT_PROMPTS_PER_APP: usize = 1;
/// Prompts per sliding hour per third-party app (QTA-04, CFG).
pub const PROMPTS_PER_HOUR: usize = 30;
/// The sliding window of QTA-04.
pub const PROMPT_RATE_WINDOW: Duration = Duration::from_secs(60 * 60);
/// Third-party text in consent and authorization UI is truncated to this many code points per
/// field (SEC-04 step 6, G-16, CFG).
pub const SANITIZED_FIELD_MAX_CP: usize = 256;
/// Largest `aci_permissions.xml` accepted, in bytes (issue 4 "oversized (> 1 MiB)").
pub const ACI_PERMISSIONS_XML_MAX_BYTES: usize = 1024 * 1024;
/// Largest identity registry file accepted, in bytes (same bound as the XML policy).
pub const IDENTITY_REGISTRY_MAX_BYTES: usize = 1024 * 1024;
/// Argument fields shown in one consent prompt; the rest are summarised as a count.
pub const CONSENT_ARGUMENTS_SHOWN: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    /// GEN-01: every constant against SPEC Appendix C ("Consent, authorization and quotas"),
    /// SEC-04/G-16 and the issue text.
    #[test]
    fn gen01_limits_match_spec_appendix_c() {
        assert_eq!(CONSENT_TIMEOUT.as_secs(), 60);
        assert_eq!(CONSENT_MAX_PENDING, 16);
        assert_eq!(AUTHORIZATION_RETRY_INTERVAL.as_secs(), 1);
        assert_eq!(AUTHORIZATION_PENDING_TIMEOUT.as_millis(), 90_000);
        assert_eq!(DENIAL_COOLDOWN.as_secs(), 10 * 60);
        assert_eq!(AUTHORIZATION_TAP_GUARD.as_millis(), 400);
        assert_eq!(SIGNING_DIGEST_SHOWN_CHARS, 12);
        assert_eq!(PROMPT_TEXT_MAX_U16, 16_000);
        assert_eq!(PROMPT_TEXT_PROTOCOL_MAX_U16, 200_000);
        assert_eq!(CONCURRENT_PROMPTS_PER_APP, 1);
        assert_eq!(PROMPTS_PER_HOUR, 30);
        assert_eq!(PROMPT_RATE_WINDOW.as_secs(), 3600);
        assert_eq!(SANITIZED_FIELD_MAX_CP, 256);
        assert_eq!(ACI_PERMISSIONS_XML_MAX_BYTES, 1_048_576);
    }
}
