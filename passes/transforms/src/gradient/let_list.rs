//! A list of `let` bindings under construction (TVM's `LetList`): values are
//! pushed in order, each bound to a fresh `x_N` variable, and `get` nests
//! them around a body.

use relay_ir::build::fresh_let_variable;
use relay_ir::{Expr, Type, Var};

#[derive(Default)]
pub(crate) struct LetList {
    bindings: Vec<(Var, Expr)>,
}

impl LetList {
    /// Binds `value` to a new variable (TVM's `Push(expr)`: `Var::GenSym`,
    /// no annotation) and returns the variable.
    pub(crate) fn push(&mut self, value: Expr) -> Var {
        let var = fresh_let_variable();
        self.bindings.push((var.clone(), value));
        var
    }

    /// [`LetList::push`] for a variable that carries `checked_type` (what
    /// TVM does by setting the new variable's `checked_type_` after the
    /// push; the binding and every use are that one node).
    pub(crate) fn push_typed(&mut self, value: Expr, checked_type: Option<Type>) -> Var {
        let var = match checked_type {
            Some(ty) => fresh_let_variable().with_checked_type(ty),
            None => fresh_let_variable(),
        };
        self.bindings.push((var.clone(), value));
        var
    }

    /// [`LetList::push`] of a variable annotated with `annotation` (TVM's
    /// `Push(expr, type)`: `Var::GenSym(type)`).
    pub(crate) fn push_annotated(&mut self, value: Expr, annotation: Type) -> Var {
        let fresh = fresh_let_variable();
        let var = Var::new(fresh.name(), Some(annotation), None);
        self.bindings.push((var.clone(), value));
        var
    }

    /// The bindings, first outermost, around `body` (TVM's `LetList::Get`).
    pub(crate) fn get(self, body: Expr) -> Expr {
        self.bindings
            .into_iter()
            .rev()
            .fold(body, |body, (var, value)| {
                Expr::let_(var, value, body, None)
            })
    }
}
