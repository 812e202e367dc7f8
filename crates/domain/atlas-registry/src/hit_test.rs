//! What a point on a screen hits: the widget a tap (reported, or answered by the graph) lands on,
//! for `observe_screen`'s reports and the checks of trust.

use atlas_model::Widget;

/// The smallest widget under a point.
pub(crate) fn widget_at(widgets: &[Widget], (x, y): (i64, i64)) -> Option<&Widget> {
    widgets
        .iter()
        .filter_map(|w| w.rect().map(|r| (w, r)))
        .filter(|(_, [l, t, r, b])| x >= *l && x < *r && y >= *t && y < *b)
        // In u128: a client's bounds may be anything an i64 holds.
        .min_by_key(|(_, [l, t, r, b])| span(*l, *r) * span(*t, *b))
        .map(|(w, _)| w)
}

/// The length from `a` to `b > a`, whatever i64s they are.
fn span(a: i64, b: i64) -> u128 {
    (i128::from(b) - i128::from(a)) as u128
}
