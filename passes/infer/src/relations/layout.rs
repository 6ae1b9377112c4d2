//! Data layouts (`tir::Layout`) and the conversion of shapes between two of
//! them (`tir::BijectiveLayout`), as used by the convolution, pooling,
//! upsampling, resize and `layout_transform` relations.
//!
//! A layout is a string of axes: an upper-case letter is a primal axis
//! (`C`), a lower-case letter preceded by a factor is a subordinate axis
//! (`16c`, a block of the primal `C`). `NCHW16c` has five axes.
//!
//! Converting a shape (`TransformShape` in `src/tir/ir/data_layout.cc`):
//! every known size is first cast to the layout variables' dtype, `int32`
//! (so an `int64` dimension comes out `int32`); then for each target axis,
//! a subordinate axis gets its factor, and a primal axis `X` gets
//! `ceildiv(X_src * src_factor(X), dst_factor(X))`, where a missing factor
//! is left out. `?` stays `?` when it is copied; any arithmetic on an
//! unknown size gives `?` (see [`super::shape`]).

use super::shape::{self, c_int, I32};
use super::RelationError;
use relay_ir::Dim;

/// One axis of a layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// The letter, upper case for a primal axis.
    pub name: char,
    /// The block size of a subordinate axis; `None` for a primal axis.
    pub factor: Option<i64>,
}

impl Axis {
    pub fn is_primal(&self) -> bool {
        self.factor.is_none()
    }

    /// The primal axis this one belongs to.
    pub fn primal(&self) -> char {
        self.name.to_ascii_uppercase()
    }
}

/// A parsed layout. `Layout::undef()` is TVM's undefined layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub name: String,
    pub axes: Vec<Axis>,
    defined: bool,
}

impl Layout {
    /// Parses a layout string as `Layout(name)` does; the error is TVM's
    /// check message.
    pub fn parse(name: &str) -> Result<Layout, RelationError> {
        if name == "__undef__" {
            return Ok(Layout::undef());
        }
        let mut axes = Vec::new();
        let mut factor: i64 = 0;
        for c in name.chars() {
            if c.is_ascii_uppercase() {
                if factor != 0 {
                    return Err(RelationError::new(format!(
                        "Invalid layout {name}: invalid factor size {factor} before dimension {c}"
                    )));
                }
                axes.push(Axis {
                    name: c,
                    factor: None,
                });
            } else if c.is_ascii_lowercase() {
                if factor <= 0 {
                    return Err(RelationError::new(format!(
                        "Invalid layout {name}: invalid factor size {factor} for dimension {c}"
                    )));
                }
                axes.push(Axis {
                    name: c,
                    factor: Some(factor),
                });
                factor = 0;
            } else if let Some(digit) = c.to_digit(10) {
                factor = factor.saturating_mul(10).saturating_add(i64::from(digit));
            } else {
                return Err(RelationError::new(format!("Invalid layout {name}")));
            }
        }
        for axis in &axes {
            if !axis.is_primal() && !axes.iter().any(|a| a.name == axis.primal()) {
                // TVM streams `std::toupper(axis)`, an int: the character code.
                return Err(RelationError::new(format!(
                    "Invalid layout {name}: missing axis {}",
                    axis.primal() as u32
                )));
            }
        }
        Ok(Layout {
            name: name.to_string(),
            axes,
            defined: true,
        })
    }

    /// The undefined layout.
    pub fn undef() -> Layout {
        Layout {
            name: "__undef__".to_string(),
            axes: Vec::new(),
            defined: false,
        }
    }

    pub fn is_defined(&self) -> bool {
        self.defined
    }

    pub fn ndim(&self) -> usize {
        self.axes.len()
    }

    /// Whether the layout has the axis named `c` (case-sensitive).
    pub fn contains(&self, c: char) -> bool {
        self.axes.iter().any(|axis| axis.name == c)
    }

    /// The position of the axis named `c`.
    pub fn index_of(&self, c: char) -> Option<usize> {
        self.axes.iter().position(|axis| axis.name == c)
    }

    /// `FactorOf(primal)`: the product of the block sizes of `primal`'s
    /// subordinate axes, `None` when it has none.
    pub fn factor_of(&self, primal: char) -> Option<i64> {
        // Asked for every axis of every shape a convolution converts: no
        // vector of the factors is collected.
        let sub = primal.to_ascii_lowercase();
        self.axes
            .iter()
            .filter(|axis| axis.name == sub)
            .filter_map(|axis| axis.factor)
            .fold(None, |product: Option<i64>, factor| {
                Some(product.map_or(factor, |p| p * factor))
            })
    }
}

