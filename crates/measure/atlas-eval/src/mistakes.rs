//! An imperfect model (`--mistakes P --seed S`): the ideal model takes a plausible wrong action
//! on a share of its steps, as real models do, so the graph is measured on what it must not
//! learn — a rerun is to replay the clean way, not the model's stumbles.
//!
//! Key design decision: **a mistake is a function of (seed, task, screen, step)**, not of a
//! random stream. Every condition — the model alone, a first run, a rerun, after an update —
//! meets the same mistake on the same screen of the same step, so the conditions compare the
//! graph, not luck; and the model over HTTP (`atlas model-sim`), which keeps no state, makes
//! the same mistakes as the one in process.
//!
//! The mistakes are the kinds models make on phones, each at its share of the mistaken steps
//! ([`SHARES`]):
//! - a tap on another widget of the screen (the nearest one: a neighbour in a list, the button
//!   beside), gone back from;
//! - a switch flipped that the task did not ask for, flipped back next;
//! - a needless Back;
//! - an early finish: `finish` on a screen of the task before its last, so the run fails;
//! - a detour of two or three screens: a wrong tap, then taps on the screens it opens, left by
//!   Back later;
//! - the same tap twice: the right one, then again at the same point on the screen it opened;
//! - wrong text typed (a typo), then the right text typed over it;
//! - a wrong choice kept to the end: a wrong tap, then `finish` where it led, so the run fails.
//!
//! After one, the model acts on whatever screen it sees (the demonstrated action on the task's
//! screens, else Back; after a needless Back, the step before the one it erred on, as a model
//! that knows it left a dialog unconfirmed). A step is mistaken at most once a run.

use atlas_action::Action;
use atlas_device::Point;
use atlas_device_sim::app::View;

/// How often, and by which seed, the model errs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mistakes {
    /// The share of its steps on which it errs, 0..=1.
    pub share: f64,
    /// Which mistakes it makes.
    pub seed: u64,
}

/// The kind of a mistake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mistake {
    /// A tap on another widget of the screen, the nearest first.
    NearWidget,
    /// A switch of the screen flipped (another widget where the screen has none).
    Toggle,
    /// Back, for nothing.
    NeedlessBack,
    /// `finish` before the task's last screen.
    EarlyFinish,
    /// A wrong tap, then taps on the screens it opens (this many in all), left by Back later.
    Detour(u8),
    /// The right tap, then the same point tapped again on the next screen.
    RepeatedTap,
    /// A typo typed, then the right text over it (on a step that types nothing, a tap on the
    /// nearest other widget).
    Retype,
    /// A wrong tap, then `finish` on the screen it led to.
    WrongChoiceKept,
}

/// Each kind's share of the mistaken steps, in twentieths (they add up to 20).
pub const SHARES: [(Mistake, u64); 8] = [
    (Mistake::NearWidget, 4),
    (Mistake::Toggle, 2),
    (Mistake::NeedlessBack, 2),
    (Mistake::EarlyFinish, 2),
    (Mistake::Detour(0), 3),
    (Mistake::RepeatedTap, 3),
    (Mistake::Retype, 2),
    (Mistake::WrongChoiceKept, 2),
];

/// What the model does next because of a mistake it made on the step before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// Flip back the switch it flipped on this step's screen.
    Unflip(usize),
    /// Go on deeper off the task, this many screens more.
    Detour(u8),
    /// Tap this point again (relative, 0..999).
    Repeat([u16; 2]),
    /// Type this step's text again, right this time.
    Retype(usize),
    /// Finish wherever it is.
    Finish,
}

impl Then {
    /// As the scripted model's note writes it (`unflip 3`, `detour 1`, `repeat 500 250`,
    /// `retype 2`, `finish`).
    pub fn note(&self) -> String {
        match self {
            Then::Unflip(i) => format!("unflip {i}"),
            Then::Detour(n) => format!("detour {n}"),
            Then::Repeat([x, y]) => format!("repeat {x} {y}"),
            Then::Retype(i) => format!("retype {i}"),
            Then::Finish => "finish".into(),
        }
    }

