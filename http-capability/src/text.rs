//! UTF-16 lengths and truncation that never splits a surrogate pair (GEN-02).

/// Length of `s` in UTF-16 code units (SPEC §0.3 "U16").
pub fn len_u16(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of `s` that is at most `max` UTF-16 code units, and whether anything was
/// cut. A character whose surrogate pair would straddle the limit is left out whole, so the
/// prefix may be `max - 1` units long (GEN-02, HTTP-05).
pub fn truncate_u16(s: &str, max: usize) -> (&str, bool) {
    // Fast path: every UTF-8 byte yields at most one UTF-16 unit.
    if s.len() <= max {
        return (s, false);
    }
    let mut units = 0usize;
    for (idx, ch) in s.char_indices() {
        let w = ch.len_utf16();
        if units + w > max {
            return (&s[..idx], true);
        }
        units += w;
    }
    (s, false)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn gen_02_counts_utf16_units_not_bytes() {
        assert_eq!(len_u16("abc"), 3);
        assert_eq!(len_u16("é"), 1);
        assert_eq!(len_u16("中"), 1);
        assert_eq!(len_u16("😀"), 2);
    }

    #[test]
    fn gen_02_never_splits_a_surrogate_pair() {
        let s = "ab😀";
        assert_eq!(truncate_u16(s, 3), ("ab", true));
        assert_eq!(truncate_u16(s, 4), ("ab😀", false));
        assert_eq!(truncate_u16(s, 2), ("ab", true));
        assert_eq!(truncate_u16("中文字", 2), ("中文", true));
    }
}
