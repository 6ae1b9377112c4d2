//! TIR index maps (`tir.IndexMap`, `include/tvm/tir/index_map.h`) read
//! from a metadata section: the attribute of `meta_schedule_layout_transform`.
//!
//! An index map sends an index `(i, j, …)` (its `initial_indices`, TIR
//! variables) to the integer expressions of its `final_indices`. The
//! lowering keeps the attribute as an opaque [`MetaObject`]; [`IndexMap::read`]
//! turns its node into [`IndexExpr`] trees, which [`IndexMap::apply`]
//! evaluates on an index (the kernel) and [`IndexMap::map_shape`] bounds
//! over a shape (the type relation, TVM's `IndexMapNode::MapShape`).
//!
//! Only integer expressions are understood (immediates, the map's own
//! variables, `+ - *`, truncating and flooring division and remainder,
//! `min`, `max` and integer casts); anything else is an [`IndexMapError`]
//! naming the node, never a guess.

use crate::dtype::DataType;
use crate::metadata::graph::Node;
use crate::MetaObject;

/// Why an index map cannot be read or evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexMapError(pub String);

impl std::fmt::Display for IndexMapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn fail<T>(message: impl Into<String>) -> Result<T, IndexMapError> {
    Err(IndexMapError(message.into()))
}

/// The binary integer operations of TIR an index map may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// `tir.Div`: truncating division.
    Div,
    /// `tir.Mod`: truncating remainder.
    Mod,
    FloorDiv,
    FloorMod,
    Min,
    Max,
}

/// An integer TIR expression over the map's variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexExpr {
    /// An `IntImm`.
    Int(i64),
    /// The map's variable number `n` (its position in `initial_indices`).
    Var(usize),
    /// `tir.Cast` to an integer type: the value wraps to its width.
    Cast(DataType, Box<IndexExpr>),
    Binary(BinOp, Box<IndexExpr>, Box<IndexExpr>),
}

/// An index map: how many variables it reads and the expression of each
/// result index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexMap {
    /// The names of `initial_indices`, for messages.
    pub inputs: Vec<String>,
    pub outputs: Vec<IndexExpr>,
}

/// Nodes deeper than this are refused (a cyclic or absurd graph).
const MAX_DEPTH: usize = 256;

struct Reader<'a> {
    meta: &'a MetaObject,
    /// Node index of each of the map's variables.
    vars: Vec<usize>,
}

