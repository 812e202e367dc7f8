//! A seeded update of a recorded app: the next release, made of the changes studies of app
//! evolution report between releases — a text renamed, an id changed, widgets reordered, an
//! entry moved into another menu, a dialog put in the way (what's new, a rating, a permission), a
//! confirmation added to a path, an entry removed.
//!
//! Each update applies every kind of change at least once, on the screens the app's tasks pass
//! through (the recorded steps it is given), and says what it changed. It keeps what the tasks
//! need to stay doable, and says how: where a recorded view went ([`Update::bounds`]) and, on a
//! screen it added, the tap that goes on ([`Update::pass`]); an evaluation's scripted model reads
//! both, as a person would read the new screen.
//!
//! Key design decision: **the same seed gives the same update**, on any machine and any build
//! (a ChaCha stream, whose output the `rand_chacha` crate keeps stable), so a measured rerun after
//! an update can be repeated exactly.

use std::collections::{BTreeMap, HashMap, HashSet};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::app::{AppVersion, RecordedApp, Screen, Trigger, View};

/// A view's bounds: [[left, top], [right, bottom]].
pub type Bounds = [[i64; 2]; 2];

/// The kinds of change an update makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// A widget's text reworded, everywhere it shows.
    TextRenamed,
    /// A widget's resource id changed, everywhere it shows.
    IdChanged,
    /// Two widgets of a list swapped places.
    WidgetMoved,
    /// An entry moved into a "More" menu of its own.
    EntryMovedToMenu,
    /// A dialog shown after a step (what's new, a rating request, a permission).
    DialogInserted,
    /// A confirmation screen added to a path.
    ConfirmationAdded,
    /// An entry no task uses removed.
    EntryRemoved,
}

impl Change {
    /// Every kind, in the order an update applies them.
    pub const ALL: [Change; 7] = [
        Change::DialogInserted,
        Change::ConfirmationAdded,
        Change::EntryMovedToMenu,
        Change::WidgetMoved,
        Change::EntryRemoved,
        Change::TextRenamed,
        Change::IdChanged,
    ];
}

/// What an update changed, and how its tasks stay doable.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Update {
    /// The seed it was made from.
    pub seed: u64,
    /// The version it is.
    pub version: AppVersion,
    /// How many changes of each kind.
    pub changes: BTreeMap<Change, usize>,
    /// Each change, in words.
    pub said: Vec<String>,
    /// Where recorded views went: on a screen, what was inside a region moved by an offset.
    #[serde(skip)]
    moved: HashMap<String, Vec<(Bounds, [i64; 2])>>,
    /// On a screen the update added: the tap that goes on the way the step before was going,
    /// and the screen it goes on to.
    #[serde(skip)]
    passes: HashMap<String, (Bounds, String)>,
}

impl Update {
    /// Where the view of `bounds` on `screen` is now.
    pub fn bounds(&self, screen: &str, bounds: Bounds) -> Bounds {
        self.moved
            .get(screen)
            .and_then(|regions| regions.iter().find(|(region, _)| inside(bounds, *region)))
            .map_or(bounds, |(_, offset)| shifted(bounds, *offset))
    }

    /// On a screen the update added, the tap that goes on where the step that led there was
    /// going.
    pub fn pass(&self, screen: &str) -> Option<Bounds> {
        self.passes.get(screen).map(|(tap, _)| *tap)
    }

    /// On a screen the update added, the screen its [`Update::pass`] goes on to: where the step
    /// that led there was going (a person who came there another way goes on only if that is
    /// where they are going too).
    pub fn pass_to(&self, screen: &str) -> Option<&str> {
        self.passes.get(screen).map(|(_, to)| to.as_str())
    }

