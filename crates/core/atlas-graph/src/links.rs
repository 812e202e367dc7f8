//! An app's pages and transitions as the planner walks them: for every page, its outgoing and its
//! incoming links side by side in one array each, every link carrying its far page, its
//! transition and its planning cost.
//!
//! Why not petgraph's `Graph`, which this replaced: there a page's edges form a linked list
//! threaded through one big edge array, so a search pays a cache miss for every edge it looks at
//! and a second one for the edge's weight. Here a search reads one contiguous slice per page it
//! settles. A page's number is its slot in [`crate::AppGraph::pages`] and a link's number is its
//! transition's slot (see [`crate::AppGraph::transition_at`]); nothing is ever removed, so both stay
//! valid for the life of the graph.
//!
//! Links are visited newest first, the order petgraph visited them in, so routes between pages
//! whose costs tie are the ones earlier versions of Atlas chose.

/// One link as seen from a page: the page at its other end, its transition and its cost.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Link {
    /// The page at the other end (the target of an outgoing link, the source of an incoming one).
    pub(crate) node: u32,
    /// The transition's slot.
    pub(crate) edge: u32,
    /// The planning cost, `-ln(smoothed success rate) + STEP_COST`.
    pub(crate) cost: f64,
}

/// Every page's outgoing and incoming links, and each link's ends.
#[derive(Debug, Clone, Default)]
pub(crate) struct Links {
    outgoing: Vec<Vec<Link>>,
    incoming: Vec<Vec<Link>>,
    /// For each link: the page it leaves and the page it enters.
    ends: Vec<[u32; 2]>,
    /// For each link: where it sits in its source's outgoing and its target's incoming list, so
    /// a report changes its cost without searching a hub's thousands of links.
    places: Vec<[u32; 2]>,
}

/// Which way a search walks links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Direction {
    /// From a page to the pages it leads to.
    Forward,
    /// From a page to the pages that lead to it.
    Backward,
}

impl Links {
    /// Pages.
    pub(crate) fn node_count(&self) -> usize {
        self.outgoing.len()
    }

    /// Links.
    pub(crate) fn edge_count(&self) -> usize {
        self.ends.len()
    }

    /// A new page with no links; returns its number.
    pub(crate) fn add_node(&mut self) -> u32 {
        self.outgoing.push(Vec::new());
        self.incoming.push(Vec::new());
        (self.outgoing.len() - 1) as u32
    }

    /// Room for `pages` more pages and `links` more links, made at once.
    pub(crate) fn reserve(&mut self, pages: usize, links: usize) {
        self.outgoing.reserve_exact(pages);
        self.incoming.reserve_exact(pages);
        self.ends.reserve_exact(links);
        self.places.reserve_exact(links);
    }

    /// Gives back what growing one link at a time left unused in each page's lists (up to half
    /// of each, doubling as they grow).
    pub(crate) fn shrink_to_fit(&mut self) {
        for list in self.outgoing.iter_mut().chain(self.incoming.iter_mut()) {
            list.shrink_to_fit();
        }
    }

    /// A new link between two existing pages; returns its number.
    pub(crate) fn add_edge(&mut self, from: u32, to: u32, cost: f64) -> u32 {
        let edge = self.ends.len() as u32;
        self.ends.push([from, to]);
        self.places.push([
            self.outgoing[from as usize].len() as u32,
            self.incoming[to as usize].len() as u32,
        ]);
        self.outgoing[from as usize].push(Link {
            node: to,
            edge,
            cost,
        });
        self.incoming[to as usize].push(Link {
            node: from,
            edge,
            cost,
        });
        edge
    }

    /// Sets a link's cost; returns the cost it had.
    pub(crate) fn set_cost(&mut self, edge: u32, cost: f64) -> f64 {
        let [from, to] = self.ends[edge as usize];
        let [out, into] = self.places[edge as usize];
        self.incoming[to as usize][into as usize].cost = cost;
        std::mem::replace(&mut self.outgoing[from as usize][out as usize].cost, cost)
    }

    /// The pages a link joins: `[from, to]`.
    pub(crate) fn ends(&self, edge: u32) -> [u32; 2] {
        self.ends[edge as usize]
    }

    /// A link's cost.
    pub(crate) fn cost(&self, edge: u32) -> f64 {
        let [from, _] = self.ends[edge as usize];
        let [out, _] = self.places[edge as usize];
        self.outgoing[from as usize][out as usize].cost
    }

    /// A page's links in `direction`, newest first.
    pub(crate) fn of(
        &self,
        node: u32,
        direction: Direction,
    ) -> std::iter::Rev<std::slice::Iter<'_, Link>> {
        let lists = match direction {
            Direction::Forward => &self.outgoing,
            Direction::Backward => &self.incoming,
        };
        lists[node as usize].iter().rev()
    }

    /// A page's outgoing links, newest first.
    pub(crate) fn outgoing(&self, node: u32) -> std::iter::Rev<std::slice::Iter<'_, Link>> {
        self.of(node, Direction::Forward)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_seen_from_both_ends_newest_first_and_costs_change_in_both() {
        let mut links = Links::default();
        let (a, b, c) = (links.add_node(), links.add_node(), links.add_node());
        let ab = links.add_edge(a, b, 1.0);
        let ac = links.add_edge(a, c, 2.0);
        let cb = links.add_edge(c, b, 3.0);
        let out: Vec<u32> = links.outgoing(a).map(|l| l.edge).collect();
        assert_eq!(out, vec![ac, ab]);
        let into_b: Vec<(u32, u32)> = links
            .of(b, Direction::Backward)
            .map(|l| (l.node, l.edge))
            .collect();
        assert_eq!(into_b, vec![(c, cb), (a, ab)]);
        assert_eq!(links.set_cost(cb, 0.5), 3.0);
        assert_eq!(links.cost(cb), 0.5);
        assert_eq!(links.of(b, Direction::Backward).next().unwrap().cost, 0.5);
        assert_eq!(links.ends(cb), [c, b]);
        assert_eq!((links.node_count(), links.edge_count()), (3, 3));
    }
}
