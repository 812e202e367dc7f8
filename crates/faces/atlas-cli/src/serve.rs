//! `atlas serve`, `atlas mcp` and `atlas model-sim`: the long-running faces.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::args::*;
use crate::stop::Stop;
use atlas_wiring::Services;

/// `atlas serve`'s arguments.
#[derive(Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) services: ServiceArgs,
    #[arg(long, env = "ATLAS_ADDR", default_value = "127.0.0.1:7700")]
    pub(crate) addr: String,
    /// Require `Authorization: Bearer TOKEN` on every route.
    #[arg(long, env = "ATLAS_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
    /// The OpenAI-compatible endpoint the chat (/chat, POST /api/v1/chat) calls, e.g.
    /// http://127.0.0.1:4000/v1 for LiteLLM, or an `atlas model-sim`.
    #[arg(long, env = "ATLAS_LLM_URL")]
    pub(crate) llm_url: Option<String>,
    #[arg(long, env = "ATLAS_LLM_MODEL", default_value = "gpt-4o-mini")]
    pub(crate) llm_model: String,
    #[arg(long, env = "ATLAS_LLM_KEY", hide_env_values = true)]
    pub(crate) llm_key: Option<String>,
    /// An origin (`https://dash.example.com`, or `*`) whose web pages may change things
    /// (POST, PUT, DELETE); pages of this server and of this machine always may. Repeatable.
    #[arg(
        long = "allow-origin",
        env = "ATLAS_ALLOW_ORIGIN",
        value_delimiter = ','
    )]
    pub(crate) allow_origins: Vec<String>,
    /// A host name the server answers to besides `localhost` and IP addresses (a name in
    /// front of it, such as a proxy's). Repeatable.
    #[arg(long = "allow-host", env = "ATLAS_ALLOW_HOST", value_delimiter = ',')]
    pub(crate) allow_hosts: Vec<String>,
    /// Connections served at once (fewer if the process's file descriptors would not last);
    /// past it a connection is answered 503, or its health on `/healthz`, and closed.
    #[arg(long, env = "ATLAS_MAX_CONNECTIONS", default_value_t = atlas_server::DEFAULT_MAX_CONNECTIONS)]
    pub(crate) max_connections: usize,
}

/// How long requests still running after SIGTERM may take before the server stops anyway.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// `atlas model-sim`'s arguments.
#[derive(Args)]
pub(crate) struct ModelSimArgs {
    /// The script (JSON; the format is in docs/business-graph.md).
    #[arg(required_unless_present = "droidtask", conflicts_with = "droidtask")]
    script: Option<PathBuf>,
    /// Play DroidTask's ideal model instead: it recognises the recorded screen in each
    /// screenshot and answers the demonstrated action (DIR: DroidTask's folder, its
    /// `user_tasks`, or one recording).
    #[arg(long, value_name = "DIR")]
    droidtask: Option<PathBuf>,
    /// With --droidtask: wait this long before each answer, as a hosted model would.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// With --droidtask: play the apps' seeded update, as `atlas device sim --update SEED` does
    /// (the same seed, the same update).
    #[arg(long, value_name = "SEED", requires = "droidtask")]
    update: Option<u64>,
    /// With --droidtask: err as `atlas eval agent --mistakes P --seed S` does.
    #[command(flatten)]
    mistakes: crate::args::MistakeArgs,
    #[arg(long, default_value = "127.0.0.1:7701")]
    addr: String,
}

