//! MCP over stdio: one JSON-RPC message per line in, one per line out, logs on stderr.
//!
//! A stdio connection is one client, so it is a session: `initialize` sets the revision of what
//! follows. A client that opens with a request carrying the 2026-07-28 `_meta` envelope instead
//! (no handshake) is answered in that revision, request by request.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::{
    Era, HANDSHAKE_VERSIONS, McpServer, PARSE_ERROR, error, handshake_version, meta_version,
};

/// Serves until stdin closes.
pub async fn serve_stdio(server: McpServer) -> std::io::Result<()> {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    let mut session: Option<String> = None;
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<Value>(&line) {
            Err(e) => Some(error(
                Value::Null,
                PARSE_ERROR,
                format!("not JSON: {e}"),
                None,
            )),
            Ok(message) => {
                let era = if let Some(version) = handshake_version(&message) {
                    session = Some(version.to_string());
                    Era::Handshake(version.to_string())
                } else if meta_version(&message).is_some() {
                    Era::Modern
                } else {
                    // Before any initialize, answer as the oldest revision would.
                    Era::Handshake(
                        session
                            .clone()
                            .unwrap_or_else(|| HANDSHAKE_VERSIONS[0].to_string()),
                    )
                };
                server.handle(&message, &era).await
            }
        };
        if let Some(answer) = answer {
            let mut bytes = serde_json::to_vec(&answer)?;
            bytes.push(b'\n');
            stdout.write_all(&bytes).await?;
            stdout.flush().await?;
        }
    }
    Ok(())
}
