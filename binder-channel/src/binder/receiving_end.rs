//! Our receiving end: a hand-written native `org.agentos.channel.IChannel`.
//!
//! It is written by hand rather than through the generated `BnChannel` so that the Binder thread
//! sees every inbound call, even one whose `String16` the generated stub would refuse to decode
//! (a lone surrogate, a null string): such a call still counts and closes the channel as a
//! violation instead of vanishing silently and desynchronising the window (CH-12, CH-32).
//!
//! Each call is tagged with the kernel-given calling UID (`getCallingUid` on kernel Binder,
//! `SO_PEERCRED` on rsbinder RPC over a Unix socket) and forwarded to the channel core, which
//! checks it against the UID bound at `open` (CH-08). Nothing else happens on the Binder thread
//! (CH-30).

use rsbinder::{
    BinderResult, Interface, Parcel, Remotable, SIBinder, StatusCode, Strong, TransactionCode,
};

use super::aidl::org::agentos::channel::IChannel::{IChannel, transactions};
use crate::InboundSender;

/// Descriptor of the `IChannel` interface (CH-01).
pub(crate) const ICHANNEL_DESCRIPTOR: &str = "org.agentos.channel.IChannel";

/// What a `send` whose parcel holds no decodable `String16` is reported as: a lone low
/// surrogate, which the core classifies as invalid text (a violation).
const UNDECODABLE_MESSAGE: [u16; 1] = [0xDC00];

/// The native object behind our receiving end.
pub(crate) struct ReceivingEnd {
    inbound: InboundSender,
}

impl ReceivingEnd {
    /// Wraps `inbound` in a native Binder object.
    pub(crate) fn new_binder(inbound: InboundSender) -> SIBinder {
        rsbinder::Binder::new(ReceivingEnd { inbound }).as_binder()
    }
}

impl Remotable for ReceivingEnd {
    fn descriptor() -> &'static str {
        ICHANNEL_DESCRIPTOR
    }

    fn on_transact(
        &self,
        code: TransactionCode,
        reader: &mut Parcel,
        _reply: &mut Parcel,
    ) -> rsbinder::Result<()> {
        let caller_uid = rsbinder::get_calling_uid();
        match code {
            transactions::r#send => {
                match read_message(reader) {
                    Message::Text(text) => self.inbound.send(caller_uid, text),
                    Message::Units(units) => self.inbound.send_utf16(caller_uid, &units),
                }
                Ok(())
            }
            transactions::r#close => {
                // The reason is informative only (CH-45); an undecodable one is still a close.
                let reason = reader
                    .read::<Option<String>>()
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                self.inbound.close(caller_uid, &reason);
                Ok(())
            }
            transactions::r#ack => {
                let consumed = reader.read::<i64>()?;
                self.inbound.ack(caller_uid, consumed);
                Ok(())
            }
            _ => Err(StatusCode::UnknownTransaction),
        }
    }

    fn on_dump(&self, _writer: &mut dyn std::io::Write, _args: &[String]) -> rsbinder::Result<()> {
        Ok(())
    }
}

/// A decoded `send` argument.
enum Message {
    /// Valid UTF-16 (the fast path).
    Text(String),
    /// Raw units the core must judge (invalid UTF-16 or not a string at all).
    Units(Vec<u16>),
}

/// Reads the `String16` of a `send`. A null string is an empty message (it cannot be a JSON
/// text, so the JSON-RPC layer rejects it while the window stays in step).
fn read_message(reader: &mut Parcel) -> Message {
    let start = reader.data_position();
    match reader.read::<Option<String>>() {
        Ok(Some(text)) => Message::Text(text),
        Ok(None) => Message::Text(String::new()),
        Err(_) => {
            reader.set_data_position(start);
            Message::Units(read_raw_units(reader).unwrap_or_else(|| UNDECODABLE_MESSAGE.to_vec()))
        }
    }
}

