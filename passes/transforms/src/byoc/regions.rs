//! TVM's `AnnotatedRegionSet`: the regions of a function marked by
//! `compiler_begin` / `compiler_end` annotations.
//!
//! A region is created at each `compiler_begin`; an ordinary call, tuple or
//! projection joins the region of its arguments (merging them when its
//! arguments come from several open regions), and a `compiler_end` closes
//! the region of its argument. Each region records its input annotations
//! (the `compiler_begin`s) and output annotations (the `compiler_end`s) in
//! the order TVM finds them, which fixes the parameter names and output
//! order of the functions `PartitionGraph` makes, and its id, which names
//! them. Ids count every region created, merged ones included.

use super::{annotation, Boundary};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::fxhash::{FxMap, FxSet};
use relay_ir::rewrite::for_each_child;
use relay_ir::{Expr, ExprKind};

/// A handle on a region of a [`RegionSet`] (stable while the region
/// exists; a region merged into another is gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegionKey(usize);

/// One region.
#[derive(Debug)]
pub struct Region {
    /// The number TVM gives the region (in order of creation).
    pub id: usize,
    /// The `compiler` of its annotations.
    pub target: String,
    /// The name of the function it was found in (`default` when the set was
    /// made for an expression outside a module).
    pub func_name: String,
    /// Its `compiler_begin` calls, in TVM's order.
    pub ins: Vec<Expr>,
    /// Its `compiler_end` calls, in TVM's order.
    pub outs: Vec<Expr>,
    /// Addresses of its nodes.
    nodes: Vec<usize>,
}

/// The regions of one expression. The expression must outlive the set:
/// nodes are identified by address, as TVM identifies them by pointer.
#[derive(Debug, Default)]
pub struct RegionSet {
    regions: Vec<Option<Region>>,
    owner: FxMap<usize, RegionKey>,
    next_id: usize,
}

impl RegionSet {
    /// The regions of `root` (a function, usually), found as TVM's
    /// `AnnotatedRegionSet::Create` finds them; `func_name` names them.
    pub fn create(root: &Expr, func_name: &str) -> Result<RegionSet, Diagnostic> {
        let mut set = RegionSet::default();
        let mut failure = None;
        visit_in_tvm_order(root, |node| {
            if failure.is_none() {
                if let Err(error) = set.add_node(node, func_name) {
                    failure = Some(error);
                }
            }
        });
        match failure {
            Some(error) => Err(error),
            None => Ok(set),
        }
    }

    /// The region `expr` belongs to.
    pub fn region_of(&self, expr: &Expr) -> Option<RegionKey> {
        self.owner.get(&expr.addr()).copied()
    }

    pub fn region(&self, key: RegionKey) -> &Region {
        self.regions[key.0]
            .as_ref()
            .expect("a region key refers to a region that was merged away")
    }

    fn region_mut(&mut self, key: RegionKey) -> &mut Region {
        self.regions[key.0]
            .as_mut()
            .expect("a region key refers to a region that was merged away")
    }

    /// Every region that still exists, in order of creation.
    pub fn keys(&self) -> Vec<RegionKey> {
        (0..self.regions.len())
            .filter(|&i| self.regions[i].is_some())
            .map(RegionKey)
            .collect()
    }

    fn make_region(&mut self, target: &str, func_name: &str) -> RegionKey {
        let key = RegionKey(self.regions.len());
        self.regions.push(Some(Region {
            id: self.next_id,
            target: target.to_string(),
            func_name: func_name.to_string(),
            ins: Vec::new(),
            outs: Vec::new(),
            nodes: Vec::new(),
        }));
        self.next_id += 1;
        key
    }

    fn insert_node(&mut self, key: RegionKey, expr: &Expr) {
        if self.owner.insert(expr.addr(), key).is_none() {
            self.region_mut(key).nodes.push(expr.addr());
        }
    }

    /// Moves every node, input and output of `src` into `dest`; an output
    /// of `src` that feeds an input of `dest` becomes internal, so both
    /// annotations leave the boundary lists. `src` is gone afterwards.
    pub fn merge(&mut self, src: RegionKey, dest: RegionKey) {
        if src == dest {
            return;
        }
        let source = self.regions[src.0]
            .take()
            .expect("merging a region that was merged away");
        let source_nodes: FxSet<usize> = source.nodes.iter().copied().collect();
        for &node in &source.nodes {
            self.owner.insert(node, dest);
        }
        let target = self.region_mut(dest);
        target.nodes.extend(source.nodes);
        target.ins.extend(source.ins);
        target.outs.extend(source.outs);
        let mut internal_ins = Vec::new();
        for input in &target.ins {
            let Some(call) = input.as_call() else {
                continue;
            };
            if let Some(feeding) = call.args.first() {
                if source_nodes.contains(&feeding.addr()) {
                    internal_ins.push(input.addr());
                    let feeding = feeding.addr();
                    target.outs.retain(|out| out.addr() != feeding);
                }
            }
        }
        target
            .ins
            .retain(|input| !internal_ins.contains(&input.addr()));
    }

