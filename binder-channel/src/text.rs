//! UTF-16 length arithmetic (CH-11, GEN-02). Every channel length is counted in UTF-16 code
//! units, as Java/Kotlin `String.length` does, never in UTF-8 bytes.

/// Bytes counted per block by [`utf16_len`]: at most 255, so a per-block count fits a `u8`;
/// a multiple of 32 so the block loop vectorizes without a scalar tail.
pub(crate) const COUNT_BLOCK_BYTES: usize = 224;

/// Length of `text` in UTF-16 code units (SPEC §0.3 "U16").
///
/// ```
/// assert_eq!(binder_channel::text::utf16_len("a😀"), 3);
/// ```
///
/// Every message is counted twice (`enqueue` and the receiving `on_send`), under the channel
/// lock; counting into `usize` lanes cost ~17 µs per 16,000-char message, more than
/// everything else on the path (docs/PERFORMANCE.md). Counting each block into `u8`
/// lanes lets the compiler use 16 or 32 bytes per vector instruction.
pub fn utf16_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    // One unit per byte, minus continuation bytes (0b10xx_xxxx), plus one for each four-byte
    // lead (0xF0..), whose character is a surrogate pair. `str` guarantees well-formed UTF-8,
    // so there are never more four-byte leads than continuation bytes.
    let mut continuation = 0usize;
    let mut four_byte_leads = 0usize;
    for block in bytes.chunks(COUNT_BLOCK_BYTES) {
        let (mut cont, mut leads) = (0u8, 0u8);
        for &byte in block {
            cont += u8::from(byte & 0xC0 == 0x80);
            leads += u8::from(byte >= 0xF0);
        }
        continuation += usize::from(cont);
        four_byte_leads += usize::from(leads);
    }
    bytes.len() - continuation + four_byte_leads
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
