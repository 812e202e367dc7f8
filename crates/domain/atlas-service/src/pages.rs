//! Seed 000 §1.3, §2.2, §3.1: recognising the current page, adding pages, listing a page's actions.

use std::collections::BTreeSet;

pub use atlas_api::pages::{
    AddPageRequest, AddPageResponse, AvailableActionsRequest, AvailableActionsResponse, Candidate,
    MatchPageRequest, MatchPageResponse, MatchedPage, PageAction, UiHierarchy,
};
use atlas_graph::AppGraph;
use atlas_model::{
    App, AtlasError, Intent, MAX_OTHER_RENDERINGS, Page, PageFace, PageType, Result, VersionSource,
    Versioned, Widget, features_fingerprint, jaccard, keep_face, label_lines, one_rendering,
    page_id, ui_features, validate_text,
};
use atlas_store::Record;

use crate::Atlas;
use atlas_navigate::round3;
use atlas_navigate::{DocTexts, Query, page_key};

/// Most widgets kept per page: enough for any real screen, bounded so a page stays small on disk.
const MAX_WIDGETS: usize = 500;
/// A match below this is reported as candidates only.
const MATCH_THRESHOLD: f64 = 0.75;
/// What a screen's label lines lose against a page's in another rendering (a synthetic Back key,
/// an icon's description one renderer names and the other does not): a screen sharing half of all
/// their lines with a page of another rendering scores as a same-rendering match at
/// [`MATCH_THRESHOLD`], and must still lead the runner-up as any match must. Chosen on four
/// DroidTask apps (the simulator's dumps of each task's screens against the apps' HTML screens:
/// applauncher, calendar, clock, contacts — 0.833 matched, all to the right screen) and checked
/// on three others (filemanager, messenger, notes — 0.867 matched, 0.987 right).
const OTHER_RENDERING_LOSS: f64 = 0.25;

/// The hierarchy with its dump (a uiautomator XML, a HarmonyOS JSON) read into widgets.
pub fn expand_dump(mut ui: UiHierarchy) -> Result<UiHierarchy> {
    let Some(dump) = ui.dump.take() else {
        return Ok(ui);
    };
    let format = match ui.dump_format.take().as_deref().map(str::trim) {
        Some("uiautomator") => "uiautomator",
        Some("harmony") => "harmony",
        Some(other) => {
            return Err(AtlasError::invalid(
                "ui_hierarchy.dump_format",
                format!("dump_format must be uiautomator or harmony, got {other:?}"),
            ));
        }
        None if dump.trim_start().starts_with('<') => "uiautomator",
        None => "harmony",
    };
    let read = if format == "uiautomator" {
        atlas_uitree::uiautomator_widgets(&dump)
    } else {
        atlas_uitree::harmony_widgets(&dump)
    };
    let widgets = read.map_err(|e| AtlasError::invalid("ui_hierarchy.dump", e.to_string()))?;
    ui.widgets.extend(widgets);
    Ok(ui)
}

/// Whether two widgets are the same one of a page: a text field by its id (its text is what it
/// holds), others by label and kind when labelled (ids such as list positions shift between
/// screens), by id otherwise.
fn same_widget(a: &Widget, b: &Widget) -> bool {
    let (ta, tb) = (a.text.trim(), b.text.trim());
    if a.is_text_field() && b.is_text_field() && !a.id.is_empty() {
        a.id == b.id
    } else if !ta.is_empty() || !tb.is_empty() {
        ta == tb && a.widget_type == b.widget_type
    } else {
        !a.id.is_empty() && a.id == b.id
    }
}

