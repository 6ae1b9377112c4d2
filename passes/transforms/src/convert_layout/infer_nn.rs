//! Layout inference of the neural-network operators: convolutions (which
//! impose their own layouts), pooling, upsampling and resizing (which follow
//! their input where they can), `nn.pad` (which moves its pad widths along),
//! the normalisations (which move their `axis`), dense layers and the
//! region-of-interest operators.

use super::infer::{
    attrs_of, axis_letter, channel_layout, int_field, normalise_axis, nth, replaced, shape,
    str_field, InferArgs, InferOutput, Inferred,
};
use super::layout::{index_of, named, same, Layout};
use relay_ir::{AttrValue, Attrs};

/// The layout an attribute names (`Layout(params->data_layout)`).
fn layout_field(attrs: &Attrs, name: &str) -> Result<Layout, String> {
    named(&str_field(attrs, name)?)
}

/// The output layout of a convolution: `out_layout`, or the data layout
/// when that is empty.
fn conv_out_layout(attrs: &Attrs) -> Result<Layout, String> {
    let out = str_field(attrs, "out_layout")?;
    if out.is_empty() {
        layout_field(attrs, "data_layout")
    } else {
        named(&out)
    }
}

/// `ConvInferCorrectLayout`: convolutions keep the layouts their attributes
/// name, whatever the inputs bring.
pub(super) fn conv(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    Ok(InferOutput::new(
        vec![
            layout_field(attrs, "data_layout")?,
            layout_field(attrs, "kernel_layout")?,
        ],
        vec![conv_out_layout(attrs)?],
        Some(attrs.clone()),
    ))
}

/// `DeformableConvInferCorrectLayout`: the offsets share the data layout.
pub(super) fn deformable_conv(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let data = layout_field(attrs, "data_layout")?;
    Ok(InferOutput::new(
        vec![data.clone(), data, layout_field(attrs, "kernel_layout")?],
        vec![conv_out_layout(attrs)?],
        Some(attrs.clone()),
    ))
}

/// `BinaryConv2DInferCorrectLayout` and `Dilation2DInferCorrectLayout`:
/// the data and kernel layouts, the output in the data layout.
pub(super) fn data_kernel(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let data = layout_field(attrs, "data_layout")?;
    Ok(InferOutput::new(
        vec![data.clone(), layout_field(attrs, "kernel_layout")?],
        vec![data],
        Some(attrs.clone()),
    ))
}

/// `CorrelationInferCorrectLayout`: both inputs and the output in `layout`.
pub(super) fn correlation(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let layout = layout_field(attrs, "layout")?;
    Ok(InferOutput::new(
        vec![layout.clone(), layout.clone()],
        vec![layout],
        Some(attrs.clone()),
    ))
}

/// `PoolInferCorrectLayout`: a pooling with an explicit `out_layout` keeps
/// it; otherwise it follows the layout its input arrives in.
pub(super) fn pool(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let mut layout = str_field(attrs, "layout")?;
    let out_layout = str_field(attrs, "out_layout")?;
    let mut new_attrs = attrs.clone();
    if !out_layout.is_empty() {
        if layout != out_layout {
            return Err(format!(
                "Pooling input/output layouts mismatch: {layout} vs. {out_layout}"
            ));
        }
    } else if let Some(new_in) = args.new_in {
        layout = nth(new_in, 0)?.name.clone();
        new_attrs = replaced(attrs, &[("layout", AttrValue::Str(layout.clone()))]);
    }
    let layout = named(&layout)?;
    Ok(InferOutput::new(
        vec![layout.clone()],
        vec![layout],
        Some(new_attrs),
    ))
}

/// `UpsamplingInferCorrectLayout`: follows the input layout when its `H`,
/// `W` (and `D`) sit where the attribute's layout has them, unsplit.
pub(super) fn upsampling(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let mut layout = str_field(attrs, "layout")?;
    let mut new_attrs = attrs.clone();
    if let Some(new_in) = args.new_in {
        if new_in.len() != 1 {
            return Err("upsampling layout: expected one input layout".into());
        }
        let raw = named(&layout)?;
        let input = &new_in[0];
        let d = index_of(input, 'D');
        let follows = index_of(input, 'W') == index_of(&raw, 'W')
            && index_of(input, 'H') == index_of(&raw, 'H')
            && !input.contains('w')
            && !input.contains('h')
            && (d == -1 || (d == index_of(&raw, 'D') && !input.contains('d')));
        if follows {
            layout = input.name.clone();
            new_attrs = replaced(attrs, &[("layout", AttrValue::Str(layout.clone()))]);
        }
    }
    let layout = named(&layout)?;
    Ok(InferOutput::new(
        vec![layout.clone()],
        vec![layout],
        Some(new_attrs),
    ))
}

