//! C types as the front end needs them: enough structure to tell arrays from
//! pointers, to find struct fields, and to classify accessed scalars for the
//! type-based alias rule.
//!
//! A type is a base (scalar class, `void`, struct/union, unknown) plus a list
//! of derivation layers (pointer, array, function), innermost first: the
//! *last* layer is the outermost one, the one an access peels off first.
//! The representation is flat on purpose: no recursion, no deep drops.

use crate::ir::{ScalarTy, VarType};

/// Derivations stacked on a base type, innermost first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layer {
    Ptr {
        restrict: bool,
    },
    /// `len`: the number of elements when it is a constant.
    Array {
        vla: bool,
        len: Option<i64>,
    },
    Func,
}

/// A struct/union, by definition index or (not yet resolved) by tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StructRef {
    Id(usize),
    Named(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    Scalar(ScalarTy),
    Void,
    Struct(StructRef),
}

/// Beyond this many derivation layers a type is treated as unknown.
const MAX_LAYERS: usize = 64;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CType {
    pub base: Base,
    /// Innermost first; the last element is the outermost derivation.
    pub layers: Vec<Layer>,
}

impl CType {
    pub fn scalar(t: ScalarTy) -> CType {
        CType {
            base: Base::Scalar(t),
            layers: Vec::new(),
        }
    }

    pub fn unknown() -> CType {
        CType::scalar(ScalarTy::Unknown)
    }

    pub fn int() -> CType {
        CType::scalar(ScalarTy::Int)
    }

    pub fn outer(&self) -> Option<Layer> {
        self.layers.last().copied()
    }

    pub fn is_array(&self) -> bool {
        matches!(self.outer(), Some(Layer::Array { .. }))
    }

    pub fn is_pointer(&self) -> bool {
        matches!(self.outer(), Some(Layer::Ptr { .. }))
    }

    pub fn is_func(&self) -> bool {
        matches!(self.outer(), Some(Layer::Func))
    }

    /// Not derived, base unknown (an undeclared global, an unknown typedef).
    pub fn is_unknown(&self) -> bool {
        self.layers.is_empty() && self.base == Base::Scalar(ScalarTy::Unknown)
    }

    pub fn is_struct(&self) -> bool {
        self.layers.is_empty() && matches!(self.base, Base::Struct(_))
    }

    /// Adds an outermost layer (keeps the type bounded).
    pub fn wrap(mut self, l: Layer) -> CType {
        if self.layers.len() >= MAX_LAYERS {
            return CType::unknown();
        }
        self.layers.push(l);
        self
    }

    /// Removes the outermost layer: the pointee of a pointer, the element of
    /// an array, the result of a function. A non-derived type peels to
    /// unknown.
    pub fn peel(mut self) -> CType {
        if self.layers.pop().is_none() {
            return CType::unknown();
        }
        self
    }

    /// Array-to-pointer / function-to-pointer decay of the outermost layer.
    pub fn decay(self) -> CType {
        match self.outer() {
            Some(Layer::Array { .. }) => self.peel().wrap(Layer::Ptr { restrict: false }),
            Some(Layer::Func) => self.wrap(Layer::Ptr { restrict: false }),
            _ => self,
        }
    }

    /// The scalar class of a value of this type.
    pub fn class(&self) -> ScalarTy {
        match self.outer() {
            Some(Layer::Ptr { .. }) => ScalarTy::Pointer,
            Some(Layer::Array { .. }) => self.clone().peel().element_class(),
            Some(Layer::Func) => ScalarTy::Unknown,
            None => match &self.base {
                Base::Scalar(t) => *t,
                Base::Void => ScalarTy::Unknown,
                Base::Struct(_) => ScalarTy::Aggregate,
            },
        }
    }

    /// The class of the innermost non-array element.
    fn element_class(&self) -> ScalarTy {
        let arrays = self
            .layers
            .iter()
            .rev()
            .take_while(|l| matches!(l, Layer::Array { .. }))
            .count();
        let t = CType {
            base: self.base.clone(),
            layers: self.layers[..self.layers.len() - arrays].to_vec(),
        };
        t.class()
    }

