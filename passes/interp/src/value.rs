//! Run-time values of the interpreter: tensors, tuples, closures, ADT
//! values, references — TVM's `runtime::NDArray`, `runtime::ADT`,
//! `InterpreterClosure`, `RecClosure`, `ConstructorValue` and `RefValue`.

use crate::env::Frame;
use relay_eval::Value as EvalValue;
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::{Constructor, Function, Var};
use std::fmt;
use std::sync::{Arc, Mutex};

/// A value a Relay expression evaluates to.
#[derive(Clone)]
pub enum Value {
    Tensor(Arc<TensorData>),
    Tuple(Arc<[Value]>),
    Closure(Arc<Closure>),
    /// A constructor applied to its fields (a nullary one has none).
    Adt(Arc<AdtValue>),
    /// A constructor used as a function value (not yet applied).
    Constructor(Constructor),
    /// `ref(v)`: a mutable cell shared by every copy of the value.
    Ref(Arc<Mutex<Value>>),
}

/// A function value: the function and the frame it was created in (none
/// for a global function). `recursive` is TVM's `RecClosure`: a `let`-bound
/// function that calls itself sees itself under that variable.
pub struct Closure {
    pub function: Function,
    pub env: Option<Arc<Frame>>,
    pub recursive: Option<Var>,
    /// The global's name, for messages.
    pub global: Option<String>,
}

/// A constructor and its fields.
pub struct AdtValue {
    pub constructor: Constructor,
    pub fields: Vec<Value>,
}

impl Value {
    pub fn tensor(data: TensorData) -> Value {
        Value::Tensor(Arc::new(data))
    }

    pub fn tuple(fields: Vec<Value>) -> Value {
        Value::Tuple(fields.into())
    }

    /// Whether a closure may be in this value (in a field, an ADT, a
    /// reference's cell): what can keep the frame it was created in alive
    /// after its activation ended. Looks at no more than `budget` values
    /// and answers yes beyond them, so a run that asks at every return of
    /// a long list stays linear.
    pub fn may_hold_closure(&self, budget: usize) -> bool {
        let mut left = budget;
        self.holds_closure_within(&mut left)
    }

    fn holds_closure_within(&self, left: &mut usize) -> bool {
        if *left == 0 {
            return true;
        }
        *left -= 1;
        match self {
            Value::Closure(_) => true,
            Value::Tensor(_) | Value::Constructor(_) => false,
            Value::Tuple(fields) => fields.iter().any(|f| f.holds_closure_within(left)),
            Value::Adt(adt) => adt.fields.iter().any(|f| f.holds_closure_within(left)),
            Value::Ref(cell) => cell
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .holds_closure_within(left),
        }
    }

