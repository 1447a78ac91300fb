//! Android's `Parcel` encoding for what ACI sends (SPEC Appendix E.2a), on plain byte buffers so it
//! is testable and fuzzable, plus the glue to rsbinder's [`rsbinder::Parcel`].
//!
//! Everything is little-endian and 4-byte aligned:
//!
//! | Java call | bytes |
//! |---|---|
//! | `writeInt` / `writeByte` / `writeBoolean` | one int32 (a byte and a boolean are widened) |
//! | `writeLong` / `writeDouble` | 8 bytes |
//! | `writeString` | int32 length in UTF-16 units (`-1` = null), the UTF-16LE units, a 16-bit `0`, zero padding to 4 |
//! | `writeByteArray` | int32 length (`-1` = null), the bytes, zero padding to 4 |
//! | `writeStringArray` | int32 count (`-1` = null), then each `writeString` |
//! | `writeBundle` | int32 `0` when empty; else int32 length of what follows the magic, int32 magic `BNDL`, int32 entry count, then per entry the key (`writeString`) and `writeValue` |
//! | `writeValue` | int32 type tag, then the payload ([`tag`]) |
//!
//! Reading is defensive: every length is checked against what is left before anything is
//! allocated, a Bundle's declared length bounds what its entries may consume, nesting is limited
//! to [`MAX_BUNDLE_DEPTH`], and a tag capbridge does not read is [`ParcelError::UnsupportedTag`]
//! (never a guess at the following bytes). Since a Bundle carries its byte length, a bad entry
//! inside it does not desynchronise the fields after it: [`ParcelReader::read_bundle_lenient`]
//! reports the error and continues after the Bundle.
//!
//! ```
//! # #![allow(clippy::unwrap_used)]
//! use aci_adapter::bundle::{Bundle, BundleValue};
//! use aci_adapter::parcel::{ParcelReader, ParcelWriter};
//!
//! let mut b = Bundle::new();
//! b.put("city", BundleValue::String(Some("Oslo".into())));
//! let mut w = ParcelWriter::new();
//! w.write_bundle(&b);
//! let bytes = w.into_bytes();
//! assert_eq!(&bytes[4..8], &0x4C44_4E42_i32.to_le_bytes()); // "BNDL"
//! let mut r = ParcelReader::new(&bytes);
//! assert_eq!(r.read_bundle().unwrap(), b);
//! assert_eq!(r.remaining(), 0);
//! ```

use crate::bundle::{Bundle, BundleValue};

/// `BNDL`: the magic of a Bundle parcelled by Java.
pub const BUNDLE_MAGIC: i32 = 0x4C44_4E42;
/// `BNDN`: the magic of a Bundle parcelled by native code (accepted on read).
pub const BUNDLE_MAGIC_NATIVE: i32 = 0x4C44_4E44;
/// How deeply Bundles may nest inside one another before reading stops.
pub const MAX_BUNDLE_DEPTH: usize = 32;