/// Reads a `String16` as raw units, without judging them: an `i32` unit count, then the units
/// and a NUL terminator, little-endian, padded to 4 bytes. `None` when the parcel is too short.
fn read_raw_units(reader: &mut Parcel) -> Option<Vec<u16>> {
    let len = usize::try_from(reader.read::<i32>().ok()?).ok()?;
    let bytes = len.checked_add(1)?.checked_mul(2)?;
    let words = bytes.div_ceil(4);
    if words.checked_mul(4)? > reader.data_avail() {
        return None;
    }
    let mut units = Vec::with_capacity(words * 2);
    for _ in 0..words {
        let word = reader.read::<u32>().ok()?.to_le_bytes();
        units.push(u16::from_le_bytes([word[0], word[1]]));
        units.push(u16::from_le_bytes([word[2], word[3]]));
    }
    units.truncate(len);
    Some(units)
}

/// A typed handle on our receiving end, so it can be passed to `open` and returned from it.
///
/// Its `IChannel` methods are never called in this process: the generated stubs only serialize
/// it (`as_binder`).
pub(crate) struct LocalEnd {
    binder: SIBinder,
}

impl LocalEnd {
    /// A `Strong<dyn IChannel>` for the native `binder`.
    pub(crate) fn strong(binder: SIBinder) -> Strong<dyn IChannel> {
        Strong::new(Box::new(LocalEnd { binder }))
    }
}

impl Interface for LocalEnd {
    fn as_binder(&self) -> SIBinder {
        self.binder.clone()
    }
}

impl IChannel for LocalEnd {
    fn r#send(&self, _message: &str) -> BinderResult<()> {
        Err(StatusCode::InvalidOperation.into())
    }

    fn r#close(&self, _reason: &str) -> BinderResult<()> {
        Err(StatusCode::InvalidOperation.into())
    }

    fn r#ack(&self, _consumed: i64) -> BinderResult<()> {
        Err(StatusCode::InvalidOperation.into())
    }
}

/// Whether `binder` is a remote object (a proxy), not one of ours.
pub(crate) fn is_remote(binder: &SIBinder) -> bool {
    (**binder).is_remote()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn string16(units: &[u16]) -> Parcel {
        let mut parcel = Parcel::new();
        parcel.write(&i32::try_from(units.len()).unwrap()).unwrap();
        let mut all = units.to_vec();
        all.push(0);
        if all.len() % 2 == 1 {
            all.push(0);
        }
        for pair in all.chunks(2) {
            let word = u32::from(pair[0]) | (u32::from(pair[1]) << 16);
            parcel.write(&word).unwrap();
        }
        parcel.set_data_position(0);
        parcel
    }

    #[test]
    fn a_valid_string16_decodes_on_the_fast_path() {
        let text = "héllo 😀";
        let units: Vec<u16> = text.encode_utf16().collect();
        let mut parcel = string16(&units);
        match read_message(&mut parcel) {
            Message::Text(decoded) => assert_eq!(decoded, text),
            Message::Units(_) => panic!("valid text took the raw path"),
        }
    }

    #[test]
    fn a_lone_surrogate_comes_back_as_raw_units() {
        let units = [0x0041, 0xD83D, 0x0042];
        let mut parcel = string16(&units);
        match read_message(&mut parcel) {
            Message::Units(raw) => assert_eq!(raw, units),
            Message::Text(text) => panic!("invalid UTF-16 decoded as {text:?}"),
        }
    }

    #[test]
    fn a_truncated_string16_is_undecodable() {
        let mut parcel = Parcel::new();
        parcel.write(&1_000_i32).unwrap();
        parcel.write(&0x0041_0041_u32).unwrap();
        parcel.set_data_position(0);
        match read_message(&mut parcel) {
            Message::Units(raw) => assert_eq!(raw, UNDECODABLE_MESSAGE),
            Message::Text(text) => panic!("truncated parcel decoded as {text:?}"),
        }
    }

    #[test]
    fn a_null_string16_is_an_empty_message() {
        let mut parcel = Parcel::new();
        parcel.write(&-1_i32).unwrap();
        parcel.set_data_position(0);
        match read_message(&mut parcel) {
            Message::Text(text) => assert!(text.is_empty()),
            Message::Units(raw) => panic!("null string took the raw path: {raw:?}"),
        }
    }
}
