//! tree-sitter field access by id.
//!
//! `Node::child_by_field_name` resolves the name on every call with a
//! linear string search over the grammar's field names; the front ends
//! read fields on nearly every node, which made that search a tenth of the
//! analysis time. Here every field name the front ends use is resolved once
//! per language ([`F`] indexes the table) and nodes are asked by id.

use std::sync::OnceLock;
use tree_sitter::{Language, Node};

macro_rules! fields {
    ($($v:ident = $s:literal,)*) => {
        /// A field name of tree-sitter-c or tree-sitter-fortran.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum F {
            $($v,)*
        }
        const NAMES: &[&str] = &[$($s,)*];
    };
}

fields! {
    Alternative = "alternative",
    Ancestor = "ancestor",
    Argument = "argument",
    Arguments = "arguments",
    Attribute = "attribute",
    Body = "body",
    Condition = "condition",
    Consequence = "consequence",
    Declarator = "declarator",
    Directive = "directive",
    DoLabel = "do_label",
    Field = "field",
    Final = "final",
    Function = "function",
    Index = "index",
    Initial = "initial",
    Initializer = "initializer",
    InputOperands = "input_operands",
    Kind = "kind",
    Label = "label",
    Left = "left",
    Name = "name",
    Operand = "operand",
    Operator = "operator",
    OutputOperands = "output_operands",
    Parameters = "parameters",
    Pointer = "pointer",
    Right = "right",
    Selector = "selector",
    Size = "size",
    Step = "step",
    Subroutine = "subroutine",
    Target = "target",
    Type = "type",
    Update = "update",
    Value = "value",
}

/// Field ids of `lang` in [`F`] order; 0 (no field: every lookup fails)
/// for a name the grammar does not have.
fn resolve(lang: &Language) -> Vec<u16> {
    NAMES
        .iter()
        .map(|n| lang.field_id_for_name(n).map_or(0, |id| id.get()))
        .collect()
}

fn c_ids() -> &'static [u16] {
    static IDS: OnceLock<Vec<u16>> = OnceLock::new();
    IDS.get_or_init(|| resolve(&csa_grammars::c_language()))
}

fn fortran_ids() -> &'static [u16] {
    static IDS: OnceLock<Vec<u16>> = OnceLock::new();
    IDS.get_or_init(|| resolve(&csa_grammars::fortran_language()))
}

fn child<'t>(n: &Node<'t>, ids: &[u16], f: F) -> Option<Node<'t>> {
    n.child_by_field_id(ids.get(f as usize).copied().unwrap_or(0))
}

fn all<'t>(n: &Node<'t>, ids: &[u16], f: F) -> Vec<Node<'t>> {
    let id = ids.get(f as usize).copied().unwrap_or(0);
    let Some(id) = std::num::NonZeroU16::new(id) else {
        return Vec::new();
    };
    let mut c = n.walk();
    n.children_by_field_id(id, &mut c).collect()
}

/// Fields of tree-sitter-c nodes.
pub(crate) trait CFields<'t> {
    /// The first child in field `f`.
    fn field(&self, f: F) -> Option<Node<'t>>;
    /// Every child in field `f`.
    fn fields(&self, f: F) -> Vec<Node<'t>>;
}

impl<'t> CFields<'t> for Node<'t> {
    fn field(&self, f: F) -> Option<Node<'t>> {
        child(self, c_ids(), f)
    }
    fn fields(&self, f: F) -> Vec<Node<'t>> {
        all(self, c_ids(), f)
    }
}

/// Fields of tree-sitter-fortran nodes.
pub(crate) trait FortranFields<'t> {
    /// The first child in field `f`.
    fn field(&self, f: F) -> Option<Node<'t>>;
    /// Every child in field `f`.
    fn fields(&self, f: F) -> Vec<Node<'t>>;
}

impl<'t> FortranFields<'t> for Node<'t> {
    fn field(&self, f: F) -> Option<Node<'t>> {
        child(self, fortran_ids(), f)
    }
    fn fields(&self, f: F) -> Vec<Node<'t>> {
        all(self, fortran_ids(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name resolves in the grammar that uses it, so a typo cannot
    /// silently turn a field into "absent".
    #[test]
    fn every_field_exists_in_one_grammar() {
        for (i, name) in NAMES.iter().enumerate() {
            assert!(
                c_ids()[i] != 0 || fortran_ids()[i] != 0,
                "{name} is in neither grammar"
            );
        }
    }

    #[test]
    fn ids_match_names() {
        let src = "int f(void) { return 1 + 2; }";
        let mut p = tree_sitter::Parser::new();
        p.set_language(&csa_grammars::c_language()).unwrap();
        let tree = p.parse(src, None).unwrap();
        let f = tree.root_node().child(0).unwrap();
        assert_eq!(
            CFields::field(&f, F::Body).map(|n| n.id()),
            f.child_by_field_name("body").map(|n| n.id())
        );
        assert_eq!(
            CFields::field(&f, F::Type).map(|n| n.kind()),
            Some("primitive_type")
        );
        assert!(CFields::field(&f, F::DoLabel).is_none());
    }
}