/// `Parcel.writeValue` type tags (Android `Parcel.VAL_*`).
pub mod tag {
    /// `null`.
    pub const NULL: i32 = -1;
    /// `String`.
    pub const STRING: i32 = 0;
    /// `Integer`.
    pub const INTEGER: i32 = 1;
    /// `Map` (length-prefixed since Android 13).
    pub const MAP: i32 = 2;
    /// `Bundle`.
    pub const BUNDLE: i32 = 3;
    /// `Parcelable` (length-prefixed since Android 13).
    pub const PARCELABLE: i32 = 4;
    /// `Short`.
    pub const SHORT: i32 = 5;
    /// `Long`.
    pub const LONG: i32 = 6;
    /// `Float`.
    pub const FLOAT: i32 = 7;
    /// `Double`.
    pub const DOUBLE: i32 = 8;
    /// `Boolean`.
    pub const BOOLEAN: i32 = 9;
    /// `CharSequence`.
    pub const CHARSEQUENCE: i32 = 10;
    /// `List` (length-prefixed since Android 13).
    pub const LIST: i32 = 11;
    /// `SparseArray` (length-prefixed since Android 13).
    pub const SPARSEARRAY: i32 = 12;
    /// `byte[]`.
    pub const BYTEARRAY: i32 = 13;
    /// `String[]`.
    pub const STRINGARRAY: i32 = 14;
    /// `IBinder`.
    pub const IBINDER: i32 = 15;
    /// `Parcelable[]` (length-prefixed since Android 13).
    pub const PARCELABLEARRAY: i32 = 16;
    /// `Object[]` (length-prefixed since Android 13).
    pub const OBJECTARRAY: i32 = 17;
    /// `int[]`.
    pub const INTARRAY: i32 = 18;
    /// `long[]`.
    pub const LONGARRAY: i32 = 19;
    /// `Byte`.
    pub const BYTE: i32 = 20;
    /// `Serializable` (length-prefixed since Android 13).
    pub const SERIALIZABLE: i32 = 21;
    /// `boolean[]`.
    pub const BOOLEANARRAY: i32 = 23;
    /// `double[]`.
    pub const DOUBLEARRAY: i32 = 28;

    /// Whether Android 13+ writes an int32 byte length right after this tag.
    pub fn is_length_prefixed(tag: i32) -> bool {
        matches!(
            tag,
            MAP | PARCELABLE | LIST | SPARSEARRAY | PARCELABLEARRAY | OBJECTARRAY | SERIALIZABLE
        )
    }
}

/// Why bytes could not be read as what was expected. Never carries the data itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParcelError {
    /// The input ended inside a value.
    #[error("the parcel ends early: {needed} more bytes needed, {available} left")]
    Truncated {
        /// Bytes the next value needs.
        needed: usize,
        /// Bytes left.
        available: usize,
    },
    /// A length or count below −1 (or −1 where null is not allowed).
    #[error("negative length {0} in the parcel")]
    NegativeLength(i32),
    /// A length or count larger than the bytes left could hold.
    #[error("length {length} in the parcel exceeds the {available} bytes left")]
    LengthTooLarge {
        /// The declared length (in its unit).
        length: i32,
        /// Bytes left.
        available: usize,
    },
    /// A Bundle length that is not a multiple of 4 (Android refuses these too).
    #[error("Bundle length {0} is not aligned to 4 bytes")]
    MisalignedBundle(i32),
    /// A Bundle without the `BNDL` / `BNDN` magic.
    #[error("bad Bundle magic 0x{0:08X} (expected BNDL or BNDN)")]
    BadMagic(u32),
    /// A `writeValue` tag capbridge does not read (e.g. Parcelable, Map, Serializable).
    #[error("unsupported Bundle value type tag {tag} for key of {key_units} UTF-16 units")]
    UnsupportedTag {
        /// The tag found.
        tag: i32,
        /// Length of the entry's key (the key itself is not echoed).
        key_units: usize,
    },
    /// A string's units are not valid UTF-16 (an unpaired surrogate).
    #[error("a string in the parcel is not valid UTF-16")]
    BadUtf16,
    /// A string lacks its 16-bit NUL terminator.
    #[error("a string in the parcel lacks its NUL terminator")]
    MissingTerminator,
    /// Bundles nested deeper than [`MAX_BUNDLE_DEPTH`].
    #[error("Bundles nested deeper than {MAX_BUNDLE_DEPTH}")]
    TooDeep,
    /// A Bundle's entries ran past the length it declared.
    #[error("a Bundle's entries run past its declared length")]
    BundleOverrun,
    /// A parcelable's non-null marker was neither 0 nor 1.
    #[error("bad parcelable null marker {0}")]
    BadNullMarker(i32),
    /// A required parcelable was null.
    #[error("a required parcelable is null")]
    UnexpectedNull,
    /// Bytes left over after a complete value.
    #[error("{0} bytes left over after the value")]
    TrailingBytes(usize),
    /// The underlying rsbinder parcel failed.
    #[error("binder parcel error: {0:?}")]
    Binder(rsbinder::StatusCode),
}