    /// The IR's view of a variable of this type.
    pub fn var_type(&self) -> VarType {
        let mut vt = VarType {
            scalar: ScalarTy::Unknown,
            ..VarType::default()
        };
        match self.outer() {
            Some(Layer::Ptr { restrict }) => {
                vt.is_pointer = true;
                vt.scalar = ScalarTy::Pointer;
                vt.restrict = restrict;
                let pointee = self.clone().peel();
                vt.pointee = pointee.class();
            }
            Some(Layer::Array { .. }) => {
                vt.is_array = true;
                vt.is_vla = self
                    .layers
                    .iter()
                    .rev()
                    .take_while(|l| matches!(l, Layer::Array { .. }))
                    .any(|l| matches!(l, Layer::Array { vla: true, .. }));
                vt.scalar = self.element_class();
                // outermost first
                vt.dims = self
                    .layers
                    .iter()
                    .rev()
                    .take_while(|l| matches!(l, Layer::Array { .. }))
                    .map(|l| match l {
                        Layer::Array { len, .. } => crate::ir::Dim {
                            lower: Some(0),
                            extent: *len,
                        },
                        _ => crate::ir::Dim::default(),
                    })
                    .collect();
                if vt.scalar == ScalarTy::Pointer {
                    let arrays = self
                        .layers
                        .iter()
                        .rev()
                        .take_while(|l| matches!(l, Layer::Array { .. }))
                        .count();
                    let elem = CType {
                        base: self.base.clone(),
                        layers: self.layers[..self.layers.len() - arrays].to_vec(),
                    };
                    vt.pointee = elem.peel().class();
                }
                vt.is_aggregate = false;
            }
            Some(Layer::Func) => {
                vt.scalar = ScalarTy::Unknown;
            }
            None => {
                vt.scalar = self.class();
                vt.is_aggregate = matches!(self.base, Base::Struct(_));
            }
        }
        vt
    }
}

/// One struct or union definition.
#[derive(Clone, Debug, Default)]
pub(crate) struct StructDef {
    pub fields: Vec<(String, CType)>,
}

/// Maps the text of a `primitive_type` or the name of a well-known type to a
/// type. `None`: not a known name.
pub(crate) fn primitive(name: &str) -> Option<CType> {
    let t = match name {
        "char" => ScalarTy::Char,
        "float" => ScalarTy::Float,
        "double" => ScalarTy::Double,
        "void" => {
            return Some(CType {
                base: Base::Void,
                layers: Vec::new(),
            })
        }
        "bool" | "_Bool" | "int" | "short" | "long" | "signed" | "unsigned" | "size_t"
        | "ssize_t" | "ptrdiff_t" | "intptr_t" | "uintptr_t" | "nullptr_t" | "max_align_t"
        | "wchar_t" | "off_t" | "intmax_t" | "uintmax_t" | "__int128" => ScalarTy::Int,
        "charptr_t" => ScalarTy::Pointer,
        _ => {
            let stripped = name.strip_prefix('u').unwrap_or(name);
            let is_int_n = |p: &str| {
                stripped
                    .strip_prefix(p)
                    .and_then(|r| r.strip_suffix("_t"))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            };
            if is_int_n("int")
                || is_int_n("int_least")
                || is_int_n("int_fast")
                || (name.starts_with("char") && name.ends_with("_t"))
            {
                ScalarTy::Int
            } else {
                return None;
            }
        }
    };
    Some(CType::scalar(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_peel_outermost_first() {
        // int *a[10]: array of pointers to int
        let t = CType::int()
            .wrap(Layer::Ptr { restrict: false })
            .wrap(Layer::Array {
                vla: false,
                len: Some(10),
            });
        assert!(t.is_array());
        let vt = t.var_type();
        assert!(vt.is_array && !vt.is_pointer);
        assert_eq!(vt.scalar, ScalarTy::Pointer);
        assert_eq!(vt.pointee, ScalarTy::Int);
        let e = t.peel();
        assert!(e.is_pointer());
        assert_eq!(e.peel().class(), ScalarTy::Int);
    }

    #[test]
    fn primitive_names() {
        assert_eq!(primitive("uint32_t").unwrap().class(), ScalarTy::Int);
        assert_eq!(primitive("int_fast8_t").unwrap().class(), ScalarTy::Int);
        assert_eq!(primitive("double").unwrap().class(), ScalarTy::Double);
        assert!(primitive("FILE").is_none());
    }
}