/// Adds one screen of `page` to what the page is known to show (the caller counts the visit).
/// A screen in another rendering than the page's (see [`one_rendering`]) is remembered by its
/// fingerprint and counted apart: its kinds and ids are another renderer's words, which would
/// leave the page half in one vocabulary and half in the other, like neither.
fn merge_screen(page: &mut Page, screen: &[Widget]) {
    let features = ui_features(screen);
    if !one_rendering(&ui_features(&page.widgets), &features) {
        let fingerprint = features_fingerprint(&features);
        page.other_renderings.retain(|f| *f != fingerprint);
        page.other_renderings.push(fingerprint);
        let over = page
            .other_renderings
            .len()
            .saturating_sub(MAX_OTHER_RENDERINGS);
        page.other_renderings.drain(..over);
        page.other_rendering_visits += 1;
        return;
    }
    let mut counted = vec![false; page.widgets.len()];
    for w in screen {
        // Two widgets of one screen with the same label stay two (an instruction cannot tell
        // them apart, and grounding must know it).
        match (0..page.widgets.len()).find(|&i| !counted[i] && same_widget(&page.widgets[i], w)) {
            Some(i) => {
                counted[i] = true;
                let known = &mut page.widgets[i];
                known.seen = known.seen.max(1) + 1;
                known.id = w.id.clone();
                known.bounds = w.bounds.clone();
                // A field shows what it holds now.
                if known.is_text_field() {
                    known.text = w.text.clone();
                }
                if w.checked.is_some() {
                    known.checked = w.checked;
                }
            }
            None if page.widgets.len() < MAX_WIDGETS => {
                page.widgets.push(Widget {
                    seen: 1,
                    ..w.clone()
                });
                counted.push(true);
            }
            None => {}
        }
    }
}

/// The widgets most screens of `page` show: what its structure is compared on, so the rows one
/// screen of a list happened to show do not make the page look unlike its next screen. Pages
/// stored before counts were kept count every widget as usual.
fn usual_widgets(page: &Page) -> Vec<Widget> {
    let screens = page
        .visited_count
        .saturating_sub(page.other_rendering_visits)
        .max(1);
    page.widgets
        .iter()
        .filter(|w| w.seen == 0 || u64::from(w.seen) * 2 >= screens)
        .cloned()
        .collect()
}

/// What a screen is compared to each page on: its title, its words, its widgets' features (kinds
/// and ids) and their label lines.
struct ScreenKey<'a> {
    title: Option<&'a str>,
    title_query: Option<Query>,
    words: Query,
    features: BTreeSet<String>,
    labels: BTreeSet<String>,
}

