//! How the journal writes records: one frame per atomic append, `[length u32][CRC-32 u32]
//! [payload]`, the payload a list of entries — a report's counters ([`Record::Added`]) as a
//! few numbers, any other record as its JSON.
//!
//! Key design decision: **binary where the volume is, JSON where the shapes are.** A report is
//! the one write that comes by the hundred thousand, and it changes three numbers: encoding
//! those as numbers (about 120 bytes with its ids, no escaping, no formatting of floats or
//! times) is what lets the journal keep up. Pages, intents and sessions are rare and many-shaped;
//! their JSON keeps the journal readable with a hex dump and follows the model's serde without
//! a second encoding to keep in step. The checksum tells a frame torn by a crash (never
//! acknowledged) from a whole one; a zero length is the zero-filled rest of the segment.

use atlas_model::image::{ImageError, ImageReader, ImageWriter};
use atlas_store::{Added, Counts, Record};

const JSON: u8 = 1;
const ADDED: u8 = 2;
/// Bytes before a frame's payload: its length and its checksum.
pub(crate) const FRAME_HEAD: usize = 8;

/// Why records cannot be written as a frame.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FrameError {
    /// A record that is not JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A frame of no bytes, or of more than a frame's length holds.
    #[error("a journal frame of {0} bytes")]
    Size(usize),
}

/// `records` as one frame.
pub(crate) fn frame(records: &[Record]) -> Result<Vec<u8>, FrameError> {
    // The head is filled in once the payload is written, so the payload is never copied.
    let mut w = ImageWriter::after(vec![0; FRAME_HEAD], 160);
    for record in records {
        match record {
            Record::Added(a) => {
                w.u8(ADDED);
                w.str(&a.app_id);
                w.str(&a.transition_id);
                w.u64(a.added.success);
                w.u64(a.added.fail);
                w.f64(a.added.latency_total_ms);
                w.u64(a.added.latency_samples);
                w.u64(a.at as u64);
                match &a.reason {
                    Some(reason) => {
                        w.u8(1);
                        w.str(reason);
                    }
                    None => w.u8(0),
                }
            }
            other => {
                w.u8(JSON);
                w.bytes(&serde_json::to_vec(other)?);
            }
        }
    }
    let mut bytes = w.into_bytes();
    let payload = bytes.len() - FRAME_HEAD;
    let length = u32::try_from(payload)
        .ok()
        .filter(|n| *n > 0)
        .ok_or(FrameError::Size(payload))?;
    let checksum = crc32fast::hash(&bytes[FRAME_HEAD..]);
    bytes[..4].copy_from_slice(&length.to_le_bytes());
    bytes[4..FRAME_HEAD].copy_from_slice(&checksum.to_le_bytes());
    Ok(bytes)
}

/// Whether `byte` begins an entry (a frame's payload starts with one).
pub(crate) fn is_tag(byte: u8) -> bool {
    byte == JSON || byte == ADDED
}

/// A frame's head: the payload's length (0: no frame here) and its checksum.
pub(crate) fn head(bytes: [u8; FRAME_HEAD]) -> (u32, u32) {
    let length = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
    let checksum = u32::from_le_bytes(bytes[4..].try_into().expect("4 bytes"));
    (length, checksum)
}

/// The records of a frame's payload, once its checksum matched.
pub(crate) fn records(payload: &[u8], checksum: u32) -> Result<Vec<Record>, ImageError> {
    if crc32fast::hash(payload) != checksum {
        return Err(ImageError::invalid("checksum mismatch (a torn write)"));
    }
    let mut r = ImageReader::new(payload);
    let mut records = Vec::new();
    while !r.is_done() {
        records.push(match r.u8()? {
            ADDED => {
                let app_id = r.str()?.to_string();
                let transition_id = r.str()?.to_string();
                let added = Counts {
                    success: r.u64()?,
                    fail: r.u64()?,
                    latency_total_ms: r.f64()?,
                    latency_samples: r.u64()?,
                };
                let at = r.u64()? as i64;
                let reason = match r.u8()? {
                    0 => None,
                    _ => Some(r.str()?.to_string()),
                };
                Record::Added(Added {
                    app_id,
                    transition_id,
                    added,
                    reason,
                    at,
                })
            }
            JSON => serde_json::from_slice(r.bytes()?).map_err(ImageError::invalid)?,
            other => return Err(ImageError::invalid(format!("entry kind {other}"))),
        });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use atlas_model::App;

    #[test]
    fn frames_read_back_and_refuse_damage() {
        let written = vec![
            Record::App(App {
                app_id: "应用.a".into(),
                home_page: None,
                created_at: String::new(),
                updated_at: String::new(),
                ..Default::default()
            }),
            Record::Added(Added {
                app_id: "应用.a".into(),
                transition_id: "t1".into(),
                added: Counts {
                    success: 1,
                    fail: 0,
                    latency_total_ms: 250.5,
                    latency_samples: 1,
                },
                reason: Some("超时".into()),
                at: 1_800_000_000,
            }),
        ];
        let bytes = frame(&written).unwrap();
        let (length, checksum) = head(bytes[..FRAME_HEAD].try_into().unwrap());
        assert_eq!(length as usize, bytes.len() - FRAME_HEAD);
        assert_eq!(records(&bytes[FRAME_HEAD..], checksum).unwrap(), written);
        for at in FRAME_HEAD..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x20;
            assert!(
                records(&damaged[FRAME_HEAD..], checksum).is_err(),
                "byte {at}"
            );
        }
    }
}
