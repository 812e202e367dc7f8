//! An app's graph as a binary image, so that start-up copies it back rather than parsing every
//! transition's JSON and interning it again.
//!
//! The image holds what cannot be rebuilt cheaply—the transition rows, their ids, the distinct
//! actions—and the pages, intents and sessions as JSON (few, and serde's defaults keep an older
//! image's entities readable). What can be rebuilt in one pass is: the id indexes and the link
//! lists, made in slot order, which is the order a load from JSON adds them in, so routes that tie
//! are chosen as they would have been.

use atlas_model::image::{ImageError, ImageReader, ImageWriter};
use atlas_model::{App, Intent, Page, Trace};

use crate::AppGraph;
use crate::cost::link_cost;
use crate::transitions::TransitionTable;

impl AppGraph {
    /// Writes the app's graph into `w` (see [`AppGraph::read_image`]).
    pub fn write_image(&self, w: &mut ImageWriter) {
        w.json(&self.app);
        w.json(&self.pages);
        let mut intents: Vec<&Intent> = self.intents.values().collect();
        intents.sort_unstable_by(|a, b| a.intent_id.cmp(&b.intent_id));
        w.json(&intents);
        let mut traces: Vec<&Trace> = self.traces.values().collect();
        traces.sort_unstable_by(|a, b| a.trace_id.cmp(&b.trace_id));
        w.json(&traces);
        let ends: Vec<u32> = (0..self.transitions.len() as u32)
            .flat_map(|slot| self.links.ends(slot))
            .collect();
        w.u32s(&ends);
        self.transitions.write_image(w);
    }

    /// The app's graph as [`AppGraph::write_image`] wrote it, every index rebuilt; an error for
    /// bytes that are not such an image (never a graph that breaks later).
    pub fn read_image(r: &mut ImageReader) -> Result<AppGraph, ImageError> {
        let app: App = r.json()?;
        let pages: Vec<Page> = r.json()?;
        let intents: Vec<Intent> = r.json()?;
        let traces: Vec<Trace> = r.json()?;
        let ends = r.u32s()?;
        let table = TransitionTable::read_image(r)?;
        if ends.len() != table.len() * 2 {
            return Err(ImageError::invalid(
                "links and transitions differ in number",
            ));
        }
        if ends.iter().any(|page| *page as usize >= pages.len()) {
            return Err(ImageError::invalid(
                "a link ends at a page the app does not have",
            ));
        }
        let mut graph = AppGraph::new(app);
        graph.reserve(pages.len(), table.len());
        for page in pages {
            if page.app_id != graph.app.app_id || !graph.upsert_page(page) {
                return Err(ImageError::invalid("a page twice, or of another app"));
            }
        }
        graph.transitions = table;
        for (slot, pair) in ends.chunks_exact(2).enumerate() {
            let slot = slot as u32;
            let gone = graph.transitions.gone_in(slot).is_some();
            let cost = link_cost(graph.transitions.counts(slot), gone);
            graph.links.add_edge(pair[0], pair[1], cost);
            let table = &graph.transitions;
            let id = table.id(slot);
            if graph.transition_index.get(id, |s| table.id(s)).is_some() {
                return Err(ImageError::invalid(format!("transition {id} twice")));
            }
            graph.transition_index.insert(id, slot, |s| table.id(s));
        }
        graph.routes.edge_added();
        graph.links.shrink_to_fit();
        for intent in intents {
            if intent.app_id != graph.app.app_id {
                return Err(ImageError::invalid("an intent of another app"));
            }
            graph.upsert_intent(intent);
        }
        for trace in traces {
            graph.upsert_trace(trace);
        }
        Ok(graph)
    }
}

#[cfg(test)]
mod tests {
    use atlas_model::image::{ImageReader, ImageWriter};
    use atlas_model::{Action, Transition};

    use crate::AppGraph;
    use crate::testing::{edge, empty_app, page, random_graph};

    fn image(g: &AppGraph) -> Vec<u8> {
        let mut w = ImageWriter::new();
        g.write_image(&mut w);
        w.into_bytes()
    }

