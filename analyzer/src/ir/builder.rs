//! A small helper for front ends to build a [`Function`] the way clang's
//! code generator does: one "current" block that instructions go into, new
//! blocks on demand, and a unified return block that every `return` jumps to.

use super::*;

pub struct FunctionBuilder {
    func: Function,
    current: Option<BlockId>,
    return_block: Option<BlockId>,
}

impl FunctionBuilder {
    /// Starts a function with an empty entry block as the current block.
    pub fn new(name: String, lang: Lang, span: Span, name_span: Span) -> FunctionBuilder {
        let func = Function {
            name,
            lang,
            span,
            name_span,
            blocks: vec![Block::new("entry", None)],
            vars: Vec::new(),
            builtins: Vec::new(),
            source_loops: Vec::new(),
            exprs: vec![Expr::Unknown],
            omp_regions: Vec::new(),
            omp_sections: Vec::new(),
            omp_directives: Vec::new(),
            omp_sync: Vec::new(),
            params: Vec::new(),
            callees: Vec::new(),
            readnone_callees: Vec::new(),
            declared_elsewhere: Vec::new(),
            undeclared_references: Vec::new(),
            syntax_error: None,
            outline: false,
            skeleton: false,
        };
        FunctionBuilder {
            func,
            current: Some(Function::ENTRY),
            return_block: None,
        }
    }

    pub fn func(&self) -> &Function {
        &self.func
    }

    pub fn func_mut(&mut self) -> &mut Function {
        &mut self.func
    }

    pub fn new_block(&mut self, name: &'static str, origin: Option<Span>) -> BlockId {
        let id = BlockId(self.func.blocks.len() as u32);
        self.func.blocks.push(Block::new(name, origin));
        id
    }

    /// The block instructions currently go into; `None` right after a
    /// terminator (code that follows is unreachable until a label/new block).
    pub fn current(&self) -> Option<BlockId> {
        self.current
    }

    /// Makes `block` the current block. If the current block is still open it
    /// falls through into `block` (like clang's `EmitBlock`).
    pub fn enter(&mut self, block: BlockId) {
        if self.current.is_some() {
            self.terminate(TermKind::Goto(block), None);
        }
        self.current = Some(block);
    }

    /// Makes `block` current without adding a fallthrough edge.
    pub fn set_current(&mut self, block: Option<BlockId>) {
        self.current = block;
    }

    /// The current block, creating a fresh predecessor-less block (for
    /// unreachable code after `return`/`break`/`goto`) when there is none.
    pub fn ensure_block(&mut self) -> BlockId {
        match self.current {
            Some(b) => b,
            None => {
                let b = self.new_block("unreachable", None);
                self.current = Some(b);
                b
            }
        }
    }

    pub fn push(&mut self, kind: InstKind, span: Span) {
        self.push_at(kind, span);
    }

    /// Pushes an instruction and returns where it went.
    pub fn push_at(&mut self, kind: InstKind, span: Span) -> InstRef {
        let b = self.ensure_block();
        let insts = &mut self.func.blocks[b.index()].insts;
        insts.push(Inst { kind, span });
        InstRef {
            block: b,
            index: (insts.len() - 1) as u32,
        }
    }

    /// Adds a symbolic expression to the arena. `Unknown` is the shared
    /// [`FunctionBuilder::UNKNOWN`].
    pub fn expr(&mut self, e: Expr) -> ExprId {
        if e == Expr::Unknown {
            return Self::UNKNOWN;
        }
        let id = ExprId(self.func.exprs.len() as u32);
        self.func.exprs.push(e);
        id
    }

    /// The expression every function's arena starts with: `Unknown`.
    pub const UNKNOWN: ExprId = ExprId(0);

    /// Ends the current block with `kind`. Afterwards there is no current block.
    pub fn terminate(&mut self, kind: TermKind, span: Option<Span>) {
        let b = self.ensure_block();
        self.func.blocks[b.index()].term = Terminator {
            kind,
            span,
            cond: None,
        };
        self.current = None;
    }

    /// Ends the current block with a two-way branch on `cond` (its symbolic
    /// value, when known).
    pub fn branch(
        &mut self,
        then: BlockId,
        else_: BlockId,
        cond: Option<ExprId>,
        span: Option<Span>,
    ) {
        let b = self.ensure_block();
        self.func.blocks[b.index()].term = Terminator {
            kind: TermKind::Branch { then, else_ },
            span,
            cond: cond.filter(|e| *e != Self::UNKNOWN),
        };
        self.current = None;
    }

    /// Jumps to `target` if there is a current block (fallthrough); does
    /// nothing after a terminator.
    pub fn goto_if_open(&mut self, target: BlockId) {
        if self.current.is_some() {
            self.terminate(TermKind::Goto(target), None);
        }
    }

    /// Falls through into a new block `name`, which becomes current.
    pub fn fall_into_new_block(&mut self, name: &'static str, origin: Option<Span>) -> BlockId {
        let b = self.new_block(name, origin);
        self.goto_if_open(b);
        self.set_current(Some(b));
        b
    }

    /// The unified return block (created on first use), like clang's
    /// `ReturnBlock`.
    pub fn return_block(&mut self) -> BlockId {
        if let Some(b) = self.return_block {
            return b;
        }
        let b = self.new_block("return", None);
        self.func.blocks[b.index()].term = Terminator {
            kind: TermKind::Return,
            span: None,
            cond: None,
        };
        self.return_block = Some(b);
        b
    }

    pub fn add_var(&mut self, var: Var) -> VarId {
        let id = VarId(self.func.vars.len() as u32);
        self.func.vars.push(var);
        id
    }

    /// Records a builtin call in the current block and emits its instruction.
    pub fn add_builtin(&mut self, mut call: BuiltinCall) -> BuiltinId {
        let block = self.ensure_block();
        call.block = block;
        let id = BuiltinId(self.func.builtins.len() as u32);
        let span = call.span;
        self.func.builtins.push(call);
        self.push(InstKind::Builtin(id), span);
        id
    }

    pub fn add_source_loop(&mut self, l: SourceLoop) -> usize {
        self.func.source_loops.push(l);
        self.func.source_loops.len() - 1
    }

    /// Finishes the function: an open current block falls through to the
    /// return block.
    pub fn finish(mut self) -> Function {
        if self.current.is_some() {
            let r = self.return_block();
            self.terminate(TermKind::Goto(r), None);
        }
        // The IR is kept for the whole analysis (and by the caller): drop
        // the growth slack of the instruction lists (a third of the IR's
        // memory on large files).
        for b in &mut self.func.blocks {
            b.insts.shrink_to_fit();
        }
        self.func.exprs.shrink_to_fit();
        self.func
    }
}
