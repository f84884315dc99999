//! The real-editor test: a headless Neovim (Debian's, 0.7; `.ci/run`
//! installs it) with the plugin in `editors/nvim` opens an annotated C file
//! and a Fortran file, and we check what `vim.diagnostic.get()` returned,
//! then that a code action was offered and applied.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

#[test]
fn neovim_shows_diagnostics_and_applies_a_code_action() {
    let version = Command::new("nvim").arg("--version").output();
    let Ok(version) = version else {
        panic!("nvim is not installed: `apt-get install -y neovim` (.ci/run does it)");
    };
    assert!(version.status.success());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::temp_dir().join(format!("csa-nvim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c_file = dir.join("scale.c");
    // CSA105: the if/else between marker and loop merges control flow.
    std::fs::write(
        &c_file,
        "void scale(int *a, int n, int k) {\n#ifdef __CSA__\n  __builtin_csa_parallel_loop();\n#endif\n  if (k > 1) a[0] = 1; else a[0] = 2;\n  for (int i = 0; i < n; i++) a[i] *= k;\n}\n",
    )
    .unwrap();
    let f_file = dir.join("sum.f90");
    // CSA108: spmdization does not exist in Fortran.
    std::fs::write(
        &f_file,
        "subroutine s(a, n)\n  integer :: n, i\n  real :: a(n)\n  call builtin_csa_spmdization(4, 'cyclic')\n  do i = 1, n\n    a(i) = 0.0\n  end do\nend subroutine s\n",
    )
    .unwrap();
    let out = dir.join("result.json");
    let status = Command::new("nvim")
        .args(["--headless", "-n", "-i", "NONE", "-u", "NONE", "-c"])
        .arg(format!(
            "luafile {}",
            root.join("server/tests/nvim/run.lua").display()
        ))
        .env("CSA_LSP", env!("CARGO_BIN_EXE_csa-lsp"))
        .env("CSA_PLUGIN", root.join("editors/nvim"))
        .env(
            "CSA_FILES",
            format!("{}:{}", c_file.display(), f_file.display()),
        )
        .env("CSA_OUT", &out)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .status()
        .expect("nvim runs");
    assert!(status.success(), "nvim exited with {status}");
    let text = std::fs::read_to_string(&out).expect("the Lua driver wrote its result");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["errors"], serde_json::json!([]), "{v:#}");
    let files = v["files"].as_array().unwrap();
    let c = &files[0];
    assert_eq!(c["filetype"], "c");
    let codes: Vec<(u64, &str)> = c["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["line"].as_u64().unwrap(),
                d["code"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(codes, [(3, "CSA105")], "{v:#}");
    assert_eq!(c["diagnostics"][0]["source"], "csa-lint");
    let f = &files[1];
    assert_eq!(f["filetype"], "fortran");
    let fcodes: Vec<&str> = f["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap_or(""))
        .collect();
    assert!(fcodes.contains(&"CSA108"), "{v:#}");
    // The hover as Neovim 0.7 renders it: the title is the builtin's name
    // (a code block, highlighted), no markdown markup left on screen.
    let hover: Vec<&str> = v["hover"]
        .as_array()
        .unwrap_or_else(|| panic!("no hover: {v:#}"))
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(
        hover.first(),
        Some(&"__builtin_csa_parallel_loop"),
        "{hover:#?}"
    );
    assert!(
        hover
            .iter()
            .all(|l| !l.contains("**") && !l.contains("```") && !l.starts_with('#')),
        "{hover:#?}"
    );
    // The code action: the CSA105 marker removed in the buffer.
    assert_eq!(
        v["applied"], "Remove the parallel_loop marker (CSA105)",
        "{v:#}"
    );
    let after: Vec<&str> = v["after"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        !after.iter().any(|l| l.contains("parallel_loop")),
        "{after:?}"
    );
    assert!(
        after.iter().any(|l| l.contains("for (int i = 0")),
        "{after:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
