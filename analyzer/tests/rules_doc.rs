//! `docs/rules.md` is generated from the rule files' documentation; this
//! test fails when it is stale. `CSA_LINT_BLESS=1` rewrites it.

use std::path::Path;

#[test]
fn rules_reference_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md");
    let expected = analyzer::rules_reference();
    if std::env::var_os("CSA_LINT_BLESS").is_some() {
        std::fs::write(&path, &expected).unwrap();
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "docs/rules.md is stale: run `CSA_LINT_BLESS=1 cargo test -p csa-analyzer --test rules_doc` and commit it"
    );
}

#[test]
fn every_rule_has_a_section_in_the_reference() {
    // The sections of each rule's own text are checked in `rules::tests`.
    let md = analyzer::rules_reference();
    for r in analyzer::RULES {
        assert!(
            md.contains(&format!("\n## {} {}\n", r.code, r.name)),
            "{} has no section",
            r.code
        );
    }
}
