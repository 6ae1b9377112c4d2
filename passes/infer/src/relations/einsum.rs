//! `EinsumRel` (`src/relay/op/tensor/math.cc`) with the shape rule of
//! topi's `InferEinsumShape` (`src/topi/einsum.cc`).
//!
//! The equation is parsed as TVM parses it: spaces are ignored, `,`
//! separates the operands' subscripts, `->` starts the output, `...` is an
//! ellipsis (at most once per subscript), every other character must be a
//! letter. Without `->` the output is every label used once, in ASCII
//! order, with the ellipsis first. Each label's extent is broadcast across
//! the operands (equal sizes, or 1 against anything; a symbolic size wins
//! over a constant); the dimensions under the ellipses are broadcast like
//! numpy shapes (topi's `BroadcastShape`, not Relay's).

use super::shape::{self, cast, equal_check, is_int_imm};
use super::{display, error, item, relations, tensor, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::{Dim, Type, TypeKind};
use std::collections::BTreeMap;

relations! {
    /// `EinsumRel`: the shape `InferEinsumShape` computes, the operands'
    /// dtype.
    "Einsum" => einsum_rel;
}

/// One subscript's labels; `None` is the ellipsis.
type Subscript = Vec<Option<u8>>;

/// The parsed equation, in explicit mode.
#[derive(Debug, PartialEq)]
struct Equation {
    inputs: Vec<Subscript>,
    output: Subscript,
}

/// `EinsumEquation::FromString`.
fn parse_equation(equation: &str) -> Result<Equation, RelationError> {
    let bytes = equation.as_bytes();
    let mut inputs = Vec::new();
    let mut current: Subscript = Vec::new();
    let mut has_arrow = false;
    let mut has_ellipsis = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b' ' => {}
            b'-' | b',' => {
                if bytes[i] == b'-' {
                    if has_arrow {
                        return error("Equation can only have one arrow");
                    }
                    if bytes.get(i + 1) != Some(&b'>') {
                        return error("Cannot parse the Einsum equation: invalid arrow");
                    }
                    i += 1;
                    has_arrow = true;
                }
                inputs.push(std::mem::take(&mut current));
                has_ellipsis = false;
            }
            b'.' => {
                if has_ellipsis {
                    return error("Ellipsis can only appear once for each input and output");
                }
                if bytes.get(i + 1) != Some(&b'.') || bytes.get(i + 2) != Some(&b'.') {
                    return error("Cannot parse the Einsum equation: invalid ellipsis");
                }
                current.push(None);
                has_ellipsis = true;
                i += 2;
            }
            c if c.is_ascii_alphabetic() => current.push(Some(c)),
            _ => {
                // The whole character, not its first byte, in the message.
                let c = equation[i..].chars().next().unwrap_or('?');
                return error(format!(
                    "Cannot parse the Einsum equation: invalid character {c} in equation {equation}"
                ));
            }
        }
        i += 1;
    }
    let output = if has_arrow {
        current
    } else {
        inputs.push(current);
        // Implicit mode: the labels used once, sorted, the ellipsis (which
        // sorts first) whenever it appears.
        let mut counts: BTreeMap<Option<u8>, usize> = BTreeMap::new();
        for label in inputs.iter().flatten() {
            *counts.entry(*label).or_default() += 1;
        }
        counts
            .into_iter()
            .filter(|(label, count)| label.is_none() || *count == 1)
            .map(|(label, _)| label)
            .collect()
    };
    Ok(Equation { inputs, output })
}

/// `GetBroadcastedExtent`: one label's extent across two operands.
fn broadcast_extent(a: &Dim, b: &Dim) -> Result<Dim, RelationError> {
    match (a.as_int_imm(), b.as_int_imm()) {
        (Some((x, _)), Some((y, _))) if x == y => Ok(a.clone()),
        // `Integer(std::max(…))`: a new int32 immediate.
        (Some((x, _)), Some((y, _))) if x == 1 || y == 1 => Ok(shape::c_int(x.max(y))),
        (Some(_), Some(_)) => error(format!(
            "Cannot broadcast extents {} and {}",
            display::dim(a),
            display::dim(b)
        )),
        (Some(_), None) => Ok(b.clone()),
        (None, Some(_)) => Ok(a.clone()),
        (None, None) => Ok(shape::max(a, b)),
    }
}

