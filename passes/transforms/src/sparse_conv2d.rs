//! `Conv2dToSparse(weight_name, weight_shape, layout, kernel_size)` and
//! `Conv2dToSparse2(layout, kernel_size, blocksize, sparsity_threshold)`:
//! TVM v0.13's `convert_sparse_conv2d.cc`, which rewrites convolutions into
//! `nn.sparse_conv2d` over a weight in BSR form (block compressed rows).
//!
//! `Conv2dToSparse` (a model whose weights were sparsified beforehand, as
//! `relay.data_dep_optimization.bsr_conv2d` does) works like
//! [`DenseToSparse`](crate::dense_to_sparse):
//! - an `nn.conv2d` whose weight, as written, is a listed variable becomes
//!   `nn.sparse_conv2d(data, %w.data, %w.indices, %w.indptr)` over three new
//!   parameters: with five sizes the data is `Tensor[(s0, s1, s2), float32]`,
//!   with four `Tensor[(s0, s1), float32]`, then `Tensor[(sN-1), int32]` for
//!   the indices and `Tensor[(sN), int32]` for the index pointers (float32
//!   whatever the weight's dtype, as TVM writes it);
//! - other lengths leave the three types undefined (TVM builds the variables
//!   with null types), so the new parameters are printed without type;
//! - the new call has `kernel_size=[k, k]`; its `layout` is the parameter's
//!   for the first rewritten convolution only: TVM moves the layout string out
//!   of its rewriter when it builds that call, so every later one gets a null
//!   layout (`None`), kept here because the printed text shows it;
//! - the parameters are rebuilt as TVM's `FreeVars` orders them (free
//!   variables in order of use, the new ones last).
//!
//! `Conv2dToSparse2` (a model with bound, constant weights) converts the
//! weight itself: any call whose attrs are `Conv2DAttrs` (`nn.conv2d`,
//! `nn.contrib_conv2d_NCHWc`, `qnn.conv2d`, …) with `data_layout` equal to
//! `layout`, a first stride of 1, a first kernel size equal to `kernel_size`
//! and a float32 constant weight is split into `blocksize` blocks (the
//! weight read as a `CO × (H·W·I)` matrix: OIHW for NCHW, HWIO transposed for
//! NHWC); blocks holding a nonzero value (NaN counts) are kept. If the share
//! of zero values left out is at least `sparsity_threshold`, the call becomes
//! `nn.sparse_conv2d` over three constants (data `(nnz, bh, bw)` float32,
//! indices `(nnz)` int32, index pointers `(CO/bh + 1)` int32); rows past the
//! last whole block row are dropped, as TVM drops them. Where TVM's checks
//! fail (a weight that is not float32 or not 4-D, an unset kernel size or
//! stride, a zero block size) the pass reports TVM's condition as an error.
//!
//! Registered like TVM: function passes requiring `DeadCodeElimination`, at
//! opt_level 4 (`Conv2dToSparse`) and 5 (`Conv2dToSparse2`). A pass context's
//! opt_level is at most 4 here, so inside a pipeline `Conv2dToSparse2` runs
//! only when required (`--required-pass`); alone it runs directly. TVM's Python
//! constructors have no defaults; the defaults here are `nn.sparse_conv2d`'s
//! own (`layout="NHWC"`, a 1×1 kernel), a 1×1 block and a threshold of 0.

