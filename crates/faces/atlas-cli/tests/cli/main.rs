//! The tests that need the `atlas` binary, as one test binary by subject (each test binary is
//! one more link on two cores): each starts the real binary (a server on loopback, a simulated
//! phone, a real browser, a real PostgreSQL where the machine has one) on folders of its own.

mod common;

mod api;
mod dify;
mod docs;
mod eval;
mod explore;
mod fleet;
mod full_disk;
mod hostile_site;
mod links;
mod pg_restart;
mod phone;
mod postgres;
mod progress;
mod releases;
mod requests;
mod stops;
mod testrun;
mod versions;