impl<'a> ScreenKey<'a> {
    fn of(title: Option<&'a str>, ui: &UiHierarchy) -> ScreenKey<'a> {
        let mut words: Vec<String> = title.map(String::from).into_iter().collect();
        words.extend(
            ui.widgets
                .iter()
                .map(|w| w.text.clone())
                .filter(|t| atlas_model::is_stable_label(t))
                .take(30),
        );
        if !ui.page_structure.is_empty() {
            words.push(ui.page_structure.clone());
        }
        ScreenKey {
            title,
            title_query: title.map(Query::words_only),
            words: Query::words_only(&words.join(" ")),
            features: ui_features(&ui.widgets),
            labels: label_lines(&ui.widgets),
        }
    }

    /// How well the screen matches `page` (0..1), and whether the page was seen in the screen's
    /// own rendering; `similarity` is how alike a query's words and the page's texts are (none
    /// when the page has no texts indexed).
    fn score(&self, page: &Page, similarity: impl Fn(&Query) -> Option<f64>) -> (f64, bool) {
        let semantic = similarity(&self.words).unwrap_or(0.0);
        let title_score = match (self.title, &self.title_query) {
            (Some(t), _) if t.eq_ignore_ascii_case(page.page_name.trim()) => Some(1.0),
            (Some(_), Some(q)) => similarity(q).map(|s| 0.8 * s),
            _ => None,
        };
        let usual = usual_widgets(page);
        let page_features = ui_features(&usual);
        let same_rendering = one_rendering(&self.features, &page_features);
        let structure = (!self.features.is_empty() && !usual.is_empty()).then(|| {
            if same_rendering {
                jaccard(&self.features, &page_features)
            } else {
                jaccard(&self.labels, &label_lines(&usual))
            }
        });
        let score = match (title_score, structure) {
            // An exact title is decisive unless the structure flatly disagrees.
            (Some(t), Some(s)) if t >= 1.0 => 0.85 + 0.15 * s,
            (Some(t), Some(s)) => 0.5 * t + 0.4 * s + 0.1 * semantic,
            (Some(t), None) if t >= 1.0 => 0.95,
            (Some(t), None) => 0.8 * t + 0.2 * semantic,
            (None, Some(s)) if !same_rendering => s + OTHER_RENDERING_LOSS,
            (None, Some(s)) => 0.85 * s + 0.15 * semantic,
            (None, None) => 0.7 * semantic,
        };
        (score, same_rendering)
    }
}

/// The best-scored page of one tier (pages of the screen's own rendering, or of another) when it
/// matches and leads the runner-up clearly — or when the runner-up is its twin: two pages showing
/// mostly the same lines (a list with one row more, the same screen recorded twice) cannot be
/// told apart by a lead, and either serves better than a new page that knows nothing.
fn clear_lead(
    app: &atlas_graph::AppGraph,
    scored: &[(f64, String, String, bool)],
    same_rendering: bool,
) -> Option<(f64, String)> {
    let mut tier = scored.iter().filter(|s| s.3 == same_rendering);
    let best = tier.next()?;
    if best.0 < MATCH_THRESHOLD {
        return None;
    }
    let leads = match tier.next() {
        None => true,
        Some(runner_up) => best.0 - runner_up.0 >= 0.05 || twins(app, &best.1, &runner_up.1),
    };
    leads.then(|| (best.0, best.1.clone()))
}

/// Two pages whose usual label lines are alike enough that either would be taken for the other.
fn twins(app: &atlas_graph::AppGraph, a: &str, b: &str) -> bool {
    let lines = |id: &str| app.page(id).map(|p| label_lines(&usual_widgets(p)));
    match (lines(a), lines(b)) {
        (Some(a), Some(b)) => jaccard(&a, &b) >= MATCH_THRESHOLD,
        _ => false,
    }
}

fn validate_widgets(ui: &UiHierarchy) -> Result<()> {
    if ui.widgets.len() > MAX_WIDGETS * 4 {
        return Err(AtlasError::invalid(
            "ui_hierarchy.widgets",
            format!("more than {} widgets", MAX_WIDGETS * 4),
        ));
    }
    for (i, w) in ui.widgets.iter().enumerate() {
        for (field, value) in [
            ("id", &w.id),
            ("text", &w.text),
            ("type", &w.widget_type),
            ("bounds", &w.bounds),
        ] {
            validate_text(&format!("ui_hierarchy.widgets[{i}].{field}"), value, false)?;
        }
    }
    validate_text("ui_hierarchy.page_structure", &ui.page_structure, false)
}

impl Atlas {
    pub(crate) fn page_actions(&self, page_id: &str) -> Vec<PageAction> {
        self.read(|g| {
            let Some(app) = g.app_of_page(page_id) else {
                return vec![];
            };
            let mut actions: Vec<(u64, PageAction)> = app
                .outgoing(page_id)
                .map(|t| {
                    let target = app
                        .page(t.to_page())
                        .map(|p| p.page_name.clone())
                        .unwrap_or_default();
                    let action = PageAction {
                        action_type: t.action().action_type.clone(),
                        widget_id: t.action().widget_id.clone(),
                        widget_text: t.action().widget_text.clone(),
                        target_page_id: t.to_page().to_string(),
                        target_page_name: target.clone(),
                        success_rate: round3(t.counts().success_rate()),
                        avg_latency_ms: round3(t.counts().avg_latency_ms()),
                        description: format!("{}，进入{}", t.action().label(), target),
                    };
                    (t.success_count() + t.fail_count(), action)
                })
                .collect();
            actions.sort_by(|(na, a), (nb, b)| {
                b.success_rate
                    .partial_cmp(&a.success_rate)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(nb.cmp(na))
            });
            actions.into_iter().map(|(_, a)| a).collect()
        })
    }

    /// Seed 000 §1.3 `match_current_page`: recognises the page and, when it is recognised,
    /// remembers what this screen of it shows (see [`Atlas::remember_screen`]).
    pub async fn match_current_page(&self, req: MatchPageRequest) -> Result<MatchPageResponse> {
        let (response, screen) = self.recognise_page(req)?;
        if let (Some(page), Some(widgets)) = (&response.page, screen) {
            self.remember_screen(&page.page_id, widgets).await?;
        }
        Ok(response)
    }

    /// A recognised screen adds to what its page is known to offer: widgets it had not shown
    /// before (a search box that appears later, another row of a list) join the page, each
    /// widget counts one more screen that showed it, and a checked state is kept as last seen.
    /// Grounding then sees what the page offers, not only its first screen.
    pub async fn remember_screen(&self, page_id: &str, widgets: Vec<Widget>) -> Result<()> {
        let now = atlas_model::now_rfc3339();
        self.commit_with(|state| {
            let Some(mut page) = state.graph.page(page_id).cloned() else {
                return Ok((vec![], ()));
            };
            page.visited_count += 1;
            merge_screen(&mut page, &widgets);
            page.updated_at = now;
            Ok((vec![Record::Page(page)], ()))
        })
        .await
    }

