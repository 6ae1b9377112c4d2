//! An evaluator for operator calls on constant tensors: what FoldConstant
//! uses in place of TVM's interpreter.
//!
//! TVM folds a call by compiling it for the `llvm` target on the host CPU
//! and running it (`src/relay/backend/interpreter.cc`). We compute the same
//! values with scalar kernels over the flat, row-major data of
//! [`TensorData`], one kernel per operator, looked up by the operator's
//! name ([`kernel`]). A call whose operator has no kernel, or whose inputs a
//! kernel does not handle, is an [`EvalError`]: the caller leaves it
//! unfolded, never guessing a value.
//!
//! # Numerics
//!
//! Results are meant to be bit-for-bit what TVM's generated code computes:
//!
//! * `float32` is computed in `f32`, `float64` in `f64`. `float16` and
//!   `bfloat16` are computed in `f32` and rounded (to nearest, ties to even)
//!   after **every** operation, as LLVM's soft promotion of `half` does on
//!   x86; reductions round after each step of the accumulation.
//! * Reductions accumulate sequentially in row-major order of the reduced
//!   axes (TVM's generated code does not reassociate: no fast-math).
//! * Integers wrap around at their width. `divide` and `mod` on integers
//!   truncate (C semantics), `floor_divide` / `floor_mod` round towards
//!   negative infinity; a division by zero is not folded.
//! * Transcendental functions (`exp`, `log`, `pow`, `sin`, `cos`, `atan`, …)
//!   call the C library's `expf`/`exp`/… through Rust's `f32`/`f64`
//!   methods, which is what LLVM's `llvm.exp.*` intrinsics (or TVM's extern
//!   calls) become in TVM's code on Linux: the results agree with TVM when
//!   both use the same libm (glibc); a different libm may differ in the last
//!   ulp. `sqrt` is the correctly rounded instruction. `acosh`, `asinh`,
//!   `atanh` and `erf` call the C library directly (Rust computes the first
//!   three with its own formulas and has no `erf`).
//! * Where TVM expands a function itself we use its formula and order:
//!   `negative` is `0 - x` (so `-(+0)` is `+0`), `rsqrt` is `1 / sqrt(x)`,
//!   `sigmoid` is `1 / (1 + exp(0 - x))`, `tanh` is the two-sided formula over
//!   `exp` of TVM's LLVM legalisation, `tan`, `sinh`, `cosh` likewise.
//! * Checked against TVM's data: FoldConstant's records fold `add`,
//!   `subtract`, `concatenate`, `cast` (after `shape_of`/`ndarray_size`),
//!   `qnn.requantize` and `qnn.add`; the fixed model pipeline folds `add`,
//!   `sqrt`, `divide`, `multiply`, `negative` and `expand_dims` (a batch
//!   norm of `synthetic.bound`, with simple values); with the matrix
//!   products, PartialEvaluate's record folds `nn.dense`. The other
//!   kernels follow TOPI's definitions (each family file names its source
//!   and says where float accumulation order may differ from TVM's
//!   schedules), checked by unit tests and by NumPy reference values
//!   computed with independent algorithms (`reference_cases.rs`).
//! * Operators TVM never folds are listed with the reason in
//!   [`NEVER_FOLDED`]; `relay ops` reports it.
//! * Casts follow LLVM on x86-64: float to float and integer to float round
//!   to nearest (integer to `float16` goes through `float32`, as LLVM does);
//!   float to integer truncates towards zero, and a value out of range gives
//!   what `cvttss2si` gives (the minimum of the 32- or 64-bit conversion,
//!   then truncated to the width); anything to `bool` is `x != 0` (NaN gives
//!   false).
//! * `min`/`max` are TVM's `select(a < b, a, b)` / `select(a > b, a, b)`.

