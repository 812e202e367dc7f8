//! The baseline the explorer is measured against: a plain breadth-first crawl of a site's links.
//!
//! It loads the start page, then every in-scope link it has not loaded, oldest first, until its
//! page loads are spent: no forms, no buttons, no kinds of page, nothing remembered but the
//! addresses. It runs in the same filtered browser and reads pages with the same reader, so the
//! two see the same links and the same safety holds (GET and HEAD only; links whose words
//! destroy, pay or sign out not followed). `atlas crawl` prints what it loaded; the figures
//! compare the kinds of page both reached with the same loads.

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::ExploreError;
use atlas_browser::browser::Browser;
use atlas_browser::network_filter::{NetworkPolicy, origin_of};
use atlas_browser::template::document_of;

/// What a crawl loaded.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CrawlReport {
    /// Page loads spent.
    pub loads: usize,
    /// The documents loaded, in order: where the browser ended, what it was, its title.
    pub pages: Vec<Crawled>,
    /// Links seen and not loaded when the loads ran out.
    pub left: usize,
    /// The crawl, in seconds.
    pub seconds: f64,
}

/// One document a crawl loaded.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Crawled {
    /// The address asked for.
    pub asked: String,
    /// Where the browser ended.
    pub url: String,
    /// Its content type (`text/html` for a page).
    pub content_type: String,
    /// Its title.
    pub title: String,
}

/// Crawls from `start` breadth-first, at most `max_loads` documents, within `start`'s origin.
pub async fn crawl(
    start: &str,
    chromium: &Path,
    max_loads: usize,
) -> Result<CrawlReport, ExploreError> {
    let started = Instant::now();
    let start = crate::start_address(start)?.to_string();
    let origin = origin_of(&start);
    let policy = NetworkPolicy {
        start_origin: origin.clone(),
        credentials: None,
        allow_writes: false,
    };
    let browser = Browser::launch(chromium, policy).await?;
    let tab = browser.tab().await?;
    let mut report = CrawlReport::default();
    let mut seen: HashSet<String> = HashSet::from([document_of(&start)]);
    let mut queue: VecDeque<String> = VecDeque::from([start]);
    while report.loads < max_loads {
        let Some(next) = queue.pop_front() else { break };
        let before = tab.document();
        let read = async {
            tab.goto(&next).await?;
            tab.snapshot().await
        };
        let outcome = read.await;
        report.loads += usize::try_from(tab.document().saturating_sub(before).max(1)).unwrap_or(1);
        let Ok(snap) = outcome else { continue };
        seen.insert(document_of(&snap.url));
        report.pages.push(Crawled {
            asked: next,
            url: snap.url.clone(),
            content_type: snap.content_type.clone(),
            title: snap.title.clone(),
        });
        if origin_of(&snap.url) != origin || !snap.is_page() {
            continue;
        }
        for link in &snap.links {
            let target = document_of(&link.href);
            if origin_of(&link.href) == origin
                && !atlas_browser::write_policy::link_is_destructive(link)
                && !atlas_browser::template::names_a_file(&link.href)
                && seen.insert(target)
            {
                queue.push_back(link.href.clone());
            }
        }
    }
    report.left = queue.len();
    tab.close().await;
    browser.close().await;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
