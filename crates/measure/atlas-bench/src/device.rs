//! The simulated phone's speed: a screenshot rendered at 1080×2400, and actions per second
//! through each way an agent reaches it — the phone in-process, adb's protocol spoken over TCP
//! directly, Debian's `adb` program, and Atlas's ADB backend (which runs that program).
//!
//! References, measured in the same run: for the render, zlib-compressing a blank frame of the
//! same size (the least any PNG of it costs); for actions, a shell command that does nothing
//! (`true`, which prints nothing, as a tap) by the same path, so the ratio shows what the simulator adds to the transport.

use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use atlas_device::{Device, Point};
use atlas_device_sim::adb::{CLSE, CNXN, Message, OKAY, OPEN, WRTE};
use atlas_device_sim::{Phone, RecordedApp};
use atlas_model::{Action, App, Page, Transition, Widget};
use atlas_store::AppData;
use serde::Serialize;

use crate::Percentiles;

/// What `atlas bench device` measured: screenshots rendered and taps sent by each path, against
/// references.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReport {
    /// The screen's width in pixels.
    pub width: u32,
    /// The screen's height in pixels.
    pub height: u32,
    /// Views on the rendered screen, and whether a CJK font wrote their text.
    pub views: usize,
    /// Whether a CJK font wrote the screen's text.
    pub font: bool,
    /// Rendering one screenshot (PNG), in milliseconds.
    pub render_ms: Percentiles,
    /// Encoding a blank PNG of the same size: the reference.
    pub reference_blank_png_ms: Percentiles,
    /// Taps per second by each path (adb, HTTP…).
    pub paths: Vec<ActionRate>,
}

/// Taps per second by one path, against a no-op command by the same path.
#[derive(Debug, Clone, Serialize)]
pub struct ActionRate {
    /// The path the taps took.
    pub path: String,
    /// Taps sent.
    pub taps: usize,
    /// Taps per second.
    pub taps_per_second: f64,
    /// No-op commands per second by the same path: the reference.
    pub reference_noops_per_second: f64,
}

/// A screen as busy as a real app's: a title and `rows` widgets in Chinese and English, half of
/// them buttons that lead somewhere.
fn busy_app(rows: usize) -> AppData {
    let now = "2026-11-23T00:00:00Z".to_string();
    let page = |id: &str, name: &str, widgets: Vec<Widget>| Page {
        page_id: id.into(),
        widgets,
        created_at: now.clone(),
        updated_at: now.clone(),
        ..Page::named("com.example.bench", name)
    };
    let widgets: Vec<Widget> = (0..rows)
        .map(|i| Widget {
            id: format!("row_{i}"),
            text: format!("第{i}行 Row {i} 外卖 美食 订单"),
            widget_type: if i % 2 == 0 { "button" } else { "text" }.into(),
            ..Widget::default()
        })
        .collect();
    let transitions = (0..rows)
        .step_by(2)
        .map(|i| Transition {
            transition_id: format!("t{i}"),
            app_id: "com.example.bench".into(),
            from_page: "home".into(),
            to_page: "detail".into(),
            action: Action {
                action_type: "click".into(),
                widget_id: format!("row_{i}"),
                ..Action::default()
            },
            success_count: 1,
            fail_count: 0,
            latency_total_ms: 0.0,
            latency_samples: 0,
            last_failure_reason: String::new(),
            created_at: now.clone(),
            updated_at: now.clone(),
            ..Default::default()
        })
        .collect();
    AppData {
        app: App {
            app_id: "com.example.bench".into(),
            home_page: Some("home".into()),
            created_at: now.clone(),
            updated_at: now.clone(),
            ..Default::default()
        },
        pages: vec![
            page("home", "首页 Home", widgets),
            page("detail", "详情", Vec::new()),
        ],
        intents: Vec::new(),
        transitions,
        traces: Vec::new(),
    }
}

fn timed(runs: usize, mut f: impl FnMut()) -> Percentiles {
    let mut samples: Vec<u64> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed().as_nanos() as u64
        })
        .collect();
    Percentiles::from_nanos(&mut samples)
}

/// Whole operations per second over `runs` calls, after a tenth as many untimed (connections
/// and caches warm, so the order of measurements does not matter).
fn rate(runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    for _ in 0..runs.div_ceil(10) {
        f()?;
    }
    let started = Instant::now();
    for _ in 0..runs {
        f()?;
    }
    Ok(runs as f64 / started.elapsed().as_secs_f64())
}

