//! Android `Bundle` values as ACI uses them (SPEC E.2, E.2a). The Parcel codec for these types
//! lives in [`crate::parcel`].

/// One typed Bundle value. ACI itself uses String, int, boolean, double and byte[]; the rest are
/// read when a peer sends them (nested Bundles, string arrays, longs …).
#[derive(Debug, Clone, PartialEq)]
pub enum BundleValue {
    /// `null` (tag −1).
    Null,
    /// `String` (tag 0); `None` is a null string.
    String(Option<String>),
    /// `int` (tag 1).
    Int(i32),
    /// `long` (tag 6).
    Long(i64),
    /// `float` (tag 7).
    Float(f32),
    /// `double` (tag 8).
    Double(f64),
    /// `boolean` (tag 9).
    Boolean(bool),
    /// `byte[]` (tag 13); `None` is a null array.
    ByteArray(Option<Vec<u8>>),
    /// `String[]` (tag 14); `None` is a null array.
    StringArray(Option<Vec<Option<String>>>),
    /// A nested `Bundle` (tag 3).
    Bundle(Bundle),
}

/// An Android `Bundle`: string keys to typed values. Entry order is not significant on the wire
/// (readers accept any order); this type keeps insertion order so that what we write is
/// deterministic, and a repeated key replaces the earlier value as `Bundle.put*` does.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bundle {
    entries: Vec<(String, BundleValue)>,
}

impl Bundle {
    /// An empty bundle.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` (replacing an earlier value for it).
    pub fn put(&mut self, key: impl Into<String>, value: BundleValue) -> &mut Self {
        let key = key.into();
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.entries.push((key, value)),
        }
        self
    }

    /// The value for `key`.
    pub fn get(&self, key: &str) -> Option<&BundleValue> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<BundleValue> {
        let at = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(at).1)
    }

    /// Entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &BundleValue)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
