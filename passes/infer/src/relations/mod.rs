//! The operator type relations of TVM v0.13, one function per relation name
//! registered with `add_type_rel` (the name in each operator's
//! `OpDef::type_rel`), looked up with [`by_name`].
//!
//! Each relation follows its C++ original (`src/relay/op/**`,
//! `src/relay/qnn/op/**`): it waits ([`RelationOutcome::NotReady`]) exactly
//! where TVM's returns `false`, assigns the output and the inputs TVM assigns
//! (a convolution's weight, `bias_add`'s bias, `batch_norm`'s vectors, …),
//! computes shapes with TVM's dimension dtypes (see [`shape`]) and layouts
//! (see [`layout`]), and reports errors in TVM's words, with types written in
//! Relay syntax (see [`display`]).
//!
//! TVM lets a relation assign some types and still return `false` (wait); a
//! relation that does so here returns its assignments as
//! [`RelationOutcome::Pending`] and the solver unifies them at once, as
//! TVM's `Assign` does (`broadcast_to` and `collapse_sum_to` assign the
//! attribute's shape and wait, because their nested `BroadcastRel` sees the
//! output as it was when they were called).
//!
//! One systematic difference from TVM, forced by the contract in
//! [`super::relation_contract`]:
//!
//! * TVM sometimes *emits* an error and carries on (`BroadcastRel` on two
//!   dtypes), or aborts on a failed `ICHECK`. Both become a
//!   [`RelationError`] here. Where TVM `ICHECK`s that an input type is a
//!   tensor (and would abort on an incomplete one because its solver happened
//!   to visit the relation early), we wait while the input is incomplete and
//!   fail only on a type that can never become a tensor.
//!
//! Families: [`identity`] (identity, casts, `shape_of`), [`broadcast`]
//! (elementwise binary ops, `where`, `broadcast_to`, `collapse_sum_*`),
//! [`nn_conv`], [`nn_conv_contrib`] (transposed 1-D, weight gradient,
//! weight transforms, bit-serial), [`nn_pool`], [`nn_sparse`], [`nn_spatial`]
//! (depth/space, mirror pad, dilate, correlation, FIFO buffer, pool
//! gradients), [`nn_misc`] (dense, norms, softmax, pad, upsampling, prelu,
//! …), [`tensor_transform`], [`reduce`], [`algorithm`], [`qnn`],
//! [`qnn_elemwise`], [`image`], [`vision`], [`dynamic`] (`dyn.*`),
//! [`memory`], [`indexing`] (gather/scatter), [`sequence`] (along one axis:
//! reverse, scans, masks, windows), [`multi_output`] (tuple results:
//! meshgrid, unique, sparse rows, DFT), [`einsum`], [`random`] (`random.*`),
//! [`dialect`] (VM ops, `call_lowered`, `parser.MetaRef`), [`layout_rewrite`]
//! (the tuners' layout rewrites), [`ethosu`] (Arm Ethos-U NPU ops).
//!
//! Adding a relation is one declaration: an entry `"Name" => body_rel;` in
//! its family's `relations!` block (the name is the operator's `rel:` in
//! `ops.def`), next to the body. The block is the family's table and
//! `FAMILIES` collects the tables; the `coverage_tests` fail while an
//! operator's relation is neither declared nor listed as awaiting one.

use super::relation_contract::{RelationArgs, RelationError, RelationFn, RelationOutcome};
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Attrs, Dim, ExprKind, TensorType, Type, TypeKind};
use std::borrow::Cow;

/// Types and shapes in Relay syntax for messages (shared with the printer).
pub use relay_ir::printer::readable as display;
pub mod layout;
pub mod shape;

pub mod algorithm;
pub mod broadcast;
pub mod dialect;
pub mod dynamic;
pub mod einsum;
pub mod ethosu;
pub mod identity;
pub mod image;
pub mod indexing;
pub mod layout_rewrite;
pub mod memory;
pub mod multi_output;
pub mod nn_conv;
pub mod nn_conv_contrib;
pub mod nn_misc;
pub mod nn_pool;
pub mod nn_sparse;
pub mod nn_spatial;
pub mod qnn;
pub mod qnn_elemwise;
pub mod random;
pub mod reduce;
pub mod sequence;
pub mod tensor_transform;
pub mod vision;

#[cfg(test)]
mod audit_tests;
#[cfg(test)]
mod coverage_tests;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;

