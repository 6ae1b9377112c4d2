//! Relations of the random operators `random.*`
//! (`src/relay/op/random/kernel.cc`): `ThreefryGenerateRel`,
//! `ThreefrySplitRel`, `UniformRel`, `NormalRel` and `MultinomialRel`.
//!
//! Each one assigns the key input the threefry key type
//! `Tensor[(10), uint64]`, so a key of another type fails to unify, and
//! returns the next key with the result.

use super::{error, relations, tensor, Ctx, Step};
use relay_ir::dtype::DataType;
use relay_ir::{Dim, Type};

relations! {
    /// `ThreefryGenerateRel`: (key, `Tensor[out_shape, uint64]`).
    "ThreefryGenerate" => threefry_generate_rel;
    /// `ThreefrySplitRel`: (key, key).
    "ThreefrySplit" => threefry_split_rel;
    /// `UniformRel`: scalar bounds, (key, `Tensor[out_shape, out_dtype]`).
    "Uniform" => uniform_rel;
    /// `NormalRel`: scalar mean and scale, (key, `Tensor[out_shape, out_dtype]`).
    "Normal" => normal_rel;
    /// `MultinomialRel`: (key, `Tensor[(batch…, num_samples), int32]`).
    "Multinomial" => multinomial_rel;
}

/// `ThreefryKeyType()`: `Tensor[(10), uint64]`.
fn key_type() -> Type {
    tensor(vec![Dim::int32(10)], DataType::uint(64))
}

/// The `out_shape` attribute as dimensions.
fn out_shape(ctx: &Ctx) -> Result<Vec<Dim>, crate::relation_contract::RelationError> {
    ctx.attrs.dims_or_empty("out_shape")
}

fn threefry_generate_rel(ctx: &mut Ctx) -> Step {
    let shape = out_shape(ctx)?;
    ctx.assign(0, key_type());
    let bits = tensor(shape, DataType::uint(64));
    ctx.assign(1, Type::tuple(vec![key_type(), bits]));
    Ok(true)
}

fn threefry_split_rel(ctx: &mut Ctx) -> Step {
    ctx.assign(0, key_type());
    ctx.assign(1, Type::tuple(vec![key_type(), key_type()]));
    Ok(true)
}

/// The body shared by `UniformRel` and `NormalRel` (`what` names the
/// distribution in the message).
fn distribution_rel(ctx: &mut Ctx, what: &str) -> Step {
    let shape = out_shape(ctx)?;
    let dtype = ctx.attrs.dtype("out_dtype")?;
    if !(dtype.is_float() && (dtype.bits == 32 || dtype.bits == 64)) {
        return error(format!(
            "We only support generating {what} random value of type float32 or float64, got {}.",
            dtype.to_tvm_string()
        ));
    }
    ctx.assign(0, key_type());
    ctx.assign(1, tensor(vec![], dtype));
    ctx.assign(2, tensor(vec![], dtype));
    ctx.assign(3, Type::tuple(vec![key_type(), tensor(shape, dtype)]));
    Ok(true)
}

fn uniform_rel(ctx: &mut Ctx) -> Step {
    distribution_rel(ctx, "uniform")
}

fn normal_rel(ctx: &mut Ctx) -> Step {
    distribution_rel(ctx, "Normal")
}

fn multinomial_rel(ctx: &mut Ctx) -> Step {
    // TVM's message prints the key's type although it checks the
    // probabilities'.
    let probs = match ctx.tensor(1) {
        Some(probs) => probs,
        None if ctx.is_incomplete(1) => return Ok(false),
        None => {
            return Err(crate::relation_contract::RelationError::at_input(
                format!(
                    "multinomial: expect input type to be TensorType but get {}",
                    super::display::ty(ctx.ty(0))
                ),
                1,
            ))
        }
    };
    // `shape.size() - 1` is unsigned in TVM: a scalar reads `shape[0]`.
    let batch = match probs.shape.len() {
        0 => return Err(super::index_error(0, 0)),
        n => &probs.shape[..n - 1],
    };
    let mut oshape = batch.to_vec();
    let samples = ctx.attrs.dim("num_samples")?.ok_or_else(|| {
        crate::relation_contract::RelationError::new("num_samples is not defined")
    })?;
    oshape.push(samples);
    ctx.assign(0, key_type());
    ctx.assign(
        2,
        Type::tuple(vec![key_type(), tensor(oshape, DataType::INT32)]),
    );
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Dim, Type};

    fn key() -> Type {
        t(&[10], "uint64")
    }

    #[test]
    fn threefry_ops_type_the_key() {
        let assigns = solved(
            "random.threefry_generate",
            &[Type::incomplete()],
            &[("out_shape", ints(&[3, 4]))],
        );
        assert_eq!(assigns[0], (0, key()));
        assert_eq!(assigns[1], (1, tup(&[key(), t(&[3, 4], "uint64")])));
        let assigns = solved("random.threefry_split", &[key()], &[]);
        assert_eq!(assigns[1], (1, tup(&[key(), key()])));
    }

    #[test]
    fn distributions_need_a_float_dtype() {
        let attrs = |dtype: &str| [("out_shape", ints(&[2])), ("out_dtype", dt(dtype))];
        let scalar = Type::incomplete();
        let assigns = solved(
            "random.uniform",
            &[key(), scalar.clone(), scalar.clone()],
            &attrs("float64"),
        );
        assert!(assigns.contains(&(1, t(&[], "float64"))));
        assert!(assigns.contains(&(3, tup(&[key(), t(&[2], "float64")]))));
        assert_eq!(
            fails(
                "random.normal",
                &[key(), scalar.clone(), scalar],
                &attrs("int32")
            ),
            "We only support generating Normal random value of type float32 or float64, got int32."
        );
    }

    #[test]
    fn multinomial_replaces_the_last_axis() {
        let out = solve_out(
            "random.multinomial",
            &[key(), td(vec![Dim::Any, Dim::int32(10)], "float32")],
            &[("num_samples", int(4))],
        );
        assert_eq!(
            out,
            tup(&[key(), td(vec![Dim::Any, Dim::int32(4)], "int32")])
        );
        assert_eq!(
            fails(
                "random.multinomial",
                &[key(), t(&[], "float32")],
                &[("num_samples", int(4))]
            ),
            "IndexError: indexing 0 on an array of size 0"
        );
    }
}