    /// Reads [`Then::note`] back.
    pub fn read(note: &str) -> Option<Then> {
        let mut words = note.split(' ');
        let kind = words.next()?;
        let mut number = || words.next()?.parse::<usize>().ok();
        let then = match kind {
            "unflip" => Then::Unflip(number()?),
            "detour" => Then::Detour(u8::try_from(number()?).ok()?),
            "repeat" => {
                let x = u16::try_from(number()?).ok()?;
                Then::Repeat([x, u16::try_from(number()?).ok()?])
            }
            "retype" => Then::Retype(number()?),
            "finish" => Then::Finish,
            _ => return None,
        };
        Some(then)
    }
}

impl Mistakes {
    /// The mistake made on `screen` at ground-truth step `step` of `task`, if any.
    pub fn decide(&self, task: &str, screen: &str, step: usize) -> Option<Mistake> {
        let h = hash(&[
            &self.seed.to_le_bytes(),
            task.as_bytes(),
            screen.as_bytes(),
            &step.to_le_bytes(),
        ]);
        // The top 53 bits as a uniform draw in [0, 1); the low bits choose the kind.
        let draw = (h >> 11) as f64 / (1u64 << 53) as f64;
        if draw >= self.share {
            return None;
        }
        let mut pick = h % 20;
        let kind = SHARES.iter().find_map(|&(kind, share)| {
            if pick < share {
                return Some(kind);
            }
            pick -= share;
            None
        })?;
        Some(match kind {
            // Two or three screens: another bit of the same draw.
            Mistake::Detour(_) => Mistake::Detour(2 + ((h >> 8) & 1) as u8),
            kind => kind,
        })
    }
}

/// The action a `mistake` takes on a `w`×`h` screen showing `views`, where the right action
/// taps inside `right` (Back where the screen has no other widget to tap), and whether it flips
/// a switch (to be flipped back).
pub fn wrong_action(
    mistake: Mistake,
    views: &[View],
    right: &[[i64; 2]; 2],
    (w, h): (u32, u32),
) -> (Action, bool) {
    let centre = |b: &[[i64; 2]; 2]| ((b[0][0] + b[1][0]) / 2, (b[0][1] + b[1][1]) / 2);
    let inside = |b: &[[i64; 2]; 2], (x, y): (i64, i64)| {
        x >= b[0][0] && x < b[1][0] && y >= b[0][1] && y < b[1][1]
    };
    let target = centre(right);
    // Another widget: one a tap reaches, which is not the right one nor holds it nor lies in it.
    let others = views.iter().filter_map(|v| {
        let b = v.bounds?;
        let tappable =
            v.is_shown() && (v.clickable || v.checkable) && b[1][0] > b[0][0] && b[1][1] > b[0][1];
        (tappable && !inside(&b, target) && !inside(right, centre(&b))).then_some((v, b))
    });
    let distance = |b: &[[i64; 2]; 2]| {
        let (x, y) = centre(b);
        (x - target.0).pow(2) + (y - target.1).pow(2)
    };
    let chosen = match mistake {
        Mistake::NeedlessBack => return (Action::Back, false),
        Mistake::EarlyFinish => {
            let finish = Action::Finish {
                message: "done".into(),
            };
            return (finish, false);
        }
        Mistake::Toggle => others
            .clone()
            .filter(|(v, _)| v.checkable)
            .min_by_key(|(_, b)| distance(b))
            .or_else(|| others.min_by_key(|(_, b)| distance(b))),
        Mistake::NearWidget
        | Mistake::Detour(_)
        | Mistake::Retype
        | Mistake::WrongChoiceKept
        | Mistake::RepeatedTap => others.min_by_key(|(_, b)| distance(b)),
    };
    match chosen {
        Some((v, b)) => {
            let (x, y) = centre(&b);
            let tap = Action::Tap {
                element: Point {
                    x: x.max(0) as u32,
                    y: y.max(0) as u32,
                }
                .relative(w, h),
                message: None,
            };
            (tap, v.checkable)
        }
        None => (Action::Back, false),
    }
}

/// A typo of `text`: its last character dropped (a letter added to one of one character).
pub fn typo(text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    if chars.len() > 1 {
        chars.pop();
        chars.into_iter().collect()
    } else {
        format!("{text}x")
    }
}

