//! Automatic differentiation: TVM v0.13's `LazyGradientInit` (computing on
//! lazily made gradient cells) and `FirstOrderGradient` (reverse-mode AD of
//! first-order programs, with the per-operator gradients of
//! `python/tvm/relay/op/_tensor_grad.py` in `primal`).

pub mod first_order;
pub mod lazy_init;
mod let_list;
pub mod primal;
