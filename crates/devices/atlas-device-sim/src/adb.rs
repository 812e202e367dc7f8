//! adb's device side over TCP: what `adbd` on a phone answers, so Debian's `adb` (and anything
//! else that speaks to an adb server) drives the simulator unchanged.
//!
//! A message is a 24-byte header — command, two arguments, payload length, payload checksum
//! (the byte sum), and the command's complement as a check — then the payload. The host opens
//! with `CNXN`, the device answers `CNXN` with its banner; no `AUTH` is asked on loopback. Each
//! adb command is a stream: `OPEN(host id, 0, "shell:input tap 1 2")`, answered `OKAY(our id, host
//! id)`, the output as `WRTE`s (each acknowledged by the host's `OKAY`), then `CLSE`. The banner
//! offers the `shell_v2` feature, so a host runs `adb shell CMD` as `shell,v2,raw:CMD`: the
//! output comes in packets (a byte for the stream — 1 stdout, 2 stderr, 3 the exit status —
//! and a little-endian length), and `adb shell false` exits 1 as on a phone. The plain `shell:`
//! and `exec:` services (older hosts, `exec-out`) deliver stdout and stderr together without a
//! status; `sync:` version 1 serves push and pull ([`crate::sync`]); anything else (an
//! interactive shell, port forwarding) is refused with `CLSE`.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use crate::phone::Phone;
use crate::sync::SyncSession;

/// The commands of adb's messages (their ASCII names, little-endian).
pub const CNXN: u32 = 0x4e58_4e43;
/// OPEN: a stream to a service (`shell:…`, `sync:`, `framebuffer:`).
pub const OPEN: u32 = 0x4e45_504f;
/// OKAY: a stream is ready, or took a write.
pub const OKAY: u32 = 0x5941_4b4f;
/// CLSE: a stream ends.
pub const CLSE: u32 = 0x4553_4c43;
/// WRTE: data on a stream.
pub const WRTE: u32 = 0x4554_5257;
/// The protocol version the simulator speaks (checksums still sent, for older hosts).
const VERSION: u32 = 0x0100_0000;
/// The largest payload either side sends.
const MAX_PAYLOAD: usize = 256 * 1024;
const BANNER: &[u8] =
    b"device::ro.product.name=atlas_sim;ro.product.model=Atlas_Simulator;ro.product.device=atlas_sim;features=shell_v2;\0";
/// The shell protocol's packet kinds the simulator sends.
const SHELL_STDOUT: u8 = 1;
const SHELL_STDERR: u8 = 2;
const SHELL_EXIT: u8 = 3;

/// One adb message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The command (`CNXN`, `OPEN`, …).
    pub command: u32,
    /// The first argument (the sender's stream id, a version).
    pub arg0: u32,
    /// The second argument (the receiver's stream id, a payload size).
    pub arg1: u32,
    /// The payload.
    pub data: Vec<u8>,
}

impl Message {
    fn new(command: u32, arg0: u32, arg1: u32, data: &[u8]) -> Message {
        Message {
            command,
            arg0,
            arg1,
            data: data.to_vec(),
        }
    }

    /// The message as it goes on the wire: a 24-byte header (little-endian words, the payload's
    /// checksum and the command's complement) and the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.data.len());
        let checksum: u32 = self.data.iter().map(|b| u32::from(*b)).sum();
        for word in [
            self.command,
            self.arg0,
            self.arg1,
            self.data.len() as u32,
            checksum,
            self.command ^ 0xffff_ffff,
        ] {
            out.extend(word.to_le_bytes());
        }
        out.extend(&self.data);
        out
    }

    /// Reads one message; a header whose check or length is wrong is an error (the connection
    /// is then closed: the stream cannot be trusted past it).
    pub fn read(reader: &mut impl Read) -> io::Result<Message> {
        let mut header = [0u8; 24];
        reader.read_exact(&mut header)?;
        let word = |i: usize| u32::from_le_bytes(header[i * 4..i * 4 + 4].try_into().unwrap());
        let (command, length, magic) = (word(0), word(3) as usize, word(5));
        if magic != command ^ 0xffff_ffff {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("bad message header (command {command:#x}, check {magic:#x})"),
            ));
        }
        if length > MAX_PAYLOAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a payload of {length} bytes, over {MAX_PAYLOAD}"),
            ));
        }
        let mut data = vec![0u8; length];
        reader.read_exact(&mut data)?;
        Ok(Message {
            command,
            arg0: word(1),
            arg1: word(2),
            data,
        })
    }
}

