//! Atlas's public interface as types: each tool a name with its request and its answer
//! ([`Interface`]), the actions agents send ([`Action`], in seed 002's dict form), and
//! [`ToolCaller`], what runs a tool over any transport.
//!
//! Key design decision: **the interface apart from its implementations**, as `grep-matcher`
//! stands apart from the engines behind it and qdrant's `api` crate apart from its server. The
//! registry serves these types and the faces translate them; every client (the phone agent, the
//! web explorer, the evaluations, `atlas-client` over HTTP) reads them without depending on the
//! service behind them, so a field renamed here is a compile error on both sides of the wire.

pub mod agent;
pub mod business;
mod caller;
pub mod chat;
pub mod dify;
pub mod fields;
pub mod knowledge;
pub mod learning;
pub mod navigation;
pub mod pages;
pub mod plan;
pub mod rag;
pub mod routes;
pub mod schema;
pub mod screen;
pub mod server;
pub mod stats;
pub mod test_runs;
pub mod versions;
pub mod view;
pub mod ways;

pub use atlas_action::Action;
pub use caller::{CallError, Interface, ToolCaller, ask};

/// The tools, each a name with its request and its answer.
pub mod tools {
    use crate::agent::*;
    use crate::business;
    use crate::business::*;
    use crate::knowledge::*;
    use crate::learning::*;
    use crate::navigation::*;
    use crate::pages::*;
    use crate::rag::*;
    use crate::screen::*;
    use crate::stats::*;
    use crate::test_runs::*;
    use crate::versions::*;
    use crate::view::*;
    use crate::ways::*;

    macro_rules! interfaces {
        ($($(#[$doc:meta])* $marker:ident $name:literal: $request:ty => $answer:ty;)*) => {$(
            $(#[$doc])*
            pub struct $marker;
            impl crate::Interface for $marker {
                const NAME: &'static str = $name;
                type Request = $request;
                type Answer = $answer;
            }
        )*};
    }

    interfaces! {
        /// The way from a page to the page an intent names.
        QueryPath "query_path": QueryPathRequest => QueryPathResponse;
        /// The one action to take now for an intent.
        GetNextAction "get_next_action": NextActionRequest => NextActionResponse;
        /// The page a screen is, if any (and what this screen of it shows, remembered).
        MatchCurrentPage "match_current_page": MatchPageRequest => MatchPageResponse;
        /// A page added, or updated.
        AddPage "add_page": AddPageRequest => AddPageResponse;
        /// A page's actions by success rate.
        GetAvailableActions "get_available_actions": AvailableActionsRequest => AvailableActionsResponse;
        /// What an action did.
        ReportTransition "report_transition": ReportTransitionRequest => ReportTransitionResponse;
        /// How a session ended (with its last screen, the graph's last answer checked).
        EndSession "end_session": EndRunRequest => EndSessionResponse;
        /// What someone other than the agent judged of a session: it outranks the agent's word.
        ReportVerdict "report_verdict": ReportVerdictRequest => ReportVerdictResponse;
        /// An intent registered with its page and keywords.
        RegisterIntent "register_intent": RegisterIntentRequest => RegisterIntentResponse;
        /// Many transitions added at once.
        BatchAddTransitions "batch_add_transitions": BatchAddTransitionsRequest => BatchAddTransitionsResponse;
        /// A version of an app recorded, with what was checked in it and what was found gone.
        RecordAppVersion "record_app_version": RecordAppVersionRequest => RecordAppVersionResponse;
        /// What changed between two versions of an app.
        GetAppDiff "get_app_diff": AppDiffRequest => AppDiff;
        /// An app's remembered ways, each with its own record.
        GetWays "get_ways": GetWaysRequest => GetWaysResponse;
        /// A remembered way forgotten: the next finished run learns it anew.
        ForgetWay "forget_way": ForgetWayRequest => ForgetWayResponse;
        /// A phone agent's step: the screen's page, the last step reported, the graph's next
        /// action resolved on the screen.
        ObserveScreen "observe_screen": ObserveScreenRequest => ObserveScreenResponse;
        /// The prompt and structured context an LLM decides a step with.
        GetRagContext "get_rag_context": RagContextRequest => RagContextResponse;
        /// Registered intents like a query.
        FindSimilarIntents "find_similar_intents": SimilarIntentsRequest => SimilarIntentsResponse;
        /// The graph's counts, overall or for one app.
        GetGraphStats "get_graph_stats": GraphStatsRequest => GraphStatsResponse;
        /// An app's pages and transitions, whole or around a page, for drawing.
        GetAppGraph "get_app_graph": AppGraphRequest => AppGraphResponse;
        /// A page as the viewer shows it.
        GetPageDetails "get_page_details": PageDetailsRequest => PageDetailsResponse;
        /// The first well-formed action of a phone model's reply.
        ParseAgentReply "parse_agent_reply": ParseReplyRequest => ParseReplyResponse;
        /// A proposed action under the guard's rules, before it runs.
        ReviewAction "review_action": ReviewActionRequest => ReviewActionResponse;
        /// How an action went, for the guard's rules.
        RecordOutcome "record_outcome": RecordOutcomeRequest => RecordOutcomeResponse;
        /// A knowledge base's best segments for a query.
        RetrieveKnowledge "retrieve_knowledge": RetrieveKnowledgeRequest => KnowledgeRecords;
        /// A test run's progress as its runner reports it.
        ReportTestRun "report_test_run": ReportTestRunRequest => ReportTestRunResponse;
        /// The test runs reported, newest first.
        GetTestRuns "get_test_runs": TestRunsRequest => TestRunsResponse;
        /// Business processes like a description.
        SearchBusinesses "search_businesses": SearchBusinessesRequest => Candidates<business::Candidate<ProcessInfo>>;
        /// Implementations like a description or a URI fragment.
        SearchImplementations "search_implementations": SearchImplementationsRequest => Candidates<business::Candidate<ImplementationInfo>>;
        /// Data resources like a description or a table name.
        SearchDataResources "search_data_resources": SearchDataResourcesRequest => Candidates<business::Candidate<ResourceInfo>>;
        /// A process's summary.
        SummarizeBusiness "summarize_business": ProcessRequest => BusinessSummary;
        /// A process in detail.
        GetBusinessContextForChat "get_business_context_for_chat": ProcessRequest => BusinessContext;
        /// An implementation's summary.
        SummarizeImplementation "summarize_implementation": ImplementationRequest => ImplementationSummary;
        /// Where an implementation is used, what it calls and touches.
        GetImplementationContextForChat "get_implementation_context_for_chat": ImplementationRequest => ImplementationContext;
        /// A data resource's summary.
        SummarizeDataResource "summarize_data_resource": ResourceRequest => ResourceSummary;
        /// Who uses a data resource.
        GetResourceContextForChat "get_resource_context_for_chat": ResourceRequest => ResourceContext;
        /// Neighbours within a few hops.
        GetNeighbors "get_neighbors": NeighborsRequest => Neighbors;
        /// A shortest path between two entities.
        GetPathBetweenEntities "get_path_between_entities": PathRequest => EntityPath;
    }
}
