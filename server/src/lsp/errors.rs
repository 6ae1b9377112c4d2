//! The JSON-RPC errors the handlers answer with.

use tower_lsp_server::jsonrpc::{Error, ErrorCode};

/// A failure of the server itself (a panic caught in a handler).
pub fn internal(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: message.into().into(),
        data: None,
    }
}

/// The request cannot be answered as asked (a document that is not open, a
/// bad argument).
pub fn invalid(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

/// `ContentModified`: the document changed while the request ran.
pub fn content_modified() -> Error {
    Error {
        code: ErrorCode::ServerError(-32801),
        message: "the document changed while the request was running".into(),
        data: None,
    }
}

/// `RequestFailed`: the request was valid but could not be carried out (a
/// `relay.toml` that does not read, text the formatter refuses).
pub fn request_failed(message: String) -> Error {
    Error {
        code: ErrorCode::ServerError(-32803),
        message: message.into(),
        data: None,
    }
}