impl ParcelError {
    /// The rsbinder status a failed (de)serialization reports to the Binder layer.
    pub fn status(&self) -> rsbinder::StatusCode {
        match self {
            ParcelError::Truncated { .. } => rsbinder::StatusCode::NotEnoughData,
            ParcelError::UnexpectedNull => rsbinder::StatusCode::UnexpectedNull,
            ParcelError::Binder(code) => *code,
            _ => rsbinder::StatusCode::BadValue,
        }
    }
}

/// Bytes padded to a multiple of 4.
fn padded(len: usize) -> usize {
    len.div_ceil(4) * 4
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

/// Writes Parcel bytes into a growing buffer. Writing cannot fail: every length fits the int32
/// Android uses as long as the whole buffer stays below 2 GiB, which Binder's ~1 MB limit
/// guarantees long before.
#[derive(Debug, Default, Clone)]
pub struct ParcelWriter {
    buf: Vec<u8>,
}

impl ParcelWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// `true` when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    fn len_i32(len: usize) -> i32 {
        i32::try_from(len).unwrap_or(i32::MAX)
    }

    /// `writeInt`.
    pub fn write_i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// `writeLong`.
    pub fn write_i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// `writeFloat`.
    pub fn write_f32(&mut self, v: f32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// `writeDouble`.
    pub fn write_f64(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// `writeBoolean` (an int32 1/0).
    pub fn write_bool(&mut self, v: bool) {
        self.write_i32(i32::from(v));
    }

    /// `writeByte` (an int32, sign-extended as Java does).
    pub fn write_byte(&mut self, v: i8) {
        self.write_i32(i32::from(v));
    }

    fn pad(&mut self) {
        let target = padded(self.buf.len());
        self.buf.resize(target, 0);
    }

    /// `writeString` (String16): `None` is null.
    pub fn write_string(&mut self, s: Option<&str>) {
        let Some(s) = s else {
            self.write_i32(-1);
            return;
        };
        let at = self.buf.len();
        self.write_i32(0);
        let mut units = 0usize;
        for u in s.encode_utf16() {
            self.buf.extend_from_slice(&u.to_le_bytes());
            units += 1;
        }
        self.buf.extend_from_slice(&[0, 0]);
        self.pad();
        self.buf[at..at + 4].copy_from_slice(&Self::len_i32(units).to_le_bytes());
    }

    /// `writeByteArray`: `None` is null.
    pub fn write_byte_array(&mut self, bytes: Option<&[u8]>) {
        let Some(bytes) = bytes else {
            self.write_i32(-1);
            return;
        };
        self.write_i32(Self::len_i32(bytes.len()));
        self.buf.extend_from_slice(bytes);
        self.pad();
    }

    /// `writeStringArray`: `None` is null.
    pub fn write_string_array(&mut self, items: Option<&[Option<String>]>) {
        let Some(items) = items else {
            self.write_i32(-1);
            return;
        };
        self.write_i32(Self::len_i32(items.len()));
        for s in items {
            self.write_string(s.as_deref());
        }
    }

    /// `Bundle.writeToParcel` (what `writeBundle` writes for a non-null Bundle): int32 `0` when
    /// empty; else the length of what follows the magic, `BNDL`, the count and the entries.
    pub fn write_bundle(&mut self, bundle: &Bundle) {
        if bundle.is_empty() {
            self.write_i32(0);
            return;
        }
        let length_at = self.buf.len();
        self.write_i32(-1);
        self.write_i32(BUNDLE_MAGIC);
        let start = self.buf.len();
        self.write_i32(Self::len_i32(bundle.len()));
        for (key, value) in bundle.iter() {
            self.write_string(Some(key));
            self.write_value(value);
        }
        let length = Self::len_i32(self.buf.len() - start);
        self.buf[length_at..length_at + 4].copy_from_slice(&length.to_le_bytes());
    }

    /// `writeBundle` of a possibly null Bundle: null is int32 `-1` (Android `Parcel.writeBundle`).
    pub fn write_nullable_bundle(&mut self, bundle: Option<&Bundle>) {
        match bundle {
            Some(b) => self.write_bundle(b),
            None => self.write_i32(-1),
        }
    }

    /// `writeValue`: the tag, then the payload.
    pub fn write_value(&mut self, value: &BundleValue) {
        match value {
            BundleValue::Null => self.write_i32(tag::NULL),
            BundleValue::String(s) => {
                self.write_i32(tag::STRING);
                self.write_string(s.as_deref());
            }
            BundleValue::Int(v) => {
                self.write_i32(tag::INTEGER);
                self.write_i32(*v);
            }
            BundleValue::Long(v) => {
                self.write_i32(tag::LONG);
                self.write_i64(*v);
            }
            BundleValue::Float(v) => {
                self.write_i32(tag::FLOAT);
                self.write_f32(*v);
            }
            BundleValue::Double(v) => {
                self.write_i32(tag::DOUBLE);
                self.write_f64(*v);
            }
            BundleValue::Boolean(v) => {
                self.write_i32(tag::BOOLEAN);
                self.write_bool(*v);
            }
            BundleValue::ByteArray(b) => {
                self.write_i32(tag::BYTEARRAY);
                self.write_byte_array(b.as_deref());
            }
            BundleValue::StringArray(a) => {
                self.write_i32(tag::STRINGARRAY);
                self.write_string_array(a.as_deref());
            }
            BundleValue::Bundle(b) => {
                self.write_i32(tag::BUNDLE);
                self.write_bundle(b);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/// Reads Parcel bytes from a slice. Never panics on any input.
#[derive(Debug, Clone)]
pub struct ParcelReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> ParcelReader<'a> {
    /// A reader at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// Current offset.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// `Ok` when every byte was read, else [`ParcelError::TrailingBytes`].
    pub fn finish(&self) -> Result<(), ParcelError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(ParcelError::TrailingBytes(n)),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ParcelError> {
        let available = self.remaining();
        if n > available {
            return Err(ParcelError::Truncated {
                needed: n,
                available,
            });
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], ParcelError> {
        let s = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Ok(out)
    }

    /// `readInt`.
    pub fn read_i32(&mut self) -> Result<i32, ParcelError> {
        Ok(i32::from_le_bytes(self.take_array()?))
    }

    /// `readLong`.
    pub fn read_i64(&mut self) -> Result<i64, ParcelError> {
        Ok(i64::from_le_bytes(self.take_array()?))
    }

    /// `readFloat`.
    pub fn read_f32(&mut self) -> Result<f32, ParcelError> {
        Ok(f32::from_le_bytes(self.take_array()?))
    }

    /// `readDouble`.
    pub fn read_f64(&mut self) -> Result<f64, ParcelError> {
        Ok(f64::from_le_bytes(self.take_array()?))
    }

    /// `readBoolean`: any non-zero int32 is `true`, as on Android.
    pub fn read_bool(&mut self) -> Result<bool, ParcelError> {
        Ok(self.read_i32()? != 0)
    }

    /// `readByte`: the low byte of an int32, as on Android.
    pub fn read_byte(&mut self) -> Result<i8, ParcelError> {
        Ok(self.read_i32()? as i8)
    }

    /// A length field: `-1` is `None`, other negatives are errors, and `len * unit` must fit
    /// in what is left.
    fn read_len(&mut self, unit: usize) -> Result<Option<usize>, ParcelError> {
        let len = self.read_i32()?;
        if len == -1 {
            return Ok(None);
        }
        let n = usize::try_from(len).map_err(|_| ParcelError::NegativeLength(len))?;
        let available = self.remaining();
        if n.saturating_mul(unit) > available {
            return Err(ParcelError::LengthTooLarge {
                length: len,
                available,
            });
        }
        Ok(Some(n))
    }

    /// `readString` (String16): `None` is null.
    pub fn read_string(&mut self) -> Result<Option<String>, ParcelError> {
        let Some(units) = self.read_len(2)? else {
            return Ok(None);
        };
        let body = self.take(padded((units + 1) * 2))?;
        if body[units * 2] != 0 || body[units * 2 + 1] != 0 {
            return Err(ParcelError::MissingTerminator);
        }
        let iter = body[..units * 2]
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]));
        char::decode_utf16(iter)
            .collect::<Result<String, _>>()
            .map(Some)
            .map_err(|_| ParcelError::BadUtf16)
    }

    /// `readByteArray` / `createByteArray`: `None` is null.
    pub fn read_byte_array(&mut self) -> Result<Option<Vec<u8>>, ParcelError> {
        let Some(len) = self.read_len(1)? else {
            return Ok(None);
        };
        let body = self.take(padded(len))?;
        Ok(Some(body[..len].to_vec()))
    }

    /// `createStringArray`: `None` is null.
    pub fn read_string_array(&mut self) -> Result<Option<Vec<Option<String>>>, ParcelError> {
        // Each element takes at least 4 bytes.
        let Some(n) = self.read_len(4)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(self.read_string()?);
        }
        Ok(Some(out))
    }

    /// `readBundle`: a null Bundle (length −1) reads as empty, as does length 0. Any error inside
    /// the Bundle fails the read.
    pub fn read_bundle(&mut self) -> Result<Bundle, ParcelError> {
        self.read_bundle_at_depth(0)
    }

    /// `readBundle` that keeps going past a bad Bundle: the framing error (truncation, bad
    /// length, bad magic) is returned as `Err`, but an error *inside* a well-framed Bundle
    /// (an unsupported tag, a bad string) is returned as `Ok((empty, Some(error)))` with the
    /// reader positioned after the Bundle, so the fields that follow still read correctly.
    pub fn read_bundle_lenient(&mut self) -> Result<(Bundle, Option<ParcelError>), ParcelError> {
        let Some(body) = self.read_bundle_frame()? else {
            return Ok((Bundle::new(), None));
        };
        match read_bundle_body(body, 0) {
            Ok(b) => Ok((b, None)),
            Err(e) => Ok((Bundle::new(), Some(e))),
        }
    }

    /// The length and magic of a Bundle; the entry bytes (count + entries), or `None` when the
    /// Bundle is null or empty.
    fn read_bundle_frame(&mut self) -> Result<Option<&'a [u8]>, ParcelError> {
        let length = self.read_i32()?;
        if length <= 0 {
            // −1: `writeBundle(null)`; 0: an empty Bundle. Other negatives are refused by Android.
            return if length == 0 || length == -1 {
                Ok(None)
            } else {
                Err(ParcelError::NegativeLength(length))
            };
        }
        if length % 4 != 0 {
            return Err(ParcelError::MisalignedBundle(length));
        }
        let magic = self.read_i32()?;
        if magic != BUNDLE_MAGIC && magic != BUNDLE_MAGIC_NATIVE {
            return Err(ParcelError::BadMagic(magic as u32));
        }
        let n = length as usize;
        let available = self.remaining();
        if n > available {
            return Err(ParcelError::LengthTooLarge { length, available });
        }
        self.take(n).map(Some)
    }

    fn read_bundle_at_depth(&mut self, depth: usize) -> Result<Bundle, ParcelError> {
        if depth >= MAX_BUNDLE_DEPTH {
            return Err(ParcelError::TooDeep);
        }
        match self.read_bundle_frame()? {
            None => Ok(Bundle::new()),
            Some(body) => read_bundle_body(body, depth),
        }
    }

    /// `readValue`: a tag and its payload.
    pub fn read_value(&mut self) -> Result<BundleValue, ParcelError> {
        self.read_value_at_depth(0, 0)
    }

    fn read_value_at_depth(
        &mut self,
        depth: usize,
        key_units: usize,
    ) -> Result<BundleValue, ParcelError> {
        let t = self.read_i32()?;
        Ok(match t {
            tag::NULL => BundleValue::Null,
            tag::STRING => BundleValue::String(self.read_string()?),
            tag::INTEGER => BundleValue::Int(self.read_i32()?),
            tag::LONG => BundleValue::Long(self.read_i64()?),
            tag::FLOAT => BundleValue::Float(self.read_f32()?),
            tag::DOUBLE => BundleValue::Double(self.read_f64()?),
            tag::BOOLEAN => BundleValue::Boolean(self.read_bool()?),
            tag::BYTEARRAY => BundleValue::ByteArray(self.read_byte_array()?),
            tag::STRINGARRAY => BundleValue::StringArray(self.read_string_array()?),
            tag::BUNDLE => BundleValue::Bundle(self.read_bundle_at_depth(depth + 1)?),
            other => {
                return Err(ParcelError::UnsupportedTag {
                    tag: other,
                    key_units,
                });
            }
        })
    }
}