use crate::bsr_weights::{listed_bsr_sizes, replace_listed_weights};
use relay_ir::build::{int_array, op_call_with};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::rewrite::rewrite_function;
use relay_ir::{AttrValue, Expr, Function, IRModule};
use relay_pass_manager::pipeline::PipelineValue;
use relay_pass_manager::registry::{ParamSpec, ParamType, PassSpec};
use relay_pass_manager::PassContext;
use std::collections::HashMap;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("Conv2dToSparse", 4)
        .required(&["DeadCodeElimination"])
        .param(ParamSpec::list(
            "weight_name",
            Vec::new(),
            "the names of the conv2d weights to replace by BSR parameters",
        ))
        .param(ParamSpec::list(
            "weight_shape",
            Vec::new(),
            "for each weight, its BSR sizes: data (3 or 2), indices, indptr",
        ))
        .param(ParamSpec::string(
            "layout",
            "NHWC",
            "the data layout written into nn.sparse_conv2d",
        ))
        .param(ParamSpec::int(
            "kernel_size",
            1,
            "the kernel size k written into nn.sparse_conv2d as [k, k]",
        ))
        .doc(
            "Replace nn.conv2d of the listed weights by nn.sparse_conv2d over new BSR parameters \
             (name.data, name.indices, name.indptr); only the first rewritten call gets `layout` \
             (TVM moves it out after one use)",
        )
        .build(|args| {
            let weights = bsr_shapes(args.get("weight_name"), args.get("weight_shape"))?;
            let layout = args.string("layout");
            let kernel_size = args.int("kernel_size");
            Ok(
                move |function: Function, _module: &IRModule, _ctx: &PassContext| {
                    Ok(conv2d_to_sparse(&function, &weights, &layout, kernel_size))
                },
            )
        })
}

pub(crate) fn frozen_spec() -> PassSpec {
    PassSpec::function("Conv2dToSparse2", 5)
        .required(&["DeadCodeElimination"])
        .param(ParamSpec::string(
            "layout",
            "NHWC",
            "the data layout a convolution must have (NCHW or NHWC)",
        ))
        .param(ParamSpec::int(
            "kernel_size",
            1,
            "the kernel size a convolution must have (first dimension)",
        ))
        .param(ParamSpec::list(
            "blocksize",
            vec![PipelineValue::Int(1), PipelineValue::Int(1)],
            "the BSR block, [rows, columns]",
        ))
        .param(ParamSpec::new(
            "sparsity_threshold",
            ParamType::Float,
            PipelineValue::Float(0.0),
            "the least share of zeros left out for a weight to be converted",
        ))
        .doc(
            "Convert the constant float32 weight of each matching conv2d (layout, stride 1, kernel \
             size) into BSR constants and call nn.sparse_conv2d, when enough of it is zero (opt_level \
             5: in a pipeline it runs only with --required-pass)",
        )
        .build(|args| {
            let layout = args.string("layout");
            let kernel_size = args.int("kernel_size");
            let (block_rows, block_columns) = block_size(args.get("blocksize"))?;
            let threshold = args.float("sparsity_threshold");
            let options = FrozenOptions {
                layout,
                kernel_size,
                block_rows,
                block_columns,
                threshold,
            };
            Ok(
                move |function: Function, _module: &IRModule, _ctx: &PassContext| {
                    conv2d_to_sparse_frozen(&function, &options)
                },
            )
        })
}

/// Each weight name with its BSR sizes (TVM requires the two lists to pair up).
fn bsr_shapes(
    names: Option<&PipelineValue>,
    shapes: Option<&PipelineValue>,
) -> Result<HashMap<String, Vec<i64>>, String> {
    Ok(listed_bsr_sizes(names, shapes)?.into_iter().collect())
}