impl Reader<'_> {
    fn node(&self, index: usize) -> Result<&Node, IndexMapError> {
        match self.meta.graph.nodes.get(index) {
            Some(node) => Ok(node),
            None => fail(format!(
                "the index map refers to node {index}, which does not exist"
            )),
        }
    }

    /// The node a field of `node` refers to.
    fn field(&self, node: &Node, name: &str) -> Result<usize, IndexMapError> {
        match node.attrs.get(name).map(|v| v.parse::<usize>()) {
            Some(Ok(index)) => Ok(index),
            _ => fail(format!(
                "a {} node without its `{name}` field",
                node.type_key
            )),
        }
    }

    fn array(&self, index: usize, what: &str) -> Result<Vec<usize>, IndexMapError> {
        let node = self.node(index)?;
        if !node.is_array() {
            return fail(format!(
                "the index map's {what} is a {}, not an Array",
                node.type_key
            ));
        }
        Ok(node.data.clone())
    }

    fn expr(&self, index: usize, depth: usize) -> Result<IndexExpr, IndexMapError> {
        if depth > MAX_DEPTH {
            return fail("an index expression nested too deeply");
        }
        let node = self.node(index)?;
        let dtype = || -> Result<DataType, IndexMapError> {
            match node.attrs.get("dtype").map(|d| d.parse::<DataType>()) {
                Some(Ok(dt)) if dt.is_int() || dt.is_uint() => Ok(dt),
                _ => fail(format!(
                    "a {} node of a non-integer type in the index map",
                    node.type_key
                )),
            }
        };
        let op = match node.type_key.as_str() {
            "IntImm" => {
                dtype()?;
                return match node.attrs.get("value").map(|v| v.parse::<i64>()) {
                    Some(Ok(value)) => Ok(IndexExpr::Int(value)),
                    _ => fail("an IntImm without an integer value"),
                };
            }
            "tir.Var" | "tir.SizeVar" => {
                return match self.vars.iter().position(|&v| v == index) {
                    Some(n) => Ok(IndexExpr::Var(n)),
                    None => fail(format!(
                        "the variable `{}` is not one of the index map's initial indices",
                        self.var_name(node)
                    )),
                };
            }
            "tir.Cast" => {
                let dt = dtype()?;
                let value = self.expr(self.field(node, "value")?, depth + 1)?;
                return Ok(IndexExpr::Cast(dt, Box::new(value)));
            }
            "tir.Add" => BinOp::Add,
            "tir.Sub" => BinOp::Sub,
            "tir.Mul" => BinOp::Mul,
            "tir.Div" => BinOp::Div,
            "tir.Mod" => BinOp::Mod,
            "tir.FloorDiv" => BinOp::FloorDiv,
            "tir.FloorMod" => BinOp::FloorMod,
            "tir.Min" => BinOp::Min,
            "tir.Max" => BinOp::Max,
            other => {
                return fail(format!(
                    "cannot evaluate a {} node in an index map (integer arithmetic only)",
                    if other.is_empty() { "null" } else { other }
                ))
            }
        };
        dtype()?;
        let a = self.expr(self.field(node, "a")?, depth + 1)?;
        let b = self.expr(self.field(node, "b")?, depth + 1)?;
        Ok(IndexExpr::Binary(op, Box::new(a), Box::new(b)))
    }

    fn var_name(&self, node: &Node) -> String {
        node.attrs
            .get("name")
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| self.meta.graph.nodes.get(n))
            .map(|n| String::from_utf8_lossy(&n.repr_bytes).into_owned())
            .unwrap_or_default()
    }
}

impl IndexMap {
    /// Reads a `tir.IndexMap` node.
    pub fn read(meta: &MetaObject) -> Result<IndexMap, IndexMapError> {
        if meta.type_key() != "tir.IndexMap" {
            return fail(format!(
                "expected a tir.IndexMap, found a {}",
                meta.type_key()
            ));
        }
        let mut reader = Reader {
            meta,
            vars: Vec::new(),
        };
        let node = reader.node(meta.index)?;
        let initial = reader.array(reader.field(node, "initial_indices")?, "initial_indices")?;
        let finals = reader.array(reader.field(node, "final_indices")?, "final_indices")?;
        let mut inputs = Vec::with_capacity(initial.len());
        for &v in &initial {
            let var = reader.node(v)?;
            if var.type_key != "tir.Var" && var.type_key != "tir.SizeVar" {
                return fail(format!(
                    "an initial index of the index map is a {}, not a variable",
                    var.type_key
                ));
            }
            inputs.push(reader.var_name(var));
        }
        reader.vars = initial;
        let outputs = finals
            .iter()
            .map(|&f| reader.expr(f, 0))
            .collect::<Result<_, _>>()?;
        Ok(IndexMap { inputs, outputs })
    }

    /// The result index of `index` (one value per initial index).
    pub fn apply(&self, index: &[i64]) -> Result<Vec<i64>, IndexMapError> {
        if index.len() != self.inputs.len() {
            return fail(format!(
                "an index of rank {} for an index map of {} variables",
                index.len(),
                self.inputs.len()
            ));
        }
        self.outputs.iter().map(|e| eval(e, index)).collect()
    }

