//! LSP framing for the protocol tests and the latency benchmark.

use serde_json::Value;
use std::io::BufRead;

/// Reads one `Content-Length` framed message; `None` at end of input or
/// on a message that is not JSON.
#[allow(dead_code)] // the latency bench reads bodies only
pub fn read_message(r: &mut impl BufRead) -> Option<Value> {
    serde_json::from_slice(&read_body(r)?).ok()
}

/// Reads one `Content-Length` framed body; `None` at end of input.
pub fn read_body(r: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    Some(body)
}

/// One framed message.
pub fn frame(v: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(v).unwrap_or_default();
    let mut msg = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    msg.extend(body);
    msg
}