fn sparse_conv2d_fields(layout: AttrValue, kernel_size: i64) -> [(&'static str, AttrValue); 2] {
    [
        ("layout", layout),
        ("kernel_size", int_array(&[kernel_size, kernel_size])),
    ]
}

/// `Conv2dToSparse`: rewrites every `nn.conv2d` of a listed weight variable
/// and rebuilds the parameters.
pub fn conv2d_to_sparse(
    function: &Function,
    weights: &HashMap<String, Vec<i64>>,
    layout: &str,
    kernel_size: i64,
) -> Function {
    // TVM's rewriter moves its layout into the first call it builds.
    let mut layout = Some(layout.to_string());
    replace_listed_weights(
        function,
        "nn.conv2d",
        |name| weights.get(name).map(Vec::as_slice),
        |data, bsr| {
            let mut args = vec![data];
            args.extend(bsr);
            let layout = layout.take().map_or(AttrValue::Null, AttrValue::Str);
            op_call_with(
                "nn.sparse_conv2d",
                args,
                &sparse_conv2d_fields(layout, kernel_size),
            )
        },
    )
}

/// The parameters of `Conv2dToSparse2`.
#[derive(Debug, Clone)]
pub struct FrozenOptions {
    pub layout: String,
    pub kernel_size: i64,
    pub block_rows: usize,
    pub block_columns: usize,
    pub threshold: f64,
}

fn block_size(value: Option<&PipelineValue>) -> Result<(usize, usize), String> {
    let sizes: Vec<i64> = match value {
        Some(PipelineValue::List(items)) => items
            .iter()
            .map(|item| match item {
                PipelineValue::Int(v) => Ok(*v),
                other => Err(format!(
                    "blocksize must hold integers, found {}",
                    other.type_name()
                )),
            })
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    match sizes[..] {
        [rows, columns] if rows > 0 && columns > 0 => Ok((rows as usize, columns as usize)),
        [_, _] => Err(format!(
            "blocksize must be two positive sizes, found {sizes:?} (TVM divides by them)"
        )),
        _ => Err(format!(
            "blocksize must be [rows, columns], found {} sizes",
            sizes.len()
        )),
    }
}

/// `Conv2dToSparse2`: converts each matching convolution's constant weight.
pub fn conv2d_to_sparse_frozen(
    function: &Function,
    options: &FrozenOptions,
) -> Result<Function, Diagnostic> {
    let mut error: Option<Diagnostic> = None;
    let rewritten = rewrite_function(function, |pre, post| {
        if error.is_some() {
            return post;
        }
        match convert_frozen(pre, &post, options) {
            Ok(Some(new)) => new,
            Ok(None) => post,
            Err(diagnostic) => {
                error = Some(match pre.span() {
                    Some(span) => diagnostic.with_span(span),
                    None => diagnostic,
                });
                post
            }
        }
    });
    match error {
        Some(diagnostic) => Err(diagnostic),
        None => Ok(rewritten),
    }
}

/// The first element of an integer array attribute, as TVM reads
/// `attrs->field[0]` (an error where the array is empty or unset).
fn first_int(call_attrs: &relay_ir::Attrs, field: &str) -> Result<i64, Diagnostic> {
    let first = match call_attrs.get(field) {
        Some(AttrValue::Array(items)) => items.first(),
        _ => None,
    };
    first.and_then(AttrValue::as_int).ok_or_else(|| {
        Diagnostic::pass_failed(format!(
            "Conv2dToSparse2 reads {field}[0] of the convolution, which has no first element"
        ))
    })
}

fn convert_frozen(
    pre: &Expr,
    post: &Expr,
    options: &FrozenOptions,
) -> Result<Option<Expr>, Diagnostic> {
    let Some(call) = pre.as_call() else {
        return Ok(None);
    };
    let Some(attrs) = call
        .attrs
        .as_ref()
        .filter(|a| a.type_key() == "relay.attrs.Conv2DAttrs")
    else {
        return Ok(None);
    };
    if attrs.get("data_layout").and_then(AttrValue::as_str) != Some(options.layout.as_str())
        || first_int(attrs, "strides")? != 1
        || first_int(attrs, "kernel_size")? != options.kernel_size
    {
        return Ok(None);
    }
    let Some(weight) = call.args.get(1).and_then(Expr::as_constant) else {
        return Ok(None);
    };
    if weight.dtype != DataType::FLOAT32 {
        return Err(Diagnostic::pass_failed(format!(
            "Conv2dToSparse2 converts float32 weights only, found {}",
            weight.dtype
        )));
    }
    let [a, b, c, d] = weight.shape[..] else {
        return Err(Diagnostic::pass_failed(format!(
            "Conv2dToSparse2 reads a 4-D weight, found shape {:?}",
            weight.shape
        )));
    };
    // The weight as a CO × CI matrix, CI = H·W·I.
    let (out_channels, in_size) = if options.layout == "NCHW" {
        (a, b * c * d)
    } else {
        (d, a * b * c)
    };
    let (out_channels, in_size) = (out_channels as usize, in_size as usize);
    let values = weight
        .to_f64_vec()
        .map_err(|e| Diagnostic::pass_failed(format!("Conv2dToSparse2: {}", e.message)))?;
    let matrix: Vec<f64> = if options.layout == "NHWC" {
        let mut transposed = vec![0.0; values.len()];
        for i in 0..out_channels {
            for j in 0..in_size {
                transposed[i * in_size + j] = values[j * out_channels + i];
            }
        }
        transposed
    } else {
        values
    };
    let bsr = Bsr::of(&matrix, out_channels, in_size, options);
    let sparsity = 1.0 - bsr.data.len() as f64 / matrix.len() as f64;
    if sparsity < options.threshold {
        return Ok(None);
    }
    let nnz = bsr.indices.len() as i64;
    let constant = |data: Result<TensorData, _>| {
        data.map(|t| Expr::constant(t, None))
            .map_err(|e: relay_ir::metadata::NdArrayError| Diagnostic::pass_failed(e.message))
    };
    let data = constant(TensorData::from_f64s(
        DataType::FLOAT32,
        vec![nnz, options.block_rows as i64, options.block_columns as i64],
        &bsr.data,
    ))?;
    let indices = constant(TensorData::from_i64s(
        DataType::INT32,
        vec![nnz],
        &bsr.indices,
    ))?;
    let indptr = constant(TensorData::from_i64s(
        DataType::INT32,
        vec![bsr.indptr.len() as i64],
        &bsr.indptr,
    ))?;
    let input = post.as_call().expect("a rewritten call stays a call").args[0].clone();
    Ok(Some(op_call_with(
        "nn.sparse_conv2d",
        vec![input, data, indices, indptr],
        &sparse_conv2d_fields(AttrValue::Str(options.layout.clone()), options.kernel_size),
    )))
}

/// A matrix in block compressed sparse row form.
struct Bsr {
    data: Vec<f64>,
    indices: Vec<i64>,
    indptr: Vec<i64>,
}

impl Bsr {
    /// The blocks of `matrix` (`rows × columns`, row-major) holding a
    /// nonzero value; whole blocks only, as TVM's integer divisions count.
    fn of(matrix: &[f64], rows: usize, columns: usize, options: &FrozenOptions) -> Bsr {
        let (bh, bw) = (options.block_rows, options.block_columns);
        let mut bsr = Bsr {
            data: Vec::new(),
            indices: Vec::new(),
            indptr: Vec::new(),
        };
        let mut block = vec![0.0; bh * bw];
        for block_row in 0..rows / bh {
            bsr.indptr.push(bsr.indices.len() as i64);
            for block_column in 0..columns / bw {
                let mut nonzero = false;
                for i in 0..bh {
                    for j in 0..bw {
                        let value = matrix[(block_row * bh + i) * columns + block_column * bw + j];
                        // NaN is nonzero, as C++'s `if (value)` reads it.
                        nonzero |= value != 0.0;
                        block[i * bw + j] = value;
                    }
                }
                if nonzero {
                    bsr.data.extend_from_slice(&block);
                    bsr.indices.push(block_column as i64);
                }
            }
        }
        bsr.indptr.push(bsr.indices.len() as i64);
        bsr
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::printer::{print_module, PrintOptions};
    use relay_lower::parse_and_lower;

    /// The rewritten module printed without types: the second call's null
    /// layout fails sparse_conv2d's relation, as in TVM.
    fn rewrite(text: &str, weights: &[(&str, &[i64])], layout: &str) -> String {
        let (mut module, diagnostics) = parse_and_lower("t.relay", text);
        assert!(!diagnostics.has_errors());
        let weights: HashMap<String, Vec<i64>> = weights
            .iter()
            .map(|(n, s)| (n.to_string(), s.to_vec()))
            .collect();
        let main = conv2d_to_sparse(module.function("main").unwrap(), &weights, layout, 1);
        module.add_function("main", main);
        let options = PrintOptions {
            show_meta_data: true,
            show_types: false,
            reparseable: true,
        };
        print_module(&module, &options)
    }

    #[test]
    fn only_the_first_rewritten_call_gets_the_layout() {
        let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4, 4, 2), float32], %w1: Tensor[(1, 1, 2, 8), float32], %w2: Tensor[(1, 1, 8, 8), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[0, 0, 0, 0], channels=8, kernel_size=[1, 1], data_layout="NHWC", kernel_layout="HWIO");
  nn.conv2d(%0, %w2, padding=[0, 0, 0, 0], channels=8, kernel_size=[1, 1], data_layout="NHWC", kernel_layout="HWIO")
}
"#;
        let printed = rewrite(
            text,
            &[("w1", &[4, 2, 1, 4, 5]), ("w2", &[4, 1, 2, 4, 5])],
            "NCHW",
        );
        insta::assert_snapshot!(printed, @r#"
        #[version = "0.0.5"]
        def @main(%x: Tensor[(1, 4, 4, 2), float32], %w1_data: Tensor[(4, 2, 1), float32], %w1_indices: Tensor[(4), int32], %w1_indptr: Tensor[(5), int32], %w2_data: Tensor[(4, 1, 2), float32], %w2_indices: Tensor[(4), int32], %w2_indptr: Tensor[(5), int32]) {
          %0 = nn.sparse_conv2d(%x, %w1_data, %w1_indices, %w1_indptr, layout="NCHW");
          nn.sparse_conv2d(%0, %w2_data, %w2_indices, %w2_indptr, layout=None)
        }
        "#);
    }

    #[test]
    fn bsr_keeps_blocks_with_a_nonzero_value_and_whole_block_rows() {
        let options = FrozenOptions {
            layout: "NCHW".into(),
            kernel_size: 1,
            block_rows: 2,
            block_columns: 2,
            threshold: 0.0,
        };
        // 5 x 4: the last row is not a whole block row and is dropped.
        #[rustfmt::skip]
        let matrix = [
            0.0, 0.0, 1.0, 0.0,
            0.0, 0.0, 0.0, f64::NAN,
            -0.0, 0.0, 0.0, 0.0,
            0.0, 2.0, 0.0, 0.0,
            9.0, 9.0, 9.0, 9.0,
        ];
        let bsr = Bsr::of(&matrix, 5, 4, &options);
        assert_eq!(bsr.indices, vec![1, 0]);
        assert_eq!(bsr.indptr, vec![0, 1, 2]);
        assert_eq!(bsr.data.len(), 8);
        assert_eq!(&bsr.data[..3], &[1.0, 0.0, 0.0]);
        assert!(bsr.data[3].is_nan());
        assert_eq!(&bsr.data[4..], &[-0.0, 0.0, 0.0, 2.0]);
    }

    #[test]
    fn block_sizes_are_two_positive_numbers() {
        let list =
            |v: &[i64]| PipelineValue::List(v.iter().map(|&i| PipelineValue::Int(i)).collect());
        assert_eq!(block_size(Some(&list(&[16, 1]))), Ok((16, 1)));
        assert!(block_size(Some(&list(&[0, 1])))
            .unwrap_err()
            .contains("positive"));
        assert!(block_size(Some(&list(&[1])))
            .unwrap_err()
            .contains("1 sizes"));
    }
}
