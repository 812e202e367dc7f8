//! Retrieval on labelled sets, written before anything was measured on them: how well a request
//! said in other words finds its page ([`intents`]: `atlas eval intents`), its knowledge base
//! answer ([`knowledge`]: `atlas eval kb`) and its business entity ([`business`]: `atlas eval
//! biz`). The labelled sets are in `crates/measure/atlas-eval/labelled/`.

pub mod business;
pub mod intents;
pub mod knowledge;
