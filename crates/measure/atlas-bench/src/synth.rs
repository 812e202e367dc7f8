//! Synthetic app graphs shaped like real ones: a menu tree under a home page, a back edge from
//! every page to where it was opened from, and cross links that favour hub pages, with success
//! statistics from mostly reliable to flaky.

use atlas_model::{
    Action, App, Intent, Page, PageType, Transition, intent_id, now_rfc3339, page_id, transition_id,
};
use atlas_store::AppData;

/// A small deterministic generator (SplitMix64), so every run benchmarks the same graph.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const MODULES: &[&str] = &[
    "订单",
    "购物车",
    "商品",
    "店铺",
    "优惠券",
    "会员",
    "钱包",
    "地址",
    "消息",
    "设置",
    "收藏",
    "评价",
    "搜索",
    "直播",
    "外卖",
    "酒店",
    "电影",
    "打车",
    "跑腿",
    "医药",
    "买菜",
    "旅游",
    "积分",
    "客服",
    "发票",
    "退款",
    "账号",
    "隐私",
    "Profile",
    "Payment",
    "Wallet",
    "Orders",
    "Cart",
    "Coupons",
    "Inbox",
    "Settings",
    "Delivery",
    "Reviews",
];
const FEATURES: &[&str] = &[
    "列表", "详情", "编辑", "管理", "记录", "中心", "首页", "筛选", "确认", "历史", "分享", "统计",
    "申请", "规则", "List", "Detail", "Editor", "History", "Filter", "Checkout",
];

/// The name of the `i`-th generated page: module, feature and a number that keeps it unique.
fn page_name(i: usize) -> String {
    if i == 0 {
        return "首页".to_string();
    }
    let m = MODULES[i % MODULES.len()];
    let f = FEATURES[(i / MODULES.len()) % FEATURES.len()];
    format!("{m}{f} {i}")
}

/// Size of a generated app.
#[derive(Debug, Clone, Copy)]
pub struct AppShape {
    /// Pages, the first the home page.
    pub pages: usize,
    /// Transitions in all.
    pub transitions: usize,
    /// Intents registered on pages other than home.
    pub intents: usize,
}

impl AppShape {
    /// An app of `pages` pages with three transitions a page and an intent for every 20 pages
    /// (what `atlas import synthetic` and the viewer's benchmark draw).
    pub fn of_pages(pages: usize) -> AppShape {
        AppShape {
            pages,
            transitions: pages * 3,
            intents: pages.div_ceil(20),
        }
    }
}

/// One generated app: its graph, and the (intent, target page) pairs registered in it.
pub struct SyntheticApp {
    /// Its graph.
    pub data: AppData,
    /// The intents registered: (text, target page).
    pub intents: Vec<(String, String)>,
}

fn transition(
    app_id: &str,
    from: &str,
    to: &str,
    action: Action,
    ok: u64,
    fail: u64,
    now: &str,
) -> Transition {
    Transition {
        transition_id: transition_id(from, &action, to),
        app_id: app_id.to_string(),
        from_page: from.to_string(),
        to_page: to.to_string(),
        action,
        success_count: ok,
        fail_count: fail,
        latency_total_ms: (ok + fail) as f64 * 600.0,
        latency_samples: ok + fail,
        last_failure_reason: String::new(),
        created_at: now.to_string(),
        updated_at: now.to_string(),
        ..Default::default()
    }
}

/// Generates an app of the given shape (at least one page; the transition count is met exactly
/// once it is at least twice the page count, since the tree and its back edges come first).
pub fn synthetic_app(app_id: &str, shape: AppShape, seed: u64) -> SyntheticApp {
    let now = now_rfc3339();
    let pages = synthetic_pages(app_id, shape.pages.max(1), &now);
    let mut links = Links {
        app_id,
        now: &now,
        rng: Rng::new(seed),
        transitions: Vec::with_capacity(shape.transitions),
        seen: std::collections::HashSet::new(),
    };
    links.menu_tree(&pages);
    links.cross_links(&pages, shape.transitions);
    let Links {
        mut rng,
        transitions,
        ..
    } = links;
    let (intents, registered) = synthetic_intents(app_id, &pages, shape.intents, &mut rng, &now);
    let app = App {
        app_id: app_id.to_string(),
        home_page: Some(pages[0].page_id.clone()),
        created_at: now.clone(),
        updated_at: now,
        ..Default::default()
    };
    SyntheticApp {
        data: AppData {
            app,
            pages,
            transitions,
            intents,
            traces: vec![],
        },
        intents: registered,
    }
}

/// `count` pages, the first the home page.
fn synthetic_pages(app_id: &str, count: usize, now: &str) -> Vec<Page> {
    (0..count)
        .map(|i| {
            let name = page_name(i);
            Page {
                page_id: page_id(app_id, &name),
                app_id: app_id.to_string(),
                page_name: name.clone(),
                page_type: if i == 0 {
                    PageType::Home
                } else {
                    PageType::Other
                },
                description: String::new(),
                intents: vec![],
                widgets: vec![],
                page_structure: String::new(),
                ordinal: i as u32,
                url: String::new(),
                fingerprint: String::new(),
                created_at: now.to_string(),
                updated_at: now.to_string(),
                visited_count: 0,
                other_renderings: Vec::new(),
                other_rendering_visits: 0,
                ..Default::default()
            }
        })
        .collect()
}

