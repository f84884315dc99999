//! A stable, line-oriented text dump of a function's CFG
//! (`csa-lint --dump cfg FUNCTION FILE`, and front-end tests).
//!
//! Format (one block per paragraph, blocks in id order):
//!
//! ```text
//! function foo
//!   var a: param int* restrict
//! bb0 entry:
//!   decl t                       @3:7
//!   write t[const] int           @4:3
//!   read *p int                  @5:9
//!   call bar escapes(x)          @6:3
//!   builtin parallel_loop()      @7:3
//!   -> goto bb1
//! ```
//!
//! Positions are `@line:column` of the instruction's span start when a
//! [`SourceText`] is given, byte offsets `@123` otherwise.

use super::*;
use crate::source::SourceText;
use std::fmt::Write;

/// Dumps `func`; `src` turns spans into line:column.
pub fn dump_function(func: &Function, src: Option<&SourceText>) -> String {
    let mut out = String::new();
    let pos = |span: Span| match src {
        Some(s) => {
            let lc = s.line_col(span.start as usize);
            format!("@{}:{}", lc.line, lc.column)
        }
        None => format!("@{}", span.start),
    };
    let _ = writeln!(out, "function {}", func.name);
    if func.outline {
        let _ = writeln!(
            out,
            "  ; outline: the body holds nothing for CSA and was not lowered"
        );
    }
    for v in &func.vars {
        let _ = writeln!(out, "  var {}: {}", v.name, describe_var(v));
    }
    for l in &func.source_loops {
        let mut extra = String::new();
        if l.unrolled {
            extra.push_str(" unrolled");
        }
        if l.omp.is_some() {
            extra.push_str(" omp");
        }
        if l.ivdep.is_some() {
            extra.push_str(" ivdep");
        }
        let body = l
            .body_entry
            .map(|b| format!(" body bb{}", b.0))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  loop {:?} header bb{}{}{} {}",
            l.kind,
            l.header.0,
            body,
            extra,
            pos(l.span)
        );
    }
    for (i, b) in func.blocks.iter().enumerate() {
        let _ = writeln!(out, "bb{} {}:", i, b.name);
        for inst in &b.insts {
            let text = describe_inst(func, &inst.kind);
            let _ = writeln!(out, "  {:<30} {}", text, pos(inst.span));
        }
        let term = match &b.term.kind {
            TermKind::Goto(t) => format!("goto bb{}", t.0),
            TermKind::Branch { then, else_ } => format!("branch bb{} bb{}", then.0, else_.0),
            TermKind::Switch { targets } => {
                let t: Vec<String> = targets.iter().map(|t| format!("bb{}", t.0)).collect();
                format!("switch {}", t.join(" "))
            }
            TermKind::Return => "return".to_string(),
            TermKind::Unreachable => "unreachable".to_string(),
        };
        let _ = writeln!(out, "  -> {}", term);
    }
    out
}

fn describe_var(v: &Var) -> String {
    let kind = match v.kind {
        VarKind::Local => "local",
        VarKind::Param => "param",
        VarKind::Global => "global",
        VarKind::Static => "static",
        VarKind::Dummy => "dummy",
        VarKind::Saved => "saved",
        VarKind::Constant => "const",
    };
    let mut s = format!("{} {}", kind, ty_name(v.ty.scalar));
    if v.ty.is_pointer {
        s = format!("{} {}*", kind, ty_name(v.ty.pointee));
    }
    if v.ty.restrict {
        s.push_str(" restrict");
    }
    if v.ty.is_array {
        s.push_str(" array");
    }
    if v.ty.is_vla {
        s.push_str(" vla");
    }
    if v.ty.is_aggregate {
        s.push_str(" aggregate");
    }
    if v.ty.pointer_or_target {
        s.push_str(" pointer-or-target");
    }
    if let Some(c) = v.ty.const_value {
        let _ = write!(s, " = {}", c);
    }
    if v.address_taken {
        s.push_str(" address-taken");
    }
    s
}

fn ty_name(t: ScalarTy) -> &'static str {
    match t {
        ScalarTy::Char => "char",
        ScalarTy::Int => "int",
        ScalarTy::Float => "float",
        ScalarTy::Double => "double",
        ScalarTy::LongDouble => "long-double",
        ScalarTy::Pointer => "ptr",
        ScalarTy::Aggregate => "aggregate",
        ScalarTy::Unknown => "unknown",
    }
}

fn describe_inst(func: &Function, kind: &InstKind) -> String {
    let name = |v: VarId| {
        func.vars
            .get(v.index())
            .map(|v| v.name.clone())
            .unwrap_or_else(|| format!("%{}", v.0))
    };
    match kind {
        InstKind::Access(a) => {
            let rw = if a.write { "write" } else { "read" };
            let target = match &a.target {
                AccessTarget::Var(v) => match a.index {
                    IndexKind::Whole => name(*v),
                    IndexKind::Const => format!("{}[const]", name(*v)),
                    IndexKind::Dynamic => format!("{}[dyn]", name(*v)),
                },
                AccessTarget::Deref { ptr: Some(p) } => format!("*{}", name(*p)),
                AccessTarget::Deref { ptr: None } => "*?".to_string(),
            };
            let mut s = format!("{} {} {}", rw, target, ty_name(a.ty));
            match &a.value {
                Some(ValueSrc::Copy(v)) => {
                    let _ = write!(s, " = {}", name(*v));
                }
                Some(ValueSrc::Builtin(b)) => {
                    let _ = write!(s, " = builtin#{}", b.0);
                }
                Some(ValueSrc::Const(c)) => {
                    let _ = write!(s, " = {}", c);
                }
                Some(ValueSrc::Other) | None => {}
            }
            s
        }
        InstKind::Call(c) => {
            let mut s = format!("call {}", c.callee.as_deref().unwrap_or("<indirect>"));
            if !c.escapes.is_empty() {
                let e: Vec<String> = c.escapes.iter().map(|v| name(*v)).collect();
                let _ = write!(s, " escapes({})", e.join(","));
            }
            s
        }
        InstKind::Builtin(id) => {
            let b = &func.builtins[id.index()];
            let args: Vec<String> = b
                .args
                .iter()
                .map(|a| match &a.value {
                    ArgValue::Int(i) => i.to_string(),
                    ArgValue::Str(s) => format!("{:?}", s),
                    ArgValue::Var(v) => name(*v),
                    ArgValue::Other => "?".to_string(),
                })
                .collect();
            let kind = match b.kind {
                BuiltinKind::ParallelLoop => "parallel_loop",
                BuiltinKind::Spmd => "spmd",
                BuiltinKind::Spmdization => "spmdization",
                BuiltinKind::PipelineLoop => "pipeline_loop",
                BuiltinKind::RegionEntry => "region_entry",
                BuiltinKind::RegionExit => "region_exit",
                BuiltinKind::SectionEntry => "section_entry",
                BuiltinKind::SectionExit => "section_exit",
                BuiltinKind::WorkerNum => "worker_num",
                BuiltinKind::Other => "other",
            };
            format!("builtin#{} {}({})", id.0, kind, args.join(", "))
        }
        InstKind::Decl(v) => format!("decl {}", name(*v)),
        InstKind::Asm => "asm".to_string(),
        InstKind::Prefetch => "prefetch".to_string(),
    }
}
