//! The routes outside the tool registry as types: each a method and a path with what it takes
//! (path parameters, query, body) and what it answers, in the error shape its clients read.
//!
//! A tool is one name over `POST /api/v1/{name}`; these routes are other clients' contracts
//! (Dify's knowledge API, its External Knowledge API) and the server's own (health, the business
//! graph as a document, MCP, the live events). Described here once, the server routes by them, the
//! registry answers them and the OpenAPI document is generated from them: a route cannot be
//! served without being documented, or documented with a body the server reads differently.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::schema::schema_of;

/// An HTTP method a route takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// GET.
    Get,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
}

impl Method {
    /// Its name in lower case, as OpenAPI keys operations.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Post => "post",
            Method::Put => "put",
            Method::Patch => "patch",
            Method::Delete => "delete",
        }
    }
}

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone who reaches the address.
    Open,
    /// The server token, when the server has one.
    Server,
    /// A dataset's own key, or the server token.
    Dataset,
}

/// How a route's body comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// It takes none.
    None,
    /// A JSON object, read into the route's `Body`.
    Json,
    /// A multipart form (Dify's uploads: the file in `file`, settings as JSON in `data`).
    Multipart,
    /// A JSON document, or the same content as lines of JSON (`application/x-ndjson`, one
    /// object a line; the route's summary says which lines).
    JsonOrLines,
}

/// How a route answers success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// 200 with the answer as JSON.
    Json,
    /// 204 and no body (Dify's deletes).
    NoContent,
    /// 200 with a PNG image.
    Png,
    /// 200 with server-sent events, each event's data the answer as JSON, for as long as the
    /// client reads.
    EventStream,
    /// Server-sent events, or (when the request asks) the whole answer as JSON at the end.
    EventStreamOrJson,
    /// JSON-RPC: 200 with the answer (as JSON, or as one server-sent event for a client that
    /// takes only those), 202 and no body when the message wanted none.
    JsonRpc,
}

/// A header a route reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Its name.
    pub name: &'static str,
    /// Whether a request without it is refused.
    pub required: bool,
}

/// A route's refusal as the OpenAPI document describes it: its shape (the type's schema) and the
/// statuses it comes with, each with when.
pub trait Refusal: JsonSchema {
    /// The statuses it is answered with, and when.
    fn statuses() -> Vec<(u16, &'static str)>;
}

/// A route's refusal, in the shape its clients read; the server writes it with [`status`].
///
/// [`status`]: RouteError::status
pub trait RouteError: Refusal + Serialize + Send + 'static {
    /// The HTTP status it is answered with.
    fn status(&self) -> u16;
    /// A request the route cannot read (its body, path or query).
    fn unreadable(message: String) -> Self;
    /// A body over the route's limit.
    fn too_large(size: usize, limit: usize) -> Self;
    /// A request without the key the route needs.
    fn unauthorized() -> Self;
}

/// One route: method, path, who may call it, what it takes, what it answers.
pub trait Route {
    /// Its method.
    const METHOD: Method;
    /// Its path, `{name}` for each parameter.
    const PATH: &'static str;
    /// Other spellings of the path that answer the same (Dify's `create_by_text` beside
    /// `create-by-text`); not in the OpenAPI document.
    const ALIASES: &'static [&'static str] = &[];
    /// One line for the OpenAPI document.
    const SUMMARY: &'static str;
    /// Who may call it.
    const ACCESS: Access;
    /// How its body comes.
    const BODY: BodyKind;
    /// How it answers success.
    const ANSWERED: Answered = Answered::Json;
    /// The headers it reads.
    const HEADERS: &'static [Header] = &[];
    /// Its path parameters, by name.
    type Path: DeserializeOwned + JsonSchema + Send + 'static;
    /// Its query parameters, by name.
    type Query: DeserializeOwned + JsonSchema + Send + 'static;
    /// Its body (for [`BodyKind::Multipart`], the form as the server reads it).
    type Body: DeserializeOwned + JsonSchema + Send + 'static;
    /// What it answers.
    type Answer: Serialize + JsonSchema + Send + 'static;
    /// How it refuses.
    type Error: Refusal;

    /// The JSON Schema of its body: its type's, unless the route says more than the type can.
    fn body_schema() -> Value {
        route_schema_of::<Self::Body>()
    }
}

/// What a route takes that is not in its path, query or body: the caller's key.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The bearer key of the request, if it had one (a dataset's key or the server token).
    pub key: Option<String>,
}

/// No parameters (a path without any, a query the route ignores, a route without a body).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
pub struct Nothing {}

/// Where a route is and how its body comes: what routing and the server's guard need, without
/// the schemas the document needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteShape {
    /// Its method.
    pub method: Method,
    /// Its path.
    pub path: &'static str,
    /// Other spellings of its path.
    pub aliases: &'static [&'static str],
    /// How its body comes.
    pub body: BodyKind,
}

