//! The server started in this process as `atlas serve` starts it: services opened from a data
//! folder by `atlas-wiring`, served on a loopback port by [`atlas_server::serve_within`] with the
//! options the flags name, stopped gracefully and closed (made durable) by [`Server::stop`].

use std::path::Path;
use std::sync::Arc;

use atlas_server::{Access, AppState, Limits};
use atlas_wiring::{Config, Services};

pub use atlas_wiring::testing::http::*;

/// A server on a loopback port of its own, on a runtime of its own.
pub struct Server {
    /// `http://ADDR`.
    pub url: String,
    runtime: tokio::runtime::Runtime,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    services: Services,
}

impl Served for Server {
    fn url(&self) -> &str {
        &self.url
    }
}

/// `atlas serve`'s options the tests give, read as the binary reads them: `--demo`, `--token T`,
/// `--allow-origin O`, `--allow-host H`, `--max-connections N`, `--kb-embedder same`,
/// `--llm-url URL` (the model `gpt-4o-mini`, the binary's default).
struct Flags {
    config: Config,
    token: Option<String>,
    chat: Option<Arc<atlas_chat::ChatConfig>>,
    access: Access,
    max_connections: usize,
}

impl Flags {
    fn read(data: &Path, flags: &[&str]) -> Flags {
        let mut config = Config::folder(data);
        // The knowledge bases take e5 when it is installed, as the binary's default `auto` does.
        config.kb_embedder_auto = true;
        let mut read = Flags {
            config,
            token: None,
            chat: None,
            access: Access::default(),
            max_connections: atlas_server::DEFAULT_MAX_CONNECTIONS,
        };
        let mut flags = flags.iter();
        while let Some(flag) = flags.next() {
            let mut value = || flags.next().expect("a value after the flag").to_string();
            match *flag {
                "--demo" => read.config.demo = true,
                "--token" => read.token = Some(value()),
                "--allow-origin" => read.access.allowed_origins.push(value()),
                "--allow-host" => read.access.allowed_hosts.push(value()),
                "--max-connections" => read.max_connections = value().parse().unwrap(),
                "--kb-embedder" => read.config.kb_embedder_auto = value() == "auto",
                "--llm-url" => {
                    read.chat = Some(Arc::new(atlas_chat::ChatConfig {
                        base_url: value(),
                        model: "gpt-4o-mini".into(),
                        api_key: None,
                        max_rounds: 8,
                    }))
                }
                other => panic!("the in-process server takes no {other}"),
            }
        }
        read
    }
}

impl Server {
    /// Opens the folder `data` and serves it as `atlas serve --data DATA FLAGS…` would.
    pub fn start(data: &Path, flags: &[&str]) -> Server {
        let Flags {
            config,
            token,
            chat,
            access,
            max_connections,
        } = Flags::read(data, flags);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let services = runtime.block_on(atlas_wiring::open(&config)).unwrap();
        let listener = runtime.block_on(atlas_server::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = AppState {
            services: services.context(),
            tools: services.tools.clone(),
            token: token.map(Arc::from),
            chat,
            access: Arc::new(access),
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let limits = Limits::for_process(max_connections);
        let served = runtime.spawn(atlas_server::serve_within(listener, state, limits, async {
            let _ = stopped.await;
        }));
        Server {
            url,
            runtime,
            stop: Some(stop),
            served: Some(served),
            services,
        }
    }

    /// Stops serving (the requests under way finish) and closes the services: what was
    /// acknowledged is durable, and the folder can be opened again.
    pub fn stop(mut self) {
        self.stop_serving();
        self.services.close().unwrap();
    }

    fn stop_serving(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            self.runtime.block_on(served).unwrap().unwrap();
        }
    }
}

/// A server a failed test leaves stops with it.
impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A scripted model (`atlas model-sim`'s, `atlas_chat::sim`) playing the business demo's script
/// on a loopback port, from a thread of its own until the test process ends: its base URL.
pub fn model_sim() -> String {
    let script = include_str!("../../../atlas-chat/demo/business.json");
    serve_in_background(atlas_chat::sim::router(
        atlas_chat::sim::Script::parse(script).unwrap(),
    ))
}
