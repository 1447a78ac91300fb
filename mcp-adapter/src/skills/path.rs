//! The `read_skill` path rules (MCP-68).

/// Which MCP-68 rule a `path` broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathRule {
    /// The path is empty.
    #[error("the path is empty")]
    Empty,
    /// A `.` or `..` segment.
    #[error("the path has a \".\" or \"..\" segment")]
    DotSegment,
    /// An empty segment (leading, trailing or doubled `/`); a leading `/` is an absolute path.
    #[error("the path has an empty segment")]
    EmptySegment,
    /// An absolute path.
    #[error("the path is absolute")]
    Absolute,
    /// A drive letter (`C:`).
    #[error("the path has a drive letter")]
    DriveLetter,
    /// A backslash.
    #[error("the path has a backslash")]
    Backslash,
    /// A control character.
    #[error("the path has a control character")]
    ControlCharacter,
}

/// Checks `path` against every MCP-68 rule. `Ok` means the path is a clean relative
/// `/`-separated path; whether it is in the package's file list is checked by the caller.
pub fn check(path: &str) -> Result<(), PathRule> {
    if path.is_empty() {
        return Err(PathRule::Empty);
    }
    if path.chars().any(char::is_control) {
        return Err(PathRule::ControlCharacter);
    }
    if path.contains('\\') {
        return Err(PathRule::Backslash);
    }
    if path.starts_with('/') {
        return Err(PathRule::Absolute);
    }
    let b = path.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Err(PathRule::DriveLetter);
    }
    for seg in path.split('/') {
        if seg.is_empty() {
            return Err(PathRule::EmptySegment);
        }
        if seg == "." || seg == ".." {
            return Err(PathRule::DotSegment);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp68_test_set() {
        assert_eq!(check("../x"), Err(PathRule::DotSegment));
        assert_eq!(check("./x"), Err(PathRule::DotSegment));
        assert_eq!(check("a/.."), Err(PathRule::DotSegment));
        assert_eq!(check("a//b"), Err(PathRule::EmptySegment));
        assert_eq!(check("a/"), Err(PathRule::EmptySegment));
        assert_eq!(check("/etc/x"), Err(PathRule::Absolute));
        assert_eq!(check("C:x"), Err(PathRule::DriveLetter));
        assert_eq!(check("a\\b"), Err(PathRule::Backslash));
        assert_eq!(check("a\u{1}b"), Err(PathRule::ControlCharacter));
        assert_eq!(check("a\u{85}b"), Err(PathRule::ControlCharacter));
        assert_eq!(check(""), Err(PathRule::Empty));
        assert_eq!(check("references/api.md"), Ok(()));
        assert_eq!(check("a..b/c.d"), Ok(()));
    }
}