    /// TVM's `MapShape` of a constant shape: each result index ranges over
    /// `[0, extent)`, the extent as TVM's iter-map analysis finds it (see
    /// `extent`). A result index whose least value is not 0 is an error,
    /// as in TVM (`ICHECK(is_zero(range->min))`).
    pub fn map_shape(&self, shape: &[i64]) -> Result<Vec<i64>, IndexMapError> {
        if shape.len() != self.inputs.len() {
            return fail(format!(
                "Check failed: shape.size() == initial_indices.size() ({} vs. {}) : ",
                shape.len(),
                self.inputs.len()
            ));
        }
        if let Some(d) = shape.iter().find(|&&d| d <= 0) {
            return fail(format!("cannot map a shape with a dimension of size {d}"));
        }
        let ranges: Vec<(i64, i64)> = shape.iter().map(|&d| (0, d - 1)).collect();
        self.outputs
            .iter()
            .map(|e| {
                let (lo, extent) = extent(e, &ranges)?;
                if lo != 0 {
                    return fail("Check failed: (is_zero(range->min)) is false: ");
                }
                Ok(extent)
            })
            .collect()
    }
}

fn overflow() -> IndexMapError {
    IndexMapError("integer overflow evaluating the index map".into())
}

fn checked(v: Option<i64>) -> Result<i64, IndexMapError> {
    v.ok_or_else(overflow)
}

/// `a op b` with TIR's integer semantics (division by zero is an error).
fn binary(op: BinOp, a: i64, b: i64) -> Result<i64, IndexMapError> {
    let divides = matches!(
        op,
        BinOp::Div | BinOp::Mod | BinOp::FloorDiv | BinOp::FloorMod
    );
    if divides && b == 0 {
        return fail("division by zero in the index map");
    }
    checked(match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mul => a.checked_mul(b),
        BinOp::Div => a.checked_div(b),
        BinOp::Mod => a.checked_rem(b),
        BinOp::FloorDiv => a.checked_div(b).map(|q| {
            if a % b != 0 && (a < 0) != (b < 0) {
                q - 1
            } else {
                q
            }
        }),
        BinOp::FloorMod => a.checked_rem(b).map(|r| {
            if r != 0 && (r < 0) != (b < 0) {
                r + b
            } else {
                r
            }
        }),
        BinOp::Min => Some(a.min(b)),
        BinOp::Max => Some(a.max(b)),
    })
}

/// The value wrapped to an integer type's width.
fn wrap(dtype: DataType, v: i64) -> i64 {
    let bits = u32::from(dtype.bits);
    if bits >= 64 || bits == 0 {
        return v;
    }
    let mask = (1i64 << bits) - 1;
    let low = v & mask;
    if dtype.is_uint() || low < (1i64 << (bits - 1)) {
        low
    } else {
        low - (1i64 << bits)
    }
}

fn eval(e: &IndexExpr, index: &[i64]) -> Result<i64, IndexMapError> {
    match e {
        IndexExpr::Int(v) => Ok(*v),
        IndexExpr::Var(n) => Ok(index[*n]),
        IndexExpr::Cast(dt, v) => Ok(wrap(*dt, eval(v, index)?)),
        IndexExpr::Binary(op, a, b) => binary(*op, eval(a, index)?, eval(b, index)?),
    }
}

