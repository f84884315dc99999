//! A guard in front of the LSP transport.
//!
//! tower-lsp-server's reader stops the whole server at the first message it
//! cannot decode (bad JSON, a JSON-RPC batch, a broken header). We read the
//! framing ourselves: well-formed JSON-RPC messages go on to the server
//! unchanged; anything else is answered here with the JSON-RPC error the
//! specification asks for (`-32700` parse error, `-32600` invalid request),
//! logged on stderr, and skipped. The server's output is forwarded frame by
//! frame, so our error responses never split one of its messages.

use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt,
};
use tokio::sync::mpsc;

/// The largest message accepted (bigger ones are skipped with an error).
const MAX_MESSAGE: usize = 256 << 20;

/// What reading one frame gave.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// A body, as bytes.
    Body(Vec<u8>),
    /// A header block without a usable `Content-Length`.
    BadHeader(String),
    /// End of input.
    Eof,
}

/// Reads one `Content-Length` framed message.
pub async fn read_frame<R: AsyncBufRead + Unpin>(r: &mut R) -> std::io::Result<Frame> {
    let mut length: Option<usize> = None;
    let mut bad = None;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line).await? == 0 {
            return Ok(Frame::Eof);
        }
        let text = String::from_utf8_lossy(&line);
        let mut text = text.trim_end_matches(['\r', '\n']);
        // After a frame we could not size, its body runs into the next
        // header line: resynchronise on `Content-Length`.
        if let Some(i) = text.to_ascii_lowercase().find("content-length:") {
            text = &text[i..];
        }
        if text.is_empty() {
            if !saw_header {
                continue; // stray blank line between messages
            }
            break;
        }
        saw_header = true;
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => bad = Some(format!("bad Content-Length `{}`", value.trim())),
                }
            }
            Some((name, _)) if name.trim().eq_ignore_ascii_case("content-type") => {}
            _ => bad = Some(format!("bad header line `{text}`")),
        }
    }
    match (length, bad) {
        (Some(n), None) if n <= MAX_MESSAGE => {
            let mut body = vec![0; n];
            r.read_exact(&mut body).await?;
            Ok(Frame::Body(body))
        }
        (Some(n), None) => {
            // Skip the oversized body.
            let mut left = n;
            let mut buf = vec![0; 64 << 10];
            let cap = buf.len();
            while left > 0 {
                let k = r.read(&mut buf[..left.min(cap)]).await?;
                if k == 0 {
                    return Ok(Frame::Eof);
                }
                left -= k;
            }
            Ok(Frame::BadHeader(format!(
                "message of {n} bytes is too large"
            )))
        }
        (_, Some(why)) => Ok(Frame::BadHeader(why)),
        (None, None) => Ok(Frame::BadHeader("missing Content-Length".to_string())),
    }
}

/// The top level of a JSON-RPC message, borrowed from its body: the guard
/// checks the shape without building a tree of the message (the server
/// decodes it once, after).
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A member that is present, even as `null` (`Option` alone reads a
/// `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

/// Whether a body is a JSON-RPC message the server can decode; if not, the
/// error response to send back.
pub fn check(body: &[u8]) -> Result<(), Value> {
    let error = |id: Value, code: i64, message: &str| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let env = match serde_json::from_slice::<Envelope<'_>>(body) {
        Ok(env) => env,
        Err(e) if e.is_data() => {
            // Valid JSON of another shape: an array (a batch), a scalar.
            return Err(error(
                Value::Null,
                -32600,
                "Invalid request: batches and non-object messages are not supported",
            ));
        }
        Err(_) => return Err(error(Value::Null, -32700, "Parse error")),
    };
    let first = |r: &RawValue| r.get().as_bytes().first().copied().unwrap_or(b' ');
    let id_ok = env.id.is_none_or(|i| {
        let t = i.get();
        t == "null"
            || t.starts_with('"')
            || serde_json::from_str::<i64>(t).is_ok()
            || serde_json::from_str::<u64>(t).is_ok()
    });
    let reply_id = match env.id {
        Some(i) if id_ok => serde_json::from_str(i.get()).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    if env.jsonrpc.as_deref() != Some("2.0") || !id_ok {
        return Err(error(reply_id, -32600, "Invalid request"));
    }
    match env.method {
        Some(m) if first(m) == b'"' => {
            let params_ok = env
                .params
                .is_none_or(|p| matches!(first(p), b'{' | b'[' | b'n'));
            if params_ok {
                Ok(())
            } else {
                Err(error(reply_id, -32600, "Invalid request: bad params"))
            }
        }
        Some(_) => Err(error(
            reply_id,
            -32600,
            "Invalid request: method is not a string",
        )),
        None if env.id.is_some() && (env.result.is_some() || env.error.is_some()) => Ok(()),
        None => Err(error(reply_id, -32600, "Invalid request: no method")),
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// The server's output (stdout), shared by the frames tower-lsp-server
/// writes (forwarded by [`pump_output`]) and the notifications the backend
/// writes itself (published diagnostics, without tower-lsp-server's
/// conversion to a JSON value and its queues). Every frame is written whole,
/// with one write, under the lock: frames never interleave.
///
/// Writes are synchronous: a write to the client's pipe returns at once
/// unless the client stops reading (and then the output must wait anyway).
/// tokio's asynchronous stdout hands every write to a blocking thread: a
/// thread wake-up between each message and the client.
#[derive(Clone)]
pub struct Output(Arc<Mutex<Box<dyn std::io::Write + Send>>>);

impl Output {
    pub fn new(w: impl std::io::Write + Send + 'static) -> Output {
        Output(Arc::new(Mutex::new(Box::new(w))))
    }

    /// Sends one message: header, body, flush.
    pub fn send(&self, body: &[u8]) -> std::io::Result<()> {
        self.send_frame(&frame(body))
    }

    fn send_frame(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        w.write_all(bytes)?;
        w.flush()
    }
}

/// Copies well-formed messages from `input` to `server`, answering the
/// others through `errors`. Ends at end of input.
pub async fn pump_input<R, W>(input: R, mut server: W, errors: mpsc::UnboundedSender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = tokio::io::BufReader::new(input);
    loop {
        match read_frame(&mut input).await {
            Ok(Frame::Eof) | Err(_) => break,
            Ok(Frame::BadHeader(why)) => {
                eprintln!("csa-lsp: skipped a message: {why}");
                let e = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("Parse error: {why}")}});
                let _ = errors.send(frame(e.to_string().as_bytes()));
            }
            Ok(Frame::Body(body)) => match check(&body) {
                Ok(()) => {
                    if server.write_all(&frame(&body)).await.is_err() {
                        break;
                    }
                    let _ = server.flush().await;
                }
                Err(e) => {
                    eprintln!(
                        "csa-lsp: answered a malformed message with {}",
                        e["error"]["message"]
                    );
                    let _ = errors.send(frame(e.to_string().as_bytes()));
                }
            },
        }
    }
    let _ = server.shutdown().await;
}

