//! Names of functions of the C standard library and of the common system
//! and parallel runtimes (POSIX, MPI, OpenMP), and of the value macros
//! headers conventionally define (`MAX`, `MIN`): never function-like
//! macros that assign their arguments. csa-lint reads no
//! system header, so these names are undeclared in most files; a call of
//! any other undeclared name may be a macro from a header csa-lint does
//! not read ([`may_be_macro`]).

/// The C standard library's functions (C17), sorted.
const STANDARD: &[&str] = &[
    "_Exit", "abort", "abs", "acos", "acosf", "acosh", "acoshf", "acosl", "asctime", "asin",
    "asinf", "asinh", "asinhf", "asinl", "assert", "at_quick_exit", "atan", "atan2", "atan2f",
    "atanf", "atanh", "atanhf", "atanl", "atexit", "atof", "atoi", "atol", "atoll", "bsearch",
    "btowc", "cabs", "calloc", "cbrt", "cbrtf", "ceil", "ceilf", "ceill", "clearerr", "clock",
    "copysign", "copysignf", "cos", "cosf", "cosh", "coshf", "cosl", "cpow", "csqrt", "ctime",
    "difftime", "div", "erf", "erfc", "exit", "exp", "exp2", "exp2f", "expf", "expl", "expm1",
    "fabs", "fabsf", "fabsl", "fclose", "fdim", "feof", "ferror", "fflush", "fgetc", "fgetpos",
    "fgets", "floor", "floorf", "floorl", "fma", "fmaf", "fmax", "fmaxf", "fmin", "fminf", "fmod",
    "fmodf", "fopen", "fprintf", "fputc", "fputs", "fread", "free", "freopen", "frexp", "fscanf",
    "fseek", "fsetpos", "ftell", "fwrite", "getc", "getchar", "getenv", "gets", "gmtime",
    "hypot", "hypotf", "isalnum", "isalpha", "isblank", "iscntrl", "isdigit", "isgraph",
    "islower", "isprint", "ispunct", "isspace", "isupper", "isxdigit", "labs", "ldexp", "ldiv",
    "lgamma", "llabs", "llround", "localtime", "log", "log10", "log10f", "log1p", "log2",
    "log2f", "logf", "logl", "longjmp", "lrint", "lround", "malloc", "mblen", "memchr", "memcmp",
    "memcpy", "memmove", "memset", "mktime", "modf", "nan", "nearbyint", "perror", "pow", "powf",
    "powl", "printf", "putc", "putchar", "puts", "qsort", "quick_exit", "raise", "rand",
    "realloc", "remainder", "remove", "rename", "rewind", "rint", "round", "roundf", "scanf",
    "setbuf", "setjmp", "setvbuf", "signal", "sin", "sinf", "sinh", "sinhf", "sinl", "snprintf",
    "sprintf", "sqrt", "sqrtf", "sqrtl", "srand", "sscanf", "strcat", "strchr", "strcmp",
    "strcoll", "strcpy", "strcspn", "strerror", "strftime", "strlen", "strncat", "strncmp",
    "strncpy", "strpbrk", "strrchr", "strspn", "strstr", "strtod", "strtof", "strtok", "strtol",
    "strtold", "strtoll", "strtoul", "strtoull", "system", "tan", "tanf", "tanh", "tanhf", "tanl",
    "tgamma", "time", "tmpfile", "tmpnam", "tolower", "toupper", "trunc", "truncf", "ungetc",
    "va_copy", "va_end", "va_start", "vfprintf", "vprintf", "vsnprintf", "vsprintf",
];

/// Common POSIX and runtime functions, sorted.
const SYSTEM: &[&str] = &[
    "aligned_alloc", "close", "drand48", "erand48", "fileno", "fstat", "getopt", "getpid",
    "gettimeofday", "isatty", "lseek", "memalign", "mmap", "munmap", "open", "posix_memalign",
    "read", "sleep", "srand48", "stat", "strdup", "strndup", "sysconf", "times", "usleep",
    "write",
];

/// Macros that headers conventionally define as values of their
/// arguments (`#define MAX(a, b) ((a) > (b) ? (a) : (b))`), sorted.
const VALUE_MACROS: &[&str] = &["ABS", "MAX", "MIN", "SIGN", "SQR", "max", "min"];

/// Name prefixes of runtime libraries whose entry points are functions.
const PREFIXES: &[&str] = &[
    "MPI_", "PMPI_", "omp_", "pthread_", "__builtin_", "__sync_", "__atomic_", "__kmpc_",
    "clock_", "_mm_", "_mm256_", "_mm512_",
];

/// Whether `name` is a known library function.
pub(super) fn is_library_function(name: &str) -> bool {
    STANDARD.binary_search(&name).is_ok()
        || SYSTEM.binary_search(&name).is_ok()
        || VALUE_MACROS.binary_search(&name).is_ok()
        || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Whether a call of `name`, which nothing in the file declares, may be a
/// function-like macro from a header: its expansion may then assign the
/// variables it is given by name (`SET_INDEX(t, k)`, `FOR_EACH(i, set)`).
pub(super) fn may_be_macro(name: &str) -> bool {
    !is_library_function(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_sorted() {
        assert!(STANDARD.windows(2).all(|w| w[0] < w[1]));
        assert!(SYSTEM.windows(2).all(|w| w[0] < w[1]));
        assert!(VALUE_MACROS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn library_names_are_functions() {
        assert!(!may_be_macro("printf"));
        assert!(!may_be_macro("MPI_Allreduce"));
        assert!(!may_be_macro("sqrt"));
        assert!(may_be_macro("hypre_ForBoxI"));
        assert!(may_be_macro("SET_INDEX"));
    }
}