    pub fn as_tensor(&self) -> Option<&Arc<TensorData>> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// What kind of value this is, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Tensor(_) => "a tensor",
            Value::Tuple(_) => "a tuple",
            Value::Closure(_) => "a function",
            Value::Adt(_) => "an ADT value",
            Value::Constructor(_) => "a constructor",
            Value::Ref(_) => "a reference",
        }
    }

    /// The value as the evaluator's kernels take it (tensors and tuples of
    /// them); `None` for functions, ADT values and references.
    pub fn to_eval(&self) -> Option<EvalValue> {
        match self {
            Value::Tensor(t) => Some(EvalValue::Tensor(t.clone())),
            Value::Tuple(fields) => fields
                .iter()
                .map(Value::to_eval)
                .collect::<Option<Vec<_>>>()
                .map(EvalValue::Tuple),
            _ => None,
        }
    }

    pub fn from_eval(value: EvalValue) -> Value {
        match value {
            EvalValue::Tensor(t) => Value::Tensor(t),
            EvalValue::Tuple(fields) => {
                Value::tuple(fields.into_iter().map(Value::from_eval).collect())
            }
        }
    }

    /// The tensors of the value in order (depth first through tuples, ADT
    /// fields and references); what outputs are compared and saved as.
    pub fn leaves(&self) -> Vec<Leaf> {
        let mut out = Vec::new();
        self.collect_leaves(String::new(), &mut out);
        out
    }

    fn collect_leaves(&self, path: String, out: &mut Vec<Leaf>) {
        match self {
            Value::Tensor(t) => out.push(Leaf {
                path,
                tensor: t.clone(),
            }),
            Value::Tuple(fields) => {
                for (i, f) in fields.iter().enumerate() {
                    f.collect_leaves(format!("{path}.{i}"), out);
                }
            }
            Value::Adt(adt) => {
                for (i, f) in adt.fields.iter().enumerate() {
                    f.collect_leaves(format!("{path}.{}{i}", adt.constructor.name()), out);
                }
            }
            Value::Ref(cell) => {
                let inner = cell.lock().unwrap_or_else(|e| e.into_inner()).clone();
                inner.collect_leaves(format!("{path}.ref"), out);
            }
            Value::Closure(_) | Value::Constructor(_) => {}
        }
    }

    /// The structure of the value without tensor contents (`(T, fn, Cons(T, Nil))`),
    /// compared before the tensors so that a different shape of result is
    /// reported as such.
    pub fn skeleton(&self) -> String {
        match self {
            Value::Tensor(t) => match t.shape.as_slice() {
                [] => t.dtype.to_string(),
                [n] => format!("Tensor[({n}), {}]", t.dtype),
                dims => {
                    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
                    format!("Tensor[({}), {}]", dims.join(", "), t.dtype)
                }
            },
            Value::Tuple(fields) => {
                let inner: Vec<String> = fields.iter().map(Value::skeleton).collect();
                format!("({})", inner.join(", "))
            }
            Value::Closure(_) => "fn".to_string(),
            Value::Adt(adt) => {
                let inner: Vec<String> = adt.fields.iter().map(Value::skeleton).collect();
                if inner.is_empty() {
                    adt.constructor.name().to_string()
                } else {
                    format!("{}({})", adt.constructor.name(), inner.join(", "))
                }
            }
            Value::Constructor(c) => format!("constructor {}", c.name()),
            Value::Ref(cell) => {
                let inner = cell.lock().unwrap_or_else(|e| e.into_inner()).clone();
                format!("ref({})", inner.skeleton())
            }
        }
    }
}

/// One tensor inside a value, with where it sits (`.0.1`, `.Cons0`; empty
/// for the value itself).
#[derive(Debug, Clone)]
pub struct Leaf {
    pub path: String,
    pub tensor: Arc<TensorData>,
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.skeleton())
    }
}

/// `args` with every element of a tensor whose dtype `factor_of` gives a
/// factor multiplied by it (in f64, rounded back to the dtype), through
/// tuples; other values, and the arguments whose `keep` is true (those
/// drawn in a domain, [`crate::input_domains`]), as they are. The one
/// place the semantic check moves its inputs: scaled down for range
/// ([`crate::range_effects`]), by a rounding unit for sensitivity
/// ([`crate::sensitivity`]).
pub(crate) fn multiplied_arguments(
    args: &[Value],
    keep: &[bool],
    factor_of: impl Fn(DataType) -> Option<f64>,
) -> Vec<Value> {
    args.iter()
        .enumerate()
        .map(|(i, a)| match keep.get(i) {
            Some(true) => a.clone(),
            _ => multiplied(a, &factor_of),
        })
        .collect()
}

fn multiplied(value: &Value, factor_of: &impl Fn(DataType) -> Option<f64>) -> Value {
    match value {
        Value::Tensor(t) => {
            let Some(factor) = factor_of(t.dtype) else {
                return value.clone();
            };
            let mut out = (**t).clone();
            for i in 0..out.len() {
                if let Ok(v) = t.get_f64(i) {
                    // A float set into its own dtype cannot fail.
                    let _ = out.set_f64(i, v * factor);
                }
            }
            Value::tensor(out)
        }
        Value::Tuple(fields) => {
            Value::tuple(fields.iter().map(|f| multiplied(f, factor_of)).collect())
        }
        other => other.clone(),
    }
}
