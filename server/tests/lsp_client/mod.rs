//! A small LSP client for tests and the latency bench: starts the real
//! `relay lsp` binary and speaks JSON-RPC over its stdio (Content-Length
//! framing, request ids, notifications waited for with timeouts). Requests
//! the server sends (`workspace/applyEdit`, progress creation) are answered
//! at once; applied edits are recorded.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const TIMEOUT: Duration = Duration::from_secs(60);

pub struct LspClient {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
    /// Notifications not consumed yet.
    pub notifications: VecDeque<Value>,
    /// `workspace/applyEdit` params received, in order.
    pub applied_edits: Vec<Value>,
    /// The `client/registerCapability` requests the server made (it asks
    /// for `relay.toml` to be watched).
    pub registrations: Vec<Value>,
    /// Every message received (for debugging failures).
    pub seen: usize,
    /// The answer to `initialize`.
    pub initialize_result: Option<Value>,
    /// Answers to requests sent with [`LspClient::send`] (not waited for
    /// by [`LspClient::request_raw`]), by id.
    pub responses: std::collections::HashMap<i64, Value>,
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((key, value)) = line.split_once(':') {
            if key.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl LspClient {
    /// Starts `binary lsp` (in `cwd` if given) and initializes it.
    pub fn start_with(binary: &Path, utf8: bool, init_options: Value) -> LspClient {
        Self::start_with_env(binary, utf8, init_options, &[])
    }

    /// [`LspClient::start_with`] with extra environment variables.
    pub fn start_with_env(
        binary: &Path,
        utf8: bool,
        init_options: Value,
        envs: &[(&str, &str)],
    ) -> LspClient {
        let mut client = Self::spawn(binary, envs);
        client.initialize(utf8, init_options);
        client
    }

    /// Starts `binary lsp` without initializing it (to test what the server
    /// does with requests that come too early).
    pub fn spawn(binary: &Path, envs: &[(&str, &str)]) -> LspClient {
        Self::spawn_args(binary, &["lsp"], envs)
    }

    /// Starts `binary args…` without initializing it.
    pub fn spawn_args(binary: &Path, args: &[&str], envs: &[(&str, &str)]) -> LspClient {
        let mut child = Command::new(binary)
            .args(args)
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start relay lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        LspClient {
            child,
            stdin,
            incoming: rx,
            next_id: 1,
            notifications: VecDeque::new(),
            applied_edits: Vec::new(),
            registrations: Vec::new(),
            seen: 0,
            initialize_result: None,
            responses: std::collections::HashMap::new(),
        }
    }

    /// The server process's id (the bench reads its resident memory).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `initialize` (announcing UTF-8 positions if `utf8`) and
    /// `initialized`.
    pub fn initialize(&mut self, utf8: bool, init_options: Value) {
        let mut general = json!({});
        if utf8 {
            general = json!({ "positionEncodings": ["utf-8", "utf-16"] });
        }
        let result = self.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": null,
                "capabilities": {
                    "general": general,
                    "window": { "workDoneProgress": true },
                    "workspace": {
                        "applyEdit": true,
                        "didChangeWatchedFiles": { "dynamicRegistration": true }
                    },
                    "textDocument": {
                        "publishDiagnostics": { "relatedInformation": true, "versionSupport": true }
                    }
                },
                "initializationOptions": init_options,
            }),
        );
        self.initialize_result = Some(result);
        self.notify("initialized", json!({}));
    }

    pub fn start(utf8: bool) -> LspClient {
        Self::start_with(Path::new(env!("CARGO_BIN_EXE_relay")), utf8, json!({}))
    }

    pub fn send(&mut self, message: Value) {
        let body = serde_json::to_vec(&message).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(&body).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and waits for its answer: `Ok(result)` or `Err(error)`.
    pub fn request_raw(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let message = self
                .receive(deadline)
                .unwrap_or_else(|| panic!("no answer to {method} within {TIMEOUT:?}"));
            if message.get("method").is_none() && message.get("id") == Some(&json!(id)) {
                return match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
            }
            self.dispatch(message);
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        match self.request_raw(method, params) {
            Ok(result) => result,
            Err(error) => panic!("{method} failed: {error}"),
        }
    }

    fn receive(&mut self, deadline: Instant) -> Option<Value> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.incoming.recv_timeout(left) {
            Ok(message) => {
                self.seen += 1;
                Some(message)
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
        }
    }

    /// Answers server requests; queues notifications.
    fn dispatch(&mut self, message: Value) {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            if let Some(id) = message.get("id").and_then(Value::as_i64) {
                self.responses.insert(id, message);
            }
            return;
        };
        if let Some(id) = message.get("id").cloned() {
            let result = match method {
                "workspace/applyEdit" => {
                    self.applied_edits.push(message["params"].clone());
                    json!({ "applied": true })
                }
                "client/registerCapability" => {
                    self.registrations.push(message["params"].clone());
                    Value::Null
                }
                _ => Value::Null,
            };
            self.send(json!({ "jsonrpc": "2.0", "id": id, "result": result }));
        } else {
            self.notifications.push_back(message);
        }
    }

    /// Waits for a notification `method` whose params satisfy `pred` and
    /// takes it from the queue (others stay queued).
    pub fn wait_for(
        &mut self,
        method: &str,
        timeout: Duration,
        mut pred: impl FnMut(&Value) -> bool,
    ) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        let mut checked = 0;
        loop {
            while checked < self.notifications.len() {
                let n = &self.notifications[checked];
                if n["method"] == method && pred(&n["params"]) {
                    let n = self.notifications.remove(checked).unwrap();
                    return Some(n["params"].clone());
                }
                checked += 1;
            }
            let message = self.receive(deadline)?;
            self.dispatch(message);
        }
    }

    /// Waits for the answer to the request `id` sent with [`LspClient::send`].
    pub fn response(&mut self, id: i64, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(answer) = self.responses.remove(&id) {
                return Some(answer);
            }
            let message = self.receive(deadline)?;
            self.dispatch(message);
        }
    }

    /// Waits for the diagnostics of `uri` at `version`.
    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let params = self
            .wait_for("textDocument/publishDiagnostics", TIMEOUT, |p| {
                p["uri"] == uri && p["version"] == version
            })
            .unwrap_or_else(|| panic!("no diagnostics for {uri} v{version}"));
        params["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "relay", "version": 1, "text": text } }),
        );
    }

    pub fn change(&mut self, uri: &str, version: i64, changes: Value) {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": changes }),
        );
    }

    pub fn shutdown(mut self) {
        let _ = self.request_raw("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A `file://` URI for a path.
pub fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The position (line, character) of byte `offset` of `text` in `utf8` or UTF-16 units.
pub fn position(text: &str, offset: usize, utf8: bool) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = if utf8 {
        offset - line_start
    } else {
        text[line_start..offset].encode_utf16().count()
    };
    json!({ "line": line, "character": col })
}

/// The byte offset of an LSP position.
pub fn offset(text: &str, pos: &Value, utf8: bool) -> usize {
    let line = pos["line"].as_u64().unwrap() as usize;
    let character = pos["character"].as_u64().unwrap() as usize;
    let mut start = 0;
    for _ in 0..line {
        start += text[start..]
            .find('\n')
            .map_or(text.len() - start, |i| i + 1);
    }
    let line_text = &text[start..];
    let line_text = &line_text[..line_text.find('\n').unwrap_or(line_text.len())];
    if utf8 {
        return start + character.min(line_text.len());
    }
    let mut units = 0;
    for (i, c) in line_text.char_indices() {
        if units >= character {
            return start + i;
        }
        units += c.len_utf16();
    }
    start + line_text.len()
}

/// Applies LSP text edits (non-overlapping) to `text`.
pub fn apply_edits(text: &str, edits: &[Value], utf8: bool) -> String {
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset(text, &e["range"]["start"], utf8),
                offset(text, &e["range"]["end"], utf8),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (start, end, new) in spans {
        out.replace_range(start..end, &new);
    }
    out
}