    /// Adds `expr` to `dest`, merging its region into `dest` if it has one.
    fn add_to_region(&mut self, dest: RegionKey, expr: &Expr) {
        match self.region_of(expr) {
            Some(src) => self.merge(src, dest),
            None => self.insert_node(dest, expr),
        }
    }

    /// What TVM's region creator does on visiting `node`.
    fn add_node(&mut self, node: &Expr, func_name: &str) -> Result<(), Diagnostic> {
        if let Some(mark) = annotation(node) {
            match mark.boundary {
                Boundary::Begin => {
                    let key = self.make_region(mark.compiler, func_name);
                    self.insert_node(key, node);
                    self.region_mut(key).ins.push(node.clone());
                }
                Boundary::End => {
                    let Some(key) = self.region_of(mark.arg) else {
                        return Err(Diagnostic::pass_failed_at(
                            node,
                            "Cannot find the corresponding region for end annotation",
                        ));
                    };
                    if self.region(key).target != mark.compiler {
                        return Err(Diagnostic::pass_failed_at(
                            node,
                            format!(
                                "the region closed by this compiler_end is for `{}`, not `{}`",
                                self.region(key).target,
                                mark.compiler
                            ),
                        ));
                    }
                    self.insert_node(key, node);
                    self.region_mut(key).outs.push(node.clone());
                }
            }
            return Ok(());
        }
        let args: Vec<&Expr> = match node.kind() {
            ExprKind::Call(call) => call.args.iter().collect(),
            ExprKind::Tuple(fields) => fields.iter().collect(),
            ExprKind::TupleGetItem { tuple, .. } => vec![tuple],
            ExprKind::Let { var, value, body } => vec![var.expr(), value, body],
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => vec![cond, then_branch, else_branch],
            ExprKind::RefCreate(value) | ExprKind::RefRead(value) => vec![value],
            ExprKind::RefWrite { reference, .. } => vec![reference],
            _ => return Ok(()),
        };
        self.add_to_argument_region(node, &args)
    }

    /// Joins `node` to the region its (not yet closed) arguments are in,
    /// merging their regions into the first one.
    fn add_to_argument_region(&mut self, node: &Expr, args: &[&Expr]) -> Result<(), Diagnostic> {
        let is_closed =
            |arg: &Expr| annotation(arg).is_some_and(|mark| mark.boundary == Boundary::End);
        let open: Vec<&Expr> = args.iter().copied().filter(|a| !is_closed(a)).collect();
        let region = open.iter().find_map(|arg| self.region_of(arg));
        for arg in &open {
            let arg_region = self.region_of(arg);
            if region.is_some() != arg_region.is_some() {
                return Err(Diagnostic::pass_failed_at(
                    node,
                    "Arg regions are inconsistent: some arguments are inside an annotated \
                     region and some are not",
                ));
            }
            if let (Some(dest), Some(src)) = (region, arg_region) {
                if dest != src {
                    self.merge(src, dest);
                }
            }
        }
        if let Some(dest) = region {
            self.add_to_region(dest, node);
        }
        Ok(())
    }
}

/// Calls `f` on every node under `root` once, in the order TVM's
/// `MixedModeVisitor` enters them: calls, tuples and projections after
/// their sub-expressions (a post-order walk), every other node before its
/// sub-expressions (the recursive `ExprVisitor` order).
pub fn visit_in_tvm_order(root: &Expr, mut f: impl FnMut(&Expr)) {
    let mut seen: FxSet<usize> = FxSet::default();
    let mut stack: Vec<(&Expr, bool)> = vec![(root, false)];
    let mut buffer: Vec<&Expr> = Vec::new();
    while let Some((expr, children_done)) = stack.pop() {
        if children_done {
            f(expr);
            continue;
        }
        if !seen.insert(expr.addr()) {
            continue;
        }
        let dataflow = matches!(
            expr.kind(),
            ExprKind::Call(_) | ExprKind::Tuple(_) | ExprKind::TupleGetItem { .. }
        );
        if dataflow {
            stack.push((expr, true));
        } else {
            f(expr);
        }
        for_each_child(expr, |c| buffer.push(c));
        for child in buffer.drain(..).rev() {
            if !seen.contains(&child.addr()) {
                stack.push((child, false));
            }
        }
    }
}
