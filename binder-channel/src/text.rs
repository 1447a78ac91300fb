//! UTF-16 length arithmetic (CH-11, GEN-02). Every channel length is counted in UTF-16 code
//! units, as Java/Kotlin `String.length` does, never in UTF-8 bytes.

/// Length of `text` in UTF-16 code units (SPEC §0.3 "U16").
///
/// ```
/// assert_eq!(binder_channel::text::utf16_len("a😀"), 3);
/// ```
pub fn utf16_len(text: &str) -> usize {
    // Every character has one UTF-8 lead byte (anything but 0b10xx_xxxx) and is one unit,
    // except four-byte characters (lead 0xF0..), which are a surrogate pair. Counting bytes
    // this way is branch-free and vectorizes; `str` guarantees well-formed UTF-8.
    text.bytes()
        .map(|b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// The longest prefix of `text` of at most `max_units` UTF-16 units. A cut never splits a
/// surrogate pair: when it would, the prefix ends one unit earlier (GEN-02).
///
/// ```
/// use binder_channel::text::truncate_utf16;
/// assert_eq!(truncate_utf16("ab😀", 3), "ab");
/// assert_eq!(truncate_utf16("ab😀", 4), "ab😀");
/// ```
pub fn truncate_utf16(text: &str, max_units: usize) -> &str {
    let mut units = 0usize;
    for (index, ch) in text.char_indices() {
        units += ch.len_utf16();
        if units > max_units {
            return &text[..index];
        }
    }
    text
}

/// Decodes UTF-16 units strictly: a lone surrogate is an error, never replaced.
pub fn decode_utf16_strict(units: &[u16]) -> Option<String> {
    char::decode_utf16(units.iter().copied())
        .collect::<Result<String, _>>()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_units_not_bytes() {
        assert_eq!(utf16_len(""), 0);
        assert_eq!(utf16_len("é"), 1); // 2 UTF-8 bytes
        assert_eq!(utf16_len("中"), 1); // 3 UTF-8 bytes
        assert_eq!(utf16_len("😀"), 2); // 4 UTF-8 bytes, a surrogate pair
        let mixed = "aé中😀\u{10FFFF}\u{7F}\u{80}\u{800}\u{FFFF}\u{10000}";
        assert_eq!(utf16_len(mixed), mixed.encode_utf16().count());
    }

    #[test]
    fn truncation_never_splits_a_pair() {
        assert_eq!(truncate_utf16("😀😀", 1), "");
        assert_eq!(truncate_utf16("😀😀", 2), "😀");
        assert_eq!(truncate_utf16("😀😀", 3), "😀");
        assert_eq!(truncate_utf16("abc", 10), "abc");
    }

    #[test]
    fn strict_decoding_rejects_lone_surrogates() {
        assert_eq!(
            decode_utf16_strict(&[0x61, 0xD83D, 0xDE00]).as_deref(),
            Some("a😀")
        );
        assert_eq!(decode_utf16_strict(&[0x61, 0xD83D]), None);
        assert_eq!(decode_utf16_strict(&[0xDE00, 0x61]), None);
    }
}
