//! Routing by [`Route`] types: a route is served at the path (and aliases) and with the method
//! its type declares, the ones the OpenAPI document is generated from.

use atlas_api::routes::{Method, Route, RouteShape};
use axum::Router;
use axum::routing::MethodRouter;

/// Route `R` at its path and aliases, with `handler`.
pub(crate) fn at<R: Route, S: Clone + Send + Sync + 'static>(
    router: Router<S>,
    handler: MethodRouter<S>,
) -> Router<S> {
    RouteShape::of::<R>()
        .paths()
        .fold(router, |router, path| router.route(path, handler.clone()))
}

/// `handler` for `method`.
pub(crate) fn on<H, T, S>(method: Method, handler: H) -> MethodRouter<S>
where
    H: axum::handler::Handler<T, S>,
    T: 'static,
    S: Clone + Send + Sync + 'static,
{
    use axum::routing::{delete, get, patch, post, put};
    match method {
        Method::Get => get(handler),
        Method::Post => post(handler),
        Method::Put => put(handler),
        Method::Patch => patch(handler),
        Method::Delete => delete(handler),
    }
}

/// Route `R` with `handler`, at its path and with its method.
pub(crate) fn route<R, H, T, S>(router: Router<S>, handler: H) -> Router<S>
where
    R: Route,
    H: axum::handler::Handler<T, S>,
    T: 'static,
    S: Clone + Send + Sync + 'static,
{
    at::<R, S>(router, on(R::METHOD, handler))
}