/// Copies the server's frames and our error responses to `output`, whole
/// frames at a time. Ends when the server's output ends.
pub async fn pump_output<R>(server: R, output: Output, mut errors: mpsc::UnboundedReceiver<Vec<u8>>)
where
    R: AsyncRead + Unpin,
{
    let mut server = tokio::io::BufReader::new(server);
    let mut errors_open = true;
    loop {
        tokio::select! {
            f = read_frame(&mut server) => match f {
                Ok(Frame::Body(body)) => {
                    if output.send(&body).is_err() {
                        return;
                    }
                }
                Ok(Frame::BadHeader(_)) => {}
                Ok(Frame::Eof) | Err(_) => break,
            },
            e = errors.recv(), if errors_open => match e {
                Some(bytes) => {
                    if output.send_frame(&bytes).is_err() {
                        return;
                    }
                }
                None => errors_open = false,
            },
        }
    }
    // Whatever error responses are still queued.
    while let Ok(bytes) = errors.try_recv() {
        let _ = output.send_frame(&bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_checked() {
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{}}"#).is_ok());
        assert!(check(br#"{"jsonrpc":"2.0","method":"x"}"#).is_ok());
        assert!(check(br#"{"jsonrpc":"2.0","id":"a","result":null}"#).is_ok());
        let e = check(b"{garbage}").unwrap_err();
        assert_eq!(e["error"]["code"], -32700);
        let e = check(b"[1,2]").unwrap_err();
        assert_eq!(e["error"]["code"], -32600);
        let e = check(br#"{"jsonrpc":"2.0","id":5,"method":3}"#).unwrap_err();
        assert_eq!(
            (e["id"].clone(), e["error"]["code"].clone()),
            (json!(5), json!(-32600))
        );
        let e = check(br#"{"jsonrpc":"2.0","id":5,"method":"x","params":7}"#).unwrap_err();
        assert_eq!(e["id"], 5);
        let e = check(br#"{"id":5,"method":"x"}"#).unwrap_err();
        assert_eq!(e["error"]["code"], -32600);
        let e = check(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#).unwrap_err();
        assert!(e["id"].is_null());
        // A response whose id is null (an error about an unparsable
        // request) and escapes in the version string.
        assert!(
            check(br#"{"jsonrpc":"2\u002e0","id":null,"error":{"code":1,"message":"m"}}"#).is_ok()
        );
        let e = check(br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#).unwrap_err();
        assert!(e["id"].is_null());
        let e = check(br#"{"jsonrpc":"2.0","id":"s","method":"x"} trailing"#).unwrap_err();
        assert_eq!(e["error"]["code"], -32700);
        assert_eq!(check(b"7").unwrap_err()["error"]["code"], -32600);
    }

    #[tokio::test]
    async fn frames_survive_bad_headers() {
        let input: &[u8] = b"Content-Length: 2\r\n\r\n{}\r\nX-Bad\r\n\r\nContent-Length: zz\r\n\r\n{lost}Content-Length: 3\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[1]";
        let mut r = tokio::io::BufReader::new(input);
        assert_eq!(
            read_frame(&mut r).await.unwrap(),
            Frame::Body(b"{}".to_vec())
        );
        assert!(matches!(
            read_frame(&mut r).await.unwrap(),
            Frame::BadHeader(_)
        ));
        assert!(matches!(
            read_frame(&mut r).await.unwrap(),
            Frame::BadHeader(_)
        ));
        assert_eq!(
            read_frame(&mut r).await.unwrap(),
            Frame::Body(b"[1]".to_vec())
        );
        assert_eq!(read_frame(&mut r).await.unwrap(), Frame::Eof);
    }
}
