//! Fixtures shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::collections::BTreeSet;

use capability_model::{AciFlag, AciInfo, Annotations, Capability, CapabilityId, Risk};
use permissions::identity::RegistryEntry;
use permissions::{CertDigest, Identity, Principal, RegistryResolver, ResolvedCaller, Uid};

pub fn digest(byte: u8) -> CertDigest {
    CertDigest([byte; 32])
}

pub fn caller(uid: u32, package: &str, cert: u8) -> ResolvedCaller {
    ResolvedCaller {
        identity: Identity {
            uid: Uid(uid),
            package: package.to_owned(),
            signing_cert_sha256: digest(cert),
            version_code: 1,
        },
        label: Some(format!("{package} label")),
        permissions: BTreeSet::new(),
    }
}

pub fn app(uid: u32, package: &str, cert: u8) -> Principal {
    Principal::App(caller(uid, package, cert))
}

pub fn entry(uid: u32, package: &str, cert: u8, perms: &[&str]) -> RegistryEntry {
    RegistryEntry {
        uid,
        package: package.to_owned(),
        signing_cert_sha256: digest(cert),
        version_code: 7,
        label: Some(format!("{package} label")),
        permissions: perms.iter().map(|s| (*s).to_owned()).collect(),
        exports: Default::default(),
        launch: None,
    }
}

pub fn resolver(entries: Vec<RegistryEntry>) -> RegistryResolver {
    RegistryResolver::from_entries(entries)
}

/// A WRITE plugin tool (the third-party default, CAT-61).
pub fn write_tool(name: &str) -> Capability {
    Capability::new(CapabilityId::mcp("notes", "notes", name), "a tool")
}

/// A tool made HIGH by `destructiveHint` (CAT-62).
pub fn high_tool(name: &str) -> Capability {
    let mut c = write_tool(name);
    c.annotations = Annotations {
        destructive_hint: Some(true),
        ..Annotations::default()
    };
    assert_eq!(c.risk(), Risk::High);
    c
}

/// A READ built-in (CAT-65).
pub fn read_tool(name: &str) -> Capability {
    let mut c = Capability::new(
        CapabilityId::new(capability_model::Source::Builtin, "", "", name),
        "reads",
    );
    c.base_risk = Risk::Read;
    assert_eq!(c.risk(), Risk::Read);
    c
}

/// A per-session MCP tool (SMS-09).
pub fn session_tool(name: &str) -> Capability {
    Capability::new(CapabilityId::session("srv", name), "session tool")
}

/// An ACI capability, optionally dangerous.
pub fn aci_cap(id: &str, dangerous: bool) -> Capability {
    let mut c = Capability::new(
        CapabilityId::new(
            capability_model::Source::Aci,
            "aci.com.example.notes",
            "notesservice",
            id,
        ),
        "an ACI capability",
    );
    c.aci = Some(AciInfo {
        version: "1.0".into(),
        params: vec![],
        result: vec![],
        flags: if dangerous {
            vec![AciFlag::DangerousAction]
        } else {
            vec![]
        },
    });
    c
}
