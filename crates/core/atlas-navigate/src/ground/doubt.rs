//! Why the labels leave the next step open. An agent is told, so its LLM knows what to decide;
//! the evaluation counts the causes.

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Doubt {
    /// Nothing left on offer says what the instruction asks, yet this is not clearly the end.
    NotDone,
    /// No label anywhere says what the instruction asks.
    NothingSays,
    /// The labels that say it cannot be reached from here.
    NoWay,
    /// Two widgets show the same words.
    SameLabel(String),
    /// One word in common with a label mostly about something else.
    Coincidence(String),
    /// Two ways say about as much.
    TooClose(String, String),
    /// The best way is not likely enough (the calibrated chance it is right).
    Unlikely(String, f64),
}

impl Doubt {
    /// A short stable name for counting.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Doubt::NotDone => "not_done",
            Doubt::NothingSays => "nothing_says",
            Doubt::NoWay => "no_way",
            Doubt::SameLabel(_) => "same_label",
            Doubt::Coincidence(_) => "coincidence",
            Doubt::TooClose(..) => "too_close",
            Doubt::Unlikely(..) => "unlikely",
        }
    }

    /// What the agent is told.
    pub(crate) fn message(&self) -> String {
        let why = match self {
            Doubt::NotDone => "界面上没有明确的下一步，但任务似乎尚未完成".to_string(),
            Doubt::NothingSays => "没有控件文字与意图相符".to_string(),
            Doubt::NoWay => "与意图相符的控件无法从当前页面到达".to_string(),
            Doubt::SameLabel(l) => format!("多个控件显示相同文字“{l}”"),
            Doubt::Coincidence(l) => format!("“{l}”只有一个词与意图相同"),
            Doubt::TooClose(a, b) => format!("“{a}”与“{b}”同样符合意图"),
            Doubt::Unlikely(l, p) => format!("最可能的一步“{l}”正确的把握只有{:.0}%", p * 100.0),
        };
        format!("不确定({}): {why}", self.code())
    }
}