impl RouteShape {
    /// The shape of route `R`.
    pub const fn of<R: Route>() -> RouteShape {
        RouteShape {
            method: R::METHOD,
            path: R::PATH,
            aliases: R::ALIASES,
            body: R::BODY,
        }
    }

    /// Its path, then its aliases.
    pub fn paths(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.path).chain(self.aliases.iter().copied())
    }
}

/// A route's description as the OpenAPI document needs it.
#[derive(Debug, Clone)]
pub struct RouteDoc {
    /// Where it is and how its body comes.
    pub shape: RouteShape,
    /// One line.
    pub summary: &'static str,
    /// Who may call it.
    pub access: Access,
    /// How it answers success.
    pub answered: Answered,
    /// The headers it reads.
    pub headers: &'static [Header],
    /// The JSON Schema of the path parameters (an object, a property each).
    pub path_schema: Value,
    /// The JSON Schema of the query parameters.
    pub query_schema: Value,
    /// The JSON Schema of the body.
    pub body_schema: Value,
    /// The JSON Schema of the answer.
    pub answer_schema: Value,
    /// The JSON Schema of a refusal.
    pub error_schema: Value,
    /// The statuses a refusal comes with, and when.
    pub refusals: Vec<(u16, &'static str)>,
}

/// A route's part as [`schema_of`] gives it, with each choice among names as an `enum` of them
/// (schemars writes a documented variant as a `oneOf` of `const`s, which Dify's clients read
/// less easily).
pub fn route_schema_of<T: JsonSchema>() -> Value {
    let mut schema = schema_of::<T>();
    names_as_enums(&mut schema);
    schema
}

fn names_as_enums(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            let names: Option<Vec<Value>> =
                object
                    .get("oneOf")
                    .and_then(Value::as_array)
                    .and_then(|choices| {
                        choices
                            .iter()
                            .map(|c| c.get("const").filter(|n| n.is_string()).cloned())
                            .collect()
                    });
            if let Some(names) = names {
                object.remove("oneOf");
                object.insert("type".into(), "string".into());
                object.insert("enum".into(), Value::Array(names));
            }
            object.values_mut().for_each(names_as_enums);
        }
        Value::Array(items) => items.iter_mut().for_each(names_as_enums),
        _ => {}
    }
}

impl RouteDoc {
    /// The description of route `R`.
    pub fn of<R: Route>() -> RouteDoc {
        RouteDoc {
            shape: RouteShape::of::<R>(),
            summary: R::SUMMARY,
            access: R::ACCESS,
            answered: R::ANSWERED,
            headers: R::HEADERS,
            path_schema: route_schema_of::<R::Path>(),
            query_schema: route_schema_of::<R::Query>(),
            body_schema: R::body_schema(),
            answer_schema: route_schema_of::<R::Answer>(),
            error_schema: route_schema_of::<R::Error>(),
            refusals: R::Error::statuses(),
        }
    }
}

/// Declares route markers: `Name METHOD "path" (access, body kind[, answered][; headers =
/// …][; body_schema = f]) "summary" Path, Query, Body => Answer | Error;`.
#[macro_export]
#[doc(hidden)]
macro_rules! routes {
    ($($(#[$doc:meta])* $marker:ident $method:ident $path:literal $([$($alias:literal),*])?
        ($access:ident, $body_kind:ident $(, $answered:ident)? $(; headers = $headers:expr)?
        $(; body_schema = $body_schema:path)?) $summary:literal
        $path_ty:ty, $query:ty, $body:ty => $answer:ty | $error:ty;)*) => {$(
        $(#[$doc])*
        pub struct $marker;
        impl $crate::routes::Route for $marker {
            const METHOD: $crate::routes::Method = $crate::routes::Method::$method;
            const PATH: &'static str = $path;
            $(const ALIASES: &'static [&'static str] = &[$($alias),*];)?
            const SUMMARY: &'static str = $summary;
            const ACCESS: $crate::routes::Access = $crate::routes::Access::$access;
            const BODY: $crate::routes::BodyKind = $crate::routes::BodyKind::$body_kind;
            $(const ANSWERED: $crate::routes::Answered = $crate::routes::Answered::$answered;)?
            $(const HEADERS: &'static [$crate::routes::Header] = $headers;)?
            type Path = $path_ty;
            type Query = $query;
            type Body = $body;
            type Answer = $answer;
            type Error = $error;
            $(fn body_schema() -> serde_json::Value {
                $body_schema()
            })?
        }
    )*
        /// Where every route declared here is, and how its body comes.
        pub const ROUTE_SHAPES: &[$crate::routes::RouteShape] =
            &[$($crate::routes::RouteShape::of::<$marker>()),*];

        /// Every route declared here, as the OpenAPI document lists them.
        pub fn route_docs() -> Vec<$crate::routes::RouteDoc> {
            vec![$($crate::routes::RouteDoc::of::<$marker>()),*]
        }
    };
}
