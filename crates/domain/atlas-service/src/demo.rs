//! The bundled demo: a Chinese food-delivery app (`com.meituan.app`), built through the same
//! interfaces an agent uses, so the demo also exercises them, on a scratch graph, then written
//! whole (see [`crate::setup`]): a start stopped at any instant leaves the whole demo or none of
//! it, and a demo an older start left incomplete is completed.

use std::collections::HashMap;

use atlas_model::{AtlasError, Result, Widget, page_id};
use atlas_store::AppData;
use serde::Deserialize;

use crate::{
    AddPageRequest, Atlas, BatchAddTransitionsRequest, BatchTransition, Missing,
    RegisterIntentRequest, UiHierarchy,
};

/// The demo graph's app (a food-delivery app's pages, actions and intents).
pub const DEMO_APP_ID: &str = "com.meituan.app";

const DEMO_JSON: &str = include_str!("../demo/meituan.json");

#[derive(Deserialize)]
struct DemoPage {
    page_name: String,
    page_type: String,
    description: String,
    intents: Vec<String>,
}

#[derive(Deserialize)]
struct DemoTransition {
    from: String,
    to: String,
    action_type: String,
    widget_text: String,
    #[serde(default)]
    input_text: Option<String>,
    success_count: u64,
    fail_count: u64,
    latency_ms: u64,
}

#[derive(Deserialize)]
struct DemoIntent {
    intent_text: String,
    target_page: String,
    keywords: Vec<String>,
}

#[derive(Deserialize)]
struct Demo {
    app_id: String,
    pages: Vec<DemoPage>,
    transitions: Vec<DemoTransition>,
    intents: Vec<DemoIntent>,
}

/// What [`demo_graph`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DemoInstall {
    /// The graph had no demo app: it has the whole of it now.
    Installed,
    /// The graph had part of the demo app (a start stopped half-way by an older Atlas): what
    /// it lacked, now written.
    Completed(Missing),
    /// The graph has the whole demo app already (agents' statistics since then kept).
    Present,
}

/// Makes the demo app whole: installs it where there is none, and writes what an incomplete one
/// lacks, in one atomic append either way; the pages, transitions and intents the graph holds
/// already stay as they are.
pub async fn demo_graph(atlas: &Atlas) -> Result<DemoInstall> {
    let built = demo_app().await?;
    let missing = atlas.missing(&built);
    let installed = if missing.is_none() {
        DemoInstall::Present
    } else if atlas.read(|g| g.app(DEMO_APP_ID).is_none()) {
        DemoInstall::Installed
    } else {
        DemoInstall::Completed(missing)
    };
    if installed != DemoInstall::Present {
        atlas.add_missing(built).await?;
    }
    Ok(installed)
}

/// The demo app as it is installed, built on a scratch graph. Its steps search nothing, so the
/// lexical embedder builds it as any other would, at no cost: a start on a folder with the
/// whole demo spends a few milliseconds finding so.
pub async fn demo_app() -> Result<AppData> {
    let scratch = Atlas::scratch_with(std::sync::Arc::new(atlas_text::HashEmbedder::default()))?;
    build(&scratch).await?;
    scratch.export_app(DEMO_APP_ID)
}

/// Loads the demo app into `atlas` through the interfaces an agent uses.
async fn build(atlas: &Atlas) -> Result<()> {
    let demo: Demo = serde_json::from_str(DEMO_JSON)
        .map_err(|e| AtlasError::fault("reading the demo data", e))?;
    // Each page shows its title and a button for every action that leaves it, so that
    // match_current_page has structure to compare.
    let mut buttons: HashMap<&str, Vec<Widget>> = HashMap::new();
    for t in &demo.transitions {
        let kind = if t.action_type == "input" {
            "input"
        } else {
            "button"
        };
        buttons.entry(t.from.as_str()).or_default().push(Widget {
            id: format!("{}_{}", kind, t.widget_text),
            text: t.widget_text.clone(),
            widget_type: kind.into(),
            ..Default::default()
        });
    }
    for page in &demo.pages {
        let mut widgets = vec![Widget {
            id: "title".into(),
            text: page.page_name.clone(),
            widget_type: "text".into(),
            ..Default::default()
        }];
        widgets.extend(buttons.remove(page.page_name.as_str()).unwrap_or_default());
        atlas
            .add_page(AddPageRequest {
                app_id: demo.app_id.clone(),
                page_name: page.page_name.clone(),
                page_type: Some(page.page_type.clone()),
                description: Some(page.description.clone()),
                intents: page.intents.clone(),
                ui_hierarchy: Some(UiHierarchy {
                    widgets,
                    page_structure: page.description.clone(),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await?;
    }
    let transitions = demo
        .transitions
        .iter()
        .map(|t| BatchTransition {
            from_page: page_id(&demo.app_id, &t.from),
            to_page: page_id(&demo.app_id, &t.to),
            action_type: t.action_type.clone(),
            widget_text: Some(t.widget_text.clone()),
            widget_id: None,
            input_text: t.input_text.clone(),
            success_count: Some(t.success_count),
            fail_count: Some(t.fail_count),
            latency_ms: Some(t.latency_ms),
        })
        .collect();
    let added = atlas
        .batch_add_transitions(BatchAddTransitionsRequest { transitions })
        .await?;
    if added.failed > 0 {
        return Err(AtlasError::Graph(format!(
            "demo transitions failed: {:?}",
            added.errors
        )));
    }
    for intent in demo.intents {
        atlas
            .register_intent(RegisterIntentRequest {
                app_id: demo.app_id.clone(),
                intent_text: intent.intent_text,
                target_page: Some(page_id(&demo.app_id, &intent.target_page)),
                keywords: intent.keywords,
            })
            .await?;
    }
    Ok(())
}
