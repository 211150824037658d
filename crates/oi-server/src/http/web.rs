//! The web page (issue 27): its static assets, embedded in the binary, served with a strict
//! Content-Security-Policy. The assets hold no data, so their exact paths pass the door
//! without the key (auth.rs asks [`is_asset`]); everything the page then loads (sessions,
//! settings, the WebSocket) goes through the door like any other client.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

/// The page's Content-Security-Policy: scripts and styles only from this server's own files
/// (no inline script, no `eval`), images only from itself or `data:` URLs, connections
/// (fetch, WebSocket) only to itself, frames only `srcdoc` ones the page makes, no plugins,
/// no `<base>`, no forms posted anywhere, and no other site may frame the page.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; frame-src 'self'; child-src 'self'; \
object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// One embedded file: its path, content type and bytes.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_bytes!("../../web/index.html"),
    },
    Asset {
        // oi-core's rule for showing code before approval, generated from it (issue 34).
        path: "/static/visible_table.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../web/visible_table.js"),
    },
    Asset {
        path: "/static/render.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../web/render.js"),
    },
    Asset {
        path: "/static/conversation.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../web/conversation.js"),
    },
    Asset {
        path: "/static/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../web/app.js"),
    },
    Asset {
        path: "/static/app.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../../web/app.css"),
    },
    Asset {
        path: "/favicon.svg",
        content_type: "image/svg+xml",
        body: include_bytes!("../../web/favicon.svg"),
    },
    Asset {
        path: "/favicon.ico",
        content_type: "image/svg+xml",
        body: include_bytes!("../../web/favicon.svg"),
    },
];

/// The paths of the page's static files besides `/` (each registered as a `GET` route),
/// read from the embedded files themselves.
pub fn asset_paths() -> impl Iterator<Item = &'static str> {
    ASSETS.iter().map(|a| a.path).filter(|path| *path != "/")
}

/// Whether `path` (the raw path, as sent) is exactly one of the page's static files.
pub fn is_asset(path: &str) -> bool {
    asset_paths().any(|asset| asset == path)
}

/// The embedded file at `path` with its headers (CSP and friends), or `None`.
pub fn asset(path: &str) -> Option<Response> {
    let asset = ASSETS.iter().find(|a| a.path == path)?;
    let mut response = asset.body.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Some(response)
}

/// `GET` on one of [`asset_paths`] (the router passes the matched path).
pub async fn serve(uri: axum::http::Uri) -> Response {
    asset(uri.path()).unwrap_or_else(|| {
        crate::error::ApiError::not_found(format!("no file {}", uri.path())).into_response()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_path_is_embedded_and_small() {
        let mut total = 0;
        for path in std::iter::once("/").chain(asset_paths()) {
            let found = ASSETS.iter().find(|a| a.path == path);
            assert!(found.is_some(), "{path}");
            total += found.map_or(0, |a| a.body.len());
        }
        // 60 KiB of the page's own files, plus ~21 KB of oi-core's generated visibility
        // table (issue 34).
        assert!(total < 80 * 1024, "the page weighs {total} bytes");
        assert!(!is_asset("/"), "/ is checked by the door itself");
        assert!(!is_asset("/static/app.js/"));
        assert!(!is_asset("//favicon.svg"));
        assert!(!is_asset("/static/"));
    }
}
