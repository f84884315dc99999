//! `csa-lsp`: the csa-lint language server (LSP 3.17 over stdio).
//!
//! It owns the protocol and the documents; the analysis is the `analyzer`
//! crate's. See `docs/architecture.md` ("server") for the invariants:
//! document changes are applied in arrival order inside the notification
//! handlers, each analysis works on a snapshot of one version on the
//! analysis thread and is cancelled when a newer version arrives, results
//! are published only for the current version and only when they changed,
//! and a panic in an analysis or a handler becomes a diagnostic or an error
//! answer and a log line.

// `lsp_types::Uri` caches its parsed form in a cell, which this lint
// flags; its hash and equality are those of the URI text, so it is a sound
// map key (and `WorkspaceEdit::changes` requires it).
#![allow(clippy::mutable_key_type)]

mod backend;
mod convert;
mod document;
mod includers;
mod position;
mod transport;

use tower_lsp_server::{LspService, Server};

/// mimalloc for every allocation of the process, tree-sitter's C ones too
/// (the `override` feature), as in `csa-lint`: with glibc's allocator a
/// third of a keystroke's time in a file with thousands of findings went
/// to `malloc` and `free`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // No transparent huge pages: mimalloc asks for them on its arena, and
    // where the kernel compacts memory synchronously for such regions
    // (`defrag` = `madvise`, Debian's default), the first touch of a fresh
    // 2 MB page stalled a keystroke's publication for 10-40 ms (the
    // latency bench's stress file: p99 28 ms with them, 17 ms without).
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    if std::env::args().any(|a| a == "--version" || a == "-V") {
        println!("csa-lsp {}", env!("CARGO_PKG_VERSION"));
        return;
    }
    if std::env::args().any(|a| a == "--help" || a == "-h") {
        println!(
            "csa-lsp {}: the csa-lint language server. It speaks LSP over standard input and output; start it from an editor (see README, \"Editors\").",
            env!("CARGO_PKG_VERSION")
        );
        return;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("csa-lsp: cannot start the async runtime: {e}");
            std::process::exit(2);
        }
    };
    runtime.block_on(async {
        // stdin -> guard -> server -> guard -> stdout (see `transport`).
        let (to_server, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, from_server) = tokio::io::duplex(1 << 20);
        let (errors_tx, errors_rx) = tokio::sync::mpsc::unbounded_channel();
        let input = tokio::spawn(transport::pump_input(
            tokio::io::stdin(),
            to_server,
            errors_tx,
        ));
        let out = transport::Output::new(std::io::stdout());
        let output = tokio::spawn(transport::pump_output(from_server, out.clone(), errors_rx));
        let (service, socket) = LspService::new(|client| backend::Backend::new(client, out));
        // On a worker thread, like the tasks it spawns: a message then goes
        // from the input guard through the server to the analysis on one
        // thread, without waking the thread of `block_on`.
        let server = tokio::spawn(Server::new(server_in, server_out, socket).serve(service));
        let _ = server.await;
        // The server has stopped (exit, or end of input): forward what it
        // wrote, then leave even if stdin stays open.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), output).await;
        input.abort();
    });
    // Do not wait for the blocking stdin reader thread.
    runtime.shutdown_background();
}
