//! `atlas agent`: the phone agent's commands.

use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Subcommand;

#[derive(Subcommand)]
pub enum AgentCommand {
    /// Read a model's reply on standard input and print its first well-formed action as JSON in
    /// seed 002's dict form (`{"_metadata":"do","action":"Tap","element":[500,300]}`); when none
    /// is, print `{"error":{"code":"unparseable","message":…}}` and exit 1.
    Parse,
}

/// The longest reply read: far beyond any model's answer, and a bound on what a pipe can make
/// the parser hold.
const MAX_REPLY: u64 = 1 << 20;

pub fn run(command: AgentCommand) -> Result<ExitCode> {
    match command {
        AgentCommand::Parse => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .take(MAX_REPLY + 1)
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
            let answer = if bytes.len() as u64 > MAX_REPLY {
                Err(format!("the reply is over {MAX_REPLY} bytes"))
            } else {
                let reply = String::from_utf8_lossy(&bytes);
                atlas_action::parse_reply(&reply).map_err(|e| e.0)
            };
            match answer {
                Ok(action) => {
                    println!("{}", action.to_dict());
                    Ok(ExitCode::SUCCESS)
                }
                Err(message) => {
                    println!(
                        "{}",
                        serde_json::json!({"error": {"code": "unparseable", "message": message}})
                    );
                    Ok(ExitCode::FAILURE)
                }
            }
        }
    }
}
