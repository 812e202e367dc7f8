//! The bytes of a binary image: what the service writes of its memory at a checkpoint so that the
//! next start-up copies it back instead of parsing JSON and rebuilding every index.
//!
//! Little-endian numbers, and texts and lists as a length followed by their items. Nothing here
//! trusts what it reads: an image sits in a folder anyone may have written to, so every read
//! checks that the bytes are there, a length is refused before anything of that size is made
//! when the rest of the image is too short to hold it, and a text must be UTF-8. A reader that
//! meets anything else says what, and the caller goes back to the JSON.

/// Why an image cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("image unreadable: {0}")]
pub struct ImageError(pub String);

impl ImageError {
    /// An image whose contents are not what they should be.
    pub fn invalid(what: impl std::fmt::Display) -> ImageError {
        ImageError(what.to_string())
    }
}

/// Writes an image.
#[derive(Debug, Default)]
pub struct ImageWriter {
    bytes: Vec<u8>,
}

impl ImageWriter {
    /// An empty image.
    pub fn new() -> ImageWriter {
        ImageWriter::default()
    }

    /// An image that goes on after `bytes` (a header of the caller's), with room for `capacity`
    /// bytes in all.
    pub fn after(mut bytes: Vec<u8>, capacity: usize) -> ImageWriter {
        bytes.reserve(capacity.saturating_sub(bytes.len()));
        ImageWriter { bytes }
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// A byte.
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    /// A 32-bit number.
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A 64-bit number.
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A double.
    pub fn f64(&mut self, v: f64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A length (of a list or a text).
    pub fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }

    /// Bytes, with their length.
    pub fn bytes(&mut self, v: &[u8]) {
        self.len(v.len());
        self.bytes.extend_from_slice(v);
    }

    /// A text, with its length.
    pub fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }

    /// Texts, with their count.
    pub fn strs<S: AsRef<str>>(&mut self, v: &[S]) {
        self.len(v.len());
        for s in v {
            self.str(s.as_ref());
        }
    }

    fn numbers<T: Copy, const N: usize>(&mut self, v: &[T], to_le: impl Fn(T) -> [u8; N]) {
        self.len(v.len());
        self.bytes.reserve(v.len() * N);
        for x in v {
            self.bytes.extend_from_slice(&to_le(*x));
        }
    }

    /// 16-bit numbers, with their count.
    pub fn u16s(&mut self, v: &[u16]) {
        self.numbers(v, u16::to_le_bytes);
    }

    /// 32-bit numbers, with their count.
    pub fn u32s(&mut self, v: &[u32]) {
        self.numbers(v, u32::to_le_bytes);
    }

    /// Floats, with their count.
    pub fn f32s(&mut self, v: &[f32]) {
        self.numbers(v, f32::to_le_bytes);
    }

    /// A value as JSON, with its length: for the few entities whose fields grow with the model
    /// (an app, its pages and intents), where serde's defaults keep an older image readable.
    pub fn json<T: serde::Serialize + ?Sized>(&mut self, v: &T) {
        let text = serde_json::to_vec(v).expect("model values serialize");
        self.bytes(&text);
    }
}

/// Reads an image, checking every step.
#[derive(Debug)]
pub struct ImageReader<'a> {
    rest: &'a [u8],
}

