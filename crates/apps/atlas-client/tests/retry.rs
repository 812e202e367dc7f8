//! A call refused for now (503 with `Retry-After`) is tried again, a bounded number of times,
//! against a real HTTP server on loopback that answers from a script.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use atlas_api::ToolCaller;
use atlas_client::HttpCaller;
use serde_json::json;

/// A server answering its connections in turn with `answers` (the last one from then on);
/// returns its base URL and how many requests it took.
fn scripted(answers: Vec<&'static str>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let taken = Arc::new(AtomicUsize::new(0));
    let counter = taken.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let answer = answers[n.min(answers.len() - 1)];
            stream.write_all(answer.as_bytes()).unwrap();
        }
    });
    (base, taken)
}

/// An HTTP answer: `status`, `Retry-After` when given, and a JSON body.
fn answer(status: &str, retry_after: Option<u64>, body: &str) -> &'static str {
    let hint = retry_after.map_or(String::new(), |s| format!("retry-after: {s}\r\n"));
    let text = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{hint}connection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    Box::leak(text.into_boxed_str())
}

const REFUSED: &str =
    r#"{"success":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"disk full"}}"#;

fn full() -> &'static str {
    answer("503 Service Unavailable", Some(1), REFUSED)
}

fn done() -> &'static str {
    answer("200 OK", None, r#"{"success":true}"#)
}

#[test]
fn a_refusal_for_now_is_tried_again_after_the_time_it_asks() {
    let (base, taken) = scripted(vec![full(), done()]);
    let started = Instant::now();
    let answer = HttpCaller::new(&base, None).call("report_transition", json!({}));
    assert_eq!(answer.unwrap()["success"], true);
    assert_eq!(taken.load(Ordering::SeqCst), 2);
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[test]
fn a_refusal_that_lasts_is_answered_after_two_more_tries() {
    let (base, taken) = scripted(vec![full()]);
    let refused = HttpCaller::new(&base, None)
        .call("report_transition", json!({}))
        .unwrap_err();
    assert_eq!(refused.code, "SERVICE_UNAVAILABLE");
    assert_eq!(taken.load(Ordering::SeqCst), 1 + atlas_client::RETRIES);
}

#[test]
fn a_503_without_retry_after_is_not_tried_again() {
    let (base, taken) = scripted(vec![
        answer("503 Service Unavailable", None, REFUSED),
        done(),
    ]);
    assert!(HttpCaller::new(&base, None).call("x", json!({})).is_err());
    assert_eq!(taken.load(Ordering::SeqCst), 1);
}
