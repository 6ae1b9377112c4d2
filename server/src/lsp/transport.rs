//! The stdio transport: JSON-RPC messages framed by `Content-Length`
//! headers, read from stdin into a buffer of their own and written to
//! stdout one by one.
//!
//! `tower_lsp_server::Server` reads stdin into one growing buffer that never
//! shrinks and moves its start forward past each message: after a 10 MB
//! `didOpen` it holds 16 MiB, and every later message is written a little
//! further into it, so the server's resident memory rose by ~0.27 MB per
//! 1,000 edits until the whole buffer was touched (+16 MB in all). Here a
//! message's body is read into a vector of exactly its length and dropped
//! once decoded, so nothing of an old message stays resident.
//!
//! The rest is what `Server::serve` does: requests go to the service
//! (answered concurrently, up to [`MAX_CONCURRENCY`] at a time, so that
//! `$/cancelRequest` reaches a running request), responses from the client
//! go back to the service's socket, and the server's own requests
//! (`workspace/configuration`, progress, diagnostics) are written as they
//! come. The server stops reading at `exit` or at the end of stdin.

use futures::channel::mpsc;
use futures::{future, stream, FutureExt, SinkExt, StreamExt, TryFutureExt};
use serde::Serialize;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt,
};
use tower::Service;
use tower_lsp_server::jsonrpc::{Error, Id, Request, Response};
use tower_lsp_server::ClientSocket;

/// Requests answered at the same time (as `Server::concurrency_level`).
pub const MAX_CONCURRENCY: usize = 32;

/// Requests read but not yet started.
const QUEUE: usize = 100;

/// The largest body accepted (a message above it is refused, not read
/// into memory): far above any module an editor sends.
const MAX_BODY: usize = 1 << 30;

/// Memory reserved for a body before its bytes arrive: a header may claim
/// any length, so beyond this the buffer grows only with what is read.
const RESERVED_BODY: usize = 64 << 20;

/// The longest header line read as one; a longer run of bytes without a
/// line break is read in pieces of this size (each skipped as not a
/// header), so a client cannot make the server hold an unbounded line.
const MAX_HEADER_LINE: u64 = 8 << 10;

/// What reading one framed message gave.
#[derive(Debug)]
enum Incoming {
    /// A request or a notification.
    Request(Request),
    /// A response to one of the server's requests.
    Response(Response),
    /// A message that could not be read: the error answer to send.
    Invalid(Error),
}

/// A message to write.
enum Outgoing {
    Request(Request),
    Response(Response),
}

/// Serves `service` over `input` and `output` until `exit` or the end of
/// the input (see the module docs).
pub async fn serve<S, I, O>(mut service: S, socket: ClientSocket, input: I, output: O)
where
    S: Service<Request, Response = Option<Response>>,
    S::Error: std::fmt::Display,
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    let (client_requests, mut client_responses) = socket.split();
    let (client_requests, abort_client_requests) = stream::abortable(client_requests);
    let (mut responses_tx, responses_rx) = mpsc::channel::<Response>(0);
    let (mut tasks_tx, tasks_rx) = mpsc::channel(QUEUE);

    let answer = tasks_rx
        .buffer_unordered(MAX_CONCURRENCY)
        .filter_map(future::ready)
        .map(Ok)
        .forward(responses_tx.clone());

    let outgoing = stream::select(
        responses_rx.map(Outgoing::Response),
        client_requests.map(Outgoing::Request),
    );
    let write = write_messages(outgoing, output);

    let read = async {
        let mut input = tokio::io::BufReader::new(input);
        loop {
            let message = match read_message(&mut input).await {
                Ok(Some(message)) => message,
                Ok(None) => break,
                Err(error) => {
                    eprintln!("relay lsp: cannot read stdin: {error}");
                    break;
                }
            };
            match message {
                Incoming::Request(request) => {
                    if let Err(error) = future::poll_fn(|cx| service.poll_ready(cx)).await {
                        eprintln!("relay lsp: {error}");
                        break;
                    }
                    // Some clients keep stdin open after `exit`: stop reading.
                    let exit = request.method() == "exit";
                    let answer = service.call(request).unwrap_or_else(|error| {
                        eprintln!("relay lsp: {error}");
                        None
                    });
                    if tasks_tx.send(answer.boxed_local()).await.is_err() || exit {
                        break;
                    }
                }
                Incoming::Response(response) => {
                    if client_responses.send(response).await.is_err() {
                        break;
                    }
                }
                Incoming::Invalid(error) => {
                    let _ = responses_tx
                        .send(Response::from_error(Id::Null, error))
                        .await;
                }
            }
        }
        tasks_tx.disconnect();
        responses_tx.disconnect();
        abort_client_requests.abort();
    };

    futures::join!(answer.map(|_| ()), write, read);
}