/// Every family's table of relations (each made by its [`relations!`]
/// block). A relation is declared once, in its family's block; only a new
/// family file is added here.
const FAMILIES: &[Family] = &[
    identity::RELATIONS,
    broadcast::RELATIONS,
    nn_conv::RELATIONS,
    nn_conv_contrib::RELATIONS,
    nn_pool::RELATIONS,
    nn_sparse::RELATIONS,
    nn_spatial::RELATIONS,
    nn_misc::RELATIONS,
    tensor_transform::RELATIONS,
    reduce::RELATIONS,
    algorithm::RELATIONS,
    qnn::RELATIONS,
    qnn_elemwise::RELATIONS,
    image::RELATIONS,
    vision::RELATIONS,
    dynamic::RELATIONS,
    memory::RELATIONS,
    indexing::RELATIONS,
    sequence::RELATIONS,
    multi_output::RELATIONS,
    einsum::RELATIONS,
    random::RELATIONS,
    dialect::RELATIONS,
    layout_rewrite::RELATIONS,
    ethosu::RELATIONS,
];

/// One family's relations: each registered name (an operator's `rel:` in
/// `ops.def`) with its function.
type Family = &'static [(&'static str, RelationFn)];

/// Every implemented relation with its registered name.
fn registered() -> impl Iterator<Item = &'static (&'static str, RelationFn)> {
    FAMILIES.iter().flat_map(|family| family.iter())
}

/// The relation registered under `name` (the operator's `type_rel`), or
/// `None` when we have not implemented it.
pub fn by_name(name: &str) -> Option<RelationFn> {
    registered().find(|(rel, _)| *rel == name).map(|(_, f)| *f)
}

/// The names of every implemented relation.
pub fn implemented() -> impl Iterator<Item = &'static str> {
    registered().map(|(name, _)| *name)
}

/// The result of one step of a relation: `Ok(true)` when it is done,
/// `Ok(false)` when it waits (TVM's `return false`).
pub(crate) type Step = Result<bool, RelationError>;

/// A tensor type as a relation sees it: the type itself (a reference, not
/// a copy of its shape: relations look at thousands of shapes), viewed as
/// its tensor.
#[derive(Clone, Debug)]
pub(crate) struct TensorView(Type);

impl TensorView {
    /// The view of `t`, if it is a tensor type.
    pub fn of(t: &Type) -> Option<TensorView> {
        t.as_tensor().map(|_| TensorView(t.clone()))
    }
}

impl std::ops::Deref for TensorView {
    type Target = TensorType;

    fn deref(&self) -> &TensorType {
        match self.0.kind() {
            TypeKind::Tensor(t) => t,
            // `of` makes views of tensor types only.
            _ => unreachable!("a tensor view of a non-tensor type"),
        }
    }
}

/// A relation's working state, shaped like TVM's call: `types` are the
/// inputs followed by the output, and `assigns` collects what
/// `reporter->Assign` would unify.
pub(crate) struct Ctx<'a> {
    pub types: Cow<'a, [Type]>,
    pub attrs: AttrsView<'a>,
    pub assigns: Vec<(usize, Type)>,
}

