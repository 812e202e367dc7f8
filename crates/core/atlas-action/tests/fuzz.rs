//! The parser fuzzed with proptest: whatever a model sends, it answers without panicking, and an
//! action wrapped in anything a model wraps it in comes back exactly. Failures proptest finds are
//! kept in `proptest-regressions/` and replayed first on every run; the curated corpus of replies
//! seen in the wild is `corpus/replies.jsonl`, each with the action it must give.

use atlas_action::{Action, parse_reply};
use proptest::prelude::*;

/// Text from the pieces replies are made of, so random input reaches deep into the reader.
fn messy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("do(".to_string()),
        Just("finish(".to_string()),
        Just("action=".to_string()),
        Just("element=".to_string()),
        Just("text=".to_string()),
        Just("\"Tap\"".to_string()),
        Just("'Type'".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just(")".to_string()),
        Just(",".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("\\".to_string()),
        Just("“".to_string()),
        Just("，".to_string()),
        Just("<answer>".to_string()),
        Just("</answer>".to_string()),
        Just("<think>".to_string()),
        Just("</think>".to_string()),
        "[0-9]{1,4}",
        "[a-zA-Z_ ]{0,6}",
        "[点击搜索你好，。]{0,4}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

fn point() -> impl Strategy<Value = [u16; 2]> {
    (0u16..1000, 0u16..1000).prop_map(|(x, y)| [x, y])
}

/// Text as people and models write it: any characters but backslashes.
fn words() -> impl Strategy<Value = String> {
    "[^\\\\]{0,20}"
}

fn an_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        words().prop_map(|app| Action::Launch { app }),
        (point(), prop::option::of(words()))
            .prop_map(|(element, message)| Action::Tap { element, message }),
        words().prop_map(|text| Action::Type { text }),
        words().prop_map(|text| Action::TypeName { text }),
        (point(), point()).prop_map(|(start, end)| Action::Swipe { start, end }),
        point().prop_map(|element| Action::LongPress { element }),
        point().prop_map(|element| Action::DoubleTap { element }),
        Just(Action::Back),
        Just(Action::Home),
        "[0-9]{1,2} seconds".prop_map(|duration| Action::Wait { duration }),
        words().prop_map(|message| Action::TakeOver { message }),
        Just(Action::Interact),
        words().prop_map(|message| Action::Note { message }),
        words().prop_map(|instruction| Action::CallApi { instruction }),
        words().prop_map(|query| Action::GetKnowledgeData { query }),
        words().prop_map(|message| Action::Finish { message }),
    ]
}

/// Prose around an action: no call of the grammar in it.
fn prose() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ,.:\n我需要点击搜索框然后输入文字。！？]{0,60}"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2500))]

    #[test]
    fn any_reply_is_answered_without_panicking(reply in messy()) {
        let _ = parse_reply(&reply);
    }

    #[test]
    fn any_text_at_all_is_answered_without_panicking(reply in any::<String>()) {
        let _ = parse_reply(&reply);
    }

    #[test]
    fn an_action_comes_back_from_whatever_wraps_it(
        action in an_action(),
        before in prose(),
        after in prose(),
        tags in any::<bool>(),
        second in prop::option::of(an_action()),
        drop_parenthesis in any::<bool>(),
    ) {
        let mut written = action.to_grammar();
        // A forgotten parenthesis is forgiven only where the reply or the answer ends.
        let ends_here = second.is_none() && (tags || after.is_empty());
        if drop_parenthesis && ends_here {
            written.pop();
        }
        let mut answer = written;
        if let Some(next) = &second {
            answer = format!("{answer}\n{}", next.to_grammar());
        }
        // A call starts a word: prose ending in a letter is followed by a space, as models write.
        let before = if before.ends_with(|c: char| c.is_ascii_alphanumeric()) {
            format!("{before} ")
        } else {
            before
        };
        let reply = if tags {
            format!("<think>{before}</think><answer>{answer}</answer>{after}")
        } else if ends_here {
            format!("{before}{answer}")
        } else {
            format!("{before}{answer}{after}")
        };
        prop_assert_eq!(parse_reply(&reply), Ok(action), "{}", reply);
    }
}

#[test]
fn the_corpus_of_replies_gives_its_actions() {
    let corpus = include_str!("../corpus/replies.jsonl");
    let mut checked = 0;
    for (number, line) in corpus.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let reply = case["reply"].as_str().unwrap();
        let got = parse_reply(reply).map(|a| a.to_dict());
        match case.get("expect") {
            Some(expect) => assert_eq!(
                got.as_ref().ok(),
                Some(expect),
                "line {}: {reply}",
                number + 1
            ),
            None => assert!(got.is_err(), "line {}: {reply} gave {got:?}", number + 1),
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} corpus replies");
}