/// Writes each message with its `Content-Length` header, flushing after
/// each (the client waits for it).
async fn write_messages<O: AsyncWrite + Unpin>(
    mut messages: impl futures::Stream<Item = Outgoing> + Unpin,
    mut output: O,
) {
    while let Some(message) = messages.next().await {
        let body = match &message {
            Outgoing::Request(request) => to_json(request),
            Outgoing::Response(response) => to_json(response),
        };
        let Some(body) = body else { continue };
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        let written = async {
            output.write_all(header.as_bytes()).await?;
            output.write_all(&body).await?;
            output.flush().await
        };
        if let Err(error) = written.await {
            eprintln!("relay lsp: cannot write stdout: {error}");
            return;
        }
    }
}

fn to_json(message: &impl Serialize) -> Option<Vec<u8>> {
    serde_json::to_vec(message)
        .map_err(|error| eprintln!("relay lsp: cannot write a message: {error}"))
        .ok()
}

/// Reads one framed message: `Ok(None)` at the end of the input (between
/// messages or inside one), an I/O error as it is; a message whose header or
/// body cannot be read is [`Incoming::Invalid`], and reading goes on after
/// it. Lines before a message that are not headers are skipped (reported on
/// stderr).
async fn read_message<I: AsyncBufRead + Unpin>(input: &mut I) -> std::io::Result<Option<Incoming>> {
    let mut content_length = None;
    let mut bad_header = None;
    let mut line = Vec::new();
    let mut header_lines = 0;
    loop {
        line.clear();
        if (&mut *input)
            .take(MAX_HEADER_LINE)
            .read_until(b'\n', &mut line)
            .await?
            == 0
        {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if header_lines == 0 {
                // Blank lines between messages.
                continue;
            }
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            eprintln!("relay lsp: skipped a line that is not a header: {text:?}");
            continue;
        };
        header_lines += 1;
        let value = value.trim();
        match name.trim() {
            name if name.eq_ignore_ascii_case("Content-Length") => match value.parse::<usize>() {
                Ok(length) => content_length = Some(length),
                Err(_) => {
                    bad_header.get_or_insert_with(|| format!("bad Content-Length: {value:?}"));
                }
            },
            name if name.eq_ignore_ascii_case("Content-Type") => {
                let charset = value
                    .split(';')
                    .skip(1)
                    .find_map(|parameter| parameter.trim().strip_prefix("charset="));
                if !matches!(charset, None | Some("utf-8" | "utf8")) {
                    bad_header.get_or_insert_with(|| format!("unsupported charset: {value:?}"));
                }
            }
            _ => {}
        }
    }
    let length = match (content_length, bad_header) {
        (Some(length), None) if length <= MAX_BODY => length,
        (length, bad) => {
            // Without a length the body cannot be skipped: the next header
            // line read is wherever the text goes on.
            if let Some(length) = length.filter(|&length| length <= MAX_BODY) {
                skip(input, length).await?;
            }
            let why = bad.unwrap_or_else(|| match length {
                Some(length) => format!("a body of {length} bytes is too large"),
                None => "no Content-Length".to_string(),
            });
            eprintln!("relay lsp: cannot read a message: {why}");
            return Ok(Some(Incoming::Invalid(Error::parse_error())));
        }
    };
    let mut body = Vec::with_capacity(length.min(RESERVED_BODY));
    (&mut *input)
        .take(length as u64)
        .read_to_end(&mut body)
        .await?;
    if body.len() < length {
        // The input ended inside the body.
        return Ok(None);
    }
    Ok(Some(decode(&body)))
}

