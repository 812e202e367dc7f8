//! Helpers the end-to-end test binaries share.

use std::path::Path;
use std::process::Command;

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `atlas fsck` on a folder: whether it is clean, and what it said.
pub fn fsck(data: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["fsck", "--data"])
        .arg(data)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}
