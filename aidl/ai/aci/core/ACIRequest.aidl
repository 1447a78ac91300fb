// SPEC Appendix E.2 / E.2a: ACIRequest is a hand-written Java Parcelable in aci-core, so it is
// declared unstructured here (a structured AIDL parcelable would add an int32 size prefix the
// Java side never writes). Wire order: String capability, String version, Bundle params,
// String callId, String callerPkg. The Rust type is written by hand in aci-adapter.
package ai.aci.core;

parcelable ACIRequest rust_type "crate::wire::AciRequest";