impl<'a> Ctx<'a> {
    fn new(args: &RelationArgs<'a>) -> Ctx<'a> {
        Ctx {
            types: Cow::Borrowed(args.types()),
            attrs: AttrsView(args.attrs),
            // Most relations assign just the output.
            assigns: Vec::with_capacity(1),
        }
    }

    /// The output's slot.
    pub fn out(&self) -> usize {
        self.types.len() - 1
    }

    pub fn ty(&self, i: usize) -> &Type {
        &self.types[i]
    }

    /// `types[i].as<TensorTypeNode>()`.
    pub fn tensor(&self, i: usize) -> Option<TensorView> {
        self.types.get(i).and_then(TensorView::of)
    }

    /// Whether `types[i]` is still incomplete.
    pub fn is_incomplete(&self, i: usize) -> bool {
        self.types.get(i).is_some_and(Type::is_incomplete)
    }

    /// TVM's `if (t == nullptr) { ICHECK(incomplete) << msg << types[i];
    /// return false; }`: the tensor, `None` to wait while it is incomplete,
    /// an error for any other type. `what` is TVM's message before the type.
    pub fn tensor_or_wait(
        &self,
        i: usize,
        what: &str,
    ) -> Result<Option<TensorView>, RelationError> {
        match self.types[i].kind() {
            TypeKind::Tensor(_) => Ok(TensorView::of(&self.types[i])),
            TypeKind::Incomplete(_) => Ok(None),
            _ => Err(RelationError::at_input(
                format!("{what}{}", display::ty(&self.types[i])),
                i,
            )),
        }
    }

    /// Like [`Ctx::tensor_or_wait`] for a check whose message does not
    /// show the type (`ICHECK(t != nullptr) << message`).
    pub fn tensor_or_wait_exact(
        &self,
        i: usize,
        message: &str,
    ) -> Result<Option<TensorView>, RelationError> {
        match self.types[i].kind() {
            TypeKind::Tensor(_) => Ok(TensorView::of(&self.types[i])),
            TypeKind::Incomplete(_) => Ok(None),
            _ => Err(RelationError::at_input(message, i)),
        }
    }

    /// `reporter->Assign(types[i], ty)`.
    pub fn assign(&mut self, i: usize, ty: Type) {
        self.assigns.push((i, ty));
    }

    /// Assigns the output.
    pub fn assign_out(&mut self, ty: Type) {
        let out = self.out();
        self.assign(out, ty);
    }

    /// Runs a nested relation on the slots `slots` (TVM calling another
    /// relation with a sub-array of its types); its assignments are mapped
    /// back to our slots.
    pub fn nested(&mut self, slots: &[usize], rel: fn(&mut Ctx<'a>) -> Step) -> Step {
        let types = slots.iter().map(|&i| self.types[i].clone()).collect();
        self.nested_with(types, slots, rel)
    }

    /// Like [`Ctx::nested`] with explicit types for the nested relation's
    /// slots (TVM passing a fresh array such as `{types[0], types[1],
    /// types[0]}`); `slots` says where each position's assignment goes.
    pub fn nested_with(
        &mut self,
        types: Vec<Type>,
        slots: &[usize],
        rel: fn(&mut Ctx<'a>) -> Step,
    ) -> Step {
        let mut sub = Ctx {
            types: Cow::Owned(types),
            attrs: self.attrs,
            assigns: Vec::new(),
        };
        let done = rel(&mut sub)?;
        self.assigns
            .extend(sub.assigns.into_iter().map(|(i, t)| (slots[i], t)));
        Ok(done)
    }
}

/// Runs a relation body on a call.
pub(crate) fn run<'a>(
    args: &RelationArgs<'a>,
    rel: fn(&mut Ctx<'a>) -> Step,
) -> Result<RelationOutcome, RelationError> {
    let mut ctx = Ctx::new(args);
    if rel(&mut ctx)? {
        Ok(RelationOutcome::Solved(ctx.assigns))
    } else if ctx.assigns.is_empty() {
        Ok(RelationOutcome::NotReady)
    } else {
        Ok(RelationOutcome::Pending(ctx.assigns))
    }
}

/// Declares a family's relations: each entry names the relation as
/// operators register it (`rel:` in `ops.def`; several names when TVM
/// registers one function under several) and the body that implements it,
/// and the block becomes the family's `RELATIONS` table, which
/// [`FAMILIES`] collects.
///
/// ```ignore
/// relations! {
///     /// `CastRel`: the input's shape with the `dtype` attribute.
///     "Cast" => cast_rel;
///     "MaxPool2D" | "AvgPool2D" => pool2d_rel;
/// }
/// ```
macro_rules! relations {
    ($($(#[doc = $doc:literal])* $($name:literal)|+ => $body:path;)*) => {
        /// This family's relations by registered name (see `relations!`).
        pub(super) const RELATIONS: &[(
            &str,
            $crate::relation_contract::RelationFn,
        )] = &[$($((
            $name,
            |args| $crate::relations::run(args, $body),
        ),)+)*];
    };
}
pub(crate) use relations;

/// A tensor type.
pub(crate) fn tensor(shape: Vec<Dim>, dtype: DataType) -> Type {
    Type::tensor(shape, dtype)
}

/// `ICHECK(cond) << message`.
pub(crate) fn check(cond: bool, message: impl FnOnce() -> String) -> Result<(), RelationError> {
    if cond {
        Ok(())
    } else {
        Err(RelationError::new(message()))
    }
}

/// Says which call attribute the errors of a step concern, so they are
/// shown at its value: `normalize(axes, ndim).about("axes")?`.
pub(crate) trait AboutAttribute {
    fn about(self, name: &'static str) -> Self;
}

impl<T> AboutAttribute for Result<T, RelationError> {
    fn about(self, name: &'static str) -> Self {
        self.map_err(|e| e.about_attribute(name))
    }
}

/// An error in TVM's words.
pub(crate) fn error<T>(message: impl Into<String>) -> Result<T, RelationError> {
    Err(RelationError::new(message))
}

/// The error of TVM's bounds check on an `Array` (`operator[]`, `Set`):
/// what TVM reports when a relation reads or writes past the end of a
/// shape or an attribute list.
pub(crate) fn index_error(index: impl std::fmt::Display, len: usize) -> RelationError {
    RelationError::new(format!(
        "IndexError: indexing {index} on an array of size {len}"
    ))
}

/// `items[index]` with TVM's `Array` bounds check.
pub(crate) fn item<T>(items: &[T], index: usize) -> Result<&T, RelationError> {
    items
        .get(index)
        .ok_or_else(|| index_error(index, items.len()))
}

/// Normalises a possibly negative axis.
pub(crate) fn norm_axis(axis: i64, ndim: usize) -> i64 {
    if axis < 0 {
        axis + ndim as i64
    } else {
        axis
    }
}

/// Typed access to a call's attributes by field name. Fields are read by
/// name whatever the attrs type (an attrs object from the metadata section
/// of a related type works as long as the fields are there).
#[derive(Clone, Copy)]
pub(crate) struct AttrsView<'a>(pub Option<&'a Attrs>);

fn missing(name: &str) -> RelationError {
    RelationError::new(format!("the call attributes have no field `{name}`"))
}

fn bad(name: &str, what: &str) -> RelationError {
    RelationError::new(format!("the attribute `{name}` is not {what}"))
}

/// An attribute value used as a dimension (`PrimExpr`/`Integer`): a C++
/// integer becomes an `int32` immediate.
pub(crate) fn value_to_dim(value: &AttrValue) -> Option<Dim> {
    match value {
        // The attribute's own object: `units` becomes the weight's dimension.
        AttrValue::IntImm { value, dtype, id } => Some(Dim::Int {
            value: *value,
            dtype: *dtype,
            id: *id,
        }),
        AttrValue::Int(v) => Some(shape::c_int(*v)),
        AttrValue::Bool(b) => Some(Dim::int(i64::from(*b), DataType::bool())),
        AttrValue::Any => Some(Dim::Any),
        AttrValue::Meta(meta) => Some(shape::normalize(&Dim::Meta(meta.clone()))),
        _ => None,
    }
}

impl<'a> AttrsView<'a> {
    /// Whether the call has an attrs object at all.
    pub fn is_some(&self) -> bool {
        self.0.is_some()
    }

    /// The field's value, if the field exists.
    pub fn get(&self, name: &str) -> Option<&'a AttrValue> {
        self.0.and_then(|attrs| attrs.get(name))
    }

    fn require(&self, name: &str) -> Result<&'a AttrValue, RelationError> {
        match self.0 {
            None => Err(RelationError::new("the call attributes are not defined")),
            Some(attrs) => attrs.get(name).ok_or_else(|| missing(name)),
        }
    }

    /// A C++ integer field (`int axis`), or an `Integer` that must be set.
    pub fn int(&self, name: &str) -> Result<i64, RelationError> {
        self.require(name)?
            .as_int()
            .ok_or_else(|| bad(name, "an integer"))
    }

    /// An `Integer` field that may be null.
    pub fn opt_int(&self, name: &str) -> Result<Option<i64>, RelationError> {
        match self.require(name)? {
            AttrValue::Null => Ok(None),
            value => value
                .as_int()
                .map(Some)
                .ok_or_else(|| bad(name, "an integer")),
        }
    }

    /// A `bool` field.
    pub fn bool(&self, name: &str) -> Result<bool, RelationError> {
        Ok(self.int(name)? != 0)
    }

    /// A `double` field.
    pub fn f64(&self, name: &str) -> Result<f64, RelationError> {
        self.require(name)?
            .as_f64()
            .ok_or_else(|| bad(name, "a number"))
    }

    /// A string field; a null `String` reads as the empty string.
    pub fn str(&self, name: &str) -> Result<String, RelationError> {
        match self.require(name)? {
            AttrValue::Str(s) => Ok(s.clone()),
            AttrValue::Null => Ok(String::new()),
            _ => Err(bad(name, "a string")),
        }
    }

    /// [`Self::str`], borrowed (no copy for a relation that only reads it).
    pub fn str_ref(&self, name: &str) -> Result<&str, RelationError> {
        match self.require(name)? {
            AttrValue::Str(s) => Ok(s),
            AttrValue::Null => Ok(""),
            _ => Err(bad(name, "a string")),
        }
    }

    /// A `DataType` field (void for an empty string).
    pub fn dtype(&self, name: &str) -> Result<DataType, RelationError> {
        match self.require(name)? {
            AttrValue::DataType(dtype) => Ok(*dtype),
            AttrValue::Str(s) if s.is_empty() => Ok(DataType::void()),
            AttrValue::Str(s) => s.parse().map_err(|_| bad(name, "a data type")),
            AttrValue::Null => Ok(DataType::void()),
            _ => Err(bad(name, "a data type")),
        }
    }

    /// A `DataType` field where void means `fallback` (`out_dtype` of most
    /// operators: the input's dtype unless given).
    pub fn dtype_or(&self, name: &str, fallback: DataType) -> Result<DataType, RelationError> {
        let dtype = self.dtype(name)?;
        Ok(if dtype.bits == 0 { fallback } else { dtype })
    }

    /// A `PrimExpr` field that may be null (`channels`, `units`).
    pub fn dim(&self, name: &str) -> Result<Option<Dim>, RelationError> {
        match self.require(name)? {
            AttrValue::Null => Ok(None),
            value => value_to_dim(value)
                .map(Some)
                .ok_or_else(|| bad(name, "an integer")),
        }
    }

    /// An `Array<PrimExpr>`/`Array<Integer>` field; `None` when null.
    pub fn dims(&self, name: &str) -> Result<Option<Vec<Dim>>, RelationError> {
        match self.require(name)? {
            AttrValue::Null => Ok(None),
            AttrValue::Array(items) => items
                .iter()
                .map(|item| value_to_dim(item).ok_or_else(|| bad(name, "an array of integers")))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            _ => Err(bad(name, "an array")),
        }
    }

    /// Like [`AttrsView::dims`], an empty array when null (TVM's
    /// `Array::size()` on a null array is 0).
    pub fn dims_or_empty(&self, name: &str) -> Result<Vec<Dim>, RelationError> {
        Ok(self.dims(name)?.unwrap_or_default())
    }

    /// An array of integers; `None` when null.
    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, RelationError> {
        match self.require(name)? {
            AttrValue::Null => Ok(None),
            // As `dims`, without making dimension objects only to read them.
            AttrValue::Array(items) => items
                .iter()
                .map(|item| {
                    let value = match item {
                        AttrValue::IntImm { value, .. } | AttrValue::Int(value) => Some(*value),
                        AttrValue::Bool(b) => Some(i64::from(*b)),
                        other => value_to_dim(other).and_then(|d| shape::const_int(&d)),
                    };
                    value.ok_or_else(|| bad(name, "an array of integers"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            _ => Err(bad(name, "an array")),
        }
    }

    /// An array of optional integers (`None` elements allowed).
    pub fn opt_ints(&self, name: &str) -> Result<Option<Vec<Option<i64>>>, RelationError> {
        match self.require(name)? {
            AttrValue::Null => Ok(None),
            AttrValue::Array(items) => items
                .iter()
                .map(|item| match item {
                    AttrValue::Null => Ok(None),
                    other => value_to_dim(other)
                        .and_then(|d| shape::const_int(&d))
                        .map(Some)
                        .ok_or_else(|| bad(name, "an array of integers")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            _ => Err(bad(name, "an array")),
        }
    }

    /// The raw value.
    pub fn value(&self, name: &str) -> Result<&'a AttrValue, RelationError> {
        self.require(name)
    }
}

/// The scalar value of a constant used as an attribute (`ToScalar` of a
/// `relay.Constant`), from an inline constant or one in the metadata section.
pub(crate) fn constant_scalar(value: &AttrValue) -> Option<f64> {
    match value {
        AttrValue::Expr(expr) => match expr.kind() {
            ExprKind::Constant(data) => data.get_f64(0).ok(),
            _ => None,
        },
        AttrValue::Meta(meta) if meta.type_key() == "relay.Constant" => {
            let node = meta.graph.nodes.get(meta.index)?;
            let index: usize = node.attrs.get("data")?.parse().ok()?;
            meta.graph.tensor(index).ok()?.get_f64(0).ok()
        }
        _ => None,
    }
}
