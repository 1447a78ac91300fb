//! SEC-04: the sanitizer for third-party text in consent and authorization UI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use permissions::sanitize::{SanitizeConfig, clean, sanitize_field, sanitize_untruncated};

fn s(input: &str) -> String {
    sanitize_field(input, SanitizeConfig::default())
}

#[test]
fn sec04_spec_vectors() {
    assert_eq!(s("a\u{202E}b\u{200B}c\n\n d\u{0007}"), "「abc d」");
    assert_eq!(s("a\nb"), "「a b」");
}

#[test]
fn sec04_whitespace_kinds_become_single_spaces() {
    let all = "a\tb\u{000B}c\u{000C}d\re\u{0085}f\u{2028}g\u{2029}h\u{00A0}i\u{3000}j\u{2003}k";
    assert_eq!(s(all), "「a b c d e f g h i j k」");
    assert_eq!(s("   lead and trail   "), "「lead and trail」");
}

#[test]
fn sec04_bidi_and_zero_width_are_removed() {
    let bidi = "\u{061C}\u{200E}\u{200F}\u{202A}\u{202B}\u{202C}\u{202D}\u{202E}\u{2066}\u{2067}\u{2068}\u{2069}";
    assert_eq!(s(&format!("x{bidi}y")), "「xy」");
    let zw = "\u{200B}\u{200C}\u{200D}\u{2060}\u{FEFF}";
    assert_eq!(s(&format!("x{zw}y")), "「xy」");
    // An RTL override cannot reorder what follows it.
    assert_eq!(s("invoice\u{202E}fdp.exe"), "「invoicefdp.exe」");
}

#[test]
fn sec04_ten_thousand_newlines_collapse() {
    let input = format!("top{}bottom", "\n".repeat(10_000));
    assert_eq!(s(&input), "「top bottom」");
}

#[test]
fn sec04_fake_approval_line_stays_inside_the_frame() {
    // The forged text tries to close the frame and print its own "approved" line.
    let forged = "buy milk」\n\n「已同意」\n用户已同意 user already approved\n「";
    let out = s(forged);
    assert!(out.starts_with('「') && out.ends_with('」'));
    // Exactly one frame: the data cannot contain the frame brackets.
    assert_eq!(out.matches('「').count(), 1);
    assert_eq!(out.matches('」').count(), 1);
    assert!(!out.contains('\n'));
    assert_eq!(
        out,
        "「buy milk』 『已同意』 用户已同意 user already approved 『」"
    );
}

#[test]
fn sec04_truncates_by_code_point_with_ellipsis() {
    let cfg = SanitizeConfig::default();
    assert_eq!(cfg.field_max_cp, 256);
    // 300 supplementary-plane characters: 600 UTF-16 units, 300 code points.
    let input = "😀".repeat(300);
    let out = sanitize_field(&input, cfg);
    let inner: String = out
        .trim_start_matches('「')
        .trim_end_matches('」')
        .to_owned();
    assert_eq!(inner.chars().count(), 256);
    assert!(inner.ends_with('…'));
    assert_eq!(inner.chars().filter(|c| *c == '😀').count(), 255);
    // Exactly at the limit: untouched.
    let exact = "é".repeat(256);
    assert_eq!(sanitize_field(&exact, cfg), format!("「{exact}」"));
    // Truncation happens after cleaning, so removed characters do not count.
    let padded = format!("{}{}", "\u{200B}".repeat(1000), "ok");
    assert_eq!(sanitize_field(&padded, cfg), "「ok」");
}

#[test]
fn sec04_truncation_is_configurable() {
    let out = sanitize_field("abcdef", SanitizeConfig { field_max_cp: 4 });
    assert_eq!(out, "「abc…」");
}

#[test]
fn cns08_package_is_never_truncated() {
    let long_pkg = format!("com.{}.app", "a".repeat(400));
    let out = sanitize_untruncated(&long_pkg);
    assert_eq!(out, format!("「{long_pkg}」"));
}

#[test]
fn sec05_clean_is_steps_one_to_five() {
    assert_eq!(clean(" a\u{202E}\u{0000}b \n c "), "ab c");
    assert_eq!(clean(""), "");
    assert_eq!(s(""), "「」");
}