async fn skip<I: AsyncRead + Unpin>(input: &mut I, length: usize) -> std::io::Result<()> {
    tokio::io::copy(&mut input.take(length as u64), &mut tokio::io::sink()).await?;
    Ok(())
}

/// A body as a request (or notification), else as a response; JSON that is
/// neither is an invalid request, text that is not JSON a parse error (as
/// JSON-RPC answers them). A request is read first: it is what nearly every
/// message is, and reading a 10 MB `didOpen` as a response would copy it
/// (`Response` flattens its fields). `Request` reads a message without a
/// `method` too (with an empty one), so only a named method makes one.
fn decode(body: &[u8]) -> Incoming {
    match serde_json::from_slice::<Request>(body) {
        Ok(request) if !request.method().is_empty() => return Incoming::Request(request),
        Ok(_) => {}
        Err(error) if error.is_syntax() || error.is_eof() => {
            eprintln!("relay lsp: cannot read a message: {error}");
            return Incoming::Invalid(Error::parse_error());
        }
        Err(_) => {}
    }
    match serde_json::from_slice::<Response>(body) {
        Ok(response) => Incoming::Response(response),
        Err(error) => {
            eprintln!("relay lsp: not a JSON-RPC message: {error}");
            Incoming::Invalid(Error::invalid_request())
        }
    }
}

#[cfg(test)]
mod tests {
    //! Framing (the protocol as a whole is tested over the real binary by
    //! the LSP tests and the editors' end-to-end tests).

    use super::*;

    fn read_all(text: &[u8]) -> Vec<String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut input = tokio::io::BufReader::new(text);
            let mut out = Vec::new();
            while let Some(message) = read_message(&mut input).await.unwrap() {
                out.push(match message {
                    Incoming::Request(r) => format!("request {}", r.method()),
                    Incoming::Response(r) => format!("response {}", r.id()),
                    Incoming::Invalid(e) => format!("invalid {}", e.code.code()),
                });
            }
            out
        })
    }

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn requests_responses_and_errors_are_read_in_order() {
        let text = [
            frame(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            format!(
                "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n{}",
                frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#)
            ),
            frame(r#"{"jsonrpc":"2.0","id":7,"result":null}"#),
            frame(r#"{"jsonrpc":"2.0","id":8,"#),
            frame(r#"{"jsonrpc":"2.0","id":9}"#),
            "Content-Length: x\r\n\r\n".to_string(),
            frame(r#"{"jsonrpc":"2.0","method":"exit"}"#),
        ]
        .concat();
        assert_eq!(
            read_all(text.as_bytes()),
            [
                "request initialize",
                "request initialized",
                "response 7",
                "invalid -32700",
                "invalid -32600",
                "invalid -32700",
                "request exit",
            ]
        );
    }

    #[test]
    fn a_line_without_a_break_is_skipped_in_pieces() {
        let text = format!(
            "{}{}",
            "x".repeat(3 * MAX_HEADER_LINE as usize),
            frame(r#"{"jsonrpc":"2.0","method":"b"}"#)
        );
        assert_eq!(read_all(text.as_bytes()), ["request b"]);
    }

    #[test]
    fn a_body_cut_short_ends_the_input() {
        let text = "Content-Length: 100\r\n\r\n{\"jsonrpc\"";
        assert!(read_all(text.as_bytes()).is_empty());
    }

    #[test]
    fn a_charset_other_than_utf8_is_refused_and_its_body_skipped() {
        let body = r#"{"jsonrpc":"2.0","method":"a"}"#;
        let text = format!(
            "Content-Type: text/plain; charset=latin1\r\nContent-Length: {}\r\n\r\n{body}{}",
            body.len(),
            frame(r#"{"jsonrpc":"2.0","method":"b"}"#)
        );
        assert_eq!(read_all(text.as_bytes()), ["invalid -32700", "request b"]);
    }
}
