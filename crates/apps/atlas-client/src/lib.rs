//! The HTTP client of Atlas's tools, and typed calls over any caller: the requests and answers
//! are the interface's own ([`atlas_api`]), so a field renamed there is a compile error here.
//!
//! The phone agent, the web explorer, the evaluations and `atlas import` all talk to the graph
//! through a [`ToolCaller`]: this crate's [`HttpCaller`] (`POST /api/v1/{tool}`), or the registry
//! in process (`atlas_registry::ServiceCaller`), so each goes through the same interfaces (and the
//! same checks) an outside client does.
//!
//! Key design decision: **one synchronous [`ToolCaller`] under a typed [`GraphClient`], and no
//! dependency on the service.** A tool is a name and a JSON body wherever it runs; the transport
//! is the caller's only difference. Async code calls it from its blocking pool.

mod caller;

pub use atlas_api::{CallError, ToolCaller};
pub use caller::{HttpCaller, MAX_RETRY_WAIT, RETRIES};

use atlas_api::learning::{
    EndSessionResponse, ReportTransitionRequest, ReportTransitionResponse, ReportVerdictRequest,
    ReportVerdictResponse,
};
use atlas_api::pages::{AddPageRequest, AddPageResponse, MatchPageRequest, MatchPageResponse};
use atlas_api::screen::{EndRunRequest, ObserveScreenRequest, ObserveScreenResponse};
use atlas_api::{Interface, tools};

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

    /// Runs the tool `I` with a typed request and reads its typed answer.
    pub fn ask<I: Interface>(&self, request: &I::Request) -> Result<I::Answer, CallError> {
        atlas_api::ask::<I>(self.caller, request)
    }

    /// `observe_screen`: the screen's page, the last step reported, the graph's next action.
    pub fn observe_screen(
        &self,
        request: &ObserveScreenRequest,
    ) -> Result<ObserveScreenResponse, CallError> {
        self.ask::<tools::ObserveScreen>(request)
    }

    /// `end_session`: how a run ended (and, with its last screen's carry, the graph's last answer
    /// checked).
    pub fn end_session(&self, request: &EndRunRequest) -> Result<EndSessionResponse, CallError> {
        self.ask::<tools::EndSession>(request)
    }

    /// `report_verdict`: what someone other than the agent judged of a session.
    pub fn report_verdict(
        &self,
        request: &ReportVerdictRequest,
    ) -> Result<ReportVerdictResponse, CallError> {
        self.ask::<tools::ReportVerdict>(request)
    }

    /// `match_current_page`: the page a screen is, if any.
    pub fn match_current_page(
        &self,
        request: &MatchPageRequest,
    ) -> Result<MatchPageResponse, CallError> {
        self.ask::<tools::MatchCurrentPage>(request)
    }

    /// `add_page`: a page added (or updated).
    pub fn add_page(&self, request: &AddPageRequest) -> Result<AddPageResponse, CallError> {
        self.ask::<tools::AddPage>(request)
    }

    /// `report_transition`: what an action did.
    pub fn report_transition(
        &self,
        request: &ReportTransitionRequest,
    ) -> Result<ReportTransitionResponse, CallError> {
        self.ask::<tools::ReportTransition>(request)
    }
}
