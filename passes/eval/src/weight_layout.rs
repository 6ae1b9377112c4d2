//! Pure re-layouts of a tensor that tuning inserts: the ConvGemm weight
//! tiling (`nn.contrib_conv2d_gemm_weight_transform`, TOPI's
//! `nn.conv2d_gemm_weight_transform`) and the auto-scheduler's layout
//! rewrite (`auto_scheduler_layout_transform`, `topi::
//! auto_scheduler_layout_transform`), and meta-schedule's
//! (`meta_schedule_layout_transform`, `topi::meta_schedule_layout_transform`:
//! each element moves to the index its `tir.IndexMap` sends its index to,
//! [`relay_ir::index_map`]). All only move elements (and pad with zeros),
//! so they are exact for every data type.

use super::tensor::{dims, for_each_index, numel, strides};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::index_map::IndexMap;
use relay_ir::metadata::TensorData;
use relay_ir::AttrValue;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.contrib_conv2d_gemm_weight_transform" => gemm_weight_transform,
        "auto_scheduler_layout_transform" => auto_scheduler_layout_transform,
        "meta_schedule_layout_transform" => meta_schedule_layout_transform,
        _ => return None,
    })
}

/// A tensor of `shape` whose element `i` is element `src[i]` of `input`,
/// or zero where `src[i]` is `None` (padding).
fn gather_or_zero(
    input: &TensorData,
    shape: Vec<i64>,
    src: &[Option<usize>],
) -> EvalResult<TensorData> {
    let b = input.dtype.bytes();
    if b == 0 {
        return unsupported(format!("data type {}", input.dtype));
    }
    let mut data = vec![0u8; src.len() * b];
    for (i, s) in src.iter().enumerate() {
        if let Some(s) = *s {
            match input.data.get(s * b..s * b + b) {
                Some(bytes) => data[i * b..i * b + b].copy_from_slice(bytes),
                None => return unsupported("internal: element index out of range"),
            }
        }
    }
    TensorData::new(input.dtype, shape, data).map_err(|e| super::EvalError::Unsupported(e.message))
}

/// `out[map(i)] = data[i]` over the shape TVM's `MapShape` gives. TOPI
/// computes each output element through the map's inverse, which TVM
/// builds only for a bijection onto that shape: a map that sends two
/// indices to one element, or leaves an element unreached, is not folded
/// (TVM's `Inverse` fails on it).
fn meta_schedule_layout_transform(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let input = arg_tensor(args, 0, call)?;
    let map = match call.attr("index_map") {
        Some(AttrValue::Meta(meta)) => IndexMap::read(meta),
        _ => {
            return unsupported("meta_schedule_layout_transform: index_map must be a tir.IndexMap")
        }
    }
    .map_err(|e| super::EvalError::Unsupported(format!("meta_schedule_layout_transform: {e}")))?;
    let shape = map.map_shape(&input.shape).map_err(|e| {
        super::EvalError::Unsupported(format!("meta_schedule_layout_transform: {e}"))
    })?;
    let total = call.check_size(&shape)?;
    let out_strides = strides(&dims(&shape));
    let mut src: Vec<Option<usize>> = vec![None; total];
    let mut failure: Option<String> = None;
    for_each_index(&dims(&input.shape), |flat, index| {
        if failure.is_some() {
            return;
        }
        let index: Vec<i64> = index.iter().map(|&i| i as i64).collect();
        let target = match map.apply(&index) {
            Ok(target) => target,
            Err(e) => {
                failure = Some(e.0);
                return;
            }
        };
        let mut at = 0usize;
        for ((&t, &extent), &stride) in target.iter().zip(&shape).zip(&out_strides) {
            if t < 0 || t >= extent {
                failure = Some(format!("the index map sends {index:?} outside {shape:?}"));
                return;
            }
            at += t as usize * stride;
        }
        if src[at].replace(flat).is_some() {
            failure = Some("the index map is not one-to-one".into());
        }
    });
    if let Some(why) = failure {
        return unsupported(format!("meta_schedule_layout_transform: {why}"));
    }
    if src.iter().any(Option::is_none) {
        return unsupported(
            "meta_schedule_layout_transform: the index map does not reach every element of its \
             result (TVM cannot invert it)",
        );
    }
    Ok(Value::tensor(gather_or_zero(input, shape, &src)?))
}