/// Accepts hosts until the listener fails; each connection on its own thread.
pub fn serve(listener: TcpListener, phone: Arc<Mutex<Phone>>) -> io::Result<()> {
    for stream in listener.incoming() {
        let stream = stream?;
        // Each answer is a few small messages (OKAY, WRTE, CLSE): sent at once, not held back
        // for the host's delayed acknowledgement (40 ms a command otherwise).
        let _ = stream.set_nodelay(true);
        let phone = phone.clone();
        std::thread::spawn(move || {
            let peer = stream
                .peer_addr()
                .map(|a| a.to_string())
                .unwrap_or_default();
            if let Err(e) = Connection::new(stream).run(&phone)
                && e.kind() != io::ErrorKind::UnexpectedEof
            {
                tracing::warn!("adb host {peer}: {e}");
            }
        });
    }
    Ok(())
}

struct Connection {
    stream: TcpStream,
    /// Messages read while waiting for an acknowledgement, handled next.
    pending: VecDeque<Message>,
    /// Open `sync:` streams by our id: the host's id and the session.
    syncs: HashMap<u32, (u32, SyncSession)>,
    next_id: u32,
    max_payload: usize,
}

impl Connection {
    fn new(stream: TcpStream) -> Connection {
        Connection {
            stream,
            pending: VecDeque::new(),
            syncs: HashMap::new(),
            next_id: 1,
            max_payload: MAX_PAYLOAD,
        }
    }

    fn send(&mut self, message: Message) -> io::Result<()> {
        self.stream.write_all(&message.encode())
    }

    fn next(&mut self) -> io::Result<Message> {
        match self.pending.pop_front() {
            Some(m) => Ok(m),
            None => Message::read(&mut self.stream),
        }
    }

