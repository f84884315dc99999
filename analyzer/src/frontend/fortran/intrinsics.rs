//! Fortran intrinsic procedures the front end knows by name.
//!
//! gfortran expands intrinsic function references inline (or calls runtime
//! routines that touch only their arguments), so a reference is not a call:
//! the front end only evaluates the arguments.

/// How an intrinsic function treats its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntrinsicClass {
    /// Reads its arguments' values (elemental and transformational functions).
    Value,
    /// Looks only at properties of its arguments (bounds, kind, presence,
    /// allocation status): an actual argument that is a variable is not read.
    Inquiry,
    /// Takes the address of its argument (`loc`, `c_loc`).
    Address,
}

/// Intrinsic *functions* (generic and specific names, common extensions).
const VALUE_FUNCTIONS: &[&str] = &[
    "abs",
    "achar",
    "acos",
    "acosd",
    "acosh",
    "adjustl",
    "adjustr",
    "aimag",
    "aint",
    "all",
    "amax0",
    "amax1",
    "amin0",
    "amin1",
    "amod",
    "anint",
    "any",
    "asin",
    "asind",
    "asinh",
    "atan",
    "atan2",
    "atan2d",
    "atand",
    "atanh",
    "bessel_j0",
    "bessel_j1",
    "bessel_jn",
    "bessel_y0",
    "bessel_y1",
    "bessel_yn",
    "bge",
    "bgt",
    "ble",
    "blt",
    "btest",
    "cabs",
    "ccos",
    "ceiling",
    "cexp",
    "char",
    "clog",
    "cmplx",
    "conjg",
    "cos",
    "cosd",
    "cosh",
    "count",
    "csin",
    "csqrt",
    "cshift",
    "dabs",
    "dacos",
    "dasin",
    "datan",
    "datan2",
    "dble",
    "dcmplx",
    "dconjg",
    "dcos",
    "dcosh",
    "ddim",
    "dexp",
    "dfloat",
    "dim",
    "dimag",
    "dint",
    "dlog",
    "dlog10",
    "dmax1",
    "dmin1",
    "dmod",
    "dnint",
    "dot_product",
    "dprod",
    "dreal",
    "dshiftl",
    "dshiftr",
    "dsign",
    "dsin",
    "dsinh",
    "dsqrt",
    "dtan",
    "dtanh",
    "eoshift",
    "erf",
    "erfc",
    "erfc_scaled",
    "exp",
    "exponent",
    "findloc",
    "float",
    "floor",
    "fraction",
    "gamma",
    "hypot",
    "iabs",
    "iachar",
    "iall",
    "iand",
    "iany",
    "ibclr",
    "ibits",
    "ibset",
    "ichar",
    "idim",
    "idint",
    "idnint",
    "ieor",
    "ifix",
    "index",
    "int",
    "int2",
    "int8",
    "ior",
    "iparity",
    "isign",
    "ishft",
    "ishftc",
    "is_iostat_end",
    "is_iostat_eor",
    "isnan",
    "lge",
    "lgt",
    "lle",
    "llt",
    "log",
    "log10",
    "log_gamma",
    "logical",
    "lshift",
    "maskl",
    "maskr",
    "matmul",
    "max",
    "max0",
    "max1",
    "maxloc",
    "maxval",
    "merge",
    "merge_bits",
    "min",
    "min0",
    "min1",
    "minloc",
    "minval",
    "mod",
    "modulo",
    "nearest",
    "nint",
    "norm2",
    "not",
    "out_of_range",
    "pack",
    "parity",
    "popcnt",
    "poppar",
    "product",
    "real",
    "repeat",
    "reshape",
    "rrspacing",
    "rshift",
    "scale",
    "scan",
    "set_exponent",
    "shifta",
    "shiftl",
    "shiftr",
    "sign",
    "sin",
    "sind",
    "sinh",
    "sngl",
    "spacing",
    "spread",
    "sqrt",
    "sum",
    "tan",
    "tand",
    "tanh",
    "trailz",
    "leadz",
    "transfer",
    "transpose",
    "trim",
    "unpack",
    "verify",
    "zabs",
    "zcos",
    "zexp",
    "zlog",
    "zsin",
    "zsqrt",
    "len_trim",
    "null",
    "selected_char_kind",
    "selected_int_kind",
    "selected_real_kind",
    "iachar",
    "new_line",
];

