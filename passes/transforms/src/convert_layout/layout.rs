//! The operations of TVM's `tir::Layout` that layout conversion needs, on
//! the layouts the type relations parse ([`Layout`]).
//!
//! Two ways of making a layout differ in TVM and the difference shows in the
//! pass: from a string (`Layout("NCHW")`), where the empty string is the
//! *undefined* layout, and from a list of axes (`SubLayout`, `Layout(axes)`),
//! where no axes is a *defined* layout named `""` (a scalar's). Layouts made
//! from axes are also not validated, so `16c` on its own is a layout there.
//! Layouts compare by name (`Equals`), the undefined one being `__undef__`.

pub(super) use relay_infer::relations::layout::{Axis, BijectiveLayout, Layout};

/// Why the rewrite stopped: what TVM reports (or checks) at that point.
pub(super) type LayoutError = String;

/// `Layout(name)`: `""` and `"__undef__"` are the undefined layout, anything
/// else must parse.
pub(super) fn named(name: &str) -> Result<Layout, LayoutError> {
    if name.is_empty() {
        return Ok(Layout::undef());
    }
    Layout::parse(name).map_err(|e| e.message)
}

/// `Layout(axes)`: always defined, named after its axes, not validated.
pub(super) fn from_axes(axes: &[Axis]) -> Layout {
    let mut name = String::new();
    for axis in axes {
        if let Some(factor) = axis.factor {
            name.push_str(&factor.to_string());
        }
        name.push(axis.name);
    }
    // The empty layout parses to a defined layout without axes; its public
    // fields then take the axes as given, unchecked, as TVM's constructor.
    let mut layout = Layout::parse("").unwrap_or_else(|_| Layout::undef());
    layout.name = name;
    layout.axes = axes.to_vec();
    layout
}

/// `Equals`: the same name (the undefined layouts are all equal).
pub(super) fn same(a: &Layout, b: &Layout) -> bool {
    a.name == b.name
}

/// `ndim_primal`: the number of primal (upper-case) axes.
pub(super) fn ndim_primal(layout: &Layout) -> usize {
    layout.axes.iter().filter(|axis| axis.is_primal()).count()
}

/// `SubLayout(pos, len)`: undefined when `layout` is or `pos` is past its
/// end, the scalar layout when `len` is 0, cut at the end otherwise.
pub(super) fn sub_layout(layout: &Layout, pos: usize, len: usize) -> Layout {
    if !layout.is_defined() || pos > layout.ndim() {
        return Layout::undef();
    }
    if len == 0 {
        return from_axes(&[]);
    }
    let end = (pos + len).min(layout.ndim());
    from_axes(&layout.axes[pos..end])
}

/// `ExpandPrimal(dst)`: the primal axes of `dst` that `layout` lacks, in
/// `dst`'s order, then `layout` itself.
pub(super) fn expand_primal(layout: &Layout, dst: &Layout) -> Result<Layout, LayoutError> {
    let mut name: String = dst
        .axes
        .iter()
        .filter(|axis| axis.is_primal() && !layout.contains(axis.name))
        .map(|axis| axis.name)
        .collect();
    name.push_str(&layout.name);
    named(&name)
}

/// `layout[i]`, negative indices counting from the end; TVM checks the
/// index.
pub(super) fn axis_at(layout: &Layout, index: i64) -> Result<Axis, LayoutError> {
    let ndim = layout.ndim() as i64;
    let position = if index < 0 { index + ndim } else { index };
    if !layout.is_defined() || position < 0 || position >= ndim {
        return Err(format!(
            "Invalid index {index} of layout {} (ndim {ndim})",
            layout.name
        ));
    }
    Ok(layout.axes[position as usize])
}

/// `IndexOf(axis)`: the position of the axis with that exact letter, -1
/// when there is none (TVM stores the -1 into attributes as it is).
pub(super) fn index_of(layout: &Layout, letter: char) -> i64 {
    layout.index_of(letter).map_or(-1, |i| i as i64)
}

/// `FactorOf(axis)`: the product of the block sizes of the axis's
/// subordinate, -1 when it has none.
pub(super) fn factor_of(layout: &Layout, letter: char) -> i64 {
    layout.factor_of(letter.to_ascii_uppercase()).unwrap_or(-1)
}

/// Whether a conversion between the two exists (`BijectiveLayout(...)
/// .defined()`).
pub(super) fn convertible(src: &Layout, dst: &Layout) -> bool {
    BijectiveLayout::new(src, dst).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(name: &str) -> Layout {
        named(name).unwrap()
    }

    #[test]
    fn string_and_axes_constructors_differ_on_empty() {
        assert!(!named("").unwrap().is_defined());
        let scalar = from_axes(&[]);
        assert!(scalar.is_defined());
        assert_eq!(scalar.name, "");
        assert!(!same(&scalar, &Layout::undef()));
    }

    #[test]
    fn sub_layouts() {
        let nchw16c = layout("NCHW16c");
        assert_eq!(sub_layout(&nchw16c, 1, 3).name, "CHW");
        assert_eq!(sub_layout(&nchw16c, 4, 1).name, "16c");
        assert_eq!(sub_layout(&nchw16c, 3, 9).name, "W16c");
        assert_eq!(sub_layout(&nchw16c, 5, 0).name, "");
        assert!(!sub_layout(&nchw16c, 6, 0).is_defined());
        assert_eq!(ndim_primal(&nchw16c), 4);
    }

    #[test]
    fn expand_primal_prefixes_missing_axes() {
        let chw = layout("CHW");
        assert_eq!(expand_primal(&chw, &layout("NHWC")).unwrap().name, "NCHW");
        assert_eq!(
            expand_primal(&layout("C"), &layout("NCHW16c"))
                .unwrap()
                .name,
            "NHWC"
        );
    }

    #[test]
    fn axis_queries() {
        let l = layout("NCHW4c");
        assert_eq!(axis_at(&l, -1).unwrap().name, 'c');
        assert!(axis_at(&l, 5).is_err());
        assert_eq!(index_of(&l, 'c'), 4);
        assert_eq!(index_of(&l, 'D'), -1);
        assert_eq!(factor_of(&l, 'C'), 4);
        assert_eq!(factor_of(&l, 'c'), 4);
        assert_eq!(factor_of(&l, 'H'), -1);
    }
}