mod algorithm;
mod batch_space;
mod bitserial;
mod broadcast;
mod cast;
mod dynamic;
mod einsum;
mod elemwise;
mod executor_only;
mod fast_math;
mod float16;
mod gemm;
mod grid_sample;
mod image;
mod indexing;
mod layout;
mod libm;
mod linalg;
mod loss;
mod misc;
mod never_folded;
mod nn;
mod nn_conv;
mod nn_correlation;
mod nn_deformable;
mod nn_packed_conv;
mod nn_spatial;
mod norm;
mod num;
mod one_hot;
mod pool;
mod pool_grad;
mod qnn;
mod qnn_activation;
mod qnn_linear;
mod random;
mod reduce;
mod resize;
mod scatter_dense;
mod set_slice;
mod signal;
mod simulated_quantize;
mod sparse;
mod sparse_tensor;
mod tensor;
mod tensor_transform;
mod unique;
mod vision;
mod vision_all_class_nms;
mod vision_nms;
mod vision_proposal;
mod vision_roi;
mod vision_ssd;
mod vision_util;
mod weight_layout;
mod winograd;

#[cfg(test)]
mod coverage_tests;
#[cfg(test)]
mod reference_cases;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod vision_proposal_tests;
#[cfg(test)]
mod vision_tests;

use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::{AttrValue, Attrs, Type, TypeKind};
use std::fmt;
use std::sync::Arc;

pub use cast::cast_tensor;
pub use executor_only::{executor_kernel, run_call};
pub use never_folded::{never_folded, NEVER_FOLDED};

/// A run-time value: a tensor or a tuple of values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Tensor(Arc<TensorData>),
    Tuple(Vec<Value>),
}

impl Value {
    pub fn tensor(data: TensorData) -> Value {
        Value::Tensor(Arc::new(data))
    }

    pub fn as_tensor(&self) -> Option<&TensorData> {
        match self {
            Value::Tensor(t) => Some(t),
            Value::Tuple(_) => None,
        }
    }

    pub fn as_tuple(&self) -> Option<&[Value]> {
        match self {
            Value::Tuple(fields) => Some(fields),
            Value::Tensor(_) => None,
        }
    }

    /// The number of tensor elements in the value (all fields of a tuple).
    pub fn num_elements(&self) -> i64 {
        match self {
            Value::Tensor(t) => t.num_elements(),
            Value::Tuple(fields) => fields.iter().map(Value::num_elements).sum(),
        }
    }
}

/// Why a call could not be evaluated. Either way the call stays as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// No kernel for this operator.
    NoKernel(String),
    /// The kernel does not handle these inputs or attributes (a data type,
    /// a mode, a division by zero, an index out of range, …).
    Unsupported(String),
    /// The result would have more elements than the call's limit
    /// ([`CallInfo::max_elements`]).
    TooLarge(String),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::NoKernel(op) => write!(f, "no evaluator kernel for `{op}`"),
            EvalError::Unsupported(why) | EvalError::TooLarge(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for EvalError {}

/// Shorthand for kernel results.
pub type EvalResult<T = Value> = Result<T, EvalError>;

pub(crate) fn unsupported<T>(message: impl Into<String>) -> EvalResult<T> {
    Err(EvalError::Unsupported(message.into()))
}

/// What a kernel knows about the call besides its arguments.
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    /// The operator's name.
    pub op: &'a str,
    /// The call's attrs object.
    pub attrs: Option<&'a Attrs>,
    /// The call's checked type, when type inference has run. Kernels work
    /// without it; `reshape` takes its output shape from it when it is
    /// static (as TVM's compute does), `layout_transform` checks its shape.
    pub ret_type: Option<&'a Type>,
    /// The most elements the result may have: a call whose result (from
    /// `ret_type`, or from the shape a kernel computes) is larger is
    /// [`EvalError::TooLarge`], refused before anything is allocated.
    pub max_elements: u64,
}

