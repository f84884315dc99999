//! LSP framing for the protocol tests and the latency benchmark.

use serde_json::Value;
use std::io::BufRead;

/// Reads one `Content-Length` framed message; `None` at end of input or
/// on a message that is not JSON.
pub fn read_message(r: &mut impl BufRead) -> Option<Value> {
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
    serde_json::from_slice(&body).ok()
}

/// One framed message.
pub fn frame(v: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(v).unwrap_or_default();
    let mut msg = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    msg.extend(body);
    msg
}
