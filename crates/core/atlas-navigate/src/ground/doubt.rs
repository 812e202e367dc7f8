//! Why the labels leave the next step open. An agent is told, so its LLM knows what to decide;
//! the evaluation counts the causes. The API speaks Chinese, as the seed does; [`in_english`]
//! says the same for a report in English.

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
        format!("{UNSURE}{}): {why}", self.code())
    }

    /// The same in English.
    fn english(&self) -> String {
        let why = match self {
            Doubt::NotDone => {
                "no clear next step on the screen, yet the task seems not done".into()
            }
            Doubt::NothingSays => "no widget's text says what the task asks".into(),
            Doubt::NoWay => "the widgets that say it cannot be reached from this page".into(),
            Doubt::SameLabel(l) => format!("several widgets show the same text “{l}”"),
            Doubt::Coincidence(l) => format!("“{l}” shares only one word with the task"),
            Doubt::TooClose(a, b) => format!("“{a}” and “{b}” fit the task equally well"),
            Doubt::Unlikely(l, p) => {
                format!(
                    "the likeliest step “{l}” is right only {:.0}% of the time",
                    p * 100.0
                )
            }
        };
        format!("unsure ({}): {why}", self.code())
    }

    /// Reads back a [`message`](Doubt::message).
    fn read(message: &str) -> Option<Doubt> {
        let (code, why) = message.strip_prefix(UNSURE)?.split_once("): ")?;
        let quoted: Vec<&str> = why
            .split('“')
            .skip(1)
            .filter_map(|q| q.split_once('”').map(|(label, _)| label))
            .collect();
        let first = || quoted.first().map(|l| l.to_string());
        Some(match code {
            "not_done" => Doubt::NotDone,
            "nothing_says" => Doubt::NothingSays,
            "no_way" => Doubt::NoWay,
            "same_label" => Doubt::SameLabel(first()?),
            "coincidence" => Doubt::Coincidence(first()?),
            "too_close" => Doubt::TooClose(first()?, quoted.get(1)?.to_string()),
            "unlikely" => {
                let percent = why.rsplit("只有").next()?.strip_suffix('%')?;
                Doubt::Unlikely(first()?, percent.parse::<f64>().ok()? / 100.0)
            }
            _ => return None,
        })
    }
}

/// What opens a doubt's message.
const UNSURE: &str = "不确定(";

/// A doubt's message, as `get_next_action` gives it (its `error`, `observe_screen`'s `basis`), in
/// English; `None` for any other text.
pub fn in_english(message: &str) -> Option<String> {
    Doubt::read(message).map(|d| d.english())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_doubt_reads_back_and_says_the_same_in_english() {
        let doubts = [
            Doubt::NotDone,
            Doubt::NothingSays,
            Doubt::NoWay,
            Doubt::SameLabel("OK".into()),
            Doubt::Coincidence("新建 note".into()),
            Doubt::TooClose("Label".into(), "New note type:".into()),
            Doubt::Unlikely("Save".into(), 0.74),
        ];
        for doubt in doubts {
            assert_eq!(Doubt::read(&doubt.message()), Some(doubt.clone()));
            let english = in_english(&doubt.message()).unwrap();
            assert!(english.starts_with(&format!("unsure ({})", doubt.code())));
            assert!(english.is_ascii() || english.contains('“'), "{english}");
        }
        assert_eq!(
            in_english(&Doubt::Unlikely("Save".into(), 0.74).message()).as_deref(),
            Some("unsure (unlikely): the likeliest step “Save” is right only 74% of the time")
        );
        assert_eq!(in_english("memory"), None);
        assert_eq!(in_english("不确定(unknown): 什么"), None);
    }
}
