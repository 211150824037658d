//! The routes that run code or touch files for whoever holds the key, registered only with
//! `INTERPRETER_INSECURE_ROUTES=true`: `POST /run`, `POST /upload`, `GET /download/{*path}`.
//! Files are confined to the working directory: absolute paths and `..` are refused (403).

use std::path::{Component, Path, PathBuf};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Multipart, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::error::{ApiError, parse_json};
use crate::state::AppState;

/// `root` joined with `requested`, refused unless it stays inside `root`.
pub fn confine(root: &Path, requested: &str) -> Result<PathBuf, ApiError> {
    let relative = Path::new(requested);
    if requested.is_empty() {
        return Err(ApiError::bad_request("a path is required"));
    }
    for component in relative.components() {
        match component {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(ApiError::forbidden(format!(
                    "{requested:?} leaves the working directory: use a relative path without '..'"
                )));
            }
        }
    }
    Ok(root.join(relative))
}

/// Refuses `path` if, symlinks resolved, it is outside `root`. `path` must exist.
async fn check_resolved(root: &Path, path: &Path) -> Result<(), ApiError> {
    let root = tokio::fs::canonicalize(root)
        .await
        .map_err(|e| ApiError::internal(format!("working directory: {e}")))?;
    let resolved = tokio::fs::canonicalize(path)
        .await
        .map_err(|e| ApiError::not_found(format!("{}: {e}", path.display())))?;
    if resolved.starts_with(&root) {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "the path leads outside the working directory",
        ))
    }
}

/// `POST /run` `{"language", "code"}` → `{"output": [chunks]}` (outputs merged, no
/// `active_line`).
pub async fn run(State(state): State<AppState>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let request = parse_json(&body)?;
    let field = |name: &str| request.get(name).and_then(Value::as_str).map(str::to_owned);
    let (Some(language), Some(code)) = (field("language"), field("code")) else {
        return Err(ApiError::bad_request(
            "Both 'language' and 'code' are required.",
        ));
    };
    let session = state.sessions.default_session();
    let computer = session.interpreter().interpreter().computer().clone();
    let outputs: Vec<_> = computer.run(&language, &code).collect().await;
    let output: Vec<Value> = oi_computer::merge_outputs(outputs)
        .into_iter()
        .map(|o| serde_json::to_value(o.into_chunk()).unwrap_or(Value::Null))
        .collect();
    Ok(Json(json!({ "output": output })))
}

/// `POST /upload`, multipart: `file` (the content) and `path` (where, relative to the working
/// directory; the file's own name when absent).
pub async fn upload(
    State(state): State<AppState>,
    mut multipart: Multipart,
) -> Result<Json<Value>, ApiError> {
    let mut path = None;
    let mut file: Option<(Option<String>, Bytes)> = None;
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| ApiError::bad_request(format!("invalid multipart body: {e}")))?
    {
        match field.name() {
            Some("path") => {
                path = Some(
                    field
                        .text()
                        .await
                        .map_err(|e| ApiError::bad_request(e.to_string()))?,
                );
            }
            Some("file") => {
                let name = field.file_name().map(str::to_owned);
                let bytes = field
                    .bytes()
                    .await
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                file = Some((name, bytes));
            }
            _ => {}
        }
    }
    let Some((name, bytes)) = file else {
        return Err(ApiError::bad_request("a `file` field is required"));
    };
    let Some(path) = path.or(name) else {
        return Err(ApiError::bad_request("a `path` field is required"));
    };
    let root = &state.config.working_dir;
    let target = confine(root, &path)?;
    if let Some(parent) = target.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| ApiError::internal(format!("{}: {e}", parent.display())))?;
        check_resolved(root, parent).await?;
    }
    tokio::fs::write(&target, &bytes)
        .await
        .map_err(|e| ApiError::internal(format!("{}: {e}", target.display())))?;
    Ok(Json(json!({"status": "success"})))
}

/// `GET /download/{*path}`: the file's bytes.
pub async fn download(
    State(state): State<AppState>,
    axum::extract::Path(path): axum::extract::Path<String>,
) -> Result<Response, ApiError> {
    let root = &state.config.working_dir;
    let target = confine(root, &path)?;
    check_resolved(root, &target).await?;
    let bytes = tokio::fs::read(&target)
        .await
        .map_err(|e| ApiError::not_found(format!("{path}: {e}")))?;
    Ok((
        [(header::CONTENT_TYPE, "application/octet-stream")],
        Body::from(bytes),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn confinement() {
        let root = Path::new("/w");
        assert_eq!(
            confine(root, "a/b.txt").unwrap(),
            PathBuf::from("/w/a/b.txt")
        );
        assert_eq!(confine(root, "../x").unwrap_err().status, 403);
        assert_eq!(confine(root, "a/../../x").unwrap_err().status, 403);
        assert_eq!(confine(root, "/etc/passwd").unwrap_err().status, 403);
        assert_eq!(confine(root, "").unwrap_err().status, 400);
    }
}
