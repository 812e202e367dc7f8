//! The one typed client of the graph: Atlas's tools called by name, over HTTP or in this
//! process, with the requests and answers the registry defines.
//!
//! The phone agent, the web explorer, the evaluations and `atlas import` all talk to the graph
//! through it, so each goes through the same interfaces (and the same checks) an outside client
//! does, and reads answers as typed values rather than by string keys.
//!
//! Key design decision: **one synchronous [`ToolCaller`] under a typed [`GraphClient`].** A tool
//! is a name and a JSON body wherever it runs; the transport (`POST /api/v1/{tool}`, or the
//! registry in process) is the caller's only difference, and the types are the registry's own,
//! so a field renamed there is a compile error here. Async code calls it from its blocking pool.

mod caller;

use serde::Serialize;
use serde::de::DeserializeOwned;

pub use caller::{CallError, HttpCaller, ServiceCaller, ToolCaller};

use atlas_registry::{EndRunRequest, ObserveScreenRequest, ObserveScreenResponse};
use atlas_service::{
    AddPageRequest, AddPageResponse, EndSessionResponse, MatchPageRequest, MatchPageResponse,
    ReportTransitionRequest, ReportTransitionResponse,
};

/// Typed calls over any [`ToolCaller`].
#[derive(Clone, Copy)]
pub struct GraphClient<'a> {
    caller: &'a dyn ToolCaller,
}

impl<'a> GraphClient<'a> {
    /// The client over `caller`.
    pub fn new(caller: &'a dyn ToolCaller) -> GraphClient<'a> {
        GraphClient { caller }
    }

    /// The caller underneath, for a tool by name with a JSON body.
    pub fn caller(&self) -> &'a dyn ToolCaller {
        self.caller
    }

    /// Calls `tool` with a typed request and reads its typed answer.
    pub fn call<Req: Serialize, Resp: DeserializeOwned>(
        &self,
        tool: &str,
        request: &Req,
    ) -> Result<Resp, CallError> {
        let input = serde_json::to_value(request).map_err(|e| CallError {
            code: "INVALID_PARAMETER".into(),
            message: format!("{tool}: the request cannot be written as JSON: {e}"),
        })?;
        let answer = self.caller.call(tool, input)?;
        serde_json::from_value(answer).map_err(|e| CallError {
            code: "BAD_ANSWER".into(),
            message: format!("{tool}: the answer is not what the registry defines: {e}"),
        })
    }

    /// `observe_screen`: the screen's page, the last step reported, the graph's next action.
    pub fn observe_screen(
        &self,
        request: &ObserveScreenRequest,
    ) -> Result<ObserveScreenResponse, CallError> {
        self.call("observe_screen", request)
    }

    /// `end_session`: how a run ended (and, with its last screen's carry, the graph's last answer
    /// checked).
    pub fn end_session(&self, request: &EndRunRequest) -> Result<EndSessionResponse, CallError> {
        self.call("end_session", request)
    }

    /// `match_current_page`: the page a screen is, if any.
    pub fn match_current_page(
        &self,
        request: &MatchPageRequest,
    ) -> Result<MatchPageResponse, CallError> {
        self.call("match_current_page", request)
    }

    /// `add_page`: a page added (or updated).
    pub fn add_page(&self, request: &AddPageRequest) -> Result<AddPageResponse, CallError> {
        self.call("add_page", request)
    }

    /// `report_transition`: what an action did.
    pub fn report_transition(
        &self,
        request: &ReportTransitionRequest,
    ) -> Result<ReportTransitionResponse, CallError> {
        self.call("report_transition", request)
    }
}