impl<'a> CallInfo<'a> {
    pub fn new(op: &'a str, attrs: Option<&'a Attrs>) -> CallInfo<'a> {
        CallInfo {
            op,
            attrs,
            ret_type: None,
            max_elements: relay_ir::limits::DEFAULT_FOLD_MAX_ELEMENTS,
        }
    }

    /// Checks that a result of shape `shape` is within
    /// [`CallInfo::max_elements`]; kernels call it on the shape they
    /// compute before they allocate it.
    pub(crate) fn check_size(&self, shape: &[i64]) -> EvalResult<usize> {
        relay_ir::limits::check_elements(shape, self.max_elements)
            .map_err(|why| EvalError::TooLarge(format!("{}: {why}", self.op)))
    }

    pub(crate) fn attr(&self, name: &str) -> Option<&'a AttrValue> {
        self.attrs
            .and_then(|a| a.get(name))
            .filter(|v| !v.is_null())
    }

    pub(crate) fn int(&self, name: &str) -> Option<i64> {
        self.attr(name).and_then(AttrValue::as_int)
    }

    pub(crate) fn int_or(&self, name: &str, default: i64) -> i64 {
        self.int(name).unwrap_or(default)
    }

    pub(crate) fn req_int(&self, name: &str) -> EvalResult<i64> {
        self.int(name)
            .ok_or_else(|| EvalError::Unsupported(format!("{}: no integer `{name}`", self.op)))
    }

    pub(crate) fn f64(&self, name: &str) -> EvalResult<f64> {
        self.attr(name)
            .and_then(AttrValue::as_f64)
            .ok_or_else(|| EvalError::Unsupported(format!("{}: no number `{name}`", self.op)))
    }

    pub(crate) fn bool_or(&self, name: &str, default: bool) -> bool {
        self.int(name).map_or(default, |v| v != 0)
    }

    /// An array of integers; `None` when absent or null.
    pub(crate) fn ints(&self, name: &str) -> EvalResult<Option<Vec<i64>>> {
        match self.attr(name) {
            None => Ok(None),
            Some(v) => v.as_int_array().map(Some).ok_or_else(|| {
                EvalError::Unsupported(format!("{}: `{name}` is not a list of integers", self.op))
            }),
        }
    }

    pub(crate) fn str(&self, name: &str) -> Option<&'a str> {
        self.attr(name).and_then(AttrValue::as_str)
    }

    /// A data type attribute; `None` when absent or void.
    pub fn dtype(&self, name: &str) -> EvalResult<Option<DataType>> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::DataType(d)) => Ok((!d.is_void()).then_some(*d)),
            Some(AttrValue::Str(s)) => DataType::parse(s)
                .map(|d| (!d.is_void()).then_some(d))
                .map_err(|e| EvalError::Unsupported(e.to_string())),
            Some(_) => unsupported(format!("{}: `{name}` is not a data type", self.op)),
        }
    }
}

/// A kernel: the operator's semantics on constant arguments.
pub type Kernel = fn(&[Value], &CallInfo) -> EvalResult;

/// The kernel of an operator, by name.
pub fn kernel(op: &str) -> Option<Kernel> {
    elemwise::kernel(op)
        .or_else(|| cast::kernel(op))
        .or_else(|| tensor_transform::kernel(op))
        .or_else(|| reduce::kernel(op))
        .or_else(|| nn::kernel(op))
        .or_else(|| nn_spatial::kernel(op))
        .or_else(|| qnn::kernel(op))
        .or_else(|| indexing::kernel(op))
        .or_else(|| algorithm::kernel(op))
        .or_else(|| image::kernel(op))
        .or_else(|| linalg::kernel(op))
        .or_else(|| nn_conv::kernel(op))
        .or_else(|| pool::kernel(op))
        .or_else(|| norm::kernel(op))
        .or_else(|| qnn_linear::kernel(op))
        .or_else(|| one_hot::kernel(op))
        .or_else(|| dynamic::kernel(op))
        .or_else(|| resize::kernel(op))
        .or_else(|| fast_math::kernel(op))
        .or_else(|| misc::kernel(op))
        .or_else(|| libm::kernel(op))
        .or_else(|| einsum::kernel(op))
        .or_else(|| batch_space::kernel(op))
        .or_else(|| loss::kernel(op))
        .or_else(|| vision::kernel(op))
        .or_else(|| scatter_dense::kernel(op))
        .or_else(|| random::kernel(op))
        .or_else(|| qnn_activation::kernel(op))
        .or_else(|| simulated_quantize::kernel(op))
        .or_else(|| set_slice::kernel(op))
        .or_else(|| unique::kernel(op))
        .or_else(|| sparse::kernel(op))
        .or_else(|| nn_packed_conv::kernel(op))
        .or_else(|| vision_nms::kernel(op))
        .or_else(|| vision_all_class_nms::kernel(op))
        .or_else(|| vision_roi::kernel(op))
        .or_else(|| vision_ssd::kernel(op))
        .or_else(|| vision_proposal::kernel(op))
        .or_else(|| signal::kernel(op))
        .or_else(|| nn_correlation::kernel(op))
        .or_else(|| nn_deformable::kernel(op))
        .or_else(|| grid_sample::kernel(op))
        .or_else(|| pool_grad::kernel(op))
        .or_else(|| weight_layout::kernel(op))
        .or_else(|| sparse_tensor::kernel(op))
        .or_else(|| winograd::kernel(op))
        .or_else(|| bitserial::kernel(op))
}