/// Inclusive bounds `[lo, hi]` of `e` when variable `n` ranges over
/// `ranges[n]` (TVM's `EvalSet` on intervals).
fn bounds(e: &IndexExpr, ranges: &[(i64, i64)]) -> Result<(i64, i64), IndexMapError> {
    Ok(match e {
        IndexExpr::Int(v) => (*v, *v),
        IndexExpr::Var(n) => ranges[*n],
        IndexExpr::Cast(dt, v) => {
            let (lo, hi) = bounds(v, ranges)?;
            if wrap(*dt, lo) != lo || wrap(*dt, hi) != hi {
                return fail(format!("the index map's values overflow its cast to {dt}"));
            }
            (lo, hi)
        }
        IndexExpr::Binary(op, a, b) => {
            let (alo, ahi) = bounds(a, ranges)?;
            let (blo, bhi) = bounds(b, ranges)?;
            match op {
                BinOp::Add => (binary(*op, alo, blo)?, binary(*op, ahi, bhi)?),
                BinOp::Sub => (binary(*op, alo, bhi)?, binary(*op, ahi, blo)?),
                BinOp::Min | BinOp::Max => (binary(*op, alo, blo)?, binary(*op, ahi, bhi)?),
                BinOp::Mul | BinOp::Div | BinOp::FloorDiv => {
                    if *op != BinOp::Mul && blo <= 0 && bhi >= 0 {
                        return fail("the index map divides by a range that holds zero");
                    }
                    // Each of these is monotonic in each argument on a
                    // sign-definite divisor: the corners bound it.
                    let corners = [
                        binary(*op, alo, blo)?,
                        binary(*op, alo, bhi)?,
                        binary(*op, ahi, blo)?,
                        binary(*op, ahi, bhi)?,
                    ];
                    (
                        *corners.iter().min().expect("four corners"),
                        *corners.iter().max().expect("four corners"),
                    )
                }
                BinOp::FloorMod | BinOp::Mod => {
                    if blo != bhi {
                        return fail("the index map takes a remainder by a non-constant value");
                    }
                    let c = blo;
                    if c == 0 {
                        return fail("division by zero in the index map");
                    }
                    let floor = *op == BinOp::FloorMod;
                    let same_block = if floor {
                        binary(BinOp::FloorDiv, alo, c)? == binary(BinOp::FloorDiv, ahi, c)?
                    } else {
                        alo / c == ahi / c && (alo >= 0) == (ahi >= 0)
                    };
                    if same_block {
                        (binary(*op, alo, c)?, binary(*op, ahi, c)?)
                    } else if floor {
                        if c > 0 {
                            (0, c - 1)
                        } else {
                            (c + 1, 0)
                        }
                    } else {
                        let m = c.checked_abs().ok_or_else(overflow)? - 1;
                        (if alo < 0 { -m } else { 0 }, if ahi > 0 { m } else { 0 })
                    }
                }
            }
        }
    })
}

/// The terms of a sum: `e` split at `+`.
fn terms<'a>(e: &'a IndexExpr, out: &mut Vec<&'a IndexExpr>) {
    match e {
        IndexExpr::Binary(BinOp::Add, a, b) => {
            terms(a, out);
            terms(b, out);
        }
        other => out.push(other),
    }
}

/// A term `scale * x` (or `x * scale`, or `x` with scale 1) as `(scale, x)`.
fn scaled(e: &IndexExpr) -> (i64, &IndexExpr) {
    match e {
        IndexExpr::Binary(BinOp::Mul, a, b) => match (a.as_ref(), b.as_ref()) {
            (x, IndexExpr::Int(c)) | (IndexExpr::Int(c), x) => (*c, x),
            _ => (1, e),
        },
        _ => (1, e),
    }
}