/// `ResizeInferCorrectLayout`: follows a changed input layout of the same
/// rank when the attribute's layout was the input's old one.
pub(super) fn resize(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let mut layout = str_field(attrs, "layout")?;
    let mut new_attrs = attrs.clone();
    if let Some(new_in) = args.new_in {
        if new_in.len() != 1 {
            return Err("resize layout: expected one input layout".into());
        }
        let raw = named(&layout)?;
        let new_layout = &new_in[0];
        let old_layout = nth(args.old_in, 0)?;
        if !same(new_layout, old_layout)
            && same(&raw, old_layout)
            && new_layout.ndim() == old_layout.ndim()
        {
            layout = new_layout.name.clone();
            new_attrs = replaced(attrs, &[("layout", AttrValue::Str(layout.clone()))]);
        }
    }
    let layout = named(&layout)?;
    Ok(InferOutput::new(
        vec![layout.clone()],
        vec![layout],
        Some(new_attrs),
    ))
}

/// `PadInferCorrectLayout`: the pad widths follow the new layout unless a
/// padded axis was split; the pad value is a scalar (layout `1`).
pub(super) fn pad(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let pad_width = match super::infer::field(attrs, "pad_width")? {
        AttrValue::Array(rows) => rows.clone(),
        other => return Err(format!("nn.pad: pad_width is not an array: {other:?}")),
    };
    let mut new_attrs = attrs.clone();
    let mut ret = Layout::undef();
    let mut modified = args.new_in.is_some();
    if let Some(new_in) = args.new_in {
        if new_in.len() != 2 || args.old_in.len() != 2 {
            return Err("nn.pad layout: expected two input layouts".into());
        }
        // The widths of each axis of the old layout, first one winning.
        let mut widths: Vec<(char, AttrValue)> = Vec::new();
        for (index, axis) in args.old_in[0].axes.iter().enumerate() {
            let row = pad_width
                .get(index)
                .ok_or_else(|| format!("nn.pad: no pad width for axis {index}"))?;
            if !widths.iter().any(|(name, _)| *name == axis.name) {
                widths.push((axis.name, row.clone()));
            }
        }
        let width_of = |name: char| {
            widths
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, row)| row.clone())
        };
        let mut new_widths = Vec::new();
        for axis in &new_in[0].axes {
            match width_of(axis.name) {
                Some(row) if axis.is_primal() => new_widths.push(row),
                _ => {
                    let dual = axis.primal();
                    let row = width_of(dual)
                        .ok_or_else(|| format!("Missing axis {dual} in {}", args.old_in[0].name))?;
                    // A split axis can only take the new layout unpadded.
                    let all_zero = row
                        .as_array()
                        .is_some_and(|items| items.iter().all(|w| w.as_int() == Some(0)));
                    if !all_zero {
                        modified = false;
                    }
                    new_widths.push(row);
                }
            }
        }
        if modified {
            ret = new_in[0].clone();
            new_attrs = replaced(attrs, &[("pad_width", AttrValue::Array(new_widths))]);
        }
    }
    if !modified {
        if args.old_in.len() != 2 {
            return Err("nn.pad layout: expected two input layouts".into());
        }
        ret = args.old_in[0].clone();
    }
    Ok(InferOutput::new(
        vec![ret.clone(), named("1")?],
        vec![ret],
        Some(new_attrs),
    ))
}

/// `DenseInferCorrectLayout`: always `NC`.
pub(super) fn dense(args: &InferArgs) -> Inferred {
    let nc = named("NC")?;
    Ok(InferOutput::new(
        vec![nc.clone(), nc.clone()],
        vec![nc],
        args.attrs.cloned(),
    ))
}

