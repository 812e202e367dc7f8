//! Seed 000's navigation interfaces (`query_path`, `get_next_action`, `get_rag_context`),
//! answered by the navigation engine over this service's state.

use std::ops::Deref;

use atlas_graph::Graph;
use atlas_model::Result;
use atlas_navigate::{
    GraphView, Known, MapRoute, Navigator, NextActionRequest, NextActionResponse, QueryPathRequest,
    QueryPathResponse, RagContextRequest, RagContextResponse, TextIndex,
};

use parking_lot::RwLock;

use crate::Atlas;
use crate::state::State;

impl Known for State {
    fn graph(&self) -> &Graph {
        &self.graph
    }

    fn text(&self) -> &TextIndex {
        &self.text
    }
}

/// The service's state as the engine reads it: under the read lock, one short read at a time.
struct Locked<'a>(&'a RwLock<State>);

impl GraphView for Locked<'_> {
    type Known = State;

    fn read(&self) -> impl Deref<Target = State> + '_ {
        self.0.read()
    }
}

impl Atlas {
    /// The navigation engine over this service's graph, with its embedder, label meanings and
    /// grounding model.
    fn navigator<'a>(&'a self, view: &'a Locked<'a>) -> Navigator<'a, Locked<'a>> {
        Navigator {
            view,
            embedder: self.embedder.as_ref(),
            meaning: &self.meaning,
            grounding: self.grounding.get(),
        }
    }

    /// Seed 000 §1.1 `query_path`.
    pub fn query_path(&self, req: QueryPathRequest) -> Result<QueryPathResponse> {
        self.navigator(&Locked(&self.state)).query_path(req)
    }

    /// Seed 000 §1.2 `get_next_action`.
    pub fn get_next_action(&self, req: NextActionRequest) -> Result<NextActionResponse> {
        self.navigator(&Locked(&self.state)).get_next_action(req)
    }

    /// The routes from a page most like a task, for a planner (see [`atlas_navigate::MapRoute`]).
    pub fn map(
        &self,
        app_id: &str,
        current_page: &str,
        intent: &str,
        max_routes: usize,
        steps: std::ops::RangeInclusive<usize>,
    ) -> Result<Vec<MapRoute>> {
        self.navigator(&Locked(&self.state))
            .map(app_id, current_page, intent, max_routes, steps)
    }

    /// Seed 000 §1.4 `get_rag_context`.
    pub fn get_rag_context(&self, req: RagContextRequest) -> Result<RagContextResponse> {
        self.navigator(&Locked(&self.state)).get_rag_context(req)
    }
}