    /// How many changes of each kind, in a line: `dialog_inserted 2, text_renamed 1`.
    pub fn summary(&self) -> String {
        self.changes
            .iter()
            .map(|(change, n)| {
                let name = serde_json::to_value(change).unwrap_or_default();
                format!("{} {n}", name.as_str().unwrap_or_default())
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The screens the update added, in name order.
    pub fn added_screens(&self) -> Vec<String> {
        let mut added: Vec<String> = self.passes.keys().cloned().collect();
        added.sort();
        added
    }

    fn note(&mut self, change: Change, said: String) {
        *self.changes.entry(change).or_default() += 1;
        self.said.push(said);
    }
}

/// Common words of user interfaces and what a later release may call them instead.
const REWORDINGS: [(&str, &str); 24] = [
    ("settings", "Preferences"),
    ("preferences", "Settings"),
    ("delete", "Remove"),
    ("remove", "Delete"),
    ("save", "Done"),
    ("done", "Save"),
    ("ok", "Got it"),
    ("cancel", "Dismiss"),
    ("add", "New"),
    ("new", "Create"),
    ("create", "Add"),
    ("edit", "Modify"),
    ("search", "Find"),
    ("share", "Send"),
    ("send", "Share"),
    ("open", "View"),
    ("more options", "More"),
    ("about", "About this app"),
    ("help", "Help & feedback"),
    ("sort by", "Order by"),
    ("rename", "Change name"),
    ("properties", "Details"),
    ("select all", "Choose all"),
    ("close", "Exit"),
];

/// The next release of `app`, made from `seed`, with its changes on the screens of `steps` (the
/// recorded steps of the app's tasks; every recorded tap when empty). Refused when the app has
/// no step an update could change.
pub fn update(
    app: &RecordedApp,
    seed: u64,
    steps: &[(String, Trigger)],
) -> Result<(RecordedApp, Update), crate::SimError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut next = app.clone();
    let mut update = Update {
        seed,
        version: AppVersion {
            name: format!("{}.{}", bumped(&app.version.name), seed % 1000),
            code: app.version.code + 1 + seed % 1000,
        },
        ..Update::default()
    };
    next.version = update.version.clone();
    // The taps the tasks take, on views the screens show, in an order of the seed's; then every
    // other recorded tap, for a kind of change none of the tasks' steps takes.
    let all_taps = || {
        let mut all: Vec<(String, Bounds)> = app
            .transitions
            .keys()
            .filter_map(|(s, t)| match t {
                Trigger::Tap(b) => Some((s.clone(), *b)),
                _ => None,
            })
            .collect();
        all.sort();
        all
    };
    let chosen: Vec<(String, Bounds)> = if steps.is_empty() {
        all_taps()
    } else {
        steps
            .iter()
            .filter_map(|(s, t)| match t {
                Trigger::Tap(b) => Some((s.clone(), *b)),
                _ => None,
            })
            .collect()
    };
    let mut seen = HashSet::new();
    let mut usable = |taps: Vec<(String, Bounds)>, rng: &mut ChaCha8Rng| {
        let mut taps: Vec<(String, Bounds)> = taps
            .into_iter()
            .filter(|(s, b)| {
                app.transitions.contains_key(&(s.clone(), Trigger::Tap(*b)))
                    && view_at(app.screens.get(s), *b).is_some()
                    && seen.insert((s.clone(), *b))
            })
            .collect();
        taps.shuffle(rng);
        taps
    };
    let mut taps = usable(chosen, &mut rng);
    if taps.is_empty() {
        return Err(crate::SimError::NothingToUpdate);
    }
    let first = taps.len();
    // A stream of its own, so that where the tasks' steps take every kind, the update is the same
    // as without the others.
    taps.extend(usable(all_taps(), &mut ChaCha8Rng::seed_from_u64(!seed)));
    // Every step the tasks take, so that nothing they need is removed.
    let needed: HashSet<(String, Bounds)> = steps
        .iter()
        .filter_map(|(s, t)| match t {
            Trigger::Tap(b) | Trigger::Type(b, _) => Some((s.clone(), *b)),
            Trigger::Key(_) => None,
        })
        .collect();
    // A step is changed once: two changes on one step would hide each other.
    let mut used: HashSet<(String, Bounds)> = HashSet::new();
    for change in Change::ALL {
        let times = rng.random_range(1..=2);
        for time in 0..times {
            // The tasks' own steps first; the others only so that each kind lands once.
            let reach = if time == 0 { taps.len() } else { first };
            let free: Vec<&(String, Bounds)> = taps[..reach]
                .iter()
                .filter(|t| !used.contains(*t))
                .collect();
            let mut done = false;
            for (screen, bounds) in free {
                if apply(
                    change,
                    &mut next,
                    &mut update,
                    screen,
                    *bounds,
                    &needed,
                    &mut rng,
                ) {
                    used.insert((screen.clone(), *bounds));
                    done = true;
                    break;
                }
            }
            if !done {
                break;
            }
        }
    }
    Ok((next, update))
}

/// "1.0" → "2": the next major version.
fn bumped(name: &str) -> u64 {
    name.split('.')
        .next()
        .and_then(|m| m.parse::<u64>().ok())
        .unwrap_or(1)
        + 1
}

/// Applies one change at the step (`screen`, tap on `bounds`); false where it does not fit.
fn apply(
    change: Change,
    app: &mut RecordedApp,
    update: &mut Update,
    screen: &str,
    bounds: Bounds,
    needed: &HashSet<(String, Bounds)>,
    rng: &mut ChaCha8Rng,
) -> bool {
    let Some(view) = view_at(app.screens.get(screen), bounds).cloned() else {
        return false;
    };
    let tap = (screen.to_string(), Trigger::Tap(bounds));
    let Some(target) = app.transitions.get(&tap).cloned() else {
        return false;
    };
    // A screen put in the way belongs after a step that goes somewhere: not after a tap that
    // focuses a field or otherwise leaves the screen where it is.
    let goes_on = target != screen && !view.editable;
    if matches!(
        change,
        Change::DialogInserted | Change::ConfirmationAdded | Change::EntryMovedToMenu
    ) && !goes_on
    {
        return false;
    }
    let step = Step {
        screen,
        bounds,
        view,
        tap,
        target,
        n: update.said.len(),
    };
    match change {
        Change::DialogInserted => insert_dialog(app, update, step, rng),
        Change::ConfirmationAdded => add_confirmation(app, update, step),
        Change::EntryMovedToMenu => move_into_menu(app, update, step),
        Change::WidgetMoved => move_widget(app, update, step, rng),
        Change::EntryRemoved => remove_entry(app, update, step, needed, rng),
        Change::TextRenamed => rename_text(app, update, step),
        Change::IdChanged => change_id(app, update, step, rng),
    }
}

/// Where a change goes: a tap on `bounds` of `screen`, on `view`, which led to `target`; `n`
/// numbers the change among the update's.
struct Step<'a> {
    screen: &'a str,
    bounds: Bounds,
    view: View,
    tap: (String, Trigger),
    target: String,
    n: usize,
}

/// A dialog after the step, which either button or Back dismisses.
fn insert_dialog(
    app: &mut RecordedApp,
    update: &mut Update,
    step: Step,
    rng: &mut ChaCha8Rng,
) -> bool {
    let Step {
        screen,
        view,
        tap,
        target,
        n,
        ..
    } = step;
    let [title, message, yes, no] = [
        [
            "What's new",
            "This version brings a fresh look.",
            "OK",
            "Later",
        ],
        [
            "Enjoying the app?",
            "Rate us on the store.",
            "Rate now",
            "Not now",
        ],
        [
            "Allow notifications?",
            "Stay up to date with reminders.",
            "Allow",
            "Don't allow",
        ],
    ][rng.random_range(0..3)];
    let id = format!("{target}~dialog{n}");
    let (dialog, buttons) = dialog_screen(app, screen, &id, title, message, [no, yes]);
    app.screens.insert(id.clone(), dialog);
    app.transitions.insert(tap, id.clone());
    // Either button, or Back, dismisses it: the app goes on.
    for (b, _) in &buttons {
        app.transitions
            .insert((id.clone(), Trigger::Tap(*b)), target.clone());
    }
    app.transitions
        .insert((id.clone(), Trigger::Key("BACK".into())), target.clone());
    update.passes.insert(id, (buttons[1].0, target));
    update.note(
        Change::DialogInserted,
        format!(
            "a dialog \"{title}\" ({yes} / {no}) after {} on {screen}",
            label(&view)
        ),
    );
    true
}

/// A confirmation after the step: Continue goes on, Cancel or Back stays.
fn add_confirmation(app: &mut RecordedApp, update: &mut Update, step: Step) -> bool {
    let Step {
        screen,
        view,
        tap,
        target,
        n,
        ..
    } = step;
    let id = format!("{screen}~confirm{n}");
    let what = named(&view);
    let (confirm, buttons) = dialog_screen(
        app,
        screen,
        &id,
        "Are you sure?",
        "Do you want to continue?",
        ["Cancel", "Continue"],
    );
    app.screens.insert(id.clone(), confirm);
    app.transitions.insert(tap, id.clone());
    app.transitions
        .insert((id.clone(), Trigger::Tap(buttons[0].0)), screen.to_string());
    app.transitions
        .insert((id.clone(), Trigger::Tap(buttons[1].0)), target.clone());
    app.transitions.insert(
        (id.clone(), Trigger::Key("BACK".into())),
        screen.to_string(),
    );
    update.passes.insert(id, (buttons[1].0, target));
    update.note(
        Change::ConfirmationAdded,
        format!(
            "a confirmation (Cancel / Continue) after {what} on {}",
            short(screen)
        ),
    );
    true
}

/// The step's entry moved into a More menu in its place.
fn move_into_menu(app: &mut RecordedApp, update: &mut Update, step: Step) -> bool {
    let Step {
        screen,
        bounds,
        view,
        tap,
        target,
        n,
        ..
    } = step;
    if label(&view).is_empty() {
        return false;
    }
    let id = format!("{screen}~menu{n}");
    let Some(mut menu) = app.screens.get(screen).cloned() else {
        return false;
    };
    let (w, _) = size_of(&menu);
    let header = [[0, 0], [w, 220]];
    let row = [[0, 260], [w, 420]];
    menu.state_str = id.clone();
    menu.name = None;
    menu.views = vec![
        made_view(&view, "More", "more_title", header, false),
        View {
            bounds: Some(row),
            parent: None,
            ..view.clone()
        },
    ];
    app.screens.insert(id.clone(), menu);
    if let Some(s) = app.screens.get_mut(screen)
        && let Some(v) = s.views.iter_mut().find(|v| v.bounds == Some(bounds))
    {
        // In the entry's place in the screen's tree.
        *v = View {
            parent: v.parent,
            ..made_view(&view, "More", "more", bounds, true)
        };
    }
    app.transitions.insert(tap, id.clone());
    app.transitions
        .insert((id.clone(), Trigger::Tap(row)), target.clone());
    app.transitions.insert(
        (id.clone(), Trigger::Key("BACK".into())),
        screen.to_string(),
    );
    update.passes.insert(id, (row, target));
    update.note(
        Change::EntryMovedToMenu,
        format!(
            "{} moved into a More menu on {}",
            named(&view),
            short(screen)
        ),
    );
    true
}

/// The step's widget swapped with a sibling of its size.
fn move_widget(
    app: &mut RecordedApp,
    update: &mut Update,
    step: Step,
    rng: &mut ChaCha8Rng,
) -> bool {
    let Step {
        screen,
        bounds,
        view,
        ..
    } = step;
    let Some(s) = app.screens.get(screen) else {
        return false;
    };
    let (vw, vh) = extent(bounds);
    // A sibling of the same size: the list's other row it swaps places with.
    let mut partners: Vec<Bounds> = s
        .views
        .iter()
        .filter(|v| v.is_shown() && v.clickable)
        .filter_map(|v| v.bounds)
        .filter(|b| *b != bounds && extent(*b) == (vw, vh) && !overlap(*b, bounds))
        .collect();
    partners.sort();
    partners.dedup();
    let Some(&other) = partners.get(rng.random_range(0..partners.len().max(1))) else {
        return false;
    };
    swap_places(app, screen, bounds, other);
    update.moved.entry(screen.to_string()).or_default().extend([
        (bounds, delta(bounds, other)),
        (other, delta(other, bounds)),
    ]);
    update.note(
        Change::WidgetMoved,
        format!(
            "{} swapped places with its neighbour on {screen}",
            label(&view)
        ),
    );
    true
}

/// Another entry of the step's screen, one no task needs, removed.
fn remove_entry(
    app: &mut RecordedApp,
    update: &mut Update,
    step: Step,
    needed: &HashSet<(String, Bounds)>,
    rng: &mut ChaCha8Rng,
) -> bool {
    let Step { screen, .. } = step;
    let Some(s) = app.screens.get(screen) else {
        return false;
    };
    // Another entry of the screen that no task uses (nor holds one that does).
    let mut spare: Vec<View> = s
        .views
        .iter()
        .filter(|v| v.is_shown() && v.clickable && !label(v).is_empty())
        .filter(|v| {
            v.bounds.is_some_and(|b| {
                !needed
                    .iter()
                    .any(|(ns, nb)| ns == screen && (overlap(b, *nb) || b == *nb))
            })
        })
        .cloned()
        .collect();
    spare.sort_by_key(|v| v.bounds);
    if spare.is_empty() {
        return false;
    }
    let gone = spare.swap_remove(rng.random_range(0..spare.len()));
    let gone_bounds = gone.bounds;
    if let Some(s) = app.screens.get_mut(screen) {
        s.views
            .retain(|v| v.bounds != gone_bounds || label(v) != label(&gone));
    }
    if let Some(b) = gone_bounds {
        app.transitions
            .remove(&(screen.to_string(), Trigger::Tap(b)));
    }
    update.note(
        Change::EntryRemoved,
        format!("{} removed from {}", named(&gone), short(screen)),
    );
    true
}

/// The step's text reworded wherever it shows.
fn rename_text(app: &mut RecordedApp, update: &mut Update, step: Step) -> bool {
    let Step { view, .. } = step;
    let old = view.text.clone().unwrap_or_default();
    if old.trim().is_empty() {
        return false;
    }
    let new = reworded(&old);
    let count = replace_everywhere(app, |v| &mut v.text, &old, &new);
    update.note(
        Change::TextRenamed,
        format!("\"{old}\" reads \"{new}\" ({count} views)"),
    );
    true
}

/// The step's resource id renamed wherever it shows.
fn change_id(app: &mut RecordedApp, update: &mut Update, step: Step, rng: &mut ChaCha8Rng) -> bool {
    let Step { view, .. } = step;
    let Some(old) = view.resource_id.clone().filter(|id| !id.is_empty()) else {
        return false;
    };
    let prefix = old.split_once(":id/").map_or("", |(p, _)| p);
    let new = format!(
        "{prefix}:id/v{}_{:x}",
        update.version.code,
        rng.random::<u16>()
    );
    let count = replace_everywhere(app, |v| &mut v.resource_id, &old, &new);
    update.note(
        Change::IdChanged,
        format!("id {old} is {new} ({count} views)"),
    );
    true
}

/// Sets `field` to `new` in every view of every screen where it is `old`: how many it changed.
fn replace_everywhere(
    app: &mut RecordedApp,
    field: impl Fn(&mut View) -> &mut Option<String>,
    old: &str,
    new: &str,
) -> usize {
    let mut count = 0;
    for v in app.screens.values_mut().flat_map(|s| s.views.iter_mut()) {
        let value = field(v);
        if value.as_deref() == Some(old) {
            *value = Some(new.to_string());
            count += 1;
        }
    }
    count
}

/// A dialog over `over`'s screen: a title, a message and two buttons (the second goes on);
/// the screen and each button's bounds with the text it shows.
fn dialog_screen(
    app: &RecordedApp,
    over: &str,
    id: &str,
    title: &str,
    message: &str,
    buttons: [&str; 2],
) -> (Screen, [(Bounds, String); 2]) {
    let base = &app.screens[over];
    let (w, h) = size_of(base);
    let template = base.views.first().cloned().unwrap_or_default();
    let (top, bottom) = (h * 2 / 5, h * 3 / 5);
    let panel = [[w / 10, top], [w * 9 / 10, bottom]];
    let title_box = [[w / 10 + 40, top + 40], [w * 9 / 10 - 40, top + 140]];
    let text_box = [[w / 10 + 40, top + 160], [w * 9 / 10 - 40, top + 300]];
    let left = [[w / 2 - 360, bottom - 160], [w / 2 - 40, bottom - 40]];
    let right = [[w / 2 + 40, bottom - 160], [w / 2 + 360, bottom - 40]];
    let views = vec![
        made_view(&template, "", "parentPanel", panel, false),
        made_view(&template, title, "alertTitle", title_box, false),
        made_view(&template, message, "message", text_box, false),
        made_view(&template, buttons[0], "button2", left, true),
        made_view(&template, buttons[1], "button1", right, true),
    ];
    let screen = Screen {
        state_str: id.to_string(),
        name: None,
        foreground_activity: base.foreground_activity.clone(),
        width: base.width,
        height: base.height,
        views,
    };
    (
        screen,
        [
            (left, buttons[0].to_string()),
            (right, buttons[1].to_string()),
        ],
    )
}

/// A view like `like` (its package and visibility), with this text, id and bounds.
fn made_view(like: &View, text: &str, id: &str, bounds: Bounds, clickable: bool) -> View {
    let package = like.package.clone().unwrap_or_default();
    View {
        text: Some(text.to_string()),
        content_description: None,
        resource_id: Some(if package.is_empty() {
            format!("android:id/{id}")
        } else {
            format!("{package}:id/{id}")
        }),
        class: Some(
            if clickable {
                "android.widget.Button"
            } else {
                "android.widget.TextView"
            }
            .to_string(),
        ),
        bounds: Some(bounds),
        clickable,
        checkable: false,
        checked: false,
        selected: false,
        editable: false,
        focused: false,
        is_password: false,
        long_clickable: false,
        scrollable: false,
        visible: Some(true),
        package: like.package.clone(),
        // A view the release adds stands on its own in the dump, not under the recorded
        // view it was made like (whose place in another screen's list means nothing here).
        parent: None,
    }
}

/// Swaps the places of the views at `a` and `b` on `screen`, and of the steps recorded on them.
fn swap_places(app: &mut RecordedApp, screen: &str, a: Bounds, b: Bounds) {
    let (da, db) = (delta(a, b), delta(b, a));
    if let Some(s) = app.screens.get_mut(screen) {
        for v in &mut s.views {
            let Some(vb) = v.bounds else { continue };
            // The rows and everything inside them move together.
            if inside(vb, a) {
                v.bounds = Some(shifted(vb, da));
            } else if inside(vb, b) {
                v.bounds = Some(shifted(vb, db));
            }
        }
    }
    let keys: Vec<(String, Trigger)> = app
        .transitions
        .keys()
        .filter(|(s, _)| s == screen)
        .cloned()
        .collect();
    let mut moved = Vec::new();
    for key in keys {
        let bounds = match &key.1 {
            Trigger::Tap(x) | Trigger::Type(x, _) => *x,
            Trigger::Key(_) => continue,
        };
        let shift = if inside(bounds, a) {
            da
        } else if inside(bounds, b) {
            db
        } else {
            continue;
        };
        if let Some(to) = app.transitions.remove(&key) {
            let trigger = match key.1 {
                Trigger::Tap(x) => Trigger::Tap(shifted(x, shift)),
                Trigger::Type(x, text) => Trigger::Type(shifted(x, shift), text),
                Trigger::Key(k) => Trigger::Key(k),
            };
            moved.push(((key.0, trigger), to));
        }
    }
    app.transitions.extend(moved);
}

fn view_at(screen: Option<&Screen>, bounds: Bounds) -> Option<&View> {
    screen?
        .views
        .iter()
        .find(|v| v.bounds == Some(bounds) && v.is_shown())
}

/// A screen's id, short, for what an update says.
fn short(screen: &str) -> &str {
    &screen[..screen.len().min(12)]
}

/// What a view is called in what an update says: its label, else its class.
fn named(view: &View) -> String {
    let label = label(view);
    if label.is_empty() {
        let class = view.class.as_deref().unwrap_or("view");
        format!("the {}", class.rsplit('.').next().unwrap_or(class))
    } else {
        format!("\"{label}\"")
    }
}

/// What a view shows: its text, else its description.
fn label(view: &View) -> String {
    view.text
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| view.content_description.clone())
        .unwrap_or_default()
}

