//! Text limits in UTF-16 code units (SPEC §0.3): chunking (ACP-39) and result caps (ACP-40).

/// Length of `s` in UTF-16 code units.
pub fn u16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of `s` of at most `max` UTF-16 units, never splitting a character
/// (so never a surrogate pair).
pub fn prefix_u16(s: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += c.len_utf16();
        if used > max {
            return &s[..i];
        }
    }
    s
}

/// Splits `s` into pieces of at most `max` UTF-16 units each (ACP-39).
pub fn split_u16(s: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let mut head = prefix_u16(rest, max.max(2));
        if head.is_empty() {
            head = rest;
        }
        out.push(head);
        rest = &rest[head.len()..];
    }
    out
}

/// Caps `s` at `max` UTF-16 units; longer text is cut and ends with
/// `…[truncated, original length N]` (ACP-40), the whole staying within `max`.
pub fn cap_u16(s: &str, max: usize) -> String {
    let len = u16_len(s);
    if len <= max {
        return s.to_owned();
    }
    let note = format!("…[truncated, original length {len}]");
    let keep = max.saturating_sub(u16_len(&note));
    let mut out = prefix_u16(s, keep).to_owned();
    out.push_str(&note);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp39_split_never_cuts_a_surrogate_pair() {
        let s = "a😀".repeat(5000);
        let parts = split_u16(&s, 8192);
        assert_eq!(parts.concat(), s);
        assert!(parts.iter().all(|p| u16_len(p) <= 8192));
    }

    #[test]
    fn acp40_cap_notes_the_original_length() {
        let s = "x".repeat(10_000);
        let c = cap_u16(&s, 8192);
        assert!(u16_len(&c) <= 8192);
        assert!(c.ends_with("…[truncated, original length 10000]"));
        assert_eq!(cap_u16("short", 8192), "short");
    }
}