    /// The matching behind `match_current_page` (title first, then structure, then meaning),
    /// with the screen's widgets to remember when a page was recognised. Synchronous, so a caller
    /// with a remote embedder can run it off its async workers.
    pub fn recognise_page(
        &self,
        mut req: MatchPageRequest,
    ) -> Result<(MatchPageResponse, Option<Vec<Widget>>)> {
        validate_text("app_id", &req.app_id, true)?;
        req.ui_hierarchy = req.ui_hierarchy.map(expand_dump).transpose()?;
        let title = req
            .page_title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        if let Some(t) = title {
            validate_text("page_title", t, false)?;
        }
        if let Some(ui) = &req.ui_hierarchy {
            validate_widgets(ui)?;
        }
        if title.is_none()
            && req
                .ui_hierarchy
                .as_ref()
                .is_none_or(|u| u.widgets.is_empty() && u.page_structure.is_empty())
        {
            return Err(AtlasError::invalid(
                "page_title",
                "give page_title or ui_hierarchy",
            ));
        }
        let ui = req.ui_hierarchy.unwrap_or_default();
        let screen = ScreenKey::of(title, &ui);

        let (scored, best) = {
            let state = self.state.read();
            let Some(app) = state.graph.app(&req.app_id) else {
                return Ok((
                    MatchPageResponse {
                        matched: false,
                        page: None,
                        available_actions: vec![],
                        candidates: vec![],
                    },
                    None,
                ));
            };
            let mut scored: Vec<(f64, String, String, bool)> = app
                .pages()
                .iter()
                .map(|page| {
                    let doc = state.text.page_doc(&req.app_id, &page.page_id);
                    let (score, same_rendering) = screen.score(page, |q| {
                        doc.map(|d| state.text.screen_similarity(d, q) as f64)
                    });
                    let (id, name) = (page.page_id.clone(), page.page_name.clone());
                    (score, id, name, same_rendering)
                })
                .collect();
            scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
            // A screen in another rendering that was taken for a page before is that page again.
            let fingerprint =
                (!ui.widgets.is_empty()).then(|| features_fingerprint(&screen.features));
            let remembered = fingerprint.and_then(|fingerprint| {
                let page = app
                    .pages()
                    .iter()
                    .find(|p| p.other_renderings.contains(&fingerprint))?;
                scored
                    .iter()
                    .find(|s| s.1 == page.page_id)
                    .map(|s| (s.0, s.1.clone()))
            });
            // The screen's own rendering first: its pages compare on more (kinds and ids), so one
            // that matches is the page, before any page of another rendering is considered.
            let best = remembered
                .or_else(|| clear_lead(app, &scored, true))
                .or_else(|| clear_lead(app, &scored, false));
            (scored, best)
        };
        let candidates = scored
            .iter()
            .filter(|s| s.0 >= 0.2)
            .take(5)
            .map(|(score, id, name, _)| Candidate {
                page_id: id.clone(),
                page_name: name.clone(),
                confidence: round3(score.min(1.0)),
            })
            .collect();
        let Some((score, page_id)) = best else {
            return Ok((
                MatchPageResponse {
                    matched: false,
                    page: None,
                    available_actions: vec![],
                    candidates,
                },
                None,
            ));
        };
        let page = self
            .read(|g| g.page(&page_id).cloned())
            .ok_or_else(|| AtlasError::PageNotFound(page_id.clone()))?;
        let response = MatchPageResponse {
            matched: true,
            page: Some(MatchedPage {
                page_id: page.page_id.clone(),
                page_name: page.page_name.clone(),
                page_type: page.page_type.as_str().into(),
                description: page.description.clone(),
                confidence: round3(score.min(1.0)),
            }),
            available_actions: self.page_actions(&page_id),
            candidates,
        };
        Ok((response, Some(ui.widgets).filter(|w| !w.is_empty())))
    }