/// `DensePackInferCorrectLayout`: `NC` data, the packed weight layout.
pub(super) fn dense_pack(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let nc = named("NC")?;
    Ok(InferOutput::new(
        vec![nc.clone(), layout_field(attrs, "weight_layout")?],
        vec![nc],
        Some(attrs.clone()),
    ))
}

/// `PReluInferCorrectLayout`: the data stays in its old layout, `alpha` is
/// per channel.
pub(super) fn prelu(args: &InferArgs) -> Inferred {
    if args.old_in.len() != 2 || args.types.len() != 2 {
        return Err("nn.prelu layout: expected two inputs".into());
    }
    if args.new_in.is_some_and(|n| n.len() != 2) {
        return Err("nn.prelu layout: expected two new input layouts".into());
    }
    let data = args.old_in[0].clone();
    Ok(InferOutput::new(
        vec![data.clone(), channel_layout()?],
        vec![data],
        args.attrs.cloned(),
    ))
}

/// `L2NormalizeInferCorrectLayout`: the normalised axes move with the
/// layout.
pub(super) fn l2_normalize(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let ndim = shape(args, 0)?.len();
    let axes = super::infer::int_elems(attrs, "axis")?.unwrap_or_default();
    let mut new_attrs = attrs.clone();
    let ret = match args.new_in {
        Some(new_in) => {
            let mut new_axes = Vec::new();
            for axis in &axes {
                let letter = axis_letter(nth(args.old_in, 0)?, normalise_axis(axis.value, ndim))?;
                new_axes.push(AttrValue::int_imm(
                    index_of(nth(new_in, 0)?, letter),
                    relay_ir::dtype::DataType::INT32,
                ));
            }
            new_attrs = replaced(attrs, &[("axis", AttrValue::Array(new_axes))]);
            nth(new_in, 0)?.clone()
        }
        None => nth(args.old_in, 0)?.clone(),
    };
    Ok(InferOutput::new(
        vec![ret.clone()],
        vec![ret],
        Some(new_attrs),
    ))
}

/// The data layout and attributes of a normalisation whose `axis` follows
/// the layout (`BatchNormInferCorrectLayout`,
/// `NormalizationInferCorrectLayout`).
fn moved_axis(args: &InferArgs) -> Result<(Layout, Attrs), String> {
    let attrs = attrs_of(args)?;
    let ndim = shape(args, 0)?.len();
    let axis = normalise_axis(int_field(attrs, "axis")?, ndim);
    match args.new_in {
        Some(new_in) => {
            let letter = axis_letter(nth(args.old_in, 0)?, axis)?;
            let new_layout = nth(new_in, 0)?.clone();
            let new_index = index_of(&new_layout, letter);
            Ok((
                new_layout,
                replaced(attrs, &[("axis", AttrValue::Int(new_index))]),
            ))
        }
        None => Ok((nth(args.old_in, 0)?.clone(), attrs.clone())),
    }
}

/// `BatchNormInferCorrectLayout`: five inputs, three outputs; all but the
/// data and the normalised result are per channel.
pub(super) fn batch_norm(args: &InferArgs) -> Inferred {
    let (ret, attrs) = moved_axis(args)?;
    let c = channel_layout()?;
    Ok(InferOutput::new(
        vec![ret.clone(), c.clone(), c.clone(), c.clone(), c.clone()],
        vec![ret, c.clone(), c],
        Some(attrs),
    ))
}

/// `NormalizationInferCorrectLayout` (layer and instance norm): the data,
/// then `gamma` and `beta` per channel.
pub(super) fn normalization(args: &InferArgs) -> Inferred {
    let (ret, attrs) = moved_axis(args)?;
    let c = channel_layout()?;
    Ok(InferOutput::new(
        vec![ret.clone(), c.clone(), c],
        vec![ret],
        Some(attrs),
    ))
}

/// `ROIAlignInferCorrectLayout` and `ROIPoolInferCorrectLayout`: the data in
/// the attribute's layout, the regions as `N5`.
pub(super) fn roi(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let layout = layout_field(attrs, "layout")?;
    Ok(InferOutput::new(
        vec![layout.clone(), named("N5")?],
        vec![layout],
        Some(attrs.clone()),
    ))
}