impl<'a> ImageReader<'a> {
    /// Reads `bytes` from the start.
    pub fn new(bytes: &'a [u8]) -> ImageReader<'a> {
        ImageReader { rest: bytes }
    }

    /// How many bytes are left to read.
    pub fn rest_len(&self) -> usize {
        self.rest.len()
    }

    /// Whether everything was read.
    pub fn is_done(&self) -> bool {
        self.rest.is_empty()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ImageError> {
        if n > self.rest.len() {
            return Err(ImageError::invalid(format!(
                "truncated: {n} bytes wanted, {} left",
                self.rest.len()
            )));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ImageError> {
        Ok(self.take(N)?.try_into().expect("took N bytes"))
    }

    /// A byte.
    pub fn u8(&mut self) -> Result<u8, ImageError> {
        Ok(self.take(1)?[0])
    }

    /// A 32-bit number.
    pub fn u32(&mut self) -> Result<u32, ImageError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// A 64-bit number.
    pub fn u64(&mut self) -> Result<u64, ImageError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A double.
    pub fn f64(&mut self) -> Result<f64, ImageError> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// A length of items at least `item_bytes` long each, refused when the rest of the image
    /// cannot hold that many (so a forged length allocates nothing).
    pub fn len(&mut self, item_bytes: usize) -> Result<usize, ImageError> {
        let n = self.u64()?;
        let fits = usize::try_from(n)
            .ok()
            .filter(|n| n.saturating_mul(item_bytes.max(1)) <= self.rest.len());
        fits.ok_or_else(|| {
            ImageError::invalid(format!(
                "a length of {n} where {} bytes are left",
                self.rest.len()
            ))
        })
    }

    /// Bytes written with their length.
    pub fn bytes(&mut self) -> Result<&'a [u8], ImageError> {
        let n = self.len(1)?;
        self.take(n)
    }

    /// A text written with its length.
    pub fn str(&mut self) -> Result<&'a str, ImageError> {
        std::str::from_utf8(self.bytes()?).map_err(ImageError::invalid)
    }

    /// Texts written with their count.
    pub fn strings(&mut self) -> Result<Vec<String>, ImageError> {
        let n = self.len(8)?;
        (0..n).map(|_| self.str().map(String::from)).collect()
    }

    fn numbers<T, const N: usize>(
        &mut self,
        from_le: impl Fn([u8; N]) -> T,
    ) -> Result<Vec<T>, ImageError> {
        let n = self.len(N)?;
        let raw = self.take(n * N)?;
        Ok(raw
            .chunks_exact(N)
            .map(|c| from_le(c.try_into().expect("N bytes")))
            .collect())
    }

    /// 16-bit numbers written with their count.
    pub fn u16s(&mut self) -> Result<Vec<u16>, ImageError> {
        self.numbers(u16::from_le_bytes)
    }

    /// 32-bit numbers written with their count.
    pub fn u32s(&mut self) -> Result<Vec<u32>, ImageError> {
        self.numbers(u32::from_le_bytes)
    }

    /// Floats written with their count.
    pub fn f32s(&mut self) -> Result<Vec<f32>, ImageError> {
        self.numbers(f32::from_le_bytes)
    }

    /// A value written as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&mut self) -> Result<T, ImageError> {
        serde_json::from_slice(self.bytes()?).map_err(ImageError::invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_is_read_back() {
        let mut w = ImageWriter::new();
        w.u8(7);
        w.u32(u32::MAX);
        w.u64(1 << 40);
        w.f64(-2.5);
        w.str("首页 Home");
        w.strs(&["a", "订单"]);
        w.u16s(&[1, 65535]);
        w.u32s(&[3, 4]);
        w.f32s(&[0.25, -1.0]);
        w.json(&vec!["x".to_string()]);
        let bytes = w.into_bytes();
        let mut r = ImageReader::new(&bytes);
        assert_eq!(r.u8().unwrap(), 7);
        assert_eq!(r.u32().unwrap(), u32::MAX);
        assert_eq!(r.u64().unwrap(), 1 << 40);
        assert_eq!(r.f64().unwrap(), -2.5);
        assert_eq!(r.str().unwrap(), "首页 Home");
        assert_eq!(r.strings().unwrap(), vec!["a", "订单"]);
        assert_eq!(r.u16s().unwrap(), vec![1, 65535]);
        assert_eq!(r.u32s().unwrap(), vec![3, 4]);
        assert_eq!(r.f32s().unwrap(), vec![0.25, -1.0]);
        assert_eq!(r.json::<Vec<String>>().unwrap(), vec!["x"]);
        assert!(r.is_done());
    }

    #[test]
    fn short_forged_or_non_utf8_bytes_are_refused_not_trusted() {
        let mut w = ImageWriter::new();
        w.str("订单列表");
        let bytes = w.into_bytes();
        for cut in 0..bytes.len() {
            assert!(
                ImageReader::new(&bytes[..cut]).str().is_err(),
                "cut at {cut}"
            );
        }
        // A length of 2^60 items is refused before anything is allocated for it.
        let mut forged = ImageWriter::new();
        forged.u64(1 << 60);
        assert!(ImageReader::new(&forged.into_bytes()).u32s().is_err());
        // Half a character.
        let mut w = ImageWriter::new();
        w.bytes(&"订".as_bytes()[..2]);
        assert!(ImageReader::new(&w.into_bytes()).str().is_err());
    }
}