/// Reads `count` and the entries of a Bundle whose entry bytes are `body`.
fn read_bundle_body(body: &[u8], depth: usize) -> Result<Bundle, ParcelError> {
    let mut r = ParcelReader::new(body);
    let count = r.read_i32()?;
    let count = usize::try_from(count).map_err(|_| ParcelError::NegativeLength(count))?;
    // Each entry takes at least 8 bytes (a key length and a tag).
    if count.saturating_mul(8) > r.remaining() {
        return Err(ParcelError::BundleOverrun);
    }
    let mut bundle = Bundle::new();
    for _ in 0..count {
        let key = r.read_string().map_err(overrun)?;
        let key = key.unwrap_or_default();
        let units = key.encode_utf16().count();
        let value = r.read_value_at_depth(depth, units).map_err(overrun)?;
        bundle.put(key, value);
    }
    // Android positions the parcel at start + length whatever the entries consumed.
    Ok(bundle)
}

/// Running out of a Bundle's declared bytes is an overrun of that Bundle, not of the parcel.
fn overrun(e: ParcelError) -> ParcelError {
    match e {
        ParcelError::Truncated { .. } => ParcelError::BundleOverrun,
        other => other,
    }
}

// ---------------------------------------------------------------------------------------------
// rsbinder glue
// ---------------------------------------------------------------------------------------------

