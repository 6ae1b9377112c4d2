//! The rewrite driver: TVM's `ForwardRewrite` with `LayoutRewriter` and a
//! `TransformMemorizer` (`transform_layout.h`, `forward_rewrite.cc`).
//!
//! The graph is rewritten bottom-up. A call whose operator can follow the
//! layouts of its inputs is rebuilt in the new layouts and stands for a
//! *layout-altered* value: the new call plus its output layout before and
//! after the rewrite. Consumers that can take the new layout use the value
//! directly; the others (and the function's result) *realize* it, which
//! transforms it back to its old layout. TVM keeps these values in the graph
//! as temporary nodes; here they are placeholder variables that only this
//! rewrite knows, replaced when realized, and checked to be gone at the end.
//!
//! Layout transforms are memoised per (expression, source, destination), so
//! an expression transformed twice the same way shares one
//! `layout_transform`, as in TVM. New nodes carry no checked type; the
//! InferType that follows the pass types them.
//!
//! ConvertLayout and AlterOpLayout share this driver and differ only in
//! how a call is rebuilt in its new layouts (TVM's memorizer subclasses):
//! that step is the [`CallWithNewLayouts`] trait.

use super::infer::{self, InferArgs, InferOutput};
use super::layout::{convertible, expand_primal, ndim_primal, same, Layout, LayoutError};
use relay_ir::build::op_call_with;
use relay_ir::op;
use relay_ir::rewrite::{children, post_order, with_children};
use relay_ir::{AttrValue, Attrs, Call, Expr, ExprKind, Type, Var};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

/// The layouts asked for, per operator name.
pub type DesiredLayouts = Vec<(String, Vec<String>)>;

/// What a call is rebuilt from (TVM's `CallWithNewLayouts` arguments).
pub(crate) struct CallInfo<'a> {
    /// The operator of the original call.
    pub op: &'a str,
    /// The attributes layout inference settled on.
    pub attrs: Option<&'a Attrs>,
    /// The call's arguments after the rewrite of its inputs.
    pub args: &'a [Expr],
    /// The checked types of the original arguments.
    pub types: &'a [Type],
    /// The checked type of the original call.
    pub out_type: Option<&'a Type>,
}

/// A rebuilt call: operator name, attributes and arguments.
pub(crate) struct NewCall {
    pub op: String,
    pub attrs: Option<Attrs>,
    pub args: Vec<Expr>,
}

/// TVM's `TransformMemorizerNode::CallWithNewLayouts`: how each pass
/// rebuilds a call. `Ok(None)` keeps the operator, the inferred attributes
/// and the arguments (TVM's `Call(ref_call->op, new_args, new_attrs)`).
pub(crate) trait CallWithNewLayouts {
    fn call_with_new_layouts(&self, call: &CallInfo) -> Result<Option<NewCall>, LayoutError>;
}

/// A layout-altered value (TVM's `LayoutAlternatedExprNode`).
struct Altered {
    /// The rewritten expression, in the `new` layout.
    value: Expr,
    /// Its layout before the rewrite.
    old: Layout,
    /// Its layout now.
    new: Layout,
}

/// The state of one run over a function.
pub(crate) struct LayoutRewriter<'a> {
    memorizer: &'a dyn CallWithNewLayouts,
    /// Placeholder node address → the altered value it stands for. The
    /// placeholders are kept alive in `placeholders`, so addresses stay
    /// unique.
    altered: HashMap<usize, Altered>,
    placeholders: Vec<Expr>,
    /// (expression address, source, destination) → the transformed
    /// expression; the expressions are kept alive in `keep`.
    transforms: HashMap<(usize, String, String), Expr>,
    /// Node address → its realized form (TVM's `TempRealizer` memo).
    realized: HashMap<usize, Expr>,
    keep: Vec<Expr>,
}