/// The HWIO kernel flattened to `(K, N)` = `(KH·KW·IC, OC)`, zero-padded
/// to `N` a multiple of `tile_rows` and `K` a multiple of `4·tile_cols`,
/// then cut into `tile_rows × tile_cols` blocks:
/// `out[x, y, z, w] = flat[w + tile_cols·y, z + tile_rows·x]`.
///
/// TOPI pads `K` to a multiple of `4·tile_cols` (its tensorised schedule
/// takes four tiles at once) where the type relation pads it to a multiple
/// of `tile_cols`; when the two disagree TVM's folded constant would not
/// have the call's type, so the call is not folded.
fn gemm_weight_transform(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let kernel = arg_tensor(args, 0, call)?;
    let [kh, kw, ic, oc] = match kernel.shape.as_slice() {
        &[a, b, c, d] => [a, b, c, d],
        _ => return unsupported("nn.contrib_conv2d_gemm_weight_transform: a 4-D HWIO kernel"),
    };
    let tile_rows = call.req_int("tile_rows")?;
    let tile_cols = call.req_int("tile_cols")?;
    if tile_rows < 1 || tile_cols < 1 {
        return unsupported("nn.contrib_conv2d_gemm_weight_transform: tiles must be positive");
    }
    let padded = |n: i64, multiple: i64| n + (multiple - n % multiple) % multiple;
    let (k, n) = (kh * kw * ic, oc);
    let n_padded = padded(n, tile_rows);
    let k_padded = padded(k, 4 * tile_cols);
    if k_padded != padded(k, tile_cols) {
        return unsupported(
            "nn.contrib_conv2d_gemm_weight_transform: TOPI pads K to a multiple of 4·tile_cols, \
             which differs from the call's type here",
        );
    }
    let shape = vec![
        n_padded / tile_rows,
        k_padded / tile_cols,
        tile_rows,
        tile_cols,
    ];
    call.check_size(&shape)?;
    let mut src = Vec::with_capacity(numel(&dims(&shape)));
    for_each_index(&dims(&shape), |_, i| {
        let (x, y, z, w) = (i[0] as i64, i[1] as i64, i[2] as i64, i[3] as i64);
        let (row, col) = (w + tile_cols * y, z + tile_rows * x);
        src.push((row < k && col < n).then(|| {
            // `kernel[(row // IC) // KW, (row // IC) % KW, row % IC, col]`.
            let (h, rest) = ((row / ic) / kw, (row / ic) % kw);
            (((h * kw + rest) * ic + row % ic) * oc + col) as usize
        }));
    });
    Ok(Value::tensor(gather_or_zero(kernel, shape, &src)?))
}

/// `parse_auto_scheduler_layout`: a layout such as `"4n16k"` is a list of
/// (extent, axis name) pairs, each extent written before its name; a
/// trailing extent without a name is dropped, as TVM's parser drops it.
fn parse_layout(layout: &str) -> EvalResult<(Vec<i64>, Vec<String>)> {
    let (mut shape, mut axes) = (Vec::new(), Vec::new());
    let (mut factor, mut axis) = (0i64, String::new());
    for c in layout.chars() {
        if ('A'..='z').contains(&c) {
            axis.push(c);
            if factor != 0 {
                shape.push(factor);
                factor = 0;
            }
        } else if let Some(d) = c.to_digit(10) {
            factor = factor
                .checked_mul(10)
                .and_then(|f| f.checked_add(i64::from(d)))
                .ok_or_else(|| super::EvalError::Unsupported(format!("layout {layout}")))?;
            if !axis.is_empty() {
                axes.push(std::mem::take(&mut axis));
            }
        } else {
            return unsupported(format!(
                "auto_scheduler_layout_transform: invalid layout {layout}"
            ));
        }
    }
    if !axis.is_empty() {
        axes.push(axis);
    }
    Ok((shape, axes))
}

