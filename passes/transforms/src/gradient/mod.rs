//! Automatic differentiation: TVM v0.13's `LazyGradientInit` (computing on
//! lazily made gradient cells), `FirstOrderGradient` (reverse-mode AD of
//! first-order programs) and `gradient` (reverse-mode AD in its first-order
//! or higher-order mode, [`gradient()`]; the pass `Gradient` applies it to
//! one function of a module), with the per-operator gradients of
//! `python/tvm/relay/op/_tensor_grad.py` in `primal`.

pub mod first_order;
pub mod higher_order;
pub mod lazy_init;
mod let_list;
mod pass;
pub mod primal;

pub(crate) use pass::spec;

use relay_ir::diagnostic::Diagnostic;
use relay_ir::{Expr, IRModule};
use std::str::FromStr;

/// The algorithm of [`gradient()`] (TVM's `mode` argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GradientMode {
    /// Any program, with references and closures (TVM's default).
    HigherOrder,
    /// First-order programs without `let`, references or closures
    /// ([`first_order::first_order_gradient`] on the function alone).
    FirstOrder,
}

impl FromStr for GradientMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "higher_order" => Ok(GradientMode::HigherOrder),
            "first_order" => Ok(GradientMode::FirstOrder),
            _ => Err(format!(
                "unknown mode {text:?} (expected \"higher_order\" or \"first_order\")"
            )),
        }
    }
}

/// TVM's `relay.transform.gradient(expr, mod, mode)`: the function `expr`
/// (or the global function of `module` it names) transformed into one that
/// returns its result paired with the gradient of the result with respect
/// to every parameter, `fn (x1, …, xn) -> (R, (T1, …, Tn))`. The input must
/// be type-checked; the result is not (run InferType on it). In the
/// higher-order mode the gradients of global functions the program calls
/// are added to `module` as `@<name>_grad`; the first-order mode refuses a
/// module, as TVM does.
pub fn gradient(
    expr: &Expr,
    module: Option<&mut IRModule>,
    mode: GradientMode,
) -> Result<Expr, Diagnostic> {
    match mode {
        GradientMode::HigherOrder => higher_order::higher_order_gradient(expr, module),
        GradientMode::FirstOrder => {
            if module.is_some() {
                return Err(Diagnostic::pass_failed(
                    "to run first-order AD on a module, please use the FirstOrderGradient module \
                     pass.",
                ));
            }
            let function = expr.as_function().ok_or_else(|| {
                Diagnostic::pass_failed(
                    "first-order gradient expects a function (a global variable needs its module, \
                     which the first-order mode does not take)",
                )
            })?;
            let mut alone = IRModule::new();
            alone.add_function("main", function);
            let differentiated = first_order::first_order_gradient_in("Gradient", alone)?;
            Ok(differentiated
                .function("main")
                .expect("the pass keeps every function")
                .expr()
                .clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_tvm_names_and_others_are_refused() {
        assert_eq!("higher_order".parse(), Ok(GradientMode::HigherOrder));
        assert_eq!("first_order".parse(), Ok(GradientMode::FirstOrder));
        let refused = "second_order".parse::<GradientMode>().unwrap_err();
        assert!(refused.contains("unknown mode"), "{refused}");
    }

    #[test]
    fn first_order_mode_refuses_a_module() {
        let x = relay_ir::Var::new("x", None, None);
        let function = relay_ir::Function::new(
            relay_ir::FunctionData {
                params: vec![x.clone()],
                body: x.into_expr(),
                ret_type: None,
                type_params: Vec::new(),
                attrs: Default::default(),
                virtual_device: None,
            },
            None,
        );
        let mut module = IRModule::new();
        let error =
            gradient(function.expr(), Some(&mut module), GradientMode::FirstOrder).unwrap_err();
        assert!(
            error.message.contains("FirstOrderGradient module pass"),
            "{}",
            error.message
        );
    }
}
