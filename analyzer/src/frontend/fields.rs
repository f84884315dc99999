//! tree-sitter field access by id.
//!
//! `Node::child_by_field_name` resolves the name on every call with a
//! linear string search over the grammar's field names; the front ends
//! read fields on nearly every node, which made that search a tenth of the
//! analysis time. Here every field name the front ends use is resolved once
//! per language ([`F`] indexes the table) and nodes are asked by id.
//!
//! Likewise `Node::kind` measures and UTF-8-checks the C string of the
//! kind name on every call; `node_kind` returns the same `&'static str`
//! from a per-language table indexed by the node's symbol id.

use super::flat::FNode;
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

/// Kind names by symbol id (`Language::node_kind_for_id`).
fn kind_names(lang: &Language) -> Vec<&'static str> {
    (0..lang.node_kind_count())
        .map(|id| {
            u16::try_from(id)
                .ok()
                .and_then(|id| lang.node_kind_for_id(id))
                .unwrap_or("")
        })
        .collect()
}

fn c_kinds() -> &'static [&'static str] {
    static KINDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    KINDS.get_or_init(|| kind_names(&csa_grammars::c_language()))
}

fn fortran_kinds() -> &'static [&'static str] {
    static KINDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    KINDS.get_or_init(|| kind_names(&csa_grammars::fortran_language()))
}

/// Whether each kind of `language` is named, by symbol id: made once for
/// tree-sitter-c and tree-sitter-fortran, per copy for any other grammar.
pub(crate) fn named_kinds(language: &tree_sitter::Language) -> std::borrow::Cow<'static, [bool]> {
    fn table(language: &tree_sitter::Language) -> Vec<bool> {
        (0..language.node_kind_count())
            .map(|id| u16::try_from(id).is_ok_and(|id| language.node_kind_is_named(id)))
            .collect()
    }
    static C: OnceLock<Vec<bool>> = OnceLock::new();
    static FORTRAN: OnceLock<Vec<bool>> = OnceLock::new();
    if *language == csa_grammars::fortran_language() {
        FORTRAN.get_or_init(|| table(language)).as_slice().into()
    } else if *language == csa_grammars::c_language() {
        C.get_or_init(|| table(language)).as_slice().into()
    } else {
        table(language).into()
    }
}

fn c_ids() -> &'static [u16] {
    static IDS: OnceLock<Vec<u16>> = OnceLock::new();
    IDS.get_or_init(|| resolve(&csa_grammars::c_language()))
}

fn fortran_ids() -> &'static [u16] {
    static IDS: OnceLock<Vec<u16>> = OnceLock::new();
    IDS.get_or_init(|| resolve(&csa_grammars::fortran_language()))
}

fn id_of(ids: &[u16], f: F) -> u16 {
    ids.get(f as usize).copied().unwrap_or(0)
}

/// What the field traits read of a node: a tree's `Node` and its flat
/// copy's `FNode` alike.
pub(crate) trait NodeAccess: Sized {
    fn symbol(&self) -> u16;
    /// The kind's name, asked of the node itself.
    fn own_kind(&self) -> &'static str;
    /// The first child with field id `id` (0: none).
    fn by_field_id(&self, id: u16) -> Option<Self>;
    /// Every child with field id `id` (0: none).
    fn all_by_field_id(&self, id: u16) -> Vec<Self>;
}

impl NodeAccess for Node<'_> {
    fn symbol(&self) -> u16 {
        self.kind_id()
    }
    fn own_kind(&self) -> &'static str {
        self.kind()
    }
    fn by_field_id(&self, id: u16) -> Option<Self> {
        self.child_by_field_id(id)
    }
    fn all_by_field_id(&self, id: u16) -> Vec<Self> {
        let Some(id) = std::num::NonZeroU16::new(id) else {
            return Vec::new();
        };
        let mut c = self.walk();
        self.children_by_field_id(id, &mut c).collect()
    }
}