/// FNV-1a over the parts (each ended by a separator), then SplitMix64's finaliser: stable
/// across runs, platforms and Rust releases, as `std`'s hasher is not promised to be.
fn hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &byte in part.iter().chain(&[0xff]) {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(bounds: [[i64; 2]; 2], checkable: bool) -> View {
        serde_json::from_value(serde_json::json!({
            "bounds": bounds, "clickable": true, "checkable": checkable, "visible": true
        }))
        .unwrap()
    }

    #[test]
    fn the_share_of_steps_mistaken_follows_the_share_asked_and_the_seed_decides_which() {
        let m = Mistakes {
            share: 0.1,
            seed: 7,
        };
        let erred = |m: &Mistakes| {
            (0..4000)
                .filter(|i| m.decide("task3", &format!("s{}", i % 50), i / 50).is_some())
                .count()
        };
        let n = erred(&m);
        assert!((300..500).contains(&n), "{n} of 4000 mistaken at 0.1");
        assert_eq!(erred(&m), n, "the same seed, the same mistakes");
        let other = Mistakes { seed: 8, ..m };
        let same: usize = (0..4000)
            .filter(|i| m.decide("t", "s", *i).is_some() && other.decide("t", "s", *i).is_some())
            .count();
        assert!(same < n / 2, "another seed errs elsewhere ({same} shared)");
        assert_eq!(
            erred(&Mistakes {
                share: 0.0,
                seed: 7
            }),
            0
        );
    }

    #[test]
    fn every_kind_is_made_at_its_share() {
        let m = Mistakes {
            share: 1.0,
            seed: 3,
        };
        let n = 20_000;
        let mut made = std::collections::HashMap::new();
        for i in 0..n {
            let kind = match m.decide("task", &format!("s{i}"), i).unwrap() {
                Mistake::Detour(depth) => {
                    assert!((2..=3).contains(&depth), "{depth}");
                    Mistake::Detour(0)
                }
                kind => kind,
            };
            *made.entry(kind).or_insert(0usize) += 1;
        }
        assert_eq!(SHARES.iter().map(|(_, s)| s).sum::<u64>(), 20);
        for (kind, share) in SHARES {
            let seen = made.get(&kind).copied().unwrap_or(0) as f64 / n as f64;
            let asked = share as f64 / 20.0;
            assert!((seen - asked).abs() < 0.015, "{kind:?}: {seen} for {asked}");
        }
    }

    #[test]
    fn what_follows_a_mistake_reads_back_from_its_note() {
        for then in [
            Then::Unflip(3),
            Then::Detour(1),
            Then::Repeat([999, 0]),
            Then::Retype(2),
            Then::Finish,
        ] {
            assert_eq!(Then::read(&then.note()), Some(then));
        }
        assert_eq!(Then::read("detour 300"), None);
        assert_eq!(Then::read("rm -rf"), None);
        assert_eq!(typo("shopping"), "shoppin");
        assert_eq!(typo("a"), "ax");
    }

    #[test]
    fn a_wrong_tap_goes_to_the_nearest_other_widget_and_a_toggle_to_a_switch() {
        let right = [[0, 100], [1000, 200]];
        let views = vec![
            view(right, false),
            view([[0, 200], [1000, 300]], false),
            view([[0, 900], [1000, 1000]], true),
        ];
        let tap_at = |a: (Action, bool)| match a.0 {
            Action::Tap { element, .. } => element,
            other => panic!("{other:?}"),
        };
        // A 1000×1000 screen: the relative point is the pixel.
        assert_eq!(
            tap_at(wrong_action(
                Mistake::NearWidget,
                &views,
                &right,
                (1000, 1000)
            )),
            [500, 250]
        );
        assert_eq!(
            tap_at(wrong_action(Mistake::Toggle, &views, &right, (1000, 1000))),
            [500, 950]
        );
        assert!(
            wrong_action(Mistake::Toggle, &views, &right, (1000, 1000)).1,
            "a switch, flipped"
        );
        let back = (Action::Back, false);
        assert_eq!(
            wrong_action(Mistake::NeedlessBack, &views, &right, (1000, 1000)),
            back
        );
        assert_eq!(
            wrong_action(Mistake::NearWidget, &views[..1], &right, (1000, 1000)),
            back
        );
    }
}
