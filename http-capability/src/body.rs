//! Response bodies: charset-aware decoding (binary bodies become base64, SPEC §10 G-11),
//! truncation at 150,000 UTF-16 units (HTTP-05) and the `response_body_gz` gzip (HTTP-06, E.7).

use std::io::Write;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use encoding_rs::Encoding;
use flate2::Compression;
use flate2::write::GzEncoder;

use crate::text::truncate_u16;

/// How `response_body` encodes the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyEncoding {
    /// Text, decoded by its declared charset or as UTF-8.
    Text,
    /// A binary body (not decodable as text), base64 (RFC 4648 standard alphabet).
    Base64,
}

/// A decoded body: the full text (not yet truncated) and how it was encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedBody {
    /// The full body as text: decoded characters, or base64 of a binary body.
    pub text: String,
    /// Which of the two.
    pub encoding: BodyEncoding,
}

/// The `charset` parameter of a `Content-Type` value, unquoted.
pub fn charset_of(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (k, v) = param.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').trim())
    })
}

/// Decodes body bytes. Order: a byte-order mark; else a `charset` the Encoding Standard knows
/// (malformed sequences become U+FFFD); else strict UTF-8; else the body is binary and becomes
/// base64. Never panics.
pub fn decode_body(bytes: &[u8], content_type: Option<&str>) -> DecodedBody {
    let declared = content_type
        .and_then(charset_of)
        .and_then(|label| Encoding::for_label(label.as_bytes()));
    if let Some((enc, _bom_len)) = Encoding::for_bom(bytes) {
        let (text, _) = enc.decode_with_bom_removal(bytes);
        return text_body(text.into_owned());
    }
    if let Some(enc) = declared {
        let (text, _had_errors) = enc.decode_without_bom_handling(bytes);
        return text_body(text.into_owned());
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => text_body(s.to_owned()),
        Err(_) => DecodedBody {
            text: BASE64.encode(bytes),
            encoding: BodyEncoding::Base64,
        },
    }
}

fn text_body(text: String) -> DecodedBody {
    DecodedBody {
        text,
        encoding: BodyEncoding::Text,
    }
}

/// `(prefix, truncated)`: the first [`crate::limits::RESPONSE_BODY_MAX_U16`] units, never
/// splitting a surrogate pair (HTTP-05, GEN-02).
pub fn truncate_body(text: &str, max_u16: usize) -> (String, bool) {
    let (prefix, cut) = truncate_u16(text, max_u16);
    (prefix.to_owned(), cut)
}

/// gzip (RFC 1952) of the UTF-8 `text`, or `None` once the compressed output would exceed
/// `max_out` bytes. Compression stops as soon as the limit is passed, so an incompressible
/// 16 MiB body costs about `max_out` bytes of work, not the whole body.
pub fn gzip_text(text: &str, max_out: usize) -> Option<Vec<u8>> {
    gzip_text_at(text, max_out, GZIP_LEVEL)
}

/// The gzip level used for `response_body_gz`: 1 (fastest). Measured on a 150,000-character
/// body, level 6 is ~18× slower for output only ~1.5× smaller, and both are far below the
/// 900 KiB cap (docs/PERFORMANCE.md).
pub const GZIP_LEVEL: u32 = 1;

/// [`gzip_text`] at an explicit level (0–9).
pub fn gzip_text_at(text: &str, max_out: usize, level: u32) -> Option<Vec<u8>> {
    const CHUNK: usize = 64 * 1024;
    let mut enc = GzEncoder::new(Vec::new(), Compression::new(level.min(9)));
    for chunk in text.as_bytes().chunks(CHUNK) {
        enc.write_all(chunk).ok()?;
        if enc.get_ref().len() > max_out {
            return None;
        }
    }
    let out = enc.finish().ok()?;
    (out.len() <= max_out).then_some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn charset_parameter_is_found_quoted_or_not() {
        assert_eq!(
            charset_of("text/html; charset=ISO-8859-1"),
            Some("ISO-8859-1")
        );
        assert_eq!(charset_of("text/html;CHARSET=\"utf-8\""), Some("utf-8"));
        assert_eq!(charset_of("text/html"), None);
    }

    #[test]
    fn g_11_latin1_declared_charset_is_decoded() {
        let d = decode_body(
            &[0x63, 0x61, 0x66, 0xe9],
            Some("text/plain; charset=iso-8859-1"),
        );
        assert_eq!(d, text_body("café".into()));
    }

    #[test]
    fn g_11_shift_jis_declared_charset_is_decoded() {
        // "日本" in Shift_JIS.
        let d = decode_body(
            &[0x93, 0xfa, 0x96, 0x7b],
            Some("text/plain; charset=Shift_JIS"),
        );
        assert_eq!(d.text, "日本");
    }

    #[test]
    fn g_11_undeclared_invalid_utf8_is_binary_base64() {
        let d = decode_body(&[0xff, 0x00, 0xfe], Some("application/octet-stream"));
        assert_eq!(d.encoding, BodyEncoding::Base64);
        assert_eq!(d.text, "/wD+");
    }

    #[test]
    fn g_11_unknown_charset_falls_back_to_utf8_then_binary() {
        let d = decode_body("ok".as_bytes(), Some("text/plain; charset=x-nonsense"));
        assert_eq!(d, text_body("ok".into()));
        let d = decode_body(&[0xc3], Some("text/plain; charset=x-nonsense"));
        assert_eq!(d.encoding, BodyEncoding::Base64);
    }

    #[test]
    fn utf16_bom_wins_over_missing_charset() {
        let d = decode_body(&[0xff, 0xfe, b'h', 0, b'i', 0], None);
        assert_eq!(d, text_body("hi".into()));
    }

    #[test]
    fn gzip_is_refused_past_the_limit() {
        let small = gzip_text("hello", 1024).unwrap();
        assert!(small.starts_with(&[0x1f, 0x8b]));
        // Incompressible: base64 of a pseudo-random sequence, much larger than the limit.
        let mut x: u32 = 1;
        let noise: Vec<u8> = (0..400_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x & 0xff) as u8
            })
            .collect();
        assert_eq!(gzip_text(&BASE64.encode(&noise), 100_000), None);
    }
}