/// Runs the benchmark: `renders` screenshots, `taps` taps per path.
pub fn run(renders: usize, taps: usize) -> Result<DeviceReport> {
    let app = RecordedApp::from_graph(&busy_app(12)).map_err(anyhow::Error::msg)?;
    let views = app.screens["home"].views.len();
    let mut phone = Phone::new(app, None).map_err(anyhow::Error::msg)?;
    let (width, height) = phone.screen_size();
    let font = atlas_device_sim::render::Glyphs::find().is_some();
    let render_ms = timed(renders, || {
        std::hint::black_box(phone.screenshot());
    });
    let blank = vec![255u8; width as usize * height as usize * 3 + height as usize];
    let reference = timed(renders, || {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&blank).expect("in memory");
        std::hint::black_box(z.finish().expect("in memory"));
    });
    let ms = |p: Percentiles| Percentiles {
        p50_us: p.p50_us / 1000.0,
        p99_us: p.p99_us / 1000.0,
        mean_us: p.mean_us / 1000.0,
    };

    // The title is tapped: a tap that changes nothing, so every tap does the same work.
    let (x, y) = (540, 150);
    let tap = format!("input tap {x} {y}");
    let mut paths = Vec::new();
    paths.push(ActionRate {
        path: "in-process (Phone::run)".into(),
        taps,
        taps_per_second: rate(taps * 20, || {
            phone.run(&tap);
            Ok(())
        })?,
        reference_noops_per_second: rate(taps * 20, || {
            phone.run("true");
            Ok(())
        })?,
    });
    let phone = Arc::new(Mutex::new(phone));
    let in_process = atlas_device_sim::device::in_process(phone.clone(), "bench");
    in_process.tap(Point { x, y })?; // the screen size, asked once
    paths.push(ActionRate {
        path: "Atlas's ADB backend in-process (Device::tap, no adb)".into(),
        taps,
        taps_per_second: rate(taps * 20, || Ok(in_process.tap(Point { x, y })?))?,
        reference_noops_per_second: rate(taps * 20, || {
            phone.lock().unwrap_or_else(|e| e.into_inner()).run("true");
            Ok(())
        })?,
    });
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let serial = listener.local_addr()?.to_string();
    {
        let phone = phone.clone();
        std::thread::spawn(move || atlas_device_sim::adb::serve(listener, phone));
    }
    let mut host = RawHost::connect(&serial)?;
    paths.push(ActionRate {
        path: "adb protocol over TCP".into(),
        taps,
        taps_per_second: rate(taps * 5, || host.shell(&tap))?,
        reference_noops_per_second: rate(taps * 5, || host.shell("true"))?,
    });
    if adb_installed() {
        let adb = |args: &[&str]| -> Result<()> {
            let out = Command::new("adb").args(args).output()?;
            if !out.status.success() {
                bail!("adb {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            }
            Ok(())
        };
        adb(&["connect", &serial])?;
        wait_online(&serial)?;
        let (xs, ys) = (x.to_string(), y.to_string());
        paths.push(ActionRate {
            path: "adb program (adb -s SERIAL shell input tap)".into(),
            taps,
            taps_per_second: rate(taps, || {
                adb(&["-s", &serial, "shell", "input", "tap", &xs, &ys])
            })?,
            reference_noops_per_second: rate(taps, || adb(&["-s", &serial, "shell", "true"]))?,
        });
        let device = atlas_device_adb::Adb::with_program("adb".into(), Some(serial.clone()));
        device.tap(Point { x, y })?; // the screen size, asked once
        paths.push(ActionRate {
            path: "Atlas's ADB backend (Device::tap)".into(),
            taps,
            taps_per_second: rate(taps, || Ok(device.tap(Point { x, y })?))?,
            reference_noops_per_second: rate(taps, || adb(&["-s", &serial, "shell", "true"]))?,
        });
        let _ = adb(&["disconnect", &serial]);
    }
    Ok(DeviceReport {
        width,
        height,
        views,
        font,
        render_ms: ms(render_ms),
        reference_blank_png_ms: ms(reference),
        paths,
    })
}

fn adb_installed() -> bool {
    Command::new("adb")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn wait_online(serial: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = Command::new("adb").arg("devices").output()?;
        if String::from_utf8_lossy(&out.stdout).contains(&format!("{serial}\tdevice")) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the simulator at {serial} never came online in adb");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A minimal adb host: one connection, one shell stream at a time.
struct RawHost {
    stream: TcpStream,
    next: u32,
}

impl RawHost {
    fn connect(address: &str) -> Result<RawHost> {
        let mut stream = TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        send(&mut stream, CNXN, 0x0100_0000, 256 * 1024, b"host::\0")?;
        let answer = Message::read(&mut stream)?;
        if answer.command != CNXN {
            bail!("the simulator answered {:#x} to CNXN", answer.command);
        }
        Ok(RawHost { stream, next: 1 })
    }

    /// Runs a shell command and reads its output to the stream's close.
    fn shell(&mut self, command: &str) -> Result<()> {
        let local = self.next;
        self.next += 1;
        let service = format!("shell:{command}\0");
        send(&mut self.stream, OPEN, local, 0, service.as_bytes())?;
        loop {
            let m = Message::read(&mut self.stream).context("reading the simulator's answer")?;
            match m.command {
                OKAY => {}
                WRTE => send(&mut self.stream, OKAY, local, m.arg0, &[])?,
                CLSE => return Ok(()),
                other => bail!("unexpected {other:#x}"),
            }
        }
    }
}

fn send(stream: &mut TcpStream, command: u32, arg0: u32, arg1: u32, data: &[u8]) -> Result<()> {
    let message = Message {
        command,
        arg0,
        arg1,
        data: data.to_vec(),
    };
    stream.write_all(&message.encode())?;
    Ok(())
}
