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
//! The mistakes are the kinds models make on phones: a tap on another widget of the screen
//! (the nearest one: a neighbour in a list, the button beside), a switch flipped that the task
//! did not ask for, and a needless Back. After one, the model acts on whatever screen it sees
//! (the demonstrated action on the task's screens, else Back; after a needless Back, the step
//! before the one it erred on, as a model that knows it left a dialog unconfirmed) and flips
//! back a switch it flipped by mistake, so each mistake is undone within one step. A step is
//! mistaken at most once a run, so a run always gets through.

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mistake {
    /// A tap on another widget of the screen, the nearest first.
    NearWidget,
    /// A switch of the screen flipped (another widget where the screen has none).
    Toggle,
    /// Back, for nothing.
    NeedlessBack,
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
        (draw < self.share).then_some(match h % 4 {
            0 | 1 => Mistake::NearWidget,
            2 => Mistake::Toggle,
            _ => Mistake::NeedlessBack,
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
        Mistake::Toggle => others
            .clone()
            .filter(|(v, _)| v.checkable)
            .min_by_key(|(_, b)| distance(b))
            .or_else(|| others.min_by_key(|(_, b)| distance(b))),
        Mistake::NearWidget => others.min_by_key(|(_, b)| distance(b)),
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
