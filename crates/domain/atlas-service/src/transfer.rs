//! Export and import of one app's whole graph as JSON (the store's `AppData` shape).

use atlas_model::{AtlasError, Result, intent_id, page_id, transition_id, validate_text};
use atlas_store::{AppData, Record};
use serde::Serialize;

use crate::Atlas;
use atlas_navigate::{DocTexts, intent_key, page_key};

/// What an import added for one app.
#[derive(Debug, Clone, Serialize)]
pub struct ImportSummary {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// Pages added or updated.
    pub pages: usize,
    /// Intents registered.
    pub intents: usize,
    /// Transitions added or updated.
    pub transitions: usize,
    /// Traces remembered.
    pub traces: usize,
}

fn mismatch(what: &str, given: &str, expected: &str) -> AtlasError {
    AtlasError::invalid(
        what,
        format!("{what} {given} does not match its content (expected {expected})"),
    )
}

impl Atlas {
    /// One app's whole graph.
    pub fn export_app(&self, app_id: &str) -> Result<AppData> {
        self.read(|g| {
            g.app(app_id)
                .map(crate::state::app_data)
                .ok_or_else(|| AtlasError::NotFound(format!("app not found: {app_id}")))
        })
    }

    /// Imports an exported app, replacing entities with the same ids. Every id must be the one its
    /// content derives, so an import can never alias two entities.
    pub async fn import_app(&self, data: AppData) -> Result<ImportSummary> {
        let app_id = data.app.app_id.clone();
        validate_text("app.app_id", &app_id, true)?;
        let mut page_ids = std::collections::HashSet::new();
        for p in &data.pages {
            validate_text("pages[].page_name", &p.page_name, true)?;
            validate_text("pages[].description", &p.description, false)?;
            if p.app_id != app_id {
                return Err(AtlasError::invalid(
                    "pages[].app_id",
                    format!("page {} belongs to {}", p.page_name, p.app_id),
                ));
            }
            let expected = page_id(&app_id, &p.page_name);
            if p.page_id != expected {
                return Err(mismatch("page_id", &p.page_id, &expected));
            }
            page_ids.insert(p.page_id.clone());
        }
        for i in &data.intents {
            validate_text("intents[].intent_text", &i.intent_text, true)?;
            let expected = intent_id(&app_id, &i.intent_text);
            if i.intent_id != expected || i.app_id != app_id {
                return Err(mismatch("intent_id", &i.intent_id, &expected));
            }
        }
        for t in &data.transitions {
            validate_text(
                "transitions[].action.action_type",
                &t.action.action_type,
                true,
            )?;
            let expected = transition_id(&t.from_page, &t.action, &t.to_page);
            if t.transition_id != expected || t.app_id != app_id {
                return Err(mismatch("transition_id", &t.transition_id, &expected));
            }
            let known = |p: &str| {
                page_ids.contains(p)
                    || self.read(|g| g.app(&app_id).is_some_and(|a| a.page(p).is_some()))
            };
            if !known(&t.from_page) || !known(&t.to_page) {
                return Err(AtlasError::invalid(
                    "transitions[]",
                    format!(
                        "transition {} joins pages not in the import",
                        t.transition_id
                    ),
                ));
            }
        }
        let summary = ImportSummary {
            app_id: app_id.clone(),
            pages: data.pages.len(),
            intents: data.intents.len(),
            transitions: data.transitions.len(),
            traces: data.traces.len(),
        };
        let mut texts: Vec<(String, DocTexts)> = data
            .pages
            .iter()
            .map(|p| {
                let texts = DocTexts::of_page(&p.page_name, &p.description, &p.intents);
                (page_key(&p.page_id), texts)
            })
            .collect();
        texts.extend(data.intents.iter().map(|i| {
            let texts = DocTexts::of_intent(&i.intent_text, &i.keywords);
            (intent_key(&i.intent_id), texts)
        }));
        let ready = self.embed_ahead(&app_id, &texts)?;
        self.commit_embedded(&ready, move |_| {
            let mut records = vec![Record::App(data.app)];
            records.extend(data.pages.into_iter().map(Record::Page));
            records.extend(data.intents.into_iter().map(Record::Intent));
            records.extend(data.transitions.into_iter().map(Record::Transition));
            records.extend(data.traces.into_iter().map(Record::Trace));
            Ok((records, ()))
        })
        .await?;
        Ok(summary)
    }
}
