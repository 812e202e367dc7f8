//! The phone agent of seed 002: look at the phone, ask the model for one action, let the guard
//! review it, do it, tell the model what happened — until the model finishes, the steps run
//! out, or the person stops it.
//!
//! Each step captures the screenshot and the current app, builds the messages (the seed's
//! system prompt, the task, the screen info with the last observation, the screenshot as an
//! image part; screenshots of earlier steps are dropped from the context, their text kept), asks
//! the model, parses its reply ([`atlas_action`]), reviews the action ([`atlas_guard`]) and
//! executes it on the [`Device`]. A reply without a well-formed action is not the end: the model
//! is told why and asked again. Every step goes into the [`RunReport`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use atlas_action::{Action, Relative, parse_reply};
use atlas_device::{Device, Key, Point};
use atlas_llm::Model;
use base64::Engine;
use serde_json::{Value, json};

use crate::graph::GraphLink;
use crate::knowledge::KnowledgeConfig;
pub use crate::report::{Chooser, Ending, ModelCall, RunReport, StepReport};
use crate::{ActionError, StepError};
use atlas_guard::Guard;

const SYSTEM_ZH: &str = include_str!("../prompts/system_zh.txt");
const SYSTEM_EN: &str = include_str!("../prompts/system_en.txt");

/// The person beside the phone: confirms sensitive taps, takes over when asked.
pub trait Person: Send + Sync {
    /// Whether to go ahead with a sensitive action (`message` says what it is).
    fn confirm(&self, message: &str) -> bool;
    /// The person takes over the phone and says when done; false when nobody can.
    fn take_over(&self, message: &str) -> bool;
}

/// Nobody at the phone: sensitive taps go ahead only if `yes`; nobody can take over.
pub struct Unattended {
    /// Confirm every sensitive tap (`--yes`).
    pub yes: bool,
}

impl Person for Unattended {
    fn confirm(&self, _: &str) -> bool {
        self.yes
    }
    fn take_over(&self, _: &str) -> bool {
        false
    }
}

/// What the agent needs besides the device and the model.
pub struct AgentConfig {
    /// The model asked where the graph is unsure.
    pub model: Box<dyn Model>,
    /// The model that chooses a route over the graph's map on a screen the graph is not sure
    /// of ([`crate::plan`]); no planning when `None`.
    pub planner: Option<Box<dyn Model>>,
    /// Steps at most.
    pub max_steps: usize,
    /// `zh` or `en`: the system prompt's language.
    pub lang: String,
    /// The knowledge base GET_KNOWLEDGE_DATA asks, when one is configured.
    pub knowledge: Option<KnowledgeConfig>,
    /// Set from outside (Ctrl-C) to stop after the current step.
    pub stop: Arc<AtomicBool>,
}

/// What a step sees before anyone decides.
struct Screen {
    shot: atlas_device::Screenshot,
    size: (u32, u32),
    app_name: String,
    package: String,
}

/// What the graph said of the screen: the page it took it for, and what it would do.
struct Seen {
    page: String,
    suggestion: crate::graph::Suggestion,
}

/// The agent of one task on one device.
pub struct PhoneAgent<'a> {
    device: &'a dyn Device,
    config: &'a AgentConfig,
    person: &'a dyn Person,
    guard: Guard,
    graph: Option<GraphLink<'a>>,
    /// The pages the planner was asked on this run: once a page.
    planned_on: std::collections::HashSet<String>,
    /// The last step was a planned route's.
    on_route: bool,
    /// The version of each app the run met, as the device reported it (asked once an app).
    versions: std::collections::HashMap<String, Option<String>>,
}

/// How long a `Wait` may be (a model asking for an hour is not obeyed).
const MAX_WAIT_SECONDS: f64 = 30.0;

