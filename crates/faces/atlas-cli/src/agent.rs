//! `atlas agent`: the phone agent's commands.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, bail};
use atlas_agent::HttpCaller;
use atlas_agent::graph::GraphLink;
use atlas_agent::knowledge::KnowledgeConfig;
use atlas_agent::phone::{AgentConfig, Ending, Person, PhoneAgent, Unattended};
use atlas_device::{AppCatalog, CurrentApp, Device, DeviceError, Key, Point, Screenshot};
use atlas_guard::{Guard, RuleSet};
use atlas_model::Widget;
use clap::{Args, Subcommand};

use crate::stop::Stop;

#[derive(Subcommand)]
pub enum AgentCommand {
    /// Read a model's reply on standard input and print its first well-formed action as JSON in
    /// seed 002's dict form (`{"_metadata":"do","action":"Tap","element":[500,300]}`); when none
    /// is, print `{"error":{"code":"unparseable","message":…}}` and exit 1.
    Parse,
    /// Run a task on a phone: screenshot → model → one action → guard → device, until the model
    /// finishes (exit 0), the steps run out or something fails (exit 1).
    Run(Box<RunArgs>),
}

#[derive(Args)]
pub struct RunArgs {
    /// What to do, in the person's words ("打开美团点一份外卖").
    task: String,
    /// The phone: `adb:SERIAL`, `hdc:CONNECT_KEY`, or `sim:ADDR` (an `atlas device sim`, connected
    /// through adb).
    #[arg(long)]
    device: String,
    /// Write the run report here as JSON (a readable summary goes to standard error).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Look and ask, but do nothing to the phone: each action is printed instead.
    #[arg(long)]
    dry_run: bool,
    /// The app's id in the graph (default: the current app's package).
    #[arg(long)]
    app_id: Option<String>,
    /// The session the steps are reported under (default: one per run).
    #[arg(long)]
    session: Option<String>,
    #[command(flatten)]
    options: AgentOptions,
}

/// The options of an agent's runs, shared by `atlas agent run` and `atlas test run` under the
/// same names and defaults.
#[derive(Args)]
pub struct AgentOptions {
    /// The OpenAI-compatible endpoint of the model.
    #[arg(
        long,
        env = "PHONE_AGENT_BASE_URL",
        default_value = "http://localhost:8000/v1"
    )]
    pub model_url: String,
    #[arg(long, env = "PHONE_AGENT_MODEL", default_value = "autoglm-phone-9b")]
    pub model: String,
    #[arg(long, env = "PHONE_AGENT_API_KEY", hide_env_values = true)]
    pub model_key: Option<String>,
    #[arg(long, default_value_t = 30)]
    pub max_steps: usize,
    /// The system prompt's language.
    #[arg(long, default_value = "zh", value_parser = ["zh", "en"])]
    pub lang: String,
    /// Guard rules (YAML), beside the built-in QQ customer-service gate; repeatable.
    #[arg(long)]
    pub rules: Vec<PathBuf>,
    /// More app names for Launch (name, Android package, HarmonyOS bundle; tab-separated).
    #[arg(long)]
    pub apps: Option<PathBuf>,
    /// Confirm sensitive taps without asking.
    #[arg(long)]
    pub yes: bool,
    /// An Atlas server whose graph the agent uses: screens matched to pages, every step
    /// reported, and the graph's action taken without the model when it is sure enough.
    #[arg(long, env = "ATLAS_URL")]
    pub atlas: Option<String>,
    #[arg(long, env = "ATLAS_TOKEN", hide_env_values = true)]
    pub atlas_token: Option<String>,
    /// The graph's calibrated confidence at which its action is taken without asking the model.
    #[arg(long, default_value_t = 0.95)]
    pub fast_path: f64,
    /// With a graph: a planner that chooses a route over the graph's map where the graph is not
    /// sure, walked without asking the model while each screen is the page the route expects.
    #[command(flatten)]
    pub planner: crate::args::PlannerArgs,
}

impl AgentOptions {
    /// The screen model, retrying transient failures.
    pub fn model(&self) -> atlas_llm::ModelConfig {
        let mut model =
            atlas_llm::ModelConfig::new(&self.model_url, &self.model, self.model_key.clone());
        model.retries = 3;
        model
    }

    /// The app catalog: the built-in names and `--apps`.
    pub fn catalog(&self) -> Result<AppCatalog> {
        let mut catalog = AppCatalog::builtin();
        if let Some(path) = &self.apps {
            catalog.add_file(path)?;
        }
        Ok(catalog)
    }

    /// The guard's rule sets: the shipped gate and each `--rules` file.
    pub fn rule_sets(&self) -> Result<Vec<RuleSet>> {
        let mut sets = RuleSet::with_shipped(std::iter::empty())
            .map_err(|(_, e)| anyhow::Error::new(e).context("the shipped rules"))?;
        for path in &self.rules {
            sets.push(atlas_testrun::read_rules(path).map_err(|e| anyhow::anyhow!(e))?);
        }
        Ok(sets)
    }
}

/// The first signal sets the flag: runs stop after the step under way.
pub fn stop_after_step(stop: &Stop) -> Arc<AtomicBool> {
    stop.wind_down("stopping after the step under way");
    stop.flag()
}

/// The longest reply read: far beyond any model's answer, and a bound on what a pipe can make
/// the parser hold.
const MAX_REPLY: u64 = 1 << 20;

