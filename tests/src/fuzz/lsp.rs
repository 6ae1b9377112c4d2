//! The language-server fuzz target: a session of random edits and requests
//! against the server in-process (`relay_server::lsp::service`, the same
//! service `relay lsp` serves on stdio), driven by an [`Entropy`].
//!
//! Properties: every request is answered within [`ANSWER_WITHIN`]; no
//! handler panics (the server turns a panic into an error answer or an
//! "internal error" diagnostic, so both are checked, and a panic hook
//! counts panics caught anywhere); every range the server returns lies in
//! the document.

use super::entropy::Entropy;
use super::panics::PanicWatch;
use super::program::generate;
use super::targets::campaign_limits;
use futures::{SinkExt, StreamExt};
use relay_server::lsp::{service, Backend};
use serde_json::{json, Value};
use std::future::poll_fn;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::LspService;
use tower_service::Service;

/// How long a request may take before the session counts as hung.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// What a session did.
#[derive(Debug, Default, Clone, Copy)]
pub struct LspOutcome {
    pub requests: usize,
    pub notifications: usize,
    /// Requests answered with an error (allowed: a bad position, a
    /// pipeline that does not parse, a document changed meanwhile).
    pub error_answers: usize,
    pub diagnostics_published: usize,
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            // As `relay lsp` does: lowering and printing recurse on nesting.
            .thread_stack_size(64 << 20)
            .build()
            .expect("a tokio runtime")
    })
}

/// One session driven by `data`.
pub fn lsp_target(data: &[u8]) -> LspOutcome {
    lsp_session(&mut Entropy::from_bytes(data))
}

/// One session driven by `entropy`.
pub fn lsp_session(entropy: &mut Entropy) -> LspOutcome {
    let watch = PanicWatch::start();
    let outcome = runtime().block_on(Session::run(entropy));
    watch.assert_none("the language-server session");
    outcome
}

/// Texts edits insert: tokens of the language, whole constructs, and
/// characters that take more than one UTF-16 unit.
const SNIPPETS: &[&str] = &[
    "%x",
    "%0",
    "@main",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    "=",
    "\n",
    " ",
    "let %a = ",
    "add(%x, %x)",
    "fn (%y: float32) { %y }",
    "def @f(%z: Tensor[(2, 2), float32]) { %z }\n",
    "nn.conv2d(",
    "Tensor[(1, 2), float32]",
    "1f",
    "meta[relay.Constant][0]",
    "if (True) { 1 } else { 2 }",
    "#[version = \"0.0.5\"]\n",
    "/* ",
    " */",
    "// c\n",
    "\"s\"",
    "é",
    "𝄞",
    "\u{0}",
    "axis=",
    "=>",
    "match",
    "type T { A, B }\n",
    "free_var %q: int32;\n",
];

const PIPELINES: &[&str] = &[
    "FoldConstant",
    "InferType, FoldConstant, DeadCodeElimination",
    "SimplifyInference, FoldScaleAxis, FuseOps(fuse_opt_level=2)",
    "ToANormalForm",
    "ToGraphNormalForm, EliminateCommonSubexpr",
    "DynamicToStatic",
    "CanonicalizeOps, SimplifyExpr",
    "Sequential(",
    "NoSuchPass",
    "",
];

struct Doc {
    uri: String,
    text: String,
    version: i32,
    open: bool,
}

struct Session {
    service: LspService<Backend>,
    next_id: i64,
    utf8: bool,
    outcome: LspOutcome,
    published: Arc<Mutex<Vec<Value>>>,
}

impl Session {
    async fn run(e: &mut Entropy) -> LspOutcome {
        let (service, socket) = service();
        let published = Arc::new(Mutex::new(Vec::new()));
        let (mut requests, mut responses) = socket.split();
        let sink = published.clone();
        // The client side of the socket: answers the server's requests
        // (edits are declined, so the documents stay as the session wrote
        // them) and keeps its notifications.
        let client = tokio::spawn(async move {
            while let Some(request) = requests.next().await {
                let (method, id, params) = request.into_parts();
                match id {
                    Some(id) => {
                        let result = if method == "workspace/applyEdit" {
                            json!({ "applied": false })
                        } else {
                            Value::Null
                        };
                        if responses.send(Response::from_ok(id, result)).await.is_err() {
                            break;
                        }
                    }
                    None if method == "textDocument/publishDiagnostics" => {
                        sink.lock().unwrap().push(params.unwrap_or(Value::Null));
                    }
                    None => {}
                }
            }
        });
        let utf8 = e.chance(50);
        let mut session = Session {
            service,
            next_id: 1,
            utf8,
            outcome: LspOutcome::default(),
            published,
        };
        let encodings = if utf8 {
            json!(["utf-8"])
        } else {
            json!(["utf-16"])
        };
        session
            .request(
                "initialize",
                json!({
                    "processId": null,
                    "rootUri": null,
                    "capabilities": { "general": { "positionEncodings": encodings } },
                    "initializationOptions": { "debounceMs": 0 },
                }),
            )
            .await;
        session.notify("initialized", json!({})).await;
        let mut docs: Vec<Doc> = (0..e.range(1, 2))
            .map(|i| Doc {
                uri: format!("file:///fuzz/doc{i}.relay"),
                text: String::new(),
                version: 0,
                open: false,
            })
            .collect();
        for doc in &mut docs {
            doc.text = initial_text(e);
            session.open(doc).await;
        }
        let steps = e.range(4, 40);
        for _ in 0..steps {
            if e.is_exhausted() {
                break;
            }
            let index = e.below(docs.len());
            let doc = &mut docs[index];
            session.step(e, doc).await;
        }
        session.request("shutdown", Value::Null).await;
        session.notify("exit", Value::Null).await;
        client.abort();
        for params in session.published.lock().unwrap().iter() {
            session.outcome.diagnostics_published += 1;
            for d in params["diagnostics"].as_array().into_iter().flatten() {
                let message = d["message"].as_str().unwrap_or_default();
                assert!(
                    !message.contains("panicked"),
                    "a published diagnostic reports a panic: {message}"
                );
            }
        }
        session.outcome
    }

