//! Session modes (CAT-50..CAT-55, G-07).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capability_model::SessionMode;

#[test]
fn g_07_wire_ids() {
    assert_eq!(SessionMode::Default.wire_id(), "default");
    assert_eq!(SessionMode::ReadOnly.wire_id(), "read_only");
    assert_eq!(SessionMode::Chat.wire_id(), "chat");
    for m in SessionMode::ALL {
        assert_eq!(SessionMode::from_wire(m.wire_id()), Ok(m));
    }
}

#[test]
fn cat_55_unknown_wire_mode_is_an_error() {
    assert!(SessionMode::from_wire("DEFAULT").is_err());
    assert!(SessionMode::from_wire("yolo").is_err());
}

#[test]
fn cat_54_unreadable_stored_mode_is_chat() {
    assert_eq!(SessionMode::from_stored("read_only"), SessionMode::ReadOnly);
    for s in ["", "garbage", "READ-ONLY", "\u{0}"] {
        assert_eq!(SessionMode::from_stored(s), SessionMode::Chat);
    }
}