pub async fn run(command: AgentCommand, stop: Stop) -> Result<ExitCode> {
    match command {
        AgentCommand::Run(args) => {
            let stop = stop_after_step(&stop);
            tokio::task::spawn_blocking(move || run_task(*args, stop)).await?
        }
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
                atlas_action::parse_reply(&reply).map_err(|e| e.to_string())
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

fn run_task(args: RunArgs, stop: Arc<AtomicBool>) -> Result<ExitCode> {
    let options = &args.options;
    let device = open_device(&args.device, options.catalog()?)?;
    let device: Box<dyn Device> = if args.dry_run {
        Box::new(DryRun(device))
    } else {
        device
    };
    let rule_sets = options.rule_sets()?;
    let planner = options
        .atlas
        .as_ref()
        .and_then(|_| options.planner.config(&options.model))
        .map(|c| Box::new(c) as Box<dyn atlas_llm::Model>);
    let config = AgentConfig {
        model: Box::new(options.model()),
        planner,
        max_steps: options.max_steps.max(1),
        lang: options.lang.clone(),
        knowledge: KnowledgeConfig::from_env(),
        stop,
    };
    let person: Box<dyn Person> = if std::io::stdin().is_terminal() && !options.yes {
        Box::new(Terminal)
    } else {
        Box::new(Unattended { yes: options.yes })
    };
    let guard = Guard::new(rule_sets, &args.task);
    let caller = options
        .atlas
        .as_deref()
        .map(|url| HttpCaller::new(url, options.atlas_token.clone()));
    let session = args
        .session
        .clone()
        .unwrap_or_else(|| format!("agent-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3f")));
    let mut agent = PhoneAgent::new(device.as_ref(), &config, person.as_ref(), guard);
    if let Some(caller) = &caller {
        agent = agent.with_graph(GraphLink::new(
            caller,
            args.app_id.clone(),
            options.fast_path,
            &session,
        ));
    }
    let report = agent.run(&args.task);
    eprint!("{}", report.summary());
    if let Some(path) = &args.report {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(if report.ending == Ending::Finished {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `adb:SERIAL`, `hdc:KEY` or `sim:ADDR`.
fn open_device(spec: &str, catalog: AppCatalog) -> Result<Box<dyn Device>> {
    let (kind, id) = spec.split_once(':').unwrap_or((spec, ""));
    let id = (!id.is_empty()).then(|| id.to_string());
    Ok(match kind {
        "adb" => Box::new(atlas_device_adb::Adb::new(id).with_catalog(catalog)),
        "hdc" => Box::new(atlas_device_hdc::Hdc::new(id).with_catalog(catalog)),
        "sim" => {
            let Some(address) = id else {
                bail!("--device sim:ADDR needs the simulator's address, e.g. sim:127.0.0.1:5555");
            };
            atlas_device_adb::Adb::connect(&address)?;
            Box::new(atlas_device_adb::Adb::new(Some(address)).with_catalog(catalog))
        }
        other => bail!("--device {other}:…: expected adb:SERIAL, hdc:KEY or sim:ADDR"),
    })
}

/// A person at the terminal.
struct Terminal;

impl Person for Terminal {
    fn confirm(&self, message: &str) -> bool {
        eprint!("敏感操作 / sensitive action: {message}. Go ahead? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).is_ok()
            && matches!(line.trim(), "y" | "Y" | "yes" | "是")
    }

    fn take_over(&self, message: &str) -> bool {
        eprint!("请接管手机 / take over the phone: {message}. Press Enter when done. ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).is_ok()
    }
}

/// A device that looks but does not touch: every action is printed instead.
struct DryRun(Box<dyn Device>);

impl DryRun {
    fn say(&self, what: String) -> Result<(), DeviceError> {
        println!("dry run: {what}");
        Ok(())
    }
}

impl Device for DryRun {
    fn name(&self) -> String {
        self.0.name()
    }
    fn screenshot(&self) -> Result<Screenshot, DeviceError> {
        self.0.screenshot()
    }
    fn current_app(&self) -> Result<CurrentApp, DeviceError> {
        self.0.current_app()
    }
    fn hierarchy(&self) -> Result<Vec<Widget>, DeviceError> {
        self.0.hierarchy()
    }
    fn tap(&self, at: Point) -> Result<(), DeviceError> {
        self.say(format!("tap {at:?}"))
    }
    fn double_tap(&self, at: Point) -> Result<(), DeviceError> {
        self.say(format!("double tap {at:?}"))
    }
    fn long_press(&self, at: Point, millis: u32) -> Result<(), DeviceError> {
        self.say(format!("long press {at:?} for {millis} ms"))
    }
    fn swipe(&self, from: Point, to: Point, millis: u32) -> Result<(), DeviceError> {
        self.say(format!("swipe {from:?} → {to:?} in {millis} ms"))
    }
    fn key(&self, key: Key) -> Result<(), DeviceError> {
        self.say(format!("key {key:?}"))
    }
    fn launch(&self, app: &str) -> Result<(), DeviceError> {
        self.say(format!("launch {app}"))
    }
    fn type_text(&self, text: &str) -> Result<(), DeviceError> {
        self.say(format!("type {text:?}"))
    }
    fn clear_text(&self) -> Result<(), DeviceError> {
        self.say("clear the field".into())
    }
    fn wait(&self, millis: u32) {
        println!("dry run: wait {millis} ms");
    }
}