/// Every operator that has a kernel, sorted.
pub fn operators_with_kernels() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = relay_ir::op::all_ops()
        .iter()
        .map(|op| op.name.as_str())
        .filter(|name| kernel(name).is_some())
        .collect();
    names.sort_unstable();
    names
}

/// Evaluates `op(args…)` with the call's attributes.
pub fn eval_call(call: &CallInfo, args: &[Value]) -> EvalResult {
    let kernel = kernel(call.op).ok_or_else(|| EvalError::NoKernel(call.op.to_string()))?;
    if let Some(ty) = call.ret_type {
        check_type_size(ty, call)?;
    }
    kernel(args, call)
}

/// Checks every tensor of the call's checked type whose shape is known
/// against the call's limit (the sizes of a tuple's fields add up).
fn check_type_size(ty: &Type, call: &CallInfo) -> EvalResult<u64> {
    match ty.kind() {
        TypeKind::Tensor(t) => {
            let Some(shape) = t
                .shape
                .iter()
                .map(|d| d.as_int())
                .collect::<Option<Vec<i64>>>()
            else {
                return Ok(0);
            };
            call.check_size(&shape).map(|n| n as u64)
        }
        TypeKind::Tuple(fields) => {
            let mut total = 0u64;
            for field in fields {
                total = total.saturating_add(check_type_size(field, call)?);
                if total > call.max_elements {
                    return Err(EvalError::TooLarge(format!(
                        "{}: the result has more than {} elements",
                        call.op, call.max_elements
                    )));
                }
            }
            Ok(total)
        }
        _ => Ok(0),
    }
}

// ---- argument helpers for kernels ----

/// The tensor argument `i`.
pub(crate) fn arg_tensor<'v>(
    args: &'v [Value],
    i: usize,
    call: &CallInfo,
) -> EvalResult<&'v TensorData> {
    match args.get(i) {
        Some(Value::Tensor(t)) => Ok(t),
        Some(Value::Tuple(_)) => unsupported(format!("{}: argument {i} is a tuple", call.op)),
        None => unsupported(format!("{}: missing argument {i}", call.op)),
    }
}

/// The tuple of tensors argument `i`.
pub(crate) fn arg_tensors<'v>(
    args: &'v [Value],
    i: usize,
    call: &CallInfo,
) -> EvalResult<Vec<&'v TensorData>> {
    match args.get(i) {
        Some(Value::Tuple(fields)) => fields
            .iter()
            .map(|f| {
                f.as_tensor().ok_or_else(|| {
                    EvalError::Unsupported(format!("{}: nested tuple argument", call.op))
                })
            })
            .collect(),
        Some(Value::Tensor(_)) => unsupported(format!("{}: argument {i} is not a tuple", call.op)),
        None => unsupported(format!("{}: missing argument {i}", call.op)),
    }
}

pub(crate) fn expect_args(args: &[Value], n: usize, call: &CallInfo) -> EvalResult<()> {
    if args.len() != n {
        return unsupported(format!(
            "{}: {} arguments, expected {n}",
            call.op,
            args.len()
        ));
    }
    Ok(())
}
