//! The simulated phone as a [`Device`] in the same process: Atlas's ADB backend with a
//! [`Transport`] that hands each adb command to the [`Phone`] instead of the `adb` program. The
//! backend's code is the one that drives real phones; only the wire is skipped — for
//! evaluations that run hundreds of tasks, and for machines without adb. The wire itself is
//! `adb.rs`, tested with Debian's adb.

use std::sync::{Arc, Mutex};

use atlas_device::DeviceError;
use atlas_device_adb::{Adb, Transport};

use crate::phone::Phone;

/// Adb commands run on a simulated phone in this process.
struct InProcess {
    phone: Arc<Mutex<Phone>>,
    name: String,
}

impl Transport for InProcess {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn run(&self, args: &[&str]) -> Result<Vec<u8>, DeviceError> {
        let command = match args {
            ["shell" | "exec-out", rest @ ..] if !rest.is_empty() => rest
                .iter()
                .map(|w| {
                    if w.contains(char::is_whitespace) {
                        format!("'{w}'")
                    } else {
                        w.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
            _ => {
                return Err(DeviceError::Command {
                    device: self.name.clone(),
                    command: format!("adb {}", args.join(" ")),
                    message: "the simulator answers shell and exec-out commands only".into(),
                });
            }
        };
        Ok(self
            .phone
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .run(&command))
    }
}

/// The phone as a device, named `name` in messages (the adb server may serve it meanwhile).
pub fn in_process(phone: Arc<Mutex<Phone>>, name: &str) -> Adb {
    Adb::with_transport(Box::new(InProcess {
        phone,
        name: name.to_string(),
    }))
}
