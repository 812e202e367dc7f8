//! adb's file sync service (`sync:`, version 1): what `adb pull` and `adb push` speak inside
//! one stream, so an agent that saves a screenshot on the phone and pulls it (as Open-AutoGLM
//! does) works unchanged.
//!
//! Requests are an id, a little-endian length and that many bytes: `STAT`/`LIST`/`RECV`/`SEND`
//! name a path, `QUIT` ends the session. `RECV` is answered by `DATA` chunks and `DONE`; `SEND`
//! (path `,mode`) is followed by the host's `DATA` chunks and a `DONE` carrying the time, and
//! answered `OKAY` or `FAIL`. The stream's writes may cut requests anywhere, so input is
//! buffered until a request is whole.

use std::sync::Mutex;

use crate::phone::Phone;

/// The largest chunk either side may send in one `DATA`.
const MAX_CHUNK: usize = 64 * 1024;
/// The longest path a request may name (Android's limit).
const MAX_PATH: usize = 1024;
/// The largest file a host may push into the simulator's memory.
pub const MAX_FILE: usize = 64 * 1024 * 1024;

const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;

/// One sync session's state.
#[derive(Default)]
pub struct SyncSession {
    input: Vec<u8>,
    upload: Option<Upload>,
}

struct Upload {
    path: String,
    data: Vec<u8>,
}

impl SyncSession {
    /// Takes bytes the host wrote; appends the answers to `out`. False when the session is over
    /// (`QUIT`, or a request that breaks the protocol, answered `FAIL`): the stream is then closed.
    pub fn feed(&mut self, bytes: &[u8], phone: &Mutex<Phone>, out: &mut Vec<u8>) -> bool {
        self.input.extend_from_slice(bytes);
        let mut used = 0;
        let open = loop {
            let rest = &self.input[used..];
            if rest.len() < 8 {
                break true;
            }
            let id: [u8; 4] = rest[..4].try_into().expect("4 bytes");
            let length = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes")) as usize;
            // DONE of an upload carries the file's time, not a length of bytes to follow.
            let body = if self.upload.is_some() && &id == b"DONE" {
                0
            } else {
                length
            };
            let limit = if &id == b"DATA" { MAX_CHUNK } else { MAX_PATH };
            if body > limit {
                fail(out, &format!("a {} request of {body} bytes", ascii(&id)));
                break false;
            }
            if rest.len() < 8 + body {
                break true;
            }
            let payload = rest[8..8 + body].to_vec();
            used += 8 + body;
            if !self.request(&id, payload, phone, out) {
                break false;
            }
        };
        self.input.drain(..used);
        open
    }

    fn request(
        &mut self,
        id: &[u8; 4],
        payload: Vec<u8>,
        phone: &Mutex<Phone>,
        out: &mut Vec<u8>,
    ) -> bool {
        let phone = || phone.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(upload) = &mut self.upload {
            return match id {
                b"DATA" if upload.data.len() + payload.len() > MAX_FILE => {
                    fail(out, &format!("{}: over {MAX_FILE} bytes", upload.path));
                    false
                }
                // Checked as the bytes come, so a full phone holds no upload in memory either.
                b"DATA" if upload.data.len() + payload.len() > phone().free_bytes() => {
                    fail(out, &format!("{}: no space left on the phone", upload.path));
                    false
                }
                b"DATA" => {
                    upload.data.extend_from_slice(&payload);
                    true
                }
                b"DONE" => {
                    let Upload { path, data } = self.upload.take().expect("an upload");
                    if !phone().push_file(&path, data) {
                        fail(out, &format!("{path}: no space left on the phone"));
                        return false;
                    }
                    frame(out, b"OKAY", 0);
                    true
                }
                other => {
                    fail(out, &format!("{} inside an upload", ascii(other)));
                    false
                }
            };
        }
        let Ok(path) = String::from_utf8(payload) else {
            fail(out, "a path that is not UTF-8");
            return false;
        };
        match id {
            b"STAT" => {
                let phone = phone();
                let (mode, size) = match (phone.is_dir(&path), phone.file(&path)) {
                    (true, _) => (S_IFDIR | 0o771, 4096),
                    (false, Some(bytes)) => (S_IFREG | 0o660, bytes.len() as u32),
                    (false, None) => (0, 0),
                };
                out.extend(b"STAT");
                for word in [mode, size, if mode == 0 { 0 } else { phone.booted_at() }] {
                    out.extend(word.to_le_bytes());
                }
                true
            }
            b"LIST" => {
                let phone = phone();
                for (name, size) in phone.list(&path) {
                    out.extend(b"DENT");
                    for word in [
                        S_IFREG | 0o660,
                        size as u32,
                        phone.booted_at(),
                        name.len() as u32,
                    ] {
                        out.extend(word.to_le_bytes());
                    }
                    out.extend(name.as_bytes());
                }
                out.extend(b"DONE");
                out.extend([0u8; 16]);
                true
            }
            b"RECV" => match phone().pull_file(&path) {
                Some(bytes) => {
                    for chunk in bytes.chunks(MAX_CHUNK) {
                        frame(out, b"DATA", chunk.len() as u32);
                        out.extend(chunk);
                    }
                    frame(out, b"DONE", 0);
                    true
                }
                None => {
                    fail(out, &format!("remote object '{path}' does not exist"));
                    true
                }
            },
            b"SEND" => {
                // "path,mode": the mode is Android's business, the simulator keeps bytes only.
                let path = path.rsplit_once(',').map_or(path.as_str(), |(p, _)| p);
                self.upload = Some(Upload {
                    path: path.to_string(),
                    data: Vec::new(),
                });
                true
            }
            b"QUIT" => false,
            other => {
                fail(out, &format!("unknown sync request {}", ascii(other)));
                false
            }
        }
    }
}

fn frame(out: &mut Vec<u8>, id: &[u8; 4], value: u32) {
    out.extend(id);
    out.extend(value.to_le_bytes());
}

fn fail(out: &mut Vec<u8>, message: &str) {
    frame(out, b"FAIL", message.len() as u32);
    out.extend(message.as_bytes());
}

fn ascii(id: &[u8; 4]) -> String {
    id.iter()
        .map(|b| {
            if b.is_ascii_graphic() {
                *b as char
            } else {
                '?'
            }
        })
        .collect()
}