impl<'a> PhoneAgent<'a> {
    /// An agent for `device`, asking `person` what only a person may decide, within `guard`.
    pub fn new(
        device: &'a dyn Device,
        config: &'a AgentConfig,
        person: &'a dyn Person,
        guard: Guard,
    ) -> PhoneAgent<'a> {
        PhoneAgent {
            device,
            config,
            person,
            guard,
            graph: None,
            planned_on: Default::default(),
            on_route: false,
            versions: Default::default(),
        }
    }

    /// Matches screens, reports steps and takes the graph's sure actions (see [`crate::graph`]).
    pub fn with_graph(mut self, mut graph: GraphLink<'a>) -> PhoneAgent<'a> {
        graph.want_map = self.config.planner.is_some();
        self.graph = Some(graph);
        self
    }

    /// Runs `task` to its end; the report says how it ended.
    pub fn run(&mut self, task: &str) -> RunReport {
        let started = Instant::now();
        let mut report = RunReport {
            task: task.to_string(),
            device: self.device.name(),
            model: self.config.model.name(),
            ending: Ending::MaxSteps,
            message: format!("no finish within {} steps", self.config.max_steps),
            guard: self.guard.active().into_iter().map(String::from).collect(),
            steps: Vec::new(),
            model_calls: 0,
            plan_calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            total_ms: 0.0,
            session: None,
        };
        let system = if self.config.lang == "en" {
            SYSTEM_EN
        } else {
            SYSTEM_ZH
        };
        let today = chrono::Local::now().format("%Y-%m-%d %A").to_string();
        let mut messages =
            vec![json!({"role": "system", "content": system.replace("{date}", &today)})];
        let mut observation: Option<String> = None;
        for step in 1..=self.config.max_steps {
            if self.config.stop.load(Ordering::SeqCst) {
                report.ending = Ending::Stopped;
                report.message = "stopped by the person".into();
                break;
            }
            let outcome = self.step(step, task, &mut messages, &mut observation);
            let (step_report, end) = match outcome {
                Ok(done) => done,
                Err(e) => {
                    report.ending = Ending::Error;
                    report.message = e.to_string();
                    break;
                }
            };
            let planner = step_report.planner.as_ref().map(|(call, _)| call);
            report.plan_calls += usize::from(planner.is_some());
            for call in step_report.model.iter().chain(planner) {
                report.model_calls += 1;
                report.prompt_tokens += call.prompt_tokens.unwrap_or(0);
                report.completion_tokens += call.completion_tokens.unwrap_or(0);
            }
            report.steps.push(step_report);
            if let Some((ending, message)) = end {
                report.ending = ending;
                report.message = message;
                break;
            }
        }
        if let Some(graph) = &self.graph
            && let Err(e) = graph.end(
                task,
                (report.ending == Ending::Finished).then_some(report.message.as_str()),
            )
        {
            tracing::warn!("the graph did not take the run's end: {e}");
        }
        report.session = self.graph.as_ref().and_then(GraphLink::session);
        report.total_ms = started.elapsed().as_secs_f64() * 1000.0;
        report
    }

    /// One step; `Some(ending)` when the run ends with it.
    fn step(
        &mut self,
        step: usize,
        task: &str,
        messages: &mut Vec<Value>,
        observation: &mut Option<String>,
    ) -> Result<(StepReport, Option<(Ending, String)>), StepError> {
        let started = Instant::now();
        let mut device_time = Duration::ZERO;
        let screen = self.look(&mut device_time)?;
        // The graph first: where we are, what happened last step, and what it would do now.
        let (seen, graph_time) = self.consult_graph(&screen, task, &mut device_time);
        let walking = seen.as_ref().is_some_and(|s| s.suggestion.walking);
        let fast = seen
            .as_ref()
            .map(|s| &s.suggestion)
            .and_then(|s| s.sure.then(|| s.action.clone()).flatten());

        let mut info = json!({"current_app": screen.app_name});
        if let Some(o) = observation.take() {
            info["last_observation"] = json!(o);
        }
        if let Some(s) = seen.as_ref().map(|s| &s.suggestion)
            && !s.hint.is_null()
        {
            info["atlas_hint"] = s.hint.clone();
        }
        let text = if step == 1 {
            format!("{task}\n\n{info}")
        } else {
            format!("** Screen Info **\n\n{info}")
        };
        let mut report = StepReport {
            step,
            app: screen.app_name.clone(),
            chosen_by: Chooser::Model,
            reply: String::new(),
            proposed: None,
            action: None,
            rules: Vec::new(),
            ok: false,
            observation: None,
            model: None,
            planner: None,
            graph: seen.as_ref().map(|Seen { page, suggestion: s }| {
                json!({"page": page, "suggested": &s.raw, "resolved": s.action.as_ref().map(|(a, _)| a.to_dict()), "confidence": s.confidence, "basis": &s.basis, "sure": s.sure, "trust": &s.trust})
            }),
            step_ms: 0.0,
            device_ms: 0.0,
            agent_ms: 0.0,
            graph_ms: graph_time.as_secs_f64() * 1000.0,
        };
        let fast = match fast {
            Some(taken) => {
                report.chosen_by = if walking {
                    Chooser::Plan
                } else {
                    Chooser::Graph
                };
                Some(taken)
            }
            // A route that just ended (or left its way) hands the next step to the model: to go
            // on or to finish is the model's call.
            None if self.on_route => None,
            None => self.plan(seen.as_ref(), &mut report),
        };
        self.on_route = report.chosen_by == Chooser::Plan;
        let (proposed, focus) = match fast {
            Some((action, focus)) => {
                // The graph (or a planned route) decides: the model is not asked, but its
                // context says what was done.
                messages.push(json!({"role": "user", "content": text}));
                messages.push(json!({"role": "assistant", "content": format!("<answer>{}</answer>", action.to_grammar())}));
                (action, focus)
            }
            None => match self.ask_model(&text, &screen, messages, &mut report)? {
                Ok(action) => (action, None),
                Err(unparsed) => {
                    let told = format!(
                        "Your last reply had no well-formed action ({unparsed}). Answer with exactly one do(...) or finish(...) inside <answer>."
                    );
                    report.observation = Some(told.clone());
                    *observation = Some(told);
                    return Ok((self.finish_timing(report, started, device_time), None));
                }
            },
        };
        let (end, told) = self.act(
            proposed,
            focus,
            &screen,
            seen.as_ref(),
            &mut report,
            &mut device_time,
        );
        *observation = told;
        Ok((self.finish_timing(report, started, device_time), end))
    }

    /// Asks the planner to choose a route over the map of a screen the graph is not sure of
    /// (once a page a run): the route's first step to take now, the rest sent to the graph to
    /// walk. A planner that fails or chooses nothing leaves the step to the model.
    fn plan(
        &mut self,
        seen: Option<&Seen>,
        report: &mut StepReport,
    ) -> Option<(Action, Option<Point>)> {
        let planner = self.config.planner.as_deref()?;
        let seen = seen?;
        let map = seen.suggestion.map.as_ref()?;
        if !self.planned_on.insert(seen.page.clone()) {
            return None;
        }
        let answer = match crate::plan::ask(planner, map) {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!("the planner did not answer: {e}");
                return None;
            }
        };
        report.planner = Some((answer.call, answer.reply));
        let planned = answer.planned?;
        report.chosen_by = Chooser::Plan;
        if let Some(graph) = &mut self.graph {
            graph.follow(planned.rest);
        }
        Some((planned.first, planned.focus))
    }

    /// The screen as the step starts: its screenshot and the app in front.
    fn look(&self, device_time: &mut Duration) -> Result<Screen, StepError> {
        let t = Instant::now();
        let shot = self.device.screenshot()?;
        let (app_name, package) = match self.device.current_app() {
            Ok(a) => (
                a.name.clone().unwrap_or_else(|| a.package.clone()),
                a.package,
            ),
            Err(_) => ("System Home".to_string(), String::new()),
        };
        *device_time += t.elapsed();
        Ok(Screen {
            size: (shot.width, shot.height),
            shot,
            app_name,
            package,
        })
    }

    /// The page the graph takes the screen for (telling it what the last step did) and what it
    /// would do now; and the time the graph took.
    fn consult_graph(
        &mut self,
        screen: &Screen,
        task: &str,
        device_time: &mut Duration,
    ) -> (Option<Seen>, Duration) {
        let Some(graph) = &mut self.graph else {
            return (None, Duration::ZERO);
        };
        let t = Instant::now();
        let widgets = self.device.hierarchy().unwrap_or_default();
        // The graph keeps its trust per version of an app: asked once a run, as an update
        // lands between runs. Another app's screen the run's app opened (a file picker) is sent
        // under the run's app, with its version.
        let device = self.device;
        graph.app_version = self
            .versions
            .entry(graph.app(&screen.package))
            .or_insert_with(|| {
                let asked =
                    (!screen.package.is_empty()).then(|| device.app_version(&screen.package));
                asked.and_then(|v| v.ok()).flatten()
            })
            .clone();
        *device_time += t.elapsed();
        let t = Instant::now();
        let seen = match graph.observe(&screen.package, &widgets, task, screen.size) {
            Ok((page, suggestion)) if !page.is_empty() => Some(Seen { page, suggestion }),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!("the graph did not answer: {e}");
                None
            }
        };
        (seen, t.elapsed())
    }

    /// Asks the model with the screenshot: its action, or (inner `Err`) what to tell it when its
    /// reply had none.
    fn ask_model(
        &self,
        text: &str,
        screen: &Screen,
        messages: &mut Vec<Value>,
        report: &mut StepReport,
    ) -> Result<Result<Action, atlas_action::ParseError>, StepError> {
        let image = base64::engine::general_purpose::STANDARD.encode(&screen.shot.png);
        messages.push(json!({"role": "user", "content": [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{image}")}},
        ]}));
        let body =
            json!({"messages": messages, "stream": true, "temperature": 0, "max_tokens": 3000});
        let completion = self.config.model.complete(&body, &mut |_| {})?;
        // The screenshot has been seen: only its text stays in the context.
        if let Some(last) = messages.last_mut() {
            *last = json!({"role": "user", "content": text});
        }
        messages.push(json!({"role": "assistant", "content": completion.content}));
        report.reply = completion.content.clone();
        report.model = Some(ModelCall {
            first_token_ms: completion.first_token_ms,
            total_ms: completion.total_ms,
            prompt_tokens: completion.prompt_tokens,
            completion_tokens: completion.completion_tokens,
            attempts: completion.attempts,
        });
        Ok(parse_reply(&completion.content))
    }

    /// Has the guard review the proposed action, executes what it allows and tells the graph:
    /// `Some(ending)` when the run ends with it, and what to tell the model next.
    fn act(
        &mut self,
        proposed: Action,
        focus: Option<Point>,
        screen: &Screen,
        seen: Option<&Seen>,
        report: &mut StepReport,
        device_time: &mut Duration,
    ) -> (Option<(Ending, String)>, Option<String>) {
        report.proposed = Some(proposed.clone());
        let app_names = [screen.app_name.as_str(), screen.package.as_str()];
        let reviewed = self.guard.review(proposed.clone(), &app_names);
        if reviewed.action != proposed {
            report.chosen_by = Chooser::Guard;
        }
        report.rules = reviewed.rules;
        let action = reviewed.action;
        report.action = Some(action.clone());
        let t = Instant::now();
        // A field the graph types into is tapped first (the graph says which), unless the guard
        // replaced its action.
        let focus = focus.filter(|_| action == proposed);
        let focused = match focus {
            Some(point) => self.device.tap(point).map_err(ActionError::from),
            None => Ok(()),
        };
        let executed = focused.and_then(|_| self.execute(&action, screen.size));
        *device_time += t.elapsed();
        if let (Some(graph), Some(_)) = (&mut self.graph, seen) {
            graph.executed(&action, focus, report.chosen_by == Chooser::Graph);
        }
        let (ok, result, end) = match executed {
            Ok(Done::Continue(result)) => (true, result, None),
            Ok(Done::End(ending, message)) => (
                ending == Ending::Finished,
                message.clone(),
                Some((ending, message)),
            ),
            Err(e) => (false, e.to_string(), None),
        };
        report.ok = ok;
        let said = self.guard.record(&action, ok, &result);
        let told = said
            .or(reviewed.observation)
            .or((!result.is_empty()).then_some(result));
        report.observation = told.clone();
        (end, told)
    }

    fn finish_timing(
        &self,
        mut report: StepReport,
        started: Instant,
        device: Duration,
    ) -> StepReport {
        report.step_ms = started.elapsed().as_secs_f64() * 1000.0;
        report.device_ms = device.as_secs_f64() * 1000.0;
        // The planner is a model too: its call is not the agent's own time.
        let model = report.model.as_ref().map_or(0.0, |m| m.total_ms)
            + report.planner.as_ref().map_or(0.0, |(p, _)| p.total_ms);
        report.agent_ms = (report.step_ms - report.device_ms - model).max(0.0);
        report
    }

    /// Does an action on the device: what to tell the model, or the run's end.
    fn execute(&self, action: &Action, (width, height): (u32, u32)) -> Result<Done, ActionError> {
        let device = self.device;
        let point = |p: &Relative| {
            Point::from_relative(u32::from(p[0]), u32::from(p[1]), width, height)
                .ok_or(ActionError::OffScreen(p[0], p[1]))
        };
        match action {
            Action::Launch { app } => device.launch(app)?,
            Action::Tap { element, message } => {
                if let Some(m) = message
                    && !self.person.confirm(m)
                {
                    return Err(ActionError::NotConfirmed(m.clone()));
                }
                device.tap(point(element)?)?
            }
            Action::Type { text } | Action::TypeName { text } => {
                device.clear_text()?;
                device.type_text(text)?
            }
            Action::Swipe { start, end } => device.swipe(point(start)?, point(end)?, 500)?,
            Action::LongPress { element } => device.long_press(point(element)?, 1500)?,
            Action::DoubleTap { element } => device.double_tap(point(element)?)?,
            Action::Back => device.key(Key::Back)?,
            Action::Home => device.key(Key::Home)?,
            Action::Wait { .. } => {
                let seconds = action
                    .wait_seconds()
                    .unwrap_or(1.0)
                    .clamp(0.0, MAX_WAIT_SECONDS);
                device.wait((seconds * 1000.0) as u32);
            }
            Action::TakeOver { .. } | Action::Interact => {
                let message = action_message(action);
                if !self.person.take_over(message) {
                    let said = if message.is_empty() {
                        "the model asked for the person"
                    } else {
                        message
                    };
                    return Ok(Done::End(Ending::TakeOver, said.to_string()));
                }
                return Ok(Done::Continue(
                    "The person took over and handed the phone back.".into(),
                ));
            }
            Action::Note { .. } => return Ok(Done::Continue("Noted.".into())),
            Action::CallApi { .. } => {
                return Ok(Done::Continue(
                    "Call_API has nothing to call here; summarise in your finish message.".into(),
                ));
            }
            Action::GetKnowledgeData { query } => return self.knowledge(query),
            Action::Finish { message } => return Ok(Done::End(Ending::Finished, message.clone())),
        }
        Ok(Done::Continue(String::new()))
    }

    /// Looks `query` up; a found answer is typed into the conversation and sent.
    fn knowledge(&self, query: &str) -> Result<Done, ActionError> {
        let Some(knowledge) = &self.config.knowledge else {
            return Err(ActionError::NoKnowledgeBase);
        };
        let Some(answer) = knowledge.retrieve(query)? else {
            return Err(ActionError::NoAnswer(query.to_string()));
        };
        self.device.clear_text()?;
        self.device.type_text(&answer)?;
        self.device.key(Key::Enter)?;
        Ok(Done::Continue(answer))
    }
}

enum Done {
    /// Go on; what happened, for the model.
    Continue(String),
    End(Ending, String),
}

fn action_message(action: &Action) -> &str {
    match action {
        Action::TakeOver { message } => message,
        _ => "",
    }
}
