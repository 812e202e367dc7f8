//! The simulator's adb protocol against hosts that misbehave: malformed messages, streams
//! closed mid-output, connections dropped mid-stream. Spoken over real loopback TCP, byte by
//! byte as a host would, since Debian's adb never sends such things on purpose.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atlas_device_sim::adb::{CLSE, CNXN, Message, OKAY, OPEN, WRTE};
use atlas_device_sim::{Phone, RecordedApp};

fn simulator() -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../../shared/data/droidtask-dev/user_tasks/notes");
    if !dir.join("states").is_dir() {
        eprintln!("no DroidTask folder: skipped");
        return None;
    }
    let phone = Phone::new(RecordedApp::read(&dir).unwrap(), None).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || atlas_device_sim::adb::serve(listener, Arc::new(Mutex::new(phone))));
    Some(address)
}

fn message(command: u32, arg0: u32, arg1: u32, data: &[u8]) -> Vec<u8> {
    Message {
        command,
        arg0,
        arg1,
        data: data.to_vec(),
    }
    .encode()
}

/// A host that has said CNXN and had its answer.
fn host(address: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(&message(CNXN, 0x0100_0000, 4096, b"host::\0"))
        .unwrap();
    let answer = Message::read(&mut stream).unwrap();
    assert_eq!(answer.command, CNXN);
    assert!(String::from_utf8_lossy(&answer.data).starts_with("device::"));
    stream
}

/// Whether the simulator closed the connection without a word: an end of stream, or a reset
/// when it left the rest of a bad message unread.
fn hung_up(stream: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    match stream.read_to_end(&mut rest) {
        Ok(_) => rest.is_empty(),
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    }
}

/// Runs a shell command to its end on a connected host; its output.
fn shell(stream: &mut TcpStream, local: u32, command: &str) -> Vec<u8> {
    stream
        .write_all(&message(
            OPEN,
            local,
            0,
            format!("shell:{command}\0").as_bytes(),
        ))
        .unwrap();
    let mut output = Vec::new();
    loop {
        let m = Message::read(stream).unwrap();
        assert_eq!(m.arg1, local, "{m:?}");
        match m.command {
            OKAY => {}
            WRTE => {
                output.extend(&m.data);
                stream
                    .write_all(&message(OKAY, local, m.arg0, &[]))
                    .unwrap();
            }
            CLSE => return output,
            other => panic!("unexpected {other:#x}"),
        }
    }
}

