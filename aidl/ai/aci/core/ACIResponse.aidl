// SPEC Appendix E.2 / E.2a: ACIResponse is a hand-written Java Parcelable in aci-core, declared
// unstructured. Wire order: success (writeByte, an int32 1/0), Bundle result, int errorCode,
// String errorMessage, String callId. The Rust type is written by hand in aci-adapter.
package ai.aci.core;

parcelable ACIResponse rust_type "crate::wire::AciResponse";
