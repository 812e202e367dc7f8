//! The client against a real HTTP server on loopback that answers as endpoints do: a failure
//! first, then a streamed answer; a refused key; an unknown model.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atlas_llm::{ModelConfig, ModelError, complete};
use serde_json::json;

/// Serves each connection the next of `answers` (status line and headers and body as sent);
/// counts the requests.
fn server(answers: Vec<String>) -> (String, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let served = Arc::new(Mutex::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for (stream, answer) in listener.incoming().zip(answers) {
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
            *count.lock().unwrap() += 1;
            stream.write_all(answer.as_bytes()).unwrap();
        }
    });
    (url, served)
}

fn answer(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn config(url: &str) -> ModelConfig {
    let mut config = ModelConfig::new(url, "autoglm-phone-9b", Some("k".into()));
    config.backoff = Duration::from_millis(10);
    config
}

#[test]
fn a_transient_failure_is_retried_and_a_stream_is_assembled_with_its_costs() {
    let chunks = [
        json!({"choices": [{"delta": {"content": "<answer>do(action=\"Tap\", "}}]}),
        json!({"choices": [{"delta": {"content": "element=[500,300])</answer>"}}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 1234, "completion_tokens": 17}}),
    ];
    let stream: String = chunks
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .chain(["data: [DONE]\n\n".to_string()])
        .collect();
    let (url, served) = server(vec![
        answer("503 Service Unavailable", "text/plain", "overloaded"),
        answer("200 OK", "text/event-stream", &stream),
    ]);
    let mut pieces = Vec::new();
    let reply = complete(
        &config(&url),
        &json!({"messages": [], "stream": true}),
        &mut |t| pieces.push(t.to_string()),
    )
    .unwrap();
    assert_eq!(
        reply.content,
        "<answer>do(action=\"Tap\", element=[500,300])</answer>"
    );
    assert_eq!(pieces.len(), 2);
    assert_eq!(
        (reply.prompt_tokens, reply.completion_tokens),
        (Some(1234), Some(17))
    );
    assert_eq!(reply.attempts, 2);
    assert!(reply.first_token_ms > 0.0 && reply.first_token_ms <= reply.total_ms);
    assert_eq!(*served.lock().unwrap(), 2);
}

#[test]
fn a_wrong_key_or_model_fails_at_once_saying_which() {
    let (url, served) = server(vec![
        answer(
            "401 Unauthorized",
            "application/json",
            r#"{"error":"bad key"}"#,
        ),
        answer(
            "404 Not Found",
            "application/json",
            r#"{"error":"no model x"}"#,
        ),
    ]);
    let body = json!({"messages": []});
    let e = complete(&config(&url), &body, &mut |_| {}).unwrap_err();
    assert!(
        matches!(e, ModelError::Unauthorized { status: 401, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("--model-key"));
    let e = complete(&config(&url), &body, &mut |_| {}).unwrap_err();
    assert!(matches!(e, ModelError::NotFound { status: 404, .. }), "{e}");
    assert_eq!(*served.lock().unwrap(), 2, "neither was retried");
}

#[test]
fn an_endpoint_that_keeps_failing_gives_up_after_the_retries() {
    let (url, served) = server(vec![
        answer(
            "429 Too Many Requests",
            "text/plain",
            "slow down"
        );
        4
    ]);
    let mut config = config(&url);
    config.retries = 2;
    let e = complete(&config, &json!({"messages": []}), &mut |_| {}).unwrap_err();
    assert!(
        matches!(e, ModelError::Unavailable { attempts: 3, .. }),
        "{e}"
    );
    assert_eq!(*served.lock().unwrap(), 3);
    // Nobody listening at all is transient too, and ends the same way.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    config.base_url = address;
    let e = complete(&config, &json!({"messages": []}), &mut |_| {}).unwrap_err();
    assert!(matches!(e, ModelError::Unavailable { .. }), "{e}");
}