#[test]
fn malformed_messages_close_only_their_connection() {
    let Some(address) = simulator() else { return };
    // A header whose check word is wrong: the simulator hangs up on that host.
    let mut bad = host(&address);
    let mut garbage = message(OPEN, 1, 0, b"shell:echo hi\0");
    garbage[20] ^= 0xff;
    bad.write_all(&garbage).unwrap();
    assert!(hung_up(&mut bad));
    // A length beyond any payload, and bytes that are no header at all.
    let mut huge = host(&address);
    let mut header = message(WRTE, 1, 1, &[]);
    header[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    huge.write_all(&header).unwrap();
    assert!(hung_up(&mut huge));
    let mut noise = TcpStream::connect(&address).unwrap();
    noise.write_all(&[0xab; 100]).unwrap();
    noise
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert!(hung_up(&mut noise));
    // A service the simulator does not offer is refused by closing the stream.
    let mut good = host(&address);
    good.write_all(&message(OPEN, 9, 0, b"tcp:8080\0")).unwrap();
    let refused = Message::read(&mut good).unwrap();
    assert_eq!((refused.command, refused.arg1), (CLSE, 9));
    // Other hosts were never disturbed.
    assert_eq!(shell(&mut good, 3, "echo 你好"), "你好\n".as_bytes());
}

#[test]
fn a_host_that_stops_reading_mid_output_loses_only_that_stream() {
    let Some(address) = simulator() else { return };
    let mut stream = host(&address);
    // A screenshot is many 4 KiB writes: take the first, then close the stream.
    stream
        .write_all(&message(OPEN, 1, 0, b"exec:screencap -p\0"))
        .unwrap();
    let okay = Message::read(&mut stream).unwrap();
    assert_eq!(okay.command, OKAY);
    let first = Message::read(&mut stream).unwrap();
    assert_eq!(first.command, WRTE);
    assert!(first.data.starts_with(b"\x89PNG"));
    stream
        .write_all(&message(CLSE, 1, first.arg0, &[]))
        .unwrap();
    // The same connection goes on serving.
    assert_eq!(
        shell(&mut stream, 2, "wm size"),
        b"Physical size: 1080x2280\n"
    );

    // A host that vanishes mid-output: the simulator serves the next one.
    let mut gone = host(&address);
    gone.write_all(&message(OPEN, 1, 0, b"exec:screencap -p\0"))
        .unwrap();
    let _ = Message::read(&mut gone).unwrap();
    drop(gone);
    let mut next = host(&address);
    assert_eq!(shell(&mut next, 1, "echo still here"), b"still here\n");
}

#[test]
fn sync_requests_split_anywhere_are_answered_and_bad_ones_fail() {
    let Some(address) = simulator() else { return };
    let mut stream = host(&address);
    shell(&mut stream, 1, "screencap -p /sdcard/shot.png");
    stream.write_all(&message(OPEN, 2, 0, b"sync:\0")).unwrap();
    let okay = Message::read(&mut stream).unwrap();
    assert_eq!(okay.command, OKAY);
    let id = okay.arg0;
    // STAT and RECV in one request buffer, cut in three writes at awkward places.
    let mut requests = Vec::new();
    for (kind, path) in [(b"STAT", "/sdcard/shot.png"), (b"RECV", "/sdcard/shot.png")] {
        requests.extend(kind);
        requests.extend((path.len() as u32).to_le_bytes());
        requests.extend(path.as_bytes());
    }
    let mut answer = Vec::new();
    for piece in [&requests[..3], &requests[3..30], &requests[30..]] {
        stream.write_all(&message(WRTE, 2, id, piece)).unwrap();
        let (more, closed) = read_answer(&mut stream, id);
        assert!(!closed);
        answer.extend(more);
    }
    assert_eq!(&answer[..4], b"STAT");
    let mode = u32::from_le_bytes(answer[4..8].try_into().unwrap());
    let size = u32::from_le_bytes(answer[8..12].try_into().unwrap()) as usize;
    assert_eq!(mode & 0o170_000, 0o100_000, "a regular file");
    let mut png = Vec::new();
    let mut at = 16;
    while &answer[at..at + 4] == b"DATA" {
        let n = u32::from_le_bytes(answer[at + 4..at + 8].try_into().unwrap()) as usize;
        png.extend(&answer[at + 8..at + 8 + n]);
        at += 8 + n;
    }
    assert_eq!(&answer[at..at + 4], b"DONE");
    assert_eq!(png.len(), size);
    assert!(png.starts_with(b"\x89PNG"));
    // A request no version of sync has: FAIL, then the stream closes; the connection stays.
    stream
        .write_all(&message(WRTE, 2, id, b"WHAT\x00\x00\x00\x00"))
        .unwrap();
    let (fail, closed) = read_answer(&mut stream, id);
    assert!(fail.starts_with(b"FAIL") && closed, "{fail:?}");
    assert_eq!(shell(&mut stream, 3, "echo ok"), b"ok\n");
}

/// The acknowledgement of a write, then the stream's output until it pauses, and whether the
/// stream was closed (the requests' answers come in zero or more WRTEs: none while a request is
/// still partial).
fn read_answer(stream: &mut TcpStream, id: u32) -> (Vec<u8>, bool) {
    let ack = Message::read(stream).unwrap();
    assert_eq!((ack.command, ack.arg0), (OKAY, id), "{ack:?}");
    let mut answer = Vec::new();
    let mut closed = false;
    // A pause this long ends an answer that is not closed; a busy machine pauses longer
    // within one than an idle one.
    stream
        .set_read_timeout(Some(Duration::from_millis(1500)))
        .unwrap();
    while let Ok(m) = Message::read(stream) {
        if m.command == CLSE {
            closed = true;
            break;
        }
        assert_eq!(m.command, WRTE);
        answer.extend(&m.data);
        stream.write_all(&message(OKAY, 2, id, &[])).unwrap();
    }
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    (answer, closed)
}