impl NodeAccess for FNode<'_> {
    fn symbol(&self) -> u16 {
        self.kind_id()
    }
    fn own_kind(&self) -> &'static str {
        self.kind()
    }
    fn by_field_id(&self, id: u16) -> Option<Self> {
        self.child_by_field_id(id)
    }
    fn all_by_field_id(&self, id: u16) -> Vec<Self> {
        self.children_by_field_id(id).collect()
    }
}

/// `n.kind()` through `table`; the built-in ERROR symbols (outside the
/// table) and anything unexpected fall back to asking the node.
fn kind_of<N: NodeAccess>(n: &N, table: &[&'static str]) -> &'static str {
    match table.get(usize::from(n.symbol())) {
        Some(&k) if !k.is_empty() => k,
        _ => n.own_kind(),
    }
}

/// A field trait for one grammar, for every [`NodeAccess`] node.
macro_rules! language_fields {
    ($(#[$doc:meta])* $name:ident, $kinds:ident, $ids:ident $(, { $($extra:tt)* })?) => {
        $(#[$doc])*
        pub(crate) trait $name: Sized {
            /// The first child in field `f`.
            fn field(&self, f: F) -> Option<Self>;
            $($($extra)*)?
            /// Every child in field `f`.
            fn fields(&self, f: F) -> Vec<Self>;
            /// `Node::kind`, from a table.
            fn node_kind(&self) -> &'static str;
        }

        impl<N: NodeAccess> $name for N {
            fn field(&self, f: F) -> Option<Self> {
                self.by_field_id(id_of($ids(), f))
            }
            fn fields(&self, f: F) -> Vec<Self> {
                self.all_by_field_id(id_of($ids(), f))
            }
            fn node_kind(&self) -> &'static str {
                kind_of(self, $kinds())
            }
        }
    };
}

language_fields!(
    /// Fields of tree-sitter-c nodes (of the tree or of its flat copy).
    CFields,
    c_kinds,
    c_ids,
    {
        /// The first child in each of the fields `fs` (`field` for each:
        /// one cursor pass over the children measured slower).
        fn fields_of<const N: usize>(&self, fs: [F; N]) -> [Option<Self>; N] {
            fs.map(|f| self.field(f))
        }
    }
);
language_fields!(
    /// Fields of tree-sitter-fortran nodes (of the tree or of its flat copy).
    FortranFields,
    fortran_kinds,
    fortran_ids
);

impl FNode<'_> {
    /// Whether this node is in field `f` of its parent (tree-sitter-fortran;
    /// `Node::field_name_for_child` of the parent).
    pub(crate) fn is_fortran_field(&self, f: F) -> bool {
        let id = id_of(fortran_ids(), f);
        id != 0 && self.field_id() == id
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

    /// `node_kind` is `kind` on every node of a C and a Fortran tree,
    /// errors included.
    #[test]
    fn node_kind_is_kind() {
        let cases = [
            (
                csa_grammars::c_language(),
                "int f(int *a) { a[0] = (int)1.0; for (;;) } ) #if X\n",
            ),
            (
                csa_grammars::fortran_language(),
                "subroutine s(a)\n real :: a(3)\n do i = 1, 3\n a(i) = 0\n end do\n ) end\n",
            ),
        ];
        for (k, (lang, src)) in cases.iter().enumerate() {
            let mut p = tree_sitter::Parser::new();
            p.set_language(lang).unwrap();
            let tree = p.parse(src, None).unwrap();
            let mut stack = vec![tree.root_node()];
            let mut errors = 0;
            while let Some(n) = stack.pop() {
                let got = if k == 0 {
                    CFields::node_kind(&n)
                } else {
                    FortranFields::node_kind(&n)
                };
                assert_eq!(got, n.kind());
                errors += usize::from(n.is_error());
                let mut c = n.walk();
                stack.extend(n.children(&mut c));
            }
            assert!(errors > 0, "{src}");
        }
    }
}