/// Appends 4-byte aligned bytes produced by a [`ParcelWriter`] to an rsbinder parcel, word by
/// word, so the parcel holds exactly these bytes.
pub fn write_to_binder(parcel: &mut rsbinder::Parcel, bytes: &[u8]) -> rsbinder::Result<()> {
    if !bytes.len().is_multiple_of(4) {
        return Err(rsbinder::StatusCode::BadValue);
    }
    for w in bytes.chunks_exact(4) {
        parcel.write_i32(i32::from_le_bytes([w[0], w[1], w[2], w[3]]))?;
    }
    Ok(())
}

/// Reads `n` bytes (a multiple of 4) from an rsbinder parcel at its position.
fn words_from_binder(parcel: &mut rsbinder::Parcel, n: usize) -> Result<Vec<u8>, ParcelError> {
    let available = parcel.data_avail();
    if n > available {
        return Err(ParcelError::Truncated {
            needed: n,
            available,
        });
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n / 4 {
        let w = parcel.read_i32().map_err(binder_read_error)?;
        out.extend_from_slice(&w.to_le_bytes());
    }
    Ok(out)
}

fn binder_read_error(code: rsbinder::StatusCode) -> ParcelError {
    match code {
        rsbinder::StatusCode::NotEnoughData => ParcelError::Truncated {
            needed: 4,
            available: 0,
        },
        other => ParcelError::Binder(other),
    }
}

/// Reads Parcel values straight from an rsbinder parcel: each value takes exactly its own
/// bytes, so what follows (e.g. a binder object) stays where it is.
#[derive(Debug)]
pub struct BinderParcelReader<'p> {
    parcel: &'p mut rsbinder::Parcel,
}