/// Element `dst[i…]` is `src[j…]` where each source axis' index combines,
/// in order, the destination indices of the axes with its name, each step
/// multiplying by that destination axis' extent (a source axis no
/// destination axis names reads index 0).
fn auto_scheduler_layout_transform(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    let src_layout = call.str("src_layout").unwrap_or("");
    let dst_layout = call.str("dst_layout").unwrap_or("");
    let (_, src_axes) = parse_layout(src_layout)?;
    let (dst_shape, dst_axes) = parse_layout(dst_layout)?;
    if dst_shape.len() != dst_axes.len() {
        return unsupported("auto_scheduler_layout_transform: an axis of dst_layout has no extent");
    }
    if src_axes.len() != data.ndim() {
        return unsupported(
            "auto_scheduler_layout_transform: src_layout does not match the data's rank",
        );
    }
    call.check_size(&dst_shape)?;
    let in_dims = dims(&data.shape);
    let in_strides = strides(&in_dims);
    let mut src = Vec::with_capacity(numel(&dims(&dst_shape)));
    let mut outside = false;
    for_each_index(&dims(&dst_shape), |_, i| {
        let mut flat = 0usize;
        for (axis, (name, &stride)) in src_axes.iter().zip(&in_strides).enumerate() {
            let mut index = 0i64;
            for (d, dst_name) in dst_axes.iter().enumerate() {
                if dst_name == name {
                    index = index * dst_shape[d] + i[d] as i64;
                }
            }
            if index < 0 || index as usize >= in_dims[axis] {
                outside = true;
            }
            flat += index as usize * stride;
        }
        src.push((!outside).then_some(flat));
    });
    if outside {
        // TVM's compute would read outside the source buffer.
        return unsupported("auto_scheduler_layout_transform: the layouts read outside the data");
    }
    Ok(Value::tensor(gather_or_zero(data, dst_shape, &src)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::dtype::DataType;

    /// A metadata section holding one `tir.IndexMap` over `(i, j)` whose
    /// final indices are the nodes listed in `finals` (node 5 is `i`, 7 is
    /// `j`, 10 the immediate 4), as TVM writes one.
    fn index_map(finals: &str, extra: &str) -> AttrValue {
        let text = format!(
            r#"{{"root": 1, "nodes": [{{"type_key": ""}},
            {{"type_key": "Map", "keys": ["tir.IndexMap"], "data": [2]}},
            {{"type_key": "Array", "data": [3]}},
            {{"type_key": "tir.IndexMap", "attrs": {{"final_indices": "9", "initial_indices": "4", "inverse_index_map": "0"}}}},
            {{"type_key": "Array", "data": [5, 7]}},
            {{"type_key": "tir.Var", "attrs": {{"dtype": "int32", "name": "6", "span": "0", "type_annotation": "0"}}}},
            {{"type_key": "runtime.String", "repr_str": "i"}},
            {{"type_key": "tir.Var", "attrs": {{"dtype": "int32", "name": "8", "span": "0", "type_annotation": "0"}}}},
            {{"type_key": "runtime.String", "repr_str": "j"}},
            {{"type_key": "Array", "data": [{finals}]}},
            {{"type_key": "IntImm", "attrs": {{"dtype": "int32", "span": "0", "value": "4"}}}}{extra}
            ], "b64ndarrays": [], "attrs": {{"tvm_version": "0.13.0"}}}}"#
        );
        let graph = relay_ir::metadata::graph::ObjectGraph::parse(&text).unwrap();
        AttrValue::Meta(relay_ir::MetaObject {
            graph: std::sync::Arc::new(graph),
            index: 3,
        })
    }

    fn run_map(map: AttrValue, shape: &[i64]) -> EvalResult {
        let n: i64 = shape.iter().product();
        let values: Vec<i64> = (0..n).collect();
        let data = TensorData::from_i64s(DataType::INT32, shape.to_vec(), &values).unwrap();
        let attrs = crate::test_util::attrs(&[("index_map", map)]);
        meta_schedule_layout_transform(
            &[Value::tensor(data)],
            &CallInfo::new("meta_schedule_layout_transform", Some(&attrs)),
        )
    }

    /// After TVM's tests/python/unittest/test_meta_schedule_relay_integration.py:
    /// (i, j) -> (j // 4, i, j % 4) tiles the columns; (i, j) -> (j, i)
    /// transposes; element values are their own input index.
    #[test]
    fn meta_schedule_layout_transform_moves_each_element_to_its_mapped_index() {
        let tiled = index_map(
            "11, 5, 12",
            r#", {"type_key": "tir.FloorDiv", "attrs": {"a": "7", "b": "10", "dtype": "int32", "span": "0"}},
            {"type_key": "tir.FloorMod", "attrs": {"a": "7", "b": "10", "dtype": "int32", "span": "0"}}"#,
        );
        let out = run_map(tiled.clone(), &[2, 8]).unwrap();
        let t = out.as_tensor().unwrap();
        assert_eq!(t.shape, vec![2, 2, 4]);
        // out[a][i][b] = data[i][4a + b] = 8i + 4a + b.
        let want: Vec<i64> = (0..2)
            .flat_map(|a| (0..2).flat_map(move |i| (0..4).map(move |b| 8 * i + 4 * a + b)))
            .collect();
        assert_eq!(t.to_i64_vec().unwrap(), want);
        // 10 columns leave the last tile half empty: TVM cannot invert that.
        assert!(run_map(tiled, &[2, 10]).is_err());
        let transpose = index_map("7, 5", "");
        let out = run_map(transpose, &[2, 3]).unwrap();
        let t = out.as_tensor().unwrap();
        assert_eq!(t.shape, vec![3, 2]);
        assert_eq!(t.to_i64_vec().unwrap(), vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn auto_scheduler_layouts_parse_as_tvm_reads_them() {
        let (shape, axes) = parse_layout("4n16k").unwrap();
        assert_eq!(shape, vec![4, 16]);
        assert_eq!(axes, vec!["n", "k"]);
        // A trailing extent has no axis and is dropped.
        let (shape, axes) = parse_layout("2a3").unwrap();
        assert_eq!((shape, axes), (vec![2], vec!["a".to_string()]));
        assert!(parse_layout("2a-3b").is_err());
    }

    #[test]
    fn gemm_weight_transform_refuses_when_topi_and_the_type_disagree() {
        // K = 1·1·8 = 8: the relation pads to 16 (tile_cols 16), TOPI to 64.
        let w = TensorData::from_i64s(DataType::INT32, vec![1, 1, 8, 4], &[1; 32]).unwrap();
        let attrs = relay_ir::Attrs::new(
            "relay.attrs.ConvGemmWeightTransformAttrs",
            vec![
                ("tile_rows".into(), relay_ir::AttrValue::Int(4)),
                ("tile_cols".into(), relay_ir::AttrValue::Int(16)),
            ],
        );
        let call = CallInfo::new("nn.contrib_conv2d_gemm_weight_transform", Some(&attrs));
        assert!(gemm_weight_transform(&[Value::tensor(w)], &call).is_err());
    }
}