/// topi's `detail::BroadcastShape(a, b).common_shape`.
fn broadcast_shapes(a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, RelationError> {
    let (na, nb) = (a.len(), b.len());
    let mut out = Vec::with_capacity(na.max(nb));
    let one = shape::c_int(1);
    for i in 1..=na.min(nb) {
        let (s1, s2) = (&a[na - i], &b[nb - i]);
        let (t1, t2) = (shape::dim_dtype(s1), shape::dim_dtype(s2));
        let common = DataType::new(t1.code, t1.bits.max(t2.bits), 1);
        // Two `?` are the same expression to topi's deep equality.
        let dim = if equal_check(s1, s2) || (shape::is_any(s1) && shape::is_any(s2)) {
            cast(common, s1)
        } else if equal_check(&one, s1) {
            cast(common, s2)
        } else if equal_check(&one, s2) {
            cast(common, s1)
        } else if !is_int_imm(s1) && !is_int_imm(s2) {
            cast(common, &shape::max(s1, s2))
        } else if !is_int_imm(s1) {
            cast(common, s2)
        } else if !is_int_imm(s2) {
            cast(common, s1)
        } else {
            return error(format!(
                "Incompatible broadcast dims: {} and {} in: {} and {}",
                display::dim(s1),
                display::dim(s2),
                display::shape_array(a),
                display::shape_array(b)
            ));
        };
        out.push(dim);
    }
    let longer = if na > nb { a } else { b };
    let max = na.max(nb);
    for i in na.min(nb) + 1..=max {
        out.push(longer[max - i].clone());
    }
    out.reverse();
    Ok(out)
}

/// `InferEinsumShape`.
fn infer_einsum_shape(equation: &str, shapes: &[Vec<Dim>]) -> Result<Vec<Dim>, RelationError> {
    let equation = parse_equation(equation)?;
    if equation.inputs.len() != shapes.len() {
        return error(format!(
            "Check failed: equation_.inputs.size() == input_shapes_.size() ({} vs. {}) : Number of operands does not match the equation",
            equation.inputs.len(),
            shapes.len()
        ));
    }
    let mut extents: BTreeMap<u8, Dim> = BTreeMap::new();
    let mut ellipsis_shapes: Vec<&[Dim]> = Vec::new();
    for (subscript, input_shape) in equation.inputs.iter().zip(shapes) {
        let mut current = 0usize;
        for label in subscript {
            match label {
                None => {
                    let covered = input_shape.len() as i64 - subscript.len() as i64 + 1;
                    if covered < 0 {
                        return error(format!(
                            "einsum: the subscript has {} labels besides the ellipsis but the operand has rank {}",
                            subscript.len() - 1,
                            input_shape.len()
                        ));
                    }
                    let end = current + covered as usize;
                    ellipsis_shapes.push(&input_shape[current..end]);
                    current = end;
                }
                Some(label) => {
                    let extent = item(input_shape, current)?;
                    current += 1;
                    let merged = match extents.get(label) {
                        None => extent.clone(),
                        Some(known) => broadcast_extent(known, extent)?,
                    };
                    extents.insert(*label, merged);
                }
            }
        }
        if current != input_shape.len() {
            return error(format!(
                "Check failed: current_dim == input_shape.size() ({current} vs. {})",
                input_shape.len()
            ));
        }
    }
    let mut ellipsis_shape: Vec<Dim> = Vec::new();
    if let Some(longest) =
        ellipsis_shapes
            .iter()
            .copied()
            .reduce(|best, s| if s.len() > best.len() { s } else { best })
    {
        ellipsis_shape = longest.to_vec();
        for s in &ellipsis_shapes {
            ellipsis_shape = broadcast_shapes(&ellipsis_shape, s)?;
        }
    }
    let mut oshape = Vec::new();
    for label in &equation.output {
        match label {
            None => oshape.extend(ellipsis_shape.iter().cloned()),
            Some(label) => match extents.get(label) {
                Some(extent) => oshape.push(extent.clone()),
                None => {
                    return error(format!(
                        "einsum: the output label {} does not appear in any input",
                        *label as char
                    ))
                }
            },
        }
    }
    Ok(oshape)
}

fn einsum_rel(ctx: &mut Ctx) -> Step {
    let equation = ctx.attrs.str("equation")?;
    let fields = match ctx.ty(0).kind() {
        TypeKind::Tuple(fields) => fields.clone(),
        TypeKind::Incomplete(_) => return Ok(false),
        _ => {
            return Err(RelationError::at_input(
                format!(
                    "einsum requires a tuple of tensors as the first argument, found {}",
                    display::ty(ctx.ty(0))
                ),
                0,
            ))
        }
    };
    if fields.iter().any(Type::is_incomplete) {
        return Ok(false);
    }
    let Some(first) = item(&fields, 0)?.as_tensor() else {
        return error("Check failed: (tensor_tuple->fields[0].as<TensorTypeNode>()) is false: ");
    };
    let dtype = first.dtype;
    let mut shapes = Vec::with_capacity(fields.len());
    for field in &fields {
        let Some(t) = field.as_tensor() else {
            return error(format!(
                "Downcast from {} to relay.TensorType failed.",
                display::ty(field)
            ));
        };
        if t.dtype != dtype {
            return error("relay.einsum requires all tensors have the same dtype");
        }
        shapes.push(t.shape.clone());
    }
    let oshape = infer_einsum_shape(&equation, &shapes)?;
    ctx.assign(1, tensor(oshape, dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::*;

    fn labels(s: &str) -> Subscript {
        s.bytes()
            .map(|c| if c == b'.' { None } else { Some(c) })
            .collect()
    }

    #[test]
    fn implicit_mode_sorts_the_single_labels_after_the_ellipsis() {
        let eq = parse_equation("...ij, jk").unwrap();
        assert_eq!(eq.inputs, vec![labels(".ij"), labels("jk")]);
        assert_eq!(eq.output, labels(".ik"));
        let eq = parse_equation("ba,Ab").unwrap();
        assert_eq!(eq.output, labels("Aa"));
    }

    #[test]
    fn explicit_mode_and_parse_errors() {
        let eq = parse_equation("ii->i").unwrap();
        assert_eq!(eq.output, labels("i"));
        assert_eq!(
            parse_equation("i->j->k").unwrap_err().message,
            "Equation can only have one arrow"
        );
        assert_eq!(
            parse_equation("i-j").unwrap_err().message,
            "Cannot parse the Einsum equation: invalid arrow"
        );
        assert_eq!(
            parse_equation("i..j").unwrap_err().message,
            "Cannot parse the Einsum equation: invalid ellipsis"
        );
        assert_eq!(
            parse_equation("......").unwrap_err().message,
            "Ellipsis can only appear once for each input and output"
        );
        assert_eq!(
            parse_equation("i1").unwrap_err().message,
            "Cannot parse the Einsum equation: invalid character 1 in equation i1"
        );
    }

    use super::super::test_util::{fails, s as string, solve_out, t, td, tup, waits};
    use relay_ir::{Dim, Type};

    fn einsum(equation: &str, operands: &[Type]) -> Type {
        solve_out(
            "einsum",
            &[tup(operands)],
            &[("equation", string(equation))],
        )
    }

    #[test]
    fn einsum_shapes_from_tvm_tests() {
        // test_op_level11.py::test_einsum cases.
        let a = t(&[2, 3], "float32");
        let b = t(&[3, 4], "float32");
        assert_eq!(
            einsum("ij,jk->ik", &[a.clone(), b.clone()]),
            t(&[2, 4], "float32")
        );
        assert_eq!(einsum("ij,jk", &[a.clone(), b]), t(&[2, 4], "float32"));
        assert_eq!(einsum("ii", &[t(&[3, 3], "float32")]), t(&[], "float32"));
        assert_eq!(einsum("ij->ji", &[a.clone()]), t(&[3, 2], "float32"));
        assert_eq!(
            einsum(
                "...ij,...jk->...ik",
                &[t(&[7, 2, 3], "float32"), t(&[5, 1, 3, 4], "float32")]
            ),
            t(&[5, 7, 2, 4], "float32")
        );
        // A label of size 1 broadcasts (to a new int32 size); `?` wins over a size.
        assert_eq!(
            einsum("ij,ij->ij", &[t(&[1, 3], "float32"), t(&[4, 3], "float32")]),
            t(&[4, 3], "float32")
        );
        let any = td(vec![Dim::Any, Dim::int32(3)], "float32");
        assert_eq!(
            einsum("ij,ij->ij", &[any, t(&[4, 3], "float32")]),
            td(vec![Dim::Any, Dim::int32(3)], "float32")
        );
    }

    #[test]
    fn einsum_errors() {
        let eq = |e: &str| [("equation", string(e))];
        let a = t(&[2, 3], "float32");
        assert_eq!(
            fails("einsum", &[tup(&[a.clone()])], &eq("ij,jk->ik")),
            "Check failed: equation_.inputs.size() == input_shapes_.size() (2 vs. 1) : Number of operands does not match the equation"
        );
        assert_eq!(
            fails(
                "einsum",
                &[tup(&[a.clone(), t(&[4, 5], "float32")])],
                &eq("ij,jk->ik")
            ),
            "Cannot broadcast extents 3 and 4"
        );
        assert_eq!(
            fails("einsum", &[tup(&[a.clone()])], &eq("ijk")),
            "IndexError: indexing 2 on an array of size 2"
        );
        assert_eq!(
            fails("einsum", &[tup(&[a.clone()])], &eq("i")),
            "Check failed: current_dim == input_shape.size() (1 vs. 2)"
        );
        assert_eq!(
            fails(
                "einsum",
                &[tup(&[a.clone(), t(&[3], "int32")])],
                &eq("ij,j")
            ),
            "relay.einsum requires all tensors have the same dtype"
        );
        assert_eq!(
            fails("einsum", &[a.clone()], &eq("ij")),
            "einsum requires a tuple of tensors as the first argument, found Tensor[(2, 3), float32]"
        );
        assert_eq!(
            fails(
                "einsum",
                &[tup(&[t(&[2, 3], "float32"), t(&[4, 3], "float32")])],
                &eq("...j,...j")
            ),
            "Incompatible broadcast dims: 2 and 4 in: [2] and [4]"
        );
        assert!(waits(
            "einsum",
            &[tup(&[a, Type::incomplete()])],
            &eq("ij,jk")
        ));
    }
}
