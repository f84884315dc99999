//! Runs every fixture under `tests/fixtures/{c,fortran}` and fails on any
//! unannotated diagnostic or unmatched annotation.

use csa_tests::{check_fixture, fixtures_in, tests_dir};

fn run_dir(sub: &str, minimum: usize) {
    let dir = tests_dir().join("fixtures").join(sub);
    let files = fixtures_in(&dir);
    assert!(
        files.len() >= minimum,
        "expected at least {minimum} fixtures in {}, found {}",
        dir.display(),
        files.len()
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| check_fixture(f).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn c_fixtures() {
    run_dir("c", 40);
}

#[test]
fn fortran_fixtures() {
    run_dir("fortran", 25);
}