/// The transitions of a generated app as they are drawn, each once.
struct Links<'a> {
    app_id: &'a str,
    now: &'a str,
    rng: Rng,
    transitions: Vec<Transition>,
    seen: std::collections::HashSet<String>,
}

impl Links<'_> {
    fn push(&mut self, from: &Page, to: &Page, action: Action, ok: u64, fail: u64) {
        let t = transition(
            self.app_id,
            &from.page_id,
            &to.page_id,
            action,
            ok,
            fail,
            self.now,
        );
        if self.seen.insert(t.transition_id.clone()) {
            self.transitions.push(t);
        }
    }

    /// Successes and failures of an action: most reliable, a fifth shaky.
    fn stats(&mut self) -> (u64, u64) {
        let rng = &mut self.rng;
        let tries = 1 + rng.below(40) as u64;
        let rate = if rng.unit() < 0.8 {
            0.9 + 0.1 * rng.unit()
        } else {
            0.3 + 0.6 * rng.unit()
        };
        let ok = (tries as f64 * rate).round() as u64;
        (ok, tries - ok)
    }

    /// The menu tree with its back edges: shallow pages are opened from more places, as in a
    /// real app.
    fn menu_tree(&mut self, pages: &[Page]) {
        for i in 1..pages.len() {
            let parent = ((i as f64) * self.rng.unit().powi(3)) as usize;
            let (ok, fail) = self.stats();
            let open = Action {
                action_type: "click".into(),
                widget_text: pages[i].page_name.clone(),
                ..Default::default()
            };
            self.push(&pages[parent], &pages[i], open, ok, fail);
            let back = Action {
                action_type: "back".into(),
                ..Default::default()
            };
            self.push(&pages[i], &pages[parent], back, ok + fail, 0);
        }
    }

    /// Links across the tree until there are `total` transitions, a quarter to hubs.
    fn cross_links(&mut self, pages: &[Page], total: usize) {
        let mut attempts = 0;
        while self.transitions.len() < total && pages.len() > 1 && attempts < total * 4 {
            attempts += 1;
            let from = self.rng.below(pages.len());
            // Hubs: a quarter of the links lead to the first 1% of pages.
            let to = if self.rng.unit() < 0.25 {
                self.rng.below(pages.len() / 100 + 1)
            } else {
                self.rng.below(pages.len())
            };
            if from == to {
                continue;
            }
            let (ok, fail) = self.stats();
            let action = Action {
                action_type: if self.rng.unit() < 0.9 {
                    "click".into()
                } else {
                    "swipe".into()
                },
                widget_text: pages[to].page_name.clone(),
                ..Default::default()
            };
            self.push(&pages[from], &pages[to], action, ok, fail);
        }
    }
}

/// Up to `count` intents "打开<page>" on pages other than home, and (text, target) of each.
fn synthetic_intents(
    app_id: &str,
    pages: &[Page],
    count: usize,
    rng: &mut Rng,
    now: &str,
) -> (Vec<Intent>, Vec<(String, String)>) {
    let mut intents = Vec::new();
    let mut registered: Vec<(String, String)> = Vec::new();
    for _ in 0..count.min(pages.len().saturating_sub(1)) {
        let target = &pages[1 + rng.below(pages.len() - 1)];
        let text = format!("打开{}", target.page_name);
        if registered.iter().any(|(t, _)| *t == text) {
            continue;
        }
        intents.push(Intent {
            intent_id: intent_id(app_id, &text),
            app_id: app_id.to_string(),
            intent_text: text.clone(),
            target_page: Some(target.page_id.clone()),
            keywords: vec![target.page_name.clone()],
            created_at: now.to_string(),
            ..Default::default()
        });
        registered.push((text, target.page_id.clone()));
    }
    (intents, registered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_the_requested_shape_deterministically() {
        let shape = AppShape {
            pages: 200,
            transitions: 2000,
            intents: 50,
        };
        let a = synthetic_app("bench.app", shape, 7);
        let b = synthetic_app("bench.app", shape, 7);
        assert_eq!(a.data.pages.len(), 200);
        assert_eq!(a.data.transitions.len(), 2000);
        assert_eq!(a.intents.len(), a.data.intents.len());
        assert!(a.intents.len() >= 40);
        assert_eq!(
            a.data
                .transitions
                .iter()
                .map(|t| &t.transition_id)
                .collect::<Vec<_>>(),
            b.data
                .transitions
                .iter()
                .map(|t| &t.transition_id)
                .collect::<Vec<_>>()
        );
        let ids: std::collections::HashSet<_> = a
            .data
            .transitions
            .iter()
            .map(|t| &t.transition_id)
            .collect();
        assert_eq!(ids.len(), 2000, "transition ids are unique");
    }
}
