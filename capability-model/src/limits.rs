//! Every numeric limit of the catalog, as named constants (GEN-01, SPEC Appendix C).

/// Final model-facing tool name maximum, in characters (CAT-12).
pub const TOOL_NAME_MAX: usize = 64;
/// Hash suffix length of a truncated name (CAT-12).
pub const HASH_SUFFIX_DEFAULT: usize = 6;
/// Hash suffix lengths tried in order when names collide (CAT-14).
pub const HASH_SUFFIX_ESCALATION: [usize; 5] = [6, 8, 12, 16, 24];
/// Raw MCP tool name length range, in characters (MCP-05).
pub const RAW_TOOL_NAME_MIN: usize = 1;
/// Raw MCP tool name maximum, in characters (MCP-05).
pub const RAW_TOOL_NAME_MAX: usize = 128;
/// toolScope maximum entries (CAT-34).
pub const TOOL_SCOPE_MAX_ENTRIES: usize = 32;
/// toolScope string maximum, in UTF-16 units (CAT-34).
pub const TOOL_SCOPE_STRING_MAX: usize = 128;
/// Maximum length of an ACI virtual plugin or server name (ACI-40).
pub const ACI_PLUGIN_NAME_MAX: usize = 64;
/// Prefix length kept when an ACI virtual plugin name is shortened (ACI-40).
pub const ACI_PLUGIN_NAME_KEEP: usize = 57;
/// Deepest JSON nesting accepted in a schema or capability description; deeper input is
/// reported as an issue instead of risking stack exhaustion.
pub const MAX_JSON_DEPTH: usize = 128;
/// Tools per server before the server is marked `too_many_tools` (MCP-32, CFG default).
pub const TOOLS_PER_SERVER_DEFAULT: usize = 128;

#[cfg(test)]
mod tests {
    use super::*;

    /// GEN-01: every constant against SPEC Appendix C / the cited requirement.
    #[test]
    fn constants_match_the_spec() {
        assert_eq!(TOOL_NAME_MAX, 64); // CAT-12
        assert_eq!(HASH_SUFFIX_DEFAULT, 6); // CAT-12
        assert_eq!(HASH_SUFFIX_ESCALATION, [6, 8, 12, 16, 24]); // CAT-14
        assert_eq!((RAW_TOOL_NAME_MIN, RAW_TOOL_NAME_MAX), (1, 128)); // MCP-05
        assert_eq!(TOOL_SCOPE_MAX_ENTRIES, 32); // CAT-34
        assert_eq!(TOOL_SCOPE_STRING_MAX, 128); // CAT-34
        assert_eq!((ACI_PLUGIN_NAME_MAX, ACI_PLUGIN_NAME_KEEP), (64, 57)); // ACI-40
        assert_eq!(TOOLS_PER_SERVER_DEFAULT, 128); // MCP-32
    }
}