    async fn call(&mut self, request: Request) -> Option<Response> {
        let ready =
            tokio::time::timeout(ANSWER_WITHIN, poll_fn(|cx| self.service.poll_ready(cx))).await;
        match ready {
            Err(_) => panic!("the server was not ready within {ANSWER_WITHIN:?}"),
            Ok(Err(_)) => return None, // exited
            Ok(Ok(())) => {}
        }
        let method = request.method().to_string();
        match tokio::time::timeout(ANSWER_WITHIN, self.service.call(request)).await {
            Err(_) => panic!("{method} was not answered within {ANSWER_WITHIN:?}"),
            Ok(result) => result.ok().flatten(),
        }
    }

    async fn request(&mut self, method: &'static str, params: Value) -> Option<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.outcome.requests += 1;
        let request = Request::build(method).params(params).id(id).finish();
        let response = self.call(request).await?;
        let (_, result) = response.into_parts();
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                assert!(
                    !error.message.contains("panicked"),
                    "{method} answered with a panic: {}",
                    error.message
                );
                self.outcome.error_answers += 1;
                None
            }
        }
    }

    async fn notify(&mut self, method: &'static str, params: Value) {
        self.outcome.notifications += 1;
        let request = Request::build(method).params(params).finish();
        self.call(request).await;
    }

    async fn open(&mut self, doc: &mut Doc) {
        doc.version += 1;
        doc.open = true;
        let params = json!({ "textDocument": {
            "uri": doc.uri, "languageId": "relay", "version": doc.version, "text": doc.text,
        }});
        self.notify("textDocument/didOpen", params).await;
    }

    /// A position in `doc`: mostly a real one, sometimes past the end of a
    /// line or of the document.
    fn position(&self, e: &mut Entropy, doc: &Doc) -> (Value, usize) {
        let lines: Vec<&str> = doc.text.split('\n').collect();
        if e.chance(5) {
            let line = lines.len() + e.below(3);
            return (
                json!({ "line": line, "character": e.below(200) }),
                doc.text.len(),
            );
        }
        let line = e.below(lines.len());
        let content = lines[line];
        let start: usize = lines[..line].iter().map(|l| l.len() + 1).sum();
        // Column in the negotiated encoding, on a character boundary.
        let boundaries: Vec<usize> = content
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(content.len()))
            .collect();
        let byte = boundaries[e.below(boundaries.len())];
        let column = if self.utf8 {
            byte
        } else {
            content[..byte].encode_utf16().count()
        };
        (json!({ "line": line, "character": column }), start + byte)
    }

    fn document(doc: &Doc) -> Value {
        json!({ "uri": doc.uri })
    }

    /// Checks that a range the server returned lies inside `text`.
    fn assert_range_inside(text: &str, range: &Value, what: &str) {
        let lines = text.split('\n').count() as u64;
        for end in ["start", "end"] {
            let line = range[end]["line"].as_u64().unwrap_or(0);
            assert!(
                line <= lines,
                "{what}: a range past the end of the document: {range}"
            );
        }
    }

    async fn step(&mut self, e: &mut Entropy, doc: &mut Doc) {
        if !doc.open {
            doc.text = initial_text(e);
            self.open(doc).await;
            return;
        }
        let td = Self::document(doc);
        let (position, _) = self.position(e, doc);
        match e.below(22) {
            0..=5 => self.edit(e, doc).await,
            6 => {
                self.request(
                    "textDocument/hover",
                    json!({ "textDocument": td, "position": position }),
                )
                .await;
            }
            7 => {
                self.request(
                    "textDocument/definition",
                    json!({ "textDocument": td, "position": position }),
                )
                .await;
            }
            8 => {
                let params = json!({ "textDocument": td, "position": position, "context": { "includeDeclaration": true } });
                self.request("textDocument/references", params).await;
            }
            9 => {
                self.request(
                    "textDocument/documentHighlight",
                    json!({ "textDocument": td, "position": position }),
                )
                .await;
            }
            10 => {
                self.request(
                    "textDocument/prepareRename",
                    json!({ "textDocument": td, "position": position }),
                )
                .await;
                let name = *e.pick(&["y", "%y", "new_name", "", "1x", "a b"]);
                let params = json!({ "textDocument": td, "position": position, "newName": name });
                if let Some(edit) = self.request("textDocument/rename", params).await {
                    for edits in edit["changes"]
                        .as_object()
                        .into_iter()
                        .flat_map(|m| m.values())
                    {
                        for edit in edits.as_array().into_iter().flatten() {
                            Self::assert_range_inside(&doc.text, &edit["range"], "rename");
                        }
                    }
                }
            }
            11 => {
                self.request("textDocument/documentSymbol", json!({ "textDocument": td }))
                    .await;
                self.request("textDocument/foldingRange", json!({ "textDocument": td }))
                    .await;
            }
            12 => {
                self.request(
                    "textDocument/semanticTokens/full",
                    json!({ "textDocument": td }),
                )
                .await;
                let (end, _) = self.position(e, doc);
                let range = json!({ "start": position, "end": end });
                self.request(
                    "textDocument/semanticTokens/range",
                    json!({ "textDocument": td, "range": range }),
                )
                .await;
            }
            13 => {
                let (end, _) = self.position(e, doc);
                let range = json!({ "start": position, "end": end });
                self.request(
                    "textDocument/inlayHint",
                    json!({ "textDocument": td, "range": range }),
                )
                .await;
            }
            14 => {
                self.request(
                    "textDocument/completion",
                    json!({ "textDocument": td, "position": position }),
                )
                .await;
                self.request(
                    "textDocument/signatureHelp",
                    json!({ "textDocument": td, "position": position }),
                )
                .await;
            }
            15 => {
                let params = json!({ "textDocument": td, "options": { "tabSize": 2, "insertSpaces": true } });
                if let Some(edits) = self.request("textDocument/formatting", params).await {
                    for edit in edits.as_array().into_iter().flatten() {
                        Self::assert_range_inside(&doc.text, &edit["range"], "formatting");
                    }
                }
            }
            16 => {
                let (end, _) = self.position(e, doc);
                let range = json!({ "start": position, "end": end });
                let params =
                    json!({ "textDocument": td, "range": range, "context": { "diagnostics": [] } });
                self.request("textDocument/codeAction", params).await;
            }
            17 => {
                let pipeline = *e.pick(PIPELINES);
                let mut args = json!({ "uri": doc.uri, "pipeline": pipeline });
                if e.chance(30) {
                    args["function"] = json!(*e.pick(&["main", "g0", "nope"]));
                }
                let params = json!({ "command": "relay.applyPipeline", "arguments": [args] });
                self.request("workspace/executeCommand", params).await;
            }
            18 => {
                let pipeline = *e.pick(PIPELINES);
                let params = json!({ "textDocument": td, "pipeline": pipeline });
                self.request("relay/passOutput", params).await;
            }
            19 => {
                let params = json!({ "command": "relay.listPasses", "arguments": [] });
                self.request("workspace/executeCommand", params).await;
            }
            20 => {
                self.notify("textDocument/didSave", json!({ "textDocument": td }))
                    .await;
            }
            _ => {
                doc.open = false;
                self.notify("textDocument/didClose", json!({ "textDocument": td }))
                    .await;
            }
        }
    }

    /// An incremental edit (or, sometimes, the whole text replaced), applied
    /// to the session's copy as the server should apply it.
    async fn edit(&mut self, e: &mut Entropy, doc: &mut Doc) {
        let (a, a_byte) = self.position(e, doc);
        let (b, b_byte) = self.position(e, doc);
        let (start, end, start_byte, end_byte) = if a_byte <= b_byte {
            (a, b, a_byte, b_byte)
        } else {
            (b, a, b_byte, a_byte)
        };
        let insert = match e.below(10) {
            0 => generate(e, campaign_limits()).text,
            1..=2 => String::new(),
            _ => (0..e.range(1, 3)).map(|_| *e.pick(SNIPPETS)).collect(),
        };
        doc.version += 1;
        let change = if e.chance(10) {
            doc.text = insert.clone();
            json!({ "text": insert })
        } else {
            let end_byte = end_byte.min(doc.text.len());
            let start_byte = start_byte.min(end_byte);
            doc.text.replace_range(start_byte..end_byte, &insert);
            json!({ "range": { "start": start, "end": end }, "text": insert })
        };
        let params = json!({
            "textDocument": { "uri": doc.uri, "version": doc.version },
            "contentChanges": [change],
        });
        self.notify("textDocument/didChange", params).await;
    }
}

/// A document to open: a generated module, a snippet soup, or nothing.
fn initial_text(e: &mut Entropy) -> String {
    match e.below(4) {
        0 | 1 => generate(e, campaign_limits()).text,
        2 => (0..e.range(1, 12)).map(|_| *e.pick(SNIPPETS)).collect(),
        _ => String::new(),
    }
}
