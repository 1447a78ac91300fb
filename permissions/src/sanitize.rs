//! The sanitizer for third-party text shown in consent and authorization UI (SEC-04, CNS-08).
//!
//! Applied in SPEC order: whitespace → space, remaining `Cc` controls removed, bidi controls
//! removed, zero-width characters removed, whitespace runs collapsed and trimmed, truncated by
//! **code point** (CFG 256, appending `…`), framed in `「…」`.
//!
//! One addition beyond SEC-04: `「` and `」` inside the data become `『` and `』`, so data can
//! never close the frame and print an unframed line such as `」 已同意 「`.

use crate::limits::SANITIZED_FIELD_MAX_CP;

/// Opening frame bracket.
pub const FRAME_OPEN: char = '「';
/// Closing frame bracket.
pub const FRAME_CLOSE: char = '」';
/// Appended to a truncated field.
pub const ELLIPSIS: char = '…';

/// Sanitizer settings (CFG).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SanitizeConfig {
    /// Code points kept per field, the ellipsis included (SEC-04 step 6, G-16).
    pub field_max_cp: usize,
}

impl Default for SanitizeConfig {
    fn default() -> Self {
        Self {
            field_max_cp: SANITIZED_FIELD_MAX_CP,
        }
    }
}

/// Bidi controls removed by SEC-04 step 3.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Zero-width characters removed by SEC-04 step 4.
pub fn is_zero_width(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}')
}

/// SEC-04 steps 1–5: the cleaned text, not truncated, not framed. Also what SEC-05 plain-text
/// rendering needs.
pub fn clean(input: &str) -> String {
    let mut out = String::with_capacity(input.len().min(4096));
    let mut pending_space = false;
    for c in input.chars() {
        // Step 1: Rust's `is_whitespace` is Unicode White_Space = \t..\r, U+0085, U+2028,
        // U+2029 and every Zs, exactly SEC-04's list.
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        // Steps 2-4: removed characters do not break a whitespace run or a word.
        if c.is_control() || is_bidi_control(c) || is_zero_width(c) {
            continue;
        }
        // Step 5: collapse runs, trim the start.
        if pending_space && !out.is_empty() {
            out.push(' ');
        }
        pending_space = false;
        out.push(match c {
            FRAME_OPEN => '『',
            FRAME_CLOSE => '』',
            other => other,
        });
    }
    out
}

/// Truncates to at most `max_cp` code points, the ellipsis included (SEC-04 step 6).
pub fn truncate_cp(s: &str, max_cp: usize) -> String {
    if s.chars().count() <= max_cp {
        return s.to_owned();
    }
    if max_cp == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(max_cp - 1).collect();
    out.push(ELLIPSIS);
    out
}

/// SEC-04 in full: cleaned, truncated to `cfg.field_max_cp` code points, framed in `「」`.
pub fn sanitize_field(input: &str, cfg: SanitizeConfig) -> String {
    frame(&truncate_cp(&clean(input), cfg.field_max_cp))
}

/// SEC-04 without step 6, for the caller's package name, which is never truncated (CNS-08).
pub fn sanitize_untruncated(input: &str) -> String {
    frame(&clean(input))
}

fn frame(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 6);
    out.push(FRAME_OPEN);
    out.push_str(s);
    out.push(FRAME_CLOSE);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_keeps_short_text() {
        assert_eq!(truncate_cp("abc", 3), "abc");
        assert_eq!(truncate_cp("abcd", 3), "ab…");
        assert_eq!(truncate_cp("abcd", 0), "");
    }
}