impl<'p> BinderParcelReader<'p> {
    /// A reader at the parcel's current position.
    pub fn new(parcel: &'p mut rsbinder::Parcel) -> Self {
        Self { parcel }
    }

    /// `readInt`.
    pub fn read_i32(&mut self) -> Result<i32, ParcelError> {
        self.parcel.read_i32().map_err(binder_read_error)
    }

    /// A length field as in [`ParcelReader`]: `-1` is `None`.
    fn read_len(&mut self, unit: usize) -> Result<Option<usize>, ParcelError> {
        let len = self.read_i32()?;
        if len == -1 {
            return Ok(None);
        }
        let n = usize::try_from(len).map_err(|_| ParcelError::NegativeLength(len))?;
        let available = self.parcel.data_avail();
        if n.saturating_mul(unit) > available {
            return Err(ParcelError::LengthTooLarge {
                length: len,
                available,
            });
        }
        Ok(Some(n))
    }

    /// `readString` (String16).
    pub fn read_string(&mut self) -> Result<Option<String>, ParcelError> {
        let Some(units) = self.read_len(2)? else {
            return Ok(None);
        };
        let mut bytes = Vec::with_capacity(4 + padded((units + 1) * 2));
        bytes.extend_from_slice(&(units as i32).to_le_bytes());
        bytes.extend(words_from_binder(self.parcel, padded((units + 1) * 2))?);
        ParcelReader::new(&bytes).read_string()
    }