    fn run(mut self, phone: &Mutex<Phone>) -> io::Result<()> {
        loop {
            let message = self.next()?;
            match message.command {
                CNXN => {
                    self.max_payload = (message.arg1 as usize).clamp(4096, MAX_PAYLOAD);
                    self.send(Message::new(CNXN, VERSION, MAX_PAYLOAD as u32, BANNER))?;
                }
                OPEN => self.open(message, phone)?,
                WRTE => self.write(message, phone)?,
                CLSE => {
                    self.syncs.remove(&message.arg1);
                }
                // The host's acknowledgements of streams already finished.
                OKAY => {}
                other => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("unexpected command {other:#x}"),
                    ));
                }
            }
        }
    }

    fn new_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        id
    }

    /// Runs the service a stream opens and sends its output.
    fn open(&mut self, message: Message, phone: &Mutex<Phone>) -> io::Result<()> {
        let host_id = message.arg0;
        let service = String::from_utf8_lossy(&message.data);
        let service = service.trim_end_matches('\0');
        if service == "sync:" {
            let id = self.new_id();
            self.syncs.insert(id, (host_id, SyncSession::default()));
            return self.send(Message::new(OKAY, id, host_id, &[]));
        }
        if service == "framebuffer:" {
            let picture = phone
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .framebuffer();
            let id = self.new_id();
            self.send(Message::new(OKAY, id, host_id, &[]))?;
            if self.write_all(id, host_id, &picture)? {
                self.send(Message::new(CLSE, id, host_id, &[]))?;
            }
            return Ok(());
        }
        let Some((command, v2)) = shell_command(service) else {
            // Not served here (an interactive shell, port forwarding...): the host reports the
            // stream as closed.
            return self.send(Message::new(CLSE, 0, host_id, &[]));
        };
        let output = phone
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .execute(command);
        let id = self.new_id();
        self.send(Message::new(OKAY, id, host_id, &[]))?;
        let written = if v2 {
            // Packets small enough that each goes in one write.
            let room = self.max_payload - 5;
            let mut packets = Vec::new();
            for (kind, data) in [
                (SHELL_STDOUT, &output.stdout),
                (SHELL_STDERR, &output.stderr),
            ] {
                packets.extend(data.chunks(room).map(|piece| shell_packet(kind, piece)));
            }
            packets.push(shell_packet(SHELL_EXIT, &[output.code]));
            self.write_packets(id, host_id, &packets)?
        } else {
            self.write_all(id, host_id, &output.merged())?
        };
        if written {
            self.send(Message::new(CLSE, id, host_id, &[]))?;
        }
        Ok(())
    }

    /// Input to a stream: a sync session's requests, answered; anything else (keys to an
    /// interactive shell, a stream already closed) is refused by closing it.
    fn write(&mut self, message: Message, phone: &Mutex<Phone>) -> io::Result<()> {
        let (host_id, id) = (message.arg0, message.arg1);
        let Some((_, mut session)) = self.syncs.remove(&id) else {
            return self.send(Message::new(CLSE, 0, host_id, &[]));
        };
        self.send(Message::new(OKAY, id, host_id, &[]))?;
        let mut answer = Vec::new();
        let open = session.feed(&message.data, phone, &mut answer);
        if !self.write_all(id, host_id, &answer)? {
            return Ok(());
        }
        if open {
            self.syncs.insert(id, (host_id, session));
            Ok(())
        } else {
            self.send(Message::new(CLSE, id, host_id, &[]))
        }
    }

    /// Writes shell packets on stream `id`, as many whole packets to a write as fit in one.
    fn write_packets(&mut self, id: u32, host_id: u32, packets: &[Vec<u8>]) -> io::Result<bool> {
        let mut batch = Vec::new();
        for packet in packets {
            if !batch.is_empty() && batch.len() + packet.len() > self.max_payload {
                if !self.write_all(id, host_id, &batch)? {
                    return Ok(false);
                }
                batch.clear();
            }
            batch.extend_from_slice(packet);
        }
        self.write_all(id, host_id, &batch)
    }

    /// Writes `bytes` on stream `id` in pieces the host accepts, each acknowledged before the
    /// next. False when the host closed the stream meanwhile (a client that stopped reading):
    /// the stream is then over, the connection is not.
    fn write_all(&mut self, id: u32, host_id: u32, bytes: &[u8]) -> io::Result<bool> {
        for piece in bytes.chunks(self.max_payload) {
            self.send(Message::new(WRTE, id, host_id, piece))?;
            if !self.await_okay(id)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Reads until the host acknowledges a write on stream `id` (true) or closes it (false),
    /// keeping other messages for later.
    fn await_okay(&mut self, id: u32) -> io::Result<bool> {
        loop {
            let message = Message::read(&mut self.stream)?;
            match message.command {
                OKAY if message.arg1 == id => return Ok(true),
                CLSE if message.arg1 == id => {
                    self.syncs.remove(&id);
                    return Ok(false);
                }
                _ => self.pending.push_back(message),
            }
        }
    }
}

/// The command a shell service runs, and whether it speaks the shell protocol (`shell,v2,…:`):
/// `shell:CMD`, `shell,v2,raw:CMD`, `exec:CMD`. None for an interactive shell (no command).
fn shell_command(service: &str) -> Option<(&str, bool)> {
    let (name, command) = service.split_once(':')?;
    let mut args = name.split(',');
    let v2 = match args.next()? {
        "shell" => args.any(|a| a == "v2"),
        "exec" => false,
        _ => return None,
    };
    Some((command, v2)).filter(|(c, _)| !c.trim().is_empty())
}

/// One packet of the shell protocol.
fn shell_packet(kind: u8, data: &[u8]) -> Vec<u8> {
    let mut packet = Vec::with_capacity(5 + data.len());
    packet.push(kind);
    packet.extend((data.len() as u32).to_le_bytes());
    packet.extend_from_slice(data);
    packet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_reads_back_as_written_and_a_bad_header_is_refused() {
        let message = Message::new(OPEN, 7, 0, b"shell:input tap 1 2\0");
        let bytes = message.encode();
        assert_eq!(&bytes[..4], b"OPEN");
        assert_eq!(Message::read(&mut &bytes[..]).unwrap(), message);
        let mut broken = bytes.clone();
        broken[20] ^= 1;
        assert!(Message::read(&mut &broken[..]).is_err());
        let mut huge = Message::new(WRTE, 1, 1, &[]).encode();
        huge[12..16].copy_from_slice(&(10u32 << 20).to_le_bytes());
        assert!(Message::read(&mut &huge[..]).is_err());
    }
}