fn reworded(old: &str) -> String {
    let key = old.trim().to_lowercase();
    REWORDINGS
        .iter()
        .find(|(from, _)| *from == key)
        .map(|(_, to)| to.to_string())
        .unwrap_or_else(|| format!("{} ›", old.trim()))
}

fn size_of(screen: &Screen) -> (i64, i64) {
    let w = if screen.width > 0 { screen.width } else { 1080 };
    let h = if screen.height > 0 {
        screen.height
    } else {
        2400
    };
    (i64::from(w), i64::from(h))
}

fn extent(b: Bounds) -> (i64, i64) {
    (b[1][0] - b[0][0], b[1][1] - b[0][1])
}

fn overlap(a: Bounds, b: Bounds) -> bool {
    a[0][0] < b[1][0] && b[0][0] < a[1][0] && a[0][1] < b[1][1] && b[0][1] < a[1][1]
}

fn inside(inner: Bounds, outer: Bounds) -> bool {
    inner[0][0] >= outer[0][0]
        && inner[0][1] >= outer[0][1]
        && inner[1][0] <= outer[1][0]
        && inner[1][1] <= outer[1][1]
}

fn delta(from: Bounds, to: Bounds) -> [i64; 2] {
    [to[0][0] - from[0][0], to[0][1] - from[0][1]]
}

fn shifted(b: Bounds, d: [i64; 2]) -> Bounds {
    [
        [b[0][0] + d[0], b[0][1] + d[1]],
        [b[1][0] + d[0], b[1][1] + d[1]],
    ]
}