/// Inquiry functions: they do not read the data of a variable argument.
const INQUIRY_FUNCTIONS: &[&str] = &[
    "allocated",
    "associated",
    "bit_size",
    "c_associated",
    "c_sizeof",
    "digits",
    "epsilon",
    "extends_type_of",
    "huge",
    "is_contiguous",
    "kind",
    "lbound",
    "lcobound",
    "len",
    "maxexponent",
    "minexponent",
    "precision",
    "present",
    "radix",
    "range",
    "rank",
    "same_type_as",
    "shape",
    "size",
    "sizeof",
    "storage_size",
    "tiny",
    "ubound",
    "ucobound",
];

/// Functions that take the address of their argument.
const ADDRESS_FUNCTIONS: &[&str] = &["loc", "c_loc", "c_funloc"];

/// The class of intrinsic function `name` (lower case), if it is one.
pub fn intrinsic_function(name: &str) -> Option<IntrinsicClass> {
    // a table made once: the lists are long and names are looked up for
    // nearly every parenthesised reference
    static TABLE: std::sync::OnceLock<rustc_hash::FxHashMap<&'static str, IntrinsicClass>> =
        std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            // later lists win: inquiry over address over value
            let mut t = rustc_hash::FxHashMap::default();
            for (list, class) in [
                (VALUE_FUNCTIONS, IntrinsicClass::Value),
                (ADDRESS_FUNCTIONS, IntrinsicClass::Address),
                (INQUIRY_FUNCTIONS, IntrinsicClass::Inquiry),
            ] {
                for &n in list {
                    t.insert(n, class);
                }
            }
            t
        })
        .get(name)
        .copied()
}

/// Whether `name` (lower case) is the prefix of a CSA builtin.
pub fn is_builtin_name(name: &str) -> bool {
    name.starts_with("builtin_csa_")
}

/// Kind values of named constants from the intrinsic modules
/// (`iso_fortran_env`, `iso_c_binding`), for `real(kind=real64)` and
/// friends when the module is not in the file.
pub fn intrinsic_module_constant(name: &str) -> Option<i64> {
    Some(match name {
        "real32" | "c_float" | "int32" | "c_int" | "c_int32_t" => 4,
        "real64" | "c_double" | "int64" | "c_long_long" | "c_int64_t" | "c_size_t"
        | "c_intptr_t" => 8,
        "real128" | "c_float128" => 16,
        "c_long_double" => 10,
        "int8" | "c_signed_char" | "c_char" | "c_bool" | "c_int8_t" => 1,
        "int16" | "c_short" | "c_int16_t" => 2,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table answers what the lists in order answer.
    #[test]
    fn table_is_the_lists() {
        for &n in VALUE_FUNCTIONS
            .iter()
            .chain(INQUIRY_FUNCTIONS)
            .chain(ADDRESS_FUNCTIONS)
        {
            let expect = if INQUIRY_FUNCTIONS.contains(&n) {
                IntrinsicClass::Inquiry
            } else if ADDRESS_FUNCTIONS.contains(&n) {
                IntrinsicClass::Address
            } else {
                IntrinsicClass::Value
            };
            assert_eq!(intrinsic_function(n), Some(expect), "{n}");
        }
    }

    #[test]
    fn classes() {
        assert_eq!(intrinsic_function("sqrt"), Some(IntrinsicClass::Value));
        assert_eq!(intrinsic_function("size"), Some(IntrinsicClass::Inquiry));
        assert_eq!(intrinsic_function("loc"), Some(IntrinsicClass::Address));
        assert_eq!(intrinsic_function("foo"), None);
        for n in VALUE_FUNCTIONS
            .iter()
            .chain(INQUIRY_FUNCTIONS)
            .chain(ADDRESS_FUNCTIONS)
        {
            assert_eq!(n.to_ascii_lowercase(), *n);
        }
    }
}
