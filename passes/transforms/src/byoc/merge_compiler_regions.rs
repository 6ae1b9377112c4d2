//! `MergeCompilerRegions`: TVM v0.13's function pass (opt_level 0, run in an
//! unnamed `Sequential` with `InferType`) that merges each annotated region
//! with the regions of the same target feeding it, unless a path through a
//! region of another target would make the merged region depend on itself.
//!
//! Regions are visited from their first `compiler_end`, parents first. A
//! region inherits the "may not merge with" sets of its parents and adds
//! every parent of a different target; a parent of the same target not in
//! that set is merged in. Afterwards a `compiler_begin(compiler_end(x))`
//! pair inside one region is replaced by `x`. "default" regions (what
//! `AnnotateTarget` leaves for unsupported operators) merge like any other.

use super::regions::{RegionKey, RegionSet};
use super::{annotation, Boundary};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::fxhash::{FxMap, FxSet};
use relay_ir::rewrite::{for_each_child, rewrite_post_order};
use relay_ir::{Expr, Function};
use relay_pass_manager::{FunctionPass, PassInfo, PassSpec};
use std::sync::Arc;

pub(crate) fn spec() -> PassSpec {
    PassSpec::sequential("MergeCompilerRegions", 0)
        .info_name("sequential")
        .doc(
            "Merge neighbouring compiler_begin/compiler_end regions of the same target \
             (BYOC; regions of `AnnotateTarget` or hand-written annotations)",
        )
        .build(|_args| {
            let merge = FunctionPass::new(
                PassInfo::new("MergeCompilerRegions", 0, &[]),
                |function, _module, _ctx| merge_compiler_regions(&function),
            );
            let infer = relay_pass_manager::registry::create_by_name("InferType")?;
            Ok(vec![Arc::new(merge), infer])
        })
}

/// Merges the annotated regions of `function` and drops the annotations
/// left inside merged regions.
pub fn merge_compiler_regions(function: &Function) -> Result<Function, Diagnostic> {
    let root = function.expr();
    let mut regions = RegionSet::create(root, "default")?;
    RegionMerger::new(&mut regions).run(root);
    let merged = rewrite_post_order(root, |old, rebuilt| {
        let Some(begin) = annotation(old).filter(|m| m.boundary == Boundary::Begin) else {
            return rebuilt;
        };
        if !annotation(begin.arg).is_some_and(|m| m.boundary == Boundary::End) {
            return rebuilt;
        }
        if regions.region_of(old) != regions.region_of(begin.arg) {
            return rebuilt;
        }
        // The rebuilt begin's argument is the (rebuilt) end; its argument is
        // the value that now flows inside the region.
        let end = &rebuilt.as_call().expect("a rebuilt call is a call").args[0];
        end.as_call().expect("a compiler_end is a call").args[0].clone()
    });
    Ok(merged
        .as_function()
        .expect("rewriting a function gives a function"))
}

/// The merging walk (TVM's `RegionMerger`).
struct RegionMerger<'a> {
    regions: &'a mut RegionSet,
    /// Nodes already visited.
    visited: FxSet<usize>,
    /// Ids of the regions already processed.
    merged: FxSet<usize>,
    /// Per region id, the ids of regions it must not be merged with.
    restrictions: FxMap<usize, FxSet<usize>>,
}

/// The work of the walk, kept on an explicit stack: models are deep.
enum Step {
    Visit(Expr),
    /// All of the node's sub-expressions have been visited.
    Leave(Expr),
    /// A region's first `compiler_end`: its parents are visited (input
    /// `next` onwards still to do) before it is merged with them.
    Parents {
        end: Expr,
        inputs: Vec<Expr>,
        next: usize,
    },
}

impl<'a> RegionMerger<'a> {
    fn new(regions: &'a mut RegionSet) -> RegionMerger<'a> {
        RegionMerger {
            regions,
            visited: FxSet::default(),
            merged: FxSet::default(),
            restrictions: FxMap::default(),
        }
    }

    fn run(&mut self, root: &Expr) {
        let mut stack = vec![Step::Visit(root.clone())];
        let mut buffer = Vec::new();
        while let Some(step) = stack.pop() {
            match step {
                Step::Visit(expr) => {
                    if self.visited.contains(&expr.addr()) {
                        continue;
                    }
                    for_each_child(&expr, |c| buffer.push(c.clone()));
                    stack.push(Step::Leave(expr));
                    for child in buffer.drain(..).rev() {
                        if !self.visited.contains(&child.addr()) {
                            stack.push(Step::Visit(child));
                        }
                    }
                }
                Step::Leave(expr) => {
                    if self.visited.contains(&expr.addr()) {
                        continue;
                    }
                    let is_end = annotation(&expr).is_some_and(|m| m.boundary == Boundary::End);
                    let unprocessed = self
                        .regions
                        .region_of(&expr)
                        .filter(|&key| !self.merged.contains(&self.regions.region(key).id));
                    match unprocessed {
                        Some(key) if is_end => {
                            let inputs = self.regions.region(key).ins.clone();
                            stack.push(Step::Parents {
                                end: expr,
                                inputs,
                                next: 0,
                            });
                        }
                        _ => {
                            self.visited.insert(expr.addr());
                        }
                    }
                }
                Step::Parents { end, inputs, next } => {
                    if next == inputs.len() {
                        let key = self
                            .regions
                            .region_of(&end)
                            .expect("a compiler_end belongs to a region");
                        self.merge_with_parents(key);
                        self.visited.insert(end.addr());
                        continue;
                    }
                    let parent_value = begin_argument(&inputs[next]);
                    let visit_parent = self
                        .regions
                        .region_of(&parent_value)
                        .is_some_and(|p| !self.merged.contains(&self.regions.region(p).id));
                    stack.push(Step::Parents {
                        end,
                        inputs,
                        next: next + 1,
                    });
                    if visit_parent {
                        stack.push(Step::Visit(parent_value));
                    }
                }
            }
        }
    }

    /// Merges the region `key` with the regions feeding it where allowed.
    fn merge_with_parents(&mut self, key: RegionKey) {
        let region = self.regions.region(key);
        let (id, target) = (region.id, region.target.clone());
        let mut parents: Vec<RegionKey> = Vec::new();
        for input in &region.ins {
            if let Some(parent) = self.regions.region_of(&begin_argument(input)) {
                if !parents.contains(&parent) {
                    parents.push(parent);
                }
            }
        }
        let mut restricted = self.restrictions.remove(&id).unwrap_or_default();
        for &parent in &parents {
            let parent_id = self.regions.region(parent).id;
            if let Some(inherited) = self.restrictions.get(&parent_id) {
                restricted.extend(inherited.iter().copied());
            }
        }
        for parent in parents {
            let parent_region = self.regions.region(parent);
            let parent_id = parent_region.id;
            if parent_region.target != target {
                restricted.insert(parent_id);
                continue;
            }
            if restricted.contains(&parent_id) {
                continue;
            }
            self.regions.merge(parent, key);
            // Whoever could not merge with the parent cannot merge with the
            // region that absorbed it.
            for set in self.restrictions.values_mut() {
                if set.remove(&parent_id) {
                    set.insert(id);
                }
            }
        }
        self.restrictions.insert(id, restricted);
        self.merged.insert(id);
    }
}

/// The argument of a region input (a `compiler_begin` call).
fn begin_argument(begin: &Expr) -> Expr {
    begin
        .as_call()
        .expect("a region input is a compiler_begin call")
        .args[0]
        .clone()
}