impl<'a> LayoutRewriter<'a> {
    pub fn new(memorizer: &'a dyn CallWithNewLayouts) -> LayoutRewriter<'a> {
        LayoutRewriter {
            memorizer,
            altered: HashMap::default(),
            placeholders: Vec::new(),
            transforms: HashMap::default(),
            realized: HashMap::default(),
            keep: Vec::new(),
        }
    }

    /// Rewrites `root` and realizes the result.
    pub fn run(&mut self, root: &Expr) -> Result<Expr, LayoutError> {
        let mut memo: HashMap<usize, Expr> = HashMap::default();
        for node in post_order(root) {
            let new_children: Vec<Expr> = children(&node)
                .into_iter()
                .map(|c| memo.get(&c.addr()).cloned().unwrap_or_else(|| c.clone()))
                .collect();
            let replacement = match node.kind() {
                ExprKind::Call(call) => self.visit_call(&node, call, &new_children)?,
                ExprKind::TupleGetItem { tuple, index } => {
                    let new_tuple = new_children
                        .first()
                        .cloned()
                        .unwrap_or_else(|| tuple.clone());
                    // A projection of a tuple built here is that field.
                    if let ExprKind::Tuple(fields) = new_tuple.kind() {
                        fields.get(*index).cloned().ok_or_else(|| {
                            format!("ConvertLayout: tuple index {index} out of range")
                        })?
                    } else if new_tuple.ptr_eq(tuple) {
                        node.clone()
                    } else {
                        Expr::tuple_get_item(new_tuple, *index, node.span())
                    }
                }
                _ => with_children(&node, &new_children),
            };
            memo.insert(node.addr(), replacement);
        }
        let rewritten = memo.remove(&root.addr()).unwrap_or_else(|| root.clone());
        let result = self.realize(&rewritten)?;
        if post_order(&result)
            .iter()
            .any(|e| self.altered.contains_key(&e.addr()))
        {
            return Err(
                "ConvertLayout: a layout-altered value was left inside a nested tuple \
                 argument, which the rewrite does not support"
                    .into(),
            );
        }
        Ok(result)
    }

    /// A call: the layout rewrite, or else the call over realized arguments.
    fn visit_call(
        &mut self,
        node: &Expr,
        call: &Call,
        new_children: &[Expr],
    ) -> Result<Expr, LayoutError> {
        let Some((callee, args)) = new_children.split_first() else {
            return Ok(node.clone());
        };
        let callee = if matches!(callee.kind(), ExprKind::Function(_)) {
            self.realize(callee)?
        } else {
            callee.clone()
        };
        if let Some(rewritten) = self.rewrite_call(node, call, args)? {
            return Ok(rewritten);
        }
        let mut realized = Vec::with_capacity(args.len());
        for arg in args {
            realized.push(self.realize(arg)?);
        }
        let unchanged = callee.ptr_eq(&call.callee)
            && realized.iter().zip(&call.args).all(|(a, b)| a.ptr_eq(b));
        if unchanged {
            return Ok(node.clone());
        }
        Ok(Expr::new(
            ExprKind::Call(Call {
                callee,
                args: realized,
                attrs: call.attrs.clone(),
                type_args: call.type_args.clone(),
            }),
            node.span(),
        ))
    }

    /// A new placeholder standing for `value`.
    fn alter(&mut self, value: Expr, old: Layout, new: Layout) -> Expr {
        let placeholder = Var::new("layout_altered", None, None).into_expr();
        self.altered
            .insert(placeholder.addr(), Altered { value, old, new });
        self.placeholders.push(placeholder.clone());
        placeholder
    }

    /// The expression an argument stands for, recording its layouts.
    fn unwrap_arg(&self, arg: &Expr, old_prd: &mut Vec<Layout>, new_prd: &mut Vec<Layout>) -> Expr {
        match self.altered.get(&arg.addr()) {
            Some(altered) => {
                old_prd.push(altered.old.clone());
                new_prd.push(altered.new.clone());
                altered.value.clone()
            }
            None => {
                old_prd.push(Layout::undef());
                new_prd.push(Layout::undef());
                arg.clone()
            }
        }
    }

    /// TVM's `LayoutRewriter`: `None` when the operator cannot follow the
    /// layouts (it is then computed in its original layouts).
    fn rewrite_call(
        &mut self,
        node: &Expr,
        call: &Call,
        new_args: &[Expr],
    ) -> Result<Option<Expr>, LayoutError> {
        let Some(op) = call.callee.as_op() else {
            return Ok(None);
        };
        let op_name = op.name.as_str();
        // Flatten one level of tuple arguments.
        let (mut old_prd, mut new_prd) = (Vec::new(), Vec::new());
        let mut normal_args = Vec::with_capacity(new_args.len());
        for arg in new_args {
            if let ExprKind::Tuple(fields) = arg.kind() {
                let values: Vec<Expr> = fields
                    .iter()
                    .map(|f| self.unwrap_arg(f, &mut old_prd, &mut new_prd))
                    .collect();
                normal_args.push(with_children(arg, &values));
            } else {
                normal_args.push(self.unwrap_arg(arg, &mut old_prd, &mut new_prd));
            }
        }
        // `nn.sparse_dense` has an alter-layout hook but no layout inference:
        // TVM then rebuilds it over the altered values as they are.
        if op_name == "nn.sparse_dense" {
            let rebuilt = Expr::call(
                Expr::op(op, None),
                normal_args,
                call.attrs.clone(),
                node.span(),
            );
            return Ok(Some(rebuilt));
        }
        let types = call
            .args
            .iter()
            .map(|a| {
                a.checked_type().cloned().ok_or_else(|| {
                    "ConvertLayout: an argument has no type; run InferType first".to_string()
                })
            })
            .collect::<Result<Vec<Type>, _>>()?;

        // Step 1: the layouts before the rewrite.
        let first = infer::infer(
            op_name,
            &InferArgs {
                attrs: call.attrs.as_ref(),
                new_in: None,
                old_in: &old_prd,
                types: &types,
            },
        )?;
        let Some(first) = first.filter(InferOutput::succeeded) else {
            return Ok(None);
        };
        let (old_cur, old_out) = (first.inputs, first.outputs);
        if old_cur.len() != new_prd.len() {
            return Err(format!(
                "ConvertLayout: {op_name} infers {} input layouts for {} inputs",
                old_cur.len(),
                new_prd.len()
            ));
        }
        let fill = |layouts: &[Layout]| -> Vec<Layout> {
            layouts
                .iter()
                .zip(&old_cur)
                .map(|(l, cur)| {
                    if l.is_defined() {
                        l.clone()
                    } else {
                        cur.clone()
                    }
                })
                .collect()
        };
        let new_prd_inferred = fill(&new_prd);
        let old_prd_inferred = fill(&old_prd);

        // The call in the new layouts (or as it is).
        let rebuilt = self.memorizer.call_with_new_layouts(&CallInfo {
            op: op_name,
            attrs: first.attrs.as_ref(),
            args: &normal_args,
            types: &types,
            out_type: node.checked_type(),
        })?;
        let NewCall {
            op: new_op_name,
            attrs: new_attrs,
            args: new_call_args,
        } = rebuilt.unwrap_or_else(|| NewCall {
            op: op_name.to_string(),
            attrs: first.attrs.clone(),
            args: normal_args.clone(),
        });

        // Step 2: the layouts after the rewrite.
        let second = infer::infer(
            &new_op_name,
            &InferArgs {
                attrs: new_attrs.as_ref(),
                new_in: Some(&new_prd_inferred),
                old_in: &old_prd_inferred,
                types: &types,
            },
        )?;
        let Some(second) = second.filter(InferOutput::succeeded) else {
            return Ok(None);
        };
        let (new_cur, new_out) = (second.inputs, second.outputs);
        if new_out.len() != old_out.len() {
            return Err(
                "The number of output nodes should keep the same during alter_op_layout".into(),
            );
        }
        if new_prd.len() != new_cur.len() {
            return Err(
                "The number of input nodes should keep the same during alter_op_layout".into(),
            );
        }

        // Transform each input of the rebuilt call from the layout it
        // arrives in to the one the call wants.
        let mut transformed = Vec::with_capacity(new_call_args.len());
        let mut pt = 0usize;
        for arg in &new_call_args {
            if let ExprKind::Tuple(fields) = arg.kind() {
                let mut items = Vec::with_capacity(fields.len());
                for field in fields {
                    items.push(
                        self.transform_input(field, pt, &old_prd, &old_cur, &new_prd, &new_cur)?,
                    );
                    pt += 1;
                }
                transformed.push(with_children(arg, &items));
            } else {
                transformed
                    .push(self.transform_input(arg, pt, &old_prd, &old_cur, &new_prd, &new_cur)?);
                pt += 1;
            }
        }
        if pt != old_prd.len() {
            return Err(
                "ConvertLayout: the rewritten call has a different number of inputs".into(),
            );
        }

        let new_op = op::lookup(&new_op_name)
            .ok_or_else(|| format!("ConvertLayout: unknown operator {new_op_name}"))?;
        let is_tuple = node.checked_type().is_some_and(|t| t.as_tuple().is_some());
        if is_tuple {
            let tuple_output = Expr::call(Expr::op(new_op, None), transformed, second.attrs, None);
            let mut fields = Vec::with_capacity(new_out.len());
            for (i, (old, new)) in old_out.into_iter().zip(new_out).enumerate() {
                let item = Expr::tuple_get_item(tuple_output.clone(), i, None);
                fields.push(self.alter(item, old, new));
            }
            return Ok(Some(Expr::tuple(fields, None)));
        }
        let (Some(old), Some(new), 1) = (old_out.first(), new_out.first(), new_out.len()) else {
            return Err(format!(
                "ConvertLayout: {op_name} infers several outputs for one"
            ));
        };
        let value = Expr::call(
            Expr::op(new_op, None),
            transformed,
            second.attrs,
            node.span(),
        );
        let (old, new) = (old.clone(), new.clone());
        Ok(Some(self.alter(value, old, new)))
    }

    /// Moves input `pt` from the layout its producer delivers to the one the
    /// call wants, in one transform when the two views agree.
    fn transform_input(
        &mut self,
        arg: &Expr,
        pt: usize,
        old_prd: &[Layout],
        old_cur: &[Layout],
        new_prd: &[Layout],
        new_cur: &[Layout],
    ) -> Result<Expr, LayoutError> {
        let get = |layouts: &[Layout]| {
            layouts
                .get(pt)
                .cloned()
                .ok_or_else(|| format!("ConvertLayout: no layout for input {pt}"))
        };
        let (old_prd, old_cur, new_prd, new_cur) =
            (get(old_prd)?, get(old_cur)?, get(new_prd)?, get(new_cur)?);
        if same(&old_cur, &old_prd) {
            return self.transform(arg, &new_prd, &new_cur);
        }
        let mut item = arg.clone();
        if old_prd.is_defined() {
            item = self.transform(&item, &new_prd, &old_prd)?;
        }
        self.transform(&item, &old_cur, &new_cur)
    }

    /// `TransformMemorizer::Transform`: `raw` from `src` to `dst`, memoised.
    fn transform(&mut self, raw: &Expr, src: &Layout, dst: &Layout) -> Result<Expr, LayoutError> {
        if same(src, dst) {
            return Ok(raw.clone());
        }
        let key = (raw.addr(), src.name.clone(), dst.name.clone());
        if let Some(done) = self.transforms.get(&key) {
            return Ok(done.clone());
        }
        let result = transform_helper(raw, src, dst)?;
        self.keep.push(raw.clone());
        self.transforms.insert(key, result.clone());
        Ok(result)
    }

    /// The expression with every altered value in it transformed back to
    /// its old layout (TVM's `TempRealizer`, memoised across calls).
    fn realize(&mut self, expr: &Expr) -> Result<Expr, LayoutError> {
        if let Some(done) = self.realized.get(&expr.addr()) {
            return Ok(done.clone());
        }
        // Iterative post-order that stops at nodes realized before.
        let mut stack: Vec<(Expr, bool)> = vec![(expr.clone(), false)];
        while let Some((node, expanded)) = stack.pop() {
            if self.realized.contains_key(&node.addr()) {
                continue;
            }
            let result = if let Some(altered) = self.altered.get(&node.addr()) {
                let (value, old, new) = (
                    altered.value.clone(),
                    altered.old.clone(),
                    altered.new.clone(),
                );
                self.transform(&value, &new, &old)?
            } else if !expanded {
                stack.push((node.clone(), true));
                for child in children(&node).into_iter().rev() {
                    if !self.realized.contains_key(&child.addr()) {
                        stack.push((child.clone(), false));
                    }
                }
                continue;
            } else {
                let new_children: Vec<Expr> = children(&node)
                    .into_iter()
                    .map(|c| {
                        self.realized
                            .get(&c.addr())
                            .cloned()
                            .unwrap_or_else(|| c.clone())
                    })
                    .collect();
                with_children(&node, &new_children)
            };
            self.keep.push(node.clone());
            self.realized.insert(node.addr(), result);
        }
        Ok(self
            .realized
            .get(&expr.addr())
            .cloned()
            .unwrap_or_else(|| expr.clone()))
    }
}

/// Whether the expression's type is a tensor whose every dimension is 1
/// (TVM's `IsScalar`).
fn is_scalar(expr: &Expr) -> bool {
    expr.checked_type()
        .and_then(Type::as_tensor)
        .is_some_and(|t| t.shape.iter().all(|d| d.as_int() == Some(1)))
}

/// `TransformHelper`: a layout with fewer primal axes is first expanded
/// with leading unit axes (scalars broadcast as they are), then a
/// `layout_transform` is inserted.
fn transform_helper(raw: &Expr, src: &Layout, dst: &Layout) -> Result<Expr, LayoutError> {
    if same(src, dst) {
        return Ok(raw.clone());
    }
    let mut input = raw.clone();
    let mut new_src = src.clone();
    if ndim_primal(src) < ndim_primal(dst) {
        if raw.checked_type().is_some() && is_scalar(raw) {
            return Ok(raw.clone());
        }
        let new_axes = ndim_primal(dst) - ndim_primal(src);
        new_src = expand_primal(src, dst)?;
        input = op_call_with(
            "expand_dims",
            vec![input],
            &[
                ("axis", AttrValue::Int(0)),
                ("num_newaxis", AttrValue::Int(new_axes as i64)),
            ],
        );
        if same(&new_src, dst) {
            return Ok(input);
        }
    }
    if !new_src.is_defined() || !dst.is_defined() {
        return Err(
            "Cannot insert layout transform because there are undefined layouts".to_string(),
        );
    }
    if !convertible(&new_src, dst) {
        return Err(format!(
            "Cannot insert layout transform because there are inconvertible layouts: {} v.s. {}",
            new_src.name, dst.name
        ));
    }
    Ok(op_call_with(
        "layout_transform",
        vec![input],
        &[
            ("src_layout", AttrValue::Str(new_src.name.clone())),
            ("dst_layout", AttrValue::Str(dst.name.clone())),
        ],
    ))
}