    /// Seed 000 §2.2 `add_page`. Adding an existing page updates it and is not an error.
    pub async fn add_page(&self, mut req: AddPageRequest) -> Result<AddPageResponse> {
        let update = PageUpdate::checked(&mut req)?;
        let id = page_id(&req.app_id, &req.page_name);
        // The page's texts once written: the request's, over what the page already says.
        let texts = self.read(|g| {
            let existing = g.app(&req.app_id).and_then(|a| a.page(&id));
            let mut intents = existing.map(|p| p.intents.clone()).unwrap_or_default();
            crate::add_missing(&mut intents, &req.intents);
            let description = match existing {
                Some(p) if update.description.is_empty() => p.description.clone(),
                _ => update.description.clone(),
            };
            let name = existing.map_or(req.page_name.as_str(), |p| p.page_name.as_str());
            DocTexts::of_page(name, &description, &intents)
        });
        let ready = self.embed_ahead(&req.app_id, &[(page_key(&id), texts)])?;
        let existed = self
            .commit_embedded(&ready, |state| {
                let app = state.graph.app(&req.app_id);
                let existing = app.and_then(|a| a.page(&id)).cloned();
                let existed = existing.is_some();
                let mut page = existing.unwrap_or_else(|| Page {
                    page_id: id.clone(),
                    app_id: req.app_id.clone(),
                    page_name: req.page_name.clone(),
                    page_type: PageType::Other,
                    ordinal: app.map(|a| a.next_ordinal()).unwrap_or(0),
                    created_at: update.now.clone(),
                    updated_at: update.now.clone(),
                    ..Default::default()
                });
                update.apply(&mut page, &req);
                let mut records = Vec::new();
                records.extend(update.app_record(app, &page, &req.app_id));
                records.push(Record::Page(page));
                records.extend(update.intents(app, &req, &id));
                Ok((records, existed))
            })
            .await?;
        Ok(AddPageResponse {
            success: true,
            page_id: id,
            message: if existed {
                "页面已存在，已更新".into()
            } else {
                "页面已添加".into()
            },
        })
    }

    /// Seed 000 §3.1 `get_available_actions`, by success rate.
    pub fn get_available_actions(
        &self,
        req: AvailableActionsRequest,
    ) -> Result<AvailableActionsResponse> {
        validate_text("page_id", &req.page_id, true)?;
        let page = self
            .read(|g| g.page(&req.page_id).cloned())
            .ok_or_else(|| AtlasError::PageNotFound(req.page_id.clone()))?;
        let actions = self.page_actions(&req.page_id);
        Ok(AvailableActionsResponse {
            page_id: page.page_id,
            page_name: page.page_name,
            total_count: actions.len(),
            actions,
        })
    }
}

/// A web page's fields beyond the seed: its address, its kind's address and its fingerprint.
fn validate_web_page(req: &AddPageRequest) -> Result<()> {
    if let Some(url) = &req.url {
        validate_text("url", url, false)?;
    }
    if let Some(template) = &req.url_template {
        validate_text("url_template", template, true)?;
        if !template.contains(Page::URL_ITEM) {
            return Err(AtlasError::invalid(
                "url_template",
                "url_template must write the parts that name an item as {id}",
            ));
        }
    }
    if let Some(fp) = &req.dom_fingerprint
        && !(8..=64).contains(&fp.len())
            | fp.bytes().any(|b| !matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(AtlasError::invalid(
            "dom_fingerprint",
            "dom_fingerprint must be 8 to 64 lowercase hex digits",
        ));
    }
    Ok(())
}

/// What an `add_page` call changes, checked: its page type, description, version and title, at
/// one time.
struct PageUpdate {
    page_type: Option<PageType>,
    description: String,
    version: Option<String>,
    title: String,
    now: String,
}

impl PageUpdate {
    /// Checks the request (its dump expanded into widgets); refuses it, changing nothing, when
    /// a field is not what seed 000 allows.
    fn checked(req: &mut AddPageRequest) -> Result<PageUpdate> {
        validate_text("app_id", &req.app_id, true)?;
        req.ui_hierarchy = req.ui_hierarchy.take().map(expand_dump).transpose()?;
        validate_text("page_name", &req.page_name, true)?;
        validate_web_page(req)?;
        let page_type = match req.page_type.as_deref() {
            None => None,
            Some(t) => Some(PageType::parse(t).ok_or_else(|| {
                AtlasError::invalid(
                    "page_type",
                    format!(
                        "page_type must be home, list, detail, form, search or other, got {t:?}"
                    ),
                )
            })?),
        };
        let description = req.description.take().unwrap_or_default();
        validate_text("description", &description, false)?;
        for (i, intent) in req.intents.iter().enumerate() {
            validate_text(&format!("intents[{i}]"), intent, true)?;
        }
        if let Some(ui) = &req.ui_hierarchy {
            validate_widgets(ui)?;
        }
        let version = crate::versions::version_named("app_version", req.app_version.as_deref())?;
        let title = req.title.take().unwrap_or_default();
        validate_text("title", &title, false)?;
        Ok(PageUpdate {
            page_type,
            description,
            version,
            title,
            now: atlas_model::now_rfc3339(),
        })
    }