pub(crate) async fn model_sim(args: ModelSimArgs) -> Result<ExitCode> {
    let router = match (&args.script, &args.droidtask) {
        (_, Some(dir)) => {
            let mut server = atlas_eval::ideal_server::IdealServer::read(
                dir,
                Duration::from_millis(args.delay_ms),
            )
            .map_err(|e| anyhow::anyhow!(e))?;
            if let Some(seed) = args.update {
                server = server.updated(seed).map_err(|e| anyhow::anyhow!(e))?;
            }
            if let Some(mistakes) = args.mistakes.mistakes() {
                server = server.with_mistakes(mistakes);
            }
            eprintln!("DroidTask's ideal model for {} tasks", server.tasks());
            server.router()
        }
        (Some(script), None) => {
            let text = std::fs::read_to_string(script)
                .with_context(|| format!("cannot read {}", script.display()))?;
            let script = atlas_chat::sim::Script::parse(&text)
                .with_context(|| script.display().to_string())?;
            atlas_chat::sim::router(script)
        }
        (None, None) => anyhow::bail!("a script or --droidtask DIR"),
    };
    let listener = tokio::net::TcpListener::bind(&args.addr)
        .await
        .with_context(|| format!("cannot listen on {}", args.addr))?;
    eprintln!("atlas model-sim on http://{}/v1", listener.local_addr()?);
    // A signal ends it at once (OnSignal::EndServing): it keeps nothing.
    axum::serve(listener, router).await?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn serve(args: ServeArgs, stop: Stop) -> Result<ExitCode> {
    let ServeArgs {
        services: args,
        addr,
        token,
        llm_url,
        llm_model,
        llm_key,
        allow_origins,
        allow_hosts,
        max_connections,
    } = args;
    let data = args.data.describe();
    stop.wind_down("stopping once the store is open, before serving it");
    stop.leaves(format!(
        "start-up was opening the store ({data}); it keeps everything acknowledged, and the \
         next start replays its journal and finishes what this one had not"
    ));
    // The address first: a port in use fails at once, before the folder is opened.
    let listener = atlas_server::bind(&addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let limits = atlas_server::Limits::for_process(max_connections);
    let services = atlas_wiring::open(&args.config()).await?;
    if stop.is_requested() {
        // Stopped while opening: what opened is closed as a stop while serving would be.
        return close(&services, &data, &stop, "during start-up, before serving");
    }
    stop.wind_down(&format!(
        "stopping: requests under way get {} s, then the final checkpoint",
        SHUTDOWN_GRACE.as_secs()
    ));
    stop.leaves(format!(
        "every acknowledged write is in the journal ({data}) and is replayed at the next start"
    ));
    let local = listener.local_addr()?;
    eprintln!(
        "atlas serving {} on http://{local} ({data})",
        services.atlas.embedder().name(),
    );
    let state = atlas_server::AppState {
        services: services.context(),
        tools: services.tools.clone(),
        token: token.filter(|t| !t.is_empty()).map(Arc::from),
        chat: llm_url.map(|base_url| {
            Arc::new(atlas_chat::ChatConfig {
                base_url,
                model: llm_model,
                api_key: llm_key.filter(|k| !k.is_empty()),
                max_rounds: 8,
            })
        }),
        access: Arc::new(atlas_server::Access {
            allowed_origins: allow_origins,
            allowed_hosts: allow_hosts,
        }),
    };
    // On SIGTERM or Ctrl-C: embedding under way is abandoned (its request answers 503
    // and changes nothing), and requests still running get a few seconds to finish.
    let stopping = Arc::new(tokio::sync::Notify::new());
    let signal = {
        let (kb, stopping, stop) = (services.kb.clone(), stopping.clone(), stop.clone());
        async move {
            stop.requested().await;
            kb.stop();
            stopping.notify_one();
        }
    };
    let grace = async {
        stopping.notified().await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        served = atlas_server::serve_within(listener, state, limits, signal) => served?,
        _ = grace => tracing::warn!(
            "requests still running {} s after the signal were dropped",
            SHUTDOWN_GRACE.as_secs()
        ),
    }
    close(&services, &data, &stop, "")
}

/// Closes what a face served (the final checkpoint), saying in which state it leaves the data.
fn close(services: &Services, data: &str, stop: &Stop, when: &str) -> Result<ExitCode> {
    stop.leaves(format!(
        "the final checkpoint was under way; every acknowledged write is in the journal ({data}) \
         and is replayed at the next start"
    ));
    let when = if when.is_empty() {
        String::new()
    } else {
        format!(" {when}")
    };
    if let Err(e) = services.close() {
        eprintln!(
            "atlas stopped{when}, but not cleanly: {e:#}. Every acknowledged write is kept in \
             the journal ({data}) and is replayed at the next start"
        );
        return Ok(ExitCode::FAILURE);
    }
    eprintln!("atlas stopped cleanly{when} ({data}, checkpointed)");
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn mcp(args: ServiceArgs, stop: Stop) -> Result<ExitCode> {
    let data = args.data.describe();
    stop.wind_down("stopping: a final checkpoint");
    stop.leaves(format!(
        "every acknowledged write is in the journal ({data}) and is replayed at the next start"
    ));
    let services = atlas_wiring::open(&args.config()).await?;
    if stop.is_requested() {
        return close(&services, &data, &stop, "during start-up, before serving");
    }
    let server = atlas_mcp::McpServer::new(services.tools.clone(), services.context());
    eprintln!("atlas MCP on stdio ({data})");
    tokio::select! {
        biased;
        _ = stop.requested() => {}
        served = atlas_mcp::serve_stdio(server) => served?,
    }
    close(&services, &data, &stop, "")
}