    fn all(g: &AppGraph) -> Vec<Transition> {
        g.transitions().map(|t| t.to_transition()).collect()
    }

    #[test]
    fn an_image_reads_back_as_the_graph_it_was_written_from() {
        let mut g = empty_app("a");
        for (i, name) in ["首页", "订单", "设置"].into_iter().enumerate() {
            g.upsert_page(page("a", name, i as u32));
        }
        let mut odd = edge("a", "首页", "订单", "click 我的订单", 3, 1);
        odd.created_at = "2026-01-01T08:00:00+08:00".into();
        odd.last_failure_reason = "弹窗挡住了".into();
        g.upsert_transition(&odd).unwrap();
        let mut big = edge("a", "订单", "设置", "click 设置", 0, 0);
        big.success_count = u64::from(u32::MAX) + 5;
        big.seen_in = vec!["2.2".into(), "2.6".into()];
        g.upsert_transition(&big).unwrap();
        let mut gone = edge("a", "首页", "设置", "click 设置", 1, 0);
        (gone.seen_in, gone.gone_in) = (vec!["2.2".into()], Some("2.6".into()));
        g.upsert_transition(&gone).unwrap();
        g.upsert_transition(&edge("a", "设置", "首页", "back", 1, 0))
            .unwrap();
        // A released action leaves a free number behind: the image must keep it free.
        let mut changed = edge("a", "设置", "首页", "back", 1, 0);
        changed.action = Action {
            action_type: "back".into(),
            widget_text: "返回".into(),
            ..Default::default()
        };
        g.upsert_transition(&changed).unwrap();

        let bytes = image(&g);
        let mut reader = ImageReader::new(&bytes);
        let back = AppGraph::read_image(&mut reader).unwrap();
        assert!(reader.is_done());
        assert_eq!(back.pages(), g.pages());
        assert_eq!(all(&back), all(&g));
        for p in g.pages() {
            let ids = |g: &AppGraph| -> Vec<String> {
                g.outgoing(&p.page_id)
                    .chain(g.incoming(&p.page_id))
                    .map(|t| t.transition_id().to_string())
                    .collect()
            };
            assert_eq!(ids(&back), ids(&g));
        }
        let home = &g.pages()[0].page_id;
        let target = &g.pages()[2].page_id;
        assert_eq!(
            back.plan(home, target, 10).map(|p| p.steps),
            g.plan(home, target, 10).map(|p| p.steps)
        );
        assert_eq!(back.plan(home, target, 10).unwrap().steps.len(), 2);
        // The same image again, byte for byte: nothing depends on a hash map's order.
        assert_eq!(image(&back), bytes);
    }

    #[test]
    fn a_random_graph_plans_the_same_routes_from_its_image() {
        let g = random_graph(60, 400, 7);
        let back = AppGraph::read_image(&mut ImageReader::new(&image(&g))).unwrap();
        for from in g.pages().iter().take(10) {
            for to in g.pages().iter().rev().take(10) {
                assert_eq!(
                    back.plan(&from.page_id, &to.page_id, 20)
                        .ok()
                        .map(|p| p.steps),
                    g.plan(&from.page_id, &to.page_id, 20).ok().map(|p| p.steps)
                );
            }
        }
    }

    #[test]
    fn a_damaged_image_is_refused_whole() {
        let mut g = empty_app("a");
        g.upsert_page(page("a", "首页", 0));
        g.upsert_page(page("a", "订单", 1));
        g.upsert_transition(&edge("a", "首页", "订单", "click 订单", 1, 0))
            .unwrap();
        let bytes = image(&g);
        for cut in 0..bytes.len() {
            assert!(
                AppGraph::read_image(&mut ImageReader::new(&bytes[..cut])).is_err(),
                "cut at {cut}"
            );
        }
        // Every single byte flipped: refused, or read as some graph, but never a panic.
        for at in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0xff;
            if let Ok(g) = AppGraph::read_image(&mut ImageReader::new(&bad)) {
                g.transitions().for_each(|t| drop(t.to_transition()));
            }
        }
    }
}
