//! Test runs on the board the viewer's runs page reads: `report_test_run`, what a runner (`atlas
//! test run --atlas URL`) tells as its phones work, and `get_test_runs`, what the page shows.
//! Tools like the others, so a runner in any language reports through the same interface.

use atlas_service::test_runs::{ReportTestRunRequest, TestRunsRequest};

use crate::{Tool, ToolContext, ToolGroup, interface};
use atlas_api::tools;

/// The two tools of the runs board.
pub(crate) fn tools() -> Vec<Tool> {
    vec![
        interface::<tools::ReportTestRun, _, _>(
            ToolGroup::Navigation,
            "上报测试运行的进展（开始、每台设备的用例与步骤、结果）。A test run's progress as its runner reports it: the run's start (suite, tests, phones), each test's start, steps (screenshots, actions, who chose them) and result, the run's end. Kept in memory for the viewer's runs page.",
            false,
            |c: ToolContext, r: ReportTestRunRequest| async move { c.atlas.test_runs().report(r) },
        ),
        interface::<tools::GetTestRuns, _, _>(
            ToolGroup::Navigation,
            "查看测试运行：各设备当前的用例与步骤、结果、图谱节省的模型调用。The test runs reported here, newest first; one run with each phone's test and step, each test's result and the model calls the graph saved; one test's steps with their screenshots.",
            false,
            |c: ToolContext, r: TestRunsRequest| async move { c.atlas.test_runs().get(r) },
        ),
    ]
}