/// Whether every axis of `dst` can be computed from `src` (`GetStoreRule`).
fn store_rule_exists(src: &Layout, dst: &Layout) -> bool {
    if !src.is_defined() || src.name.is_empty() || !dst.is_defined() || dst.name.is_empty() {
        return false;
    }
    dst.axes
        .iter()
        .all(|axis| src.axes.iter().any(|a| a.primal() == axis.primal()))
}

/// A conversion between two layouts (`tir::BijectiveLayout`).
#[derive(Debug, Clone)]
pub struct BijectiveLayout {
    pub src: Layout,
    pub dst: Layout,
}

impl BijectiveLayout {
    /// The conversion, or `None` where TVM's is undefined (one of the
    /// layouts is undefined or empty, or an axis of one is missing from the
    /// other).
    pub fn new(src: &Layout, dst: &Layout) -> Option<BijectiveLayout> {
        if store_rule_exists(src, dst) && store_rule_exists(dst, src) {
            Some(BijectiveLayout {
                src: src.clone(),
                dst: dst.clone(),
            })
        } else {
            None
        }
    }

    /// A `src`-layout shape in the `dst` layout.
    pub fn forward_shape(&self, shape: &[Dim]) -> Result<Vec<Dim>, RelationError> {
        transform_shape(shape, &self.src, &self.dst)
    }

    /// A `dst`-layout shape in the `src` layout.
    pub fn backward_shape(&self, shape: &[Dim]) -> Result<Vec<Dim>, RelationError> {
        transform_shape(shape, &self.dst, &self.src)
    }
}

fn transform_shape(shape: &[Dim], from: &Layout, to: &Layout) -> Result<Vec<Dim>, RelationError> {
    if shape.len() != from.ndim() {
        return Err(RelationError::new(format!(
            "Input shape size {} mismatch with the expected shape size {}",
            shape.len(),
            from.ndim()
        )));
    }
    let mut bound: Vec<(char, Dim)> = Vec::new();
    for (i, (dim, axis)) in shape.iter().zip(&from.axes).enumerate() {
        match axis.factor {
            Some(extent) => {
                if let Some(value) = shape::const_int(dim) {
                    if value != extent {
                        return Err(RelationError::new(format!(
                            "Input shape mismatch at index {i}. Expected {extent}, get {}",
                            super::display::dim(dim)
                        )));
                    }
                }
            }
            None => bound.push((axis.name, shape::cast(I32, dim))),
        }
    }
    let mut out = Vec::with_capacity(to.ndim());
    for axis in &to.axes {
        if let Some(extent) = axis.factor {
            out.push(c_int(extent));
            continue;
        }
        let primal = bound
            .iter()
            .find(|(name, _)| *name == axis.name)
            .map(|(_, dim)| dim.clone())
            .ok_or_else(|| {
                RelationError::new(format!("cannot convert from {} to {}", from.name, to.name))
            })?;
        let total = match from.factor_of(axis.name) {
            Some(factor) => shape::mul(&primal, &c_int(factor)),
            None => primal,
        };
        out.push(match to.factor_of(axis.name) {
            Some(factor) => shape::ceildiv(&total, &c_int(factor))?,
            None => total,
        });
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::*;

    fn dims(values: &[i64]) -> Vec<Dim> {
        values.iter().map(|&v| Dim::int32(v)).collect()
    }

    #[test]
    fn parse_and_query() {
        let layout = Layout::parse("NCHW16c").unwrap();
        assert_eq!(layout.ndim(), 5);
        assert_eq!(layout.index_of('H'), Some(2));
        assert_eq!(layout.factor_of('C'), Some(16));
        assert_eq!(layout.factor_of('H'), None);
        assert!(Layout::parse("NCHWc").is_err());
        assert!(Layout::parse("NHW4c").is_err());
    }

    #[test]
    fn blocked_conversion() {
        let nchw = Layout::parse("NCHW").unwrap();
        let blocked = Layout::parse("NCHW4c").unwrap();
        let conv = BijectiveLayout::new(&blocked, &nchw).unwrap();
        assert_eq!(
            conv.forward_shape(&dims(&[1, 8, 5, 5, 4])).unwrap(),
            dims(&[1, 32, 5, 5])
        );
        assert_eq!(
            conv.backward_shape(&dims(&[1, 30, 5, 5])).unwrap(),
            dims(&[1, 8, 5, 5, 4])
        );
        let hwio = Layout::parse("HWIO").unwrap();
        let oihw = Layout::parse("OIHW").unwrap();
        let conv = BijectiveLayout::new(&hwio, &oihw).unwrap();
        assert_eq!(
            conv.forward_shape(&[Dim::int64(3), Dim::int64(3), Dim::int64(16), Dim::int64(32)])
                .unwrap(),
            dims(&[32, 16, 3, 3])
        );
        assert!(BijectiveLayout::new(&Layout::parse("NCW").unwrap(), &nchw).is_none());
    }
}
