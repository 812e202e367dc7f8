//! The client against a real HTTP server on loopback that answers like an OpenAI-compatible
//! `/v1/embeddings` endpoint (a scripted one: no model is needed to check the protocol).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use atlas_embed_openai::{OpenAiEmbedder, OpenAiEmbedderConfig};
use atlas_text::Embedder;

/// What the server saw of one request.
struct Seen {
    request_line: String,
    authorization: Option<String>,
    body: serde_json::Value,
}

/// Serves `answers` one connection each: `answer(body)` gives the status and JSON to send.
fn server(
    answers: usize,
    answer: fn(&serde_json::Value) -> (u16, String),
) -> (String, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(answers) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let (mut length, mut authorization) = (0usize, None);
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (name, value) = line.split_once(':').unwrap();
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap(),
                    "authorization" => authorization = Some(value.trim().to_string()),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let (status, json) = answer(&body);
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{json}",
                json.len()
            );
            stream.write_all(reply.as_bytes()).unwrap();
            tx.send(Seen {
                request_line: request_line.trim_end().to_string(),
                authorization,
                body,
            })
            .unwrap();
        }
    });
    (base, rx)
}

fn embedder(base_url: String) -> OpenAiEmbedder {
    OpenAiEmbedder::new(OpenAiEmbedderConfig {
        base_url,
        model: "bge-small-zh".into(),
        api_key: Some("sk-test".into()),
        threshold: 0.8,
        timeout: Duration::from_secs(5),
    })
}

/// One vector per input, `[chars, 1]`, listed in reverse order with their indices (as some
/// servers do), so the client must put them back in order.
fn vectors(body: &serde_json::Value) -> (u16, String) {
    let inputs = body["input"].as_array().unwrap();
    let data: Vec<_> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| serde_json::json!({ "object": "embedding", "index": i, "embedding": [t.as_str().unwrap().chars().count() as f32, 1.0] }))
        .collect();
    (
        200,
        serde_json::json!({ "object": "list", "data": data, "model": body["model"] }).to_string(),
    )
}

#[test]
fn sends_the_openai_request_and_returns_vectors_in_input_order() {
    let (base, seen) = server(1, vectors);
    let e = embedder(base);
    let out = e.embed(&["点外卖", "open settings now"]).unwrap();
    assert_eq!(out, vec![vec![3.0, 1.0], vec![17.0, 1.0]]);
    let request = seen.recv().unwrap();
    assert_eq!(request.request_line, "POST /v1/embeddings HTTP/1.1");
    assert_eq!(request.authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(request.body["model"], "bge-small-zh");
    assert_eq!(
        request.body["input"],
        serde_json::json!(["点外卖", "open settings now"])
    );
    assert_eq!(e.match_threshold(), 0.8);
    assert!(e.is_remote());
}

#[test]
fn server_errors_and_short_answers_are_errors_not_vectors() {
    let (base, _seen) = server(2, |body| {
        if body["input"].as_array().unwrap().len() == 1 {
            (500, r#"{"error":{"message":"model not loaded"}}"#.into())
        } else {
            (200, r#"{"data":[{"index":0,"embedding":[1.0]}]}"#.into())
        }
    });
    let e = embedder(base);
    let failed = e.embed(&["a"]).unwrap_err().to_string();
    assert!(failed.contains("500"), "{failed}");
    let short = e.embed(&["a", "b"]).unwrap_err().to_string();
    assert!(short.contains("asked for 2 vectors, got 1"), "{short}");
}

#[test]
fn an_unreachable_endpoint_is_an_error() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = embedder(format!("http://127.0.0.1:{port}/v1"));
    assert!(e.embed(&["x"]).is_err());
}
