//! The routes that run code or touch files for whoever holds the key, registered only with
//! `INTERPRETER_INSECURE_ROUTES=true`: `POST /run`, `POST /upload`, `GET /download/{*path}`.
//! Files stay beneath the working directory: absolute paths, `..` and symbolic links anywhere
//! in the path are refused (403), atomically (see [`crate::limits::beneath`]).

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Multipart, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::error::{ApiError, parse_json};
use crate::limits::beneath::FileError;
use crate::state::AppState;

/// The HTTP error for a file that could not be read or written.
fn file_error(error: FileError) -> ApiError {
    let message = error.to_string();
    match error {
        FileError::NoPath | FileError::TooLarge { .. } => ApiError::bad_request(message),
        FileError::Escapes(_) | FileError::Symlink(_) | FileError::NotAFile(_) => {
            ApiError::forbidden(message)
        }
        FileError::NotFound(_) => ApiError::not_found(message),
        FileError::NoRoot(_) | FileError::Io { .. } => ApiError::internal(message),
    }
}

/// Runs a blocking file operation off the runtime.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, FileError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(format!("file operation failed: {e}")))?
        .map_err(file_error)
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
    let interpreter = session.interpreter().interpreter();
    let computer = interpreter.computer().clone();
    let policy = interpreter.settings().computer.clone();
    let outputs: Vec<_> = computer.run(&language, &code, &policy).collect().await;
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
    let files = state.files.clone();
    blocking(move || files.write(&path, &bytes)).await?;
    Ok(Json(json!({"status": "success"})))
}

/// `GET /download/{*path}`: the file's bytes.
pub async fn download(
    State(state): State<AppState>,
    axum::extract::Path(path): axum::extract::Path<String>,
) -> Result<Response, ApiError> {
    let files = state.files.clone();
    let bytes = blocking(move || files.read(&path)).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/octet-stream")],
        Body::from(bytes),
    )
        .into_response())
}