/// The least value of `e` and its extent, as TVM's `MapRanges` finds them.
///
/// TVM first detects the result index as an affine sum of iterator splits
/// (`DetectIterMap`) and takes the largest `extent · scale` of its terms:
/// `i·4 + j` with `j < 3` has extent `4·I`, not `4·I − 1`. A sum of terms
/// `scale · x` with positive scales and non-negative `x` is measured that
/// way here; every other expression by its interval bounds (TVM's fallback,
/// `EvalSet`). For sums whose terms overlap (`i + j`), TVM's iter-map
/// detection may reject the sum and use the bounds instead; we always use
/// the term rule for them.
fn extent(e: &IndexExpr, ranges: &[(i64, i64)]) -> Result<(i64, i64), IndexMapError> {
    let mut parts = Vec::new();
    terms(e, &mut parts);
    if parts.len() > 1 {
        let mut lo = 0i64;
        let mut largest = 1i64;
        let mut affine = true;
        for part in &parts {
            let (scale, x) = scaled(part);
            let (xlo, xhi) = bounds(x, ranges)?;
            if scale <= 0 || xlo < 0 || matches!(x, IndexExpr::Int(_)) {
                affine = false;
                break;
            }
            lo = checked(lo.checked_add(checked(scale.checked_mul(xlo))?))?;
            let span = checked((xhi - xlo).checked_add(1))?;
            largest = largest.max(checked(span.checked_mul(scale))?);
        }
        if affine {
            return Ok((lo, largest));
        }
    }
    let (lo, hi) = bounds(e, ranges)?;
    Ok((lo, checked((hi - lo).checked_add(1))?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use IndexExpr::*;

    fn bin(op: BinOp, a: IndexExpr, b: IndexExpr) -> IndexExpr {
        Binary(op, Box::new(a), Box::new(b))
    }

    fn map(n: usize, outputs: Vec<IndexExpr>) -> IndexMap {
        IndexMap {
            inputs: (0..n).map(|i| format!("i{i}")).collect(),
            outputs,
        }
    }

    #[test]
    fn tiling_and_transpose_shapes() {
        // (i, j) -> (j // 4, i, j % 4)
        let m = map(
            2,
            vec![
                bin(BinOp::FloorDiv, Var(1), Int(4)),
                Var(0),
                bin(BinOp::FloorMod, Var(1), Int(4)),
            ],
        );
        assert_eq!(m.map_shape(&[3, 8]).unwrap(), vec![2, 3, 4]);
        assert_eq!(m.apply(&[2, 5]).unwrap(), vec![1, 2, 1]);
        // A split that does not divide: ceil for the outer, the divisor
        // for the inner; a dimension smaller than the divisor keeps its size.
        assert_eq!(m.map_shape(&[3, 6]).unwrap(), vec![2, 3, 4]);
        assert_eq!(m.map_shape(&[3, 2]).unwrap(), vec![1, 3, 2]);
    }

    #[test]
    fn fused_sums_take_the_largest_scaled_term() {
        // (i, j) -> (i * 4 + j)
        let m = map(
            2,
            vec![bin(BinOp::Add, bin(BinOp::Mul, Var(0), Int(4)), Var(1))],
        );
        assert_eq!(m.map_shape(&[5, 4]).unwrap(), vec![20]);
        assert_eq!(m.map_shape(&[5, 3]).unwrap(), vec![20]);
        assert_eq!(m.apply(&[2, 3]).unwrap(), vec![11]);
    }

    #[test]
    fn offsets_ranks_and_division_by_zero_are_errors() {
        let m = map(1, vec![bin(BinOp::Add, Var(0), Int(1))]);
        assert_eq!(
            m.map_shape(&[4]).unwrap_err().0,
            "Check failed: (is_zero(range->min)) is false: "
        );
        assert!(m.map_shape(&[4, 4]).unwrap_err().0.contains("(2 vs. 1)"));
        let m = map(1, vec![bin(BinOp::FloorMod, Var(0), Int(0))]);
        assert!(m.apply(&[3]).unwrap_err().0.contains("division by zero"));
    }

    #[test]
    fn floor_and_truncating_division_differ_on_negatives() {
        assert_eq!(binary(BinOp::FloorDiv, -7, 2).unwrap(), -4);
        assert_eq!(binary(BinOp::Div, -7, 2).unwrap(), -3);
        assert_eq!(binary(BinOp::FloorMod, -7, 2).unwrap(), 1);
        assert_eq!(binary(BinOp::Mod, -7, 2).unwrap(), -1);
        assert_eq!(binary(BinOp::FloorDiv, 7, -2).unwrap(), -4);
        assert_eq!(binary(BinOp::FloorMod, 7, -2).unwrap(), -1);
        assert_eq!(wrap("int8".parse().unwrap(), 200), -56);
    }
}