    /// The page as the call leaves it: what it says is set, the screen shown merged, one visit
    /// more, and (with a version) seen in it with the face it showed there.
    fn apply(&self, page: &mut Page, req: &AddPageRequest) {
        if let Some(url) = req.url.as_ref().filter(|u| !u.is_empty()) {
            page.url = url.clone();
        }
        if let Some(template) = &req.url_template {
            page.url_template = template.clone();
        }
        if let Some(fp) = &req.dom_fingerprint {
            page.fingerprint = fp.clone();
        }
        if let Some(t) = self.page_type {
            page.page_type = t;
        }
        if !self.description.is_empty() {
            page.description = self.description.clone();
        }
        crate::add_missing(&mut page.intents, &req.intents);
        if let Some(ui) = &req.ui_hierarchy {
            if !ui.widgets.is_empty() {
                merge_screen(page, &ui.widgets);
            }
            if !ui.page_structure.is_empty() {
                page.page_structure = ui.page_structure.clone();
            }
        }
        page.visited_count += 1;
        page.updated_at = self.now.clone();
        if let Some(version) = &self.version {
            page.saw(version);
            // A call that shows nothing of the page (a visit counted) keeps its face.
            let shown: Vec<&Widget> = req.ui_hierarchy.iter().flat_map(|ui| &ui.widgets).collect();
            if !shown.is_empty() || !self.title.is_empty() {
                let title = if self.title.is_empty() {
                    &req.page_name
                } else {
                    &self.title
                };
                let texts = shown.iter().filter(|w| !w.is_text_field());
                let face = PageFace::of(version, title, texts.map(|w| w.text.as_str()));
                keep_face(&mut page.faces, face);
            }
        }
    }

    /// The app's record, where the call changes it: a new app, a page that becomes its home
    /// (a home page where it has none of that type), a version it did not have.
    fn app_record(&self, app: Option<&AppGraph>, page: &Page, app_id: &str) -> Option<Record> {
        let mut record = app.map(|a| a.app.clone()).unwrap_or_else(|| App {
            app_id: app_id.to_string(),
            home_page: None,
            created_at: self.now.clone(),
            updated_at: self.now.clone(),
            ..Default::default()
        });
        let becomes_home = page.page_type == PageType::Home
            && record.home_page.as_deref().is_none_or(|h| {
                app.and_then(|a| a.page(h))
                    .is_none_or(|p| p.page_type != PageType::Home)
            });
        let new_version = self.version.as_deref().is_some_and(|v| {
            crate::versions::with_version(&mut record, v, VersionSource::Reported)
        });
        if app.is_some() && !becomes_home && !new_version {
            return None;
        }
        if becomes_home || record.home_page.is_none() {
            record.home_page = Some(page.page_id.clone());
        }
        record.updated_at = self.now.clone();
        Some(Record::App(record))
    }

    /// The intents the call names, each leading to the page (seen in the version, if any).
    fn intents(&self, app: Option<&AppGraph>, req: &AddPageRequest, page_id: &str) -> Vec<Record> {
        req.intents
            .iter()
            .map(|text| {
                let intent_id = atlas_model::intent_id(&req.app_id, text);
                let known = app.and_then(|a| a.intent(&intent_id));
                let mut intent = Intent {
                    intent_id,
                    app_id: req.app_id.clone(),
                    intent_text: text.clone(),
                    target_page: Some(page_id.to_string()),
                    keywords: vec![],
                    created_at: self.now.clone(),
                    seen_in: known.map(|i| i.seen_in.clone()).unwrap_or_default(),
                    gone_in: known.and_then(|i| i.gone_in.clone()),
                };
                if let Some(version) = &self.version {
                    intent.saw(version);
                }
                Record::Intent(intent)
            })
            .collect()
    }
}