    /// `readBundle`, lenient as [`ParcelReader::read_bundle_lenient`].
    pub fn read_bundle_lenient(&mut self) -> Result<(Bundle, Option<ParcelError>), ParcelError> {
        let length = self.read_i32()?;
        if length <= 0 {
            return if length == 0 || length == -1 {
                Ok((Bundle::new(), None))
            } else {
                Err(ParcelError::NegativeLength(length))
            };
        }
        if length % 4 != 0 {
            return Err(ParcelError::MisalignedBundle(length));
        }
        let n = length as usize;
        let available = self.parcel.data_avail();
        if n.saturating_add(4) > available {
            return Err(ParcelError::LengthTooLarge { length, available });
        }
        let mut bytes = Vec::with_capacity(8 + n);
        bytes.extend_from_slice(&length.to_le_bytes());
        bytes.extend(words_from_binder(self.parcel, n + 4)?);
        ParcelReader::new(&bytes).read_bundle_lenient()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn e2a_string_layout_hi() {
        let mut w = ParcelWriter::new();
        w.write_string(Some("hi"));
        // len 2 | 'h' 'i' | NUL + 2 bytes padding
        assert_eq!(w.as_bytes(), &[2, 0, 0, 0, b'h', 0, b'i', 0, 0, 0, 0, 0]);
        let mut w = ParcelWriter::new();
        w.write_string(Some("abc"));
        // len 3 | 'a' 'b' | 'c' NUL (no padding needed)
        assert_eq!(w.as_bytes(), &[3, 0, 0, 0, b'a', 0, b'b', 0, b'c', 0, 0, 0]);
    }

    #[test]
    fn e2a_length_prefixed_tags_are_the_android13_set() {
        assert!(tag::is_length_prefixed(tag::PARCELABLE));
        assert!(tag::is_length_prefixed(tag::MAP));
        assert!(!tag::is_length_prefixed(tag::BUNDLE));
        assert!(!tag::is_length_prefixed(tag::STRINGARRAY));
    }
}
