//! GEN-02 / HTTP-05 as properties: truncation returns a prefix of at most `max` UTF-16 units,
//! never splits a surrogate pair, and drops at most the one character that would not fit; the
//! bounded gzip decoder agrees with it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;

use flate2::{Compression, write::GzEncoder};
use http_capability::render::gunzip_bounded;
use http_capability::text::{len_u16, truncate_u16};
use proptest::prelude::*;

fn gzip(s: &str) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(s.as_bytes()).unwrap();
    e.finish().unwrap()
}

proptest! {
    #[test]
    fn truncation_is_a_maximal_prefix(s in "\\PC{0,64}", max in 0usize..80) {
        let (prefix, cut) = truncate_u16(&s, max);
        prop_assert!(s.starts_with(prefix));
        prop_assert!(len_u16(prefix) <= max);
        prop_assert_eq!(cut, prefix.len() < s.len());
        if cut {
            let next = s[prefix.len()..].chars().next().unwrap();
            prop_assert!(len_u16(prefix) + next.len_utf16() > max);
        }
        prop_assert_eq!(String::from_utf16(&prefix.encode_utf16().collect::<Vec<_>>()).unwrap(), prefix);
    }

    #[test]
    fn bounded_gunzip_matches_truncation(s in "\\PC{0,200}", max in 1usize..120) {
        let (text, truncated) = gunzip_bounded(&gzip(&s), max).unwrap();
        let (prefix, cut) = truncate_u16(&s, max);
        prop_assert_eq!(text, prefix);
        prop_assert_eq!(truncated, cut);
    }
}
