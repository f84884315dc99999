//! Compiles `csrc/flat_copy.c`, the flat copy of tree-sitter trees (see
//! `src/lib.rs`), against the internal headers of the
//! tree-sitter library this crate links: the `tree-sitter` crate's build
//! script exports its include directory (`DEP_TREE_SITTER_INCLUDE`), and
//! the internal headers sit beside it in `src`.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=csrc/flat_copy.c");
    println!("cargo:rerun-if-changed=csrc/release.c");
    println!("cargo:rerun-if-env-changed=DEP_TREE_SITTER_INCLUDE");
    let include = PathBuf::from(
        std::env::var("DEP_TREE_SITTER_INCLUDE")
            .expect("the tree-sitter crate exports its include directory"),
    );
    let internal = include
        .parent()
        .map(|p| p.join("src"))
        .expect("the tree-sitter crate's sources beside its include directory");
    cc::Build::new()
        .file("csrc/flat_copy.c")
        .file("csrc/release.c")
        .include(&include)
        .include(&internal)
        .flag_if_supported("-std=c11")
        .flag_if_supported("-fvisibility=hidden")
        .define("_POSIX_C_SOURCE", "200112L")
        .define("_DEFAULT_SOURCE", None)
        .warnings(true)
        .compile("csa_flat_copy");
}
