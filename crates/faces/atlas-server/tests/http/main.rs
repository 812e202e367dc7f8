//! The server's HTTP behaviour, on a real server started in this process (`common`): the API,
//! the business graph, the chat and MCP, Dify's routes, the viewer and its events, what requests it takes, hostile pages and clients.
//! What needs the binary itself (its commands, signals, a SIGKILL) is tested in `atlas-cli`.

mod common;

mod api;
mod business;
mod dify;
mod hostile_clients;
mod requests;
mod viewer;
