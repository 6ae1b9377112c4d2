//! `PartitionGraph(mod_name, bind_constants)`: TVM v0.13's outlining of
//! annotated regions into global functions for external compilers.
//!
//! TVM builds it as an unnamed `Sequential` of four module passes (each
//! opt_level 0, each re-typing the module) and `InferType`:
//!
//! 1. `FlattenNestedTuples`: a `compiler_end` on a tuple becomes a tuple of
//!    `compiler_end`s, so a region's outputs never nest tuples;
//! 2. `RemoveDefaultAnnotations`: annotations for the `default` target
//!    (operators no external compiler takes) are dropped;
//! 3. `PartitionGraph`: each region becomes a global function
//!    `@<target>_<function>_<region id>` whose parameters are named
//!    `%<target>_<region id>_i<input index>` (one per distinct value
//!    entering the region), attributed `Compiler`, `Primitive=1`,
//!    `Inline=1` and `global_symbol`; its uses become calls (a region with
//!    several outputs returns a tuple and its uses project from the call).
//!    With `bind_constants`, constant inputs are bound into the function
//!    instead of passed;
//! 4. `NameMangleExtFuncs`: every global function with a `Compiler`
//!    attribute is renamed to `tvmgen_<mod_name>_<name>` (non-alphanumeric
//!    characters as `_`), its `global_symbol` and its calls following.
//!
//! TVM also runs a `relay.ext.<target>.optimize` function on each new
//! function when one is registered; no external codegen is registered
//! here, so none runs (what TVM does for a target without one).

use super::regions::{RegionKey, RegionSet};
use super::{annotation, compiler_end, compiler_of, Boundary};
use relay_infer::infer_module;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::DataType;
use relay_ir::fxhash::{FxMap, FxSet};
use relay_ir::rewrite::{for_each_child, rewrite_post_order, with_children};
use relay_ir::{AttrValue, DictAttrs, Expr, ExprKind, Function, FunctionData, IRModule, Var};
use relay_pass_manager::{ModulePass, ParamSpec, PassInfo, PassSpec};
use std::sync::Arc;

pub(crate) fn spec() -> PassSpec {
    PassSpec::sequential("PartitionGraph", 0)
        .info_name("sequential")
        .param(ParamSpec::string(
            "mod_name",
            "default",
            "the module name in the outlined functions' names (`tvmgen_<mod_name>_…`; \
             empty: `tvmgen_…`)",
        ))
        .param(ParamSpec::bool(
            "bind_constants",
            true,
            "bind constant inputs into the outlined functions instead of passing them",
        ))
        .doc(
            "Outline compiler_begin/compiler_end regions into global functions for external \
             compilers (BYOC; no relay.ext.<target>.optimize runs: no codegen is registered)",
        )
        .build(|args| {
            let prefix = mangle_module_name(&args.string("mod_name"))?;
            let bind_constants = args.bool("bind_constants");
            let step = |name: &str, f: fn(IRModule) -> Result<IRModule, Diagnostic>| {
                Arc::new(ModulePass::new(
                    PassInfo::new(name, 0, &[]),
                    move |m, _ctx| f(m),
                )) as Arc<dyn relay_pass_manager::Pass>
            };
            let partition =
                ModulePass::new(PassInfo::new("PartitionGraph", 0, &[]), move |m, _| {
                    partition(m, bind_constants)
                });
            let mangle =
                ModulePass::new(PassInfo::new("NameMangleExtFuncs", 0, &[]), move |m, _| {
                    Ok(mangle_compiler_function_names(m, &prefix))
                });
            Ok(vec![
                step("FlattenNestedTuples", flatten_tuple_outputs),
                step("RemoveDefaultAnnotations", remove_default_annotations),
                Arc::new(partition),
                Arc::new(mangle),
                relay_pass_manager::registry::create_by_name("InferType")?,
            ])
        })
}

/// TVM's `mangle_module_name` (the Python wrapper applies it to `mod_name`).
pub fn mangle_module_name(mod_name: &str) -> Result<String, String> {
    if !mod_name.is_ascii() {
        return Err(format!("{mod_name} contains invalid characters"));
    }
    Ok(if mod_name.is_empty() {
        "tvmgen".to_string()
    } else {
        format!("tvmgen_{mod_name}")
    })
}

/// Types the module as the `InferType` inside each of TVM's steps does; a
/// type error stops the pass.
fn infer(module: IRModule) -> Result<IRModule, Diagnostic> {
    let (typed, diagnostics) = infer_module(&module);
    match diagnostics.into_iter().find(|d| d.is_error()) {
        Some(error) => Err(error),
        None => Ok(typed),
    }
}

/// Rewrites the body of every global function with `f`, then re-types.
fn rewrite_bodies(
    module: IRModule,
    mut f: impl FnMut(&Expr, Expr) -> Expr,
) -> Result<IRModule, Diagnostic> {
    let mut updated = module.clone();
    for (name, function) in module.functions() {
        let body = rewrite_post_order(function.body(), &mut f);
        updated.add_function(name, function.with_body(body));
    }
    infer(updated)
}

/// Step 1: `compiler_end((a, b))` becomes
/// `(compiler_end(a), compiler_end(b))`.
pub fn flatten_tuple_outputs(module: IRModule) -> Result<IRModule, Diagnostic> {
    rewrite_bodies(module, |old, rebuilt| {
        let Some(end) = annotation(old).filter(|m| m.boundary == Boundary::End) else {
            return rebuilt;
        };
        let value = &rebuilt.as_call().expect("a rebuilt call is a call").args[0];
        let ExprKind::Tuple(fields) = value.kind() else {
            return rebuilt;
        };
        let ended: Vec<Expr> = fields
            .iter()
            .map(|field| compiler_end(field.clone(), end.compiler))
            .collect();
        with_children(value, &ended)
    })
}

/// Step 2: every annotation for the `default` target is replaced by its
/// argument.
pub fn remove_default_annotations(module: IRModule) -> Result<IRModule, Diagnostic> {
    rewrite_bodies(module, |old, rebuilt| {
        let is_default = old
            .as_call()
            .and_then(|call| call.attrs.as_ref())
            .and_then(compiler_of)
            == Some("default");
        match rebuilt.as_call() {
            Some(call) if is_default && !call.args.is_empty() => call.args[0].clone(),
            _ => rebuilt,
        }
    })
}

/// Step 3: outlines every region of every global function.
pub fn partition(module: IRModule, bind_constants: bool) -> Result<IRModule, Diagnostic> {
    let mut partitioned = module.clone();
    for (name, function) in module.functions() {
        let regions = RegionSet::create(function.expr(), name)?;
        let mut partitioner = Partitioner {
            module: &mut partitioned,
            regions: &regions,
            bind_constants,
            memo: FxMap::default(),
            outlined: FxMap::default(),
        };
        let body = partitioner.visit(function.body())?;
        let function = function.with_body(body);
        check_no_free_variables(name, &function)?;
        partitioned.add_function(name, function);
    }
    infer(partitioned)
}

/// TVM's module refuses a global function with free variables (its
/// `WarnIfMalformed` check on update). Partitioning makes some when a
/// region's input feeds a node outside the region that a region does not
/// enclose (a `let`, whose value TVM's region analysis never joins).
fn check_no_free_variables(name: &str, function: &Function) -> Result<(), Diagnostic> {
    let mut bound: FxSet<relay_ir::VarId> = FxSet::default();
    let mut used: Vec<Var> = Vec::new();
    relay_ir::rewrite::post_order_each(function.expr(), |node| match node.kind() {
        ExprKind::Function(data) => bound.extend(data.params.iter().map(Var::id)),
        ExprKind::Let { var, .. } => {
            bound.insert(var.id());
        }
        ExprKind::Match { clauses, .. } => {
            for clause in clauses {
                pattern_variables(&clause.pattern, &mut |var| {
                    bound.insert(var.id());
                });
            }
        }
        ExprKind::Var(_) => used.extend(node.as_var()),
        _ => {}
    });
    let free: Vec<String> = used
        .iter()
        .filter(|var| !bound.contains(&var.id()))
        .map(|var| format!("%{}", var.name()))
        .collect();
    if free.is_empty() {
        return Ok(());
    }
    Err(Diagnostic::pass_failed(format!(
        "PartitionGraph: Function @{name} contains free variables: [{}]",
        free.join(", ")
    )))
}

fn pattern_variables(pattern: &relay_ir::Pattern, f: &mut impl FnMut(&Var)) {
    match pattern {
        relay_ir::Pattern::Wildcard => {}
        relay_ir::Pattern::Var(var) => f(var),
        relay_ir::Pattern::Constructor(_, fields) | relay_ir::Pattern::Tuple(fields) => {
            fields.iter().for_each(|field| pattern_variables(field, f))
        }
    }
}

/// What is known of a region's function while it is being outlined.
#[derive(Default)]
struct Outlined {
    /// The function's parameters with the values the call passes.
    args: Vec<(Var, Expr)>,
    /// Per value entering the region (by address), its parameter.
    inputs: FxMap<usize, Var>,
    /// Per value leaving the region (by address), its replacement.
    outputs: FxMap<usize, Expr>,
    created: bool,
}

/// The rewrite of one function's body (TVM's `Partitioner`).
struct Partitioner<'a> {
    module: &'a mut IRModule,
    regions: &'a RegionSet,
    bind_constants: bool,
    /// Rewritten nodes by the address of the original.
    memo: FxMap<usize, Expr>,
    outlined: FxMap<RegionKey, Outlined>,
}

impl Partitioner<'_> {
    /// The rewrite of `root`, memoised: creating a region's function visits
    /// its other outputs from inside the walk.
    fn visit(&mut self, root: &Expr) -> Result<Expr, Diagnostic> {
        for node in self.unvisited_post_order(root) {
            if self.memo.contains_key(&node.addr()) {
                continue;
            }
            let mut children = Vec::new();
            for_each_child(&node, |c| {
                children.push(
                    self.memo
                        .get(&c.addr())
                        .cloned()
                        .unwrap_or_else(|| c.clone()),
                )
            });
            let rebuilt = with_children(&node, &children);
            let replacement = self.rewrite(&node, rebuilt)?;
            self.memo.insert(node.addr(), replacement);
        }
        Ok(self
            .memo
            .get(&root.addr())
            .cloned()
            .unwrap_or_else(|| root.clone()))
    }

    /// The nodes under `root` not rewritten yet, children first.
    fn unvisited_post_order(&self, root: &Expr) -> Vec<Expr> {
        let mut order = Vec::new();
        let mut seen: FxSet<usize> = FxSet::default();
        let mut stack: Vec<(Expr, bool)> = vec![(root.clone(), false)];
        let mut buffer = Vec::new();
        while let Some((expr, expanded)) = stack.pop() {
            if expanded {
                order.push(expr);
                continue;
            }
            if self.memo.contains_key(&expr.addr()) || !seen.insert(expr.addr()) {
                continue;
            }
            for_each_child(&expr, |c| buffer.push(c.clone()));
            stack.push((expr, true));
            for child in buffer.drain(..).rev() {
                if !seen.contains(&child.addr()) && !self.memo.contains_key(&child.addr()) {
                    stack.push((child, false));
                }
            }
        }
        order
    }

    fn rewrite(&mut self, old: &Expr, rebuilt: Expr) -> Result<Expr, Diagnostic> {
        let Some(mark) = annotation(old) else {
            return Ok(rebuilt);
        };
        let Some(key) = self.regions.region_of(old) else {
            return Err(error(old, "an annotation outside every region"));
        };
        match mark.boundary {
            Boundary::Begin => self.region_input(key, old, &rebuilt),
            Boundary::End => {
                if !self.outlined.entry(key).or_default().created {
                    self.outline(key, old)?;
                }
                self.outlined[&key]
                    .outputs
                    .get(&mark.arg.addr())
                    .cloned()
                    .ok_or_else(|| error(old, "a region output without a function output"))
            }
        }
    }

    /// The parameter standing for the value a `compiler_begin` brings in
    /// (one per distinct value, looking through chains of annotations).
    fn region_input(
        &mut self,
        key: RegionKey,
        begin: &Expr,
        rebuilt: &Expr,
    ) -> Result<Expr, Diagnostic> {
        let mut source = begin.as_call().expect("an annotation is a call").args[0].clone();
        while let Some(mark) = annotation(&source) {
            source = mark.arg.clone();
        }
        let region = self.regions.region(key);
        let outlined = self.outlined.entry(key).or_default();
        if let Some(var) = outlined.inputs.get(&source.addr()) {
            return Ok(var.expr().clone());
        }
        let index = region
            .ins
            .iter()
            .position(|input| input.ptr_eq(begin))
            .ok_or_else(|| error(begin, "a compiler_begin that is not an input of its region"))?;
        let ty = begin
            .checked_type()
            .cloned()
            .ok_or_else(|| error(begin, "PartitionGraph needs a typed module"))?;
        let var = Var::new(
            format!("{}_{}_i{index}", region.target, region.id),
            Some(ty),
            None,
        );
        let value = rebuilt.as_call().expect("a rebuilt call is a call").args[0].clone();
        outlined.args.push((var.clone(), value));
        outlined.inputs.insert(source.addr(), var.clone());
        Ok(var.into_expr())
    }

    /// Makes the global function of region `key`, met first at `end`, and
    /// records what replaces each of its outputs.
    fn outline(&mut self, key: RegionKey, end: &Expr) -> Result<(), Diagnostic> {
        self.outlined.entry(key).or_default().created = true;
        let region = self.regions.region(key);
        let mut returned: Vec<Expr> = Vec::new();
        let mut fields = Vec::new();
        for out in region.outs.clone() {
            let value = out.as_call().expect("an annotation is a call").args[0].clone();
            if returned.iter().any(|r| r.ptr_eq(&value)) {
                continue;
            }
            fields.push(self.visit(&value)?);
            returned.push(value);
        }
        let call = self.region_call(key, fields, end)?;
        let outputs = &mut self.outlined.get_mut(&key).expect("created above").outputs;
        if let [single] = returned.as_slice() {
            outputs.insert(single.addr(), call);
        } else {
            for (index, value) in returned.iter().enumerate() {
                let kind = ExprKind::TupleGetItem {
                    tuple: call.clone(),
                    index,
                };
                let projection = Expr::with_type(kind, None, value.checked_type().cloned());
                outputs.insert(value.addr(), projection);
            }
        }
        Ok(())
    }

    /// Adds the region's function to the module and returns its call.
    fn region_call(
        &mut self,
        key: RegionKey,
        fields: Vec<Expr>,
        end: &Expr,
    ) -> Result<Expr, Diagnostic> {
        let region = self.regions.region(key);
        let target = annotation(end)
            .expect("an end annotation")
            .compiler
            .to_string();
        let outlined = &self.outlined[&key];
        let mut params = Vec::new();
        let mut call_args = Vec::new();
        let mut bound = FxMap::default();
        for (var, value) in &outlined.args {
            if self.bind_constants && is_constant(value) {
                bound.insert(var.id(), value.clone());
            } else {
                params.push(var.clone());
                call_args.push(value.clone());
            }
        }
        let (body, ret_type) = match <[Expr; 1]>::try_from(fields) {
            Ok([single]) => {
                let value = &end.as_call().expect("an annotation is a call").args[0];
                (single, value.checked_type().cloned())
            }
            Err(fields) => (Expr::tuple(fields, None), None),
        };
        let body = if bound.is_empty() {
            body
        } else {
            rewrite_post_order(&body, |old, rebuilt| match old.as_var() {
                Some(var) => bound.get(&var.id()).cloned().unwrap_or(rebuilt),
                None => rebuilt,
            })
        };
        let name = format!("{target}_{}_{}", region.func_name, region.id);
        let global = fresh_global_name(self.module, &name);
        if self.module.function(&global).is_some() {
            return Err(error(
                end,
                &format!("Global function {global} already exists"),
            ));
        }
        let function = Function::new(
            FunctionData {
                params,
                body,
                ret_type,
                type_params: Vec::new(),
                attrs: region_function_attrs(&target, &name),
                virtual_device: None,
            },
            None,
        );
        // TVM types the module after adding each function, so later calls
        // see its return type (a tuple-returning one has none written).
        let (typed, diagnostics) = relay_infer::infer_expr(function.expr(), Some(self.module));
        if let Some(error) = diagnostics.into_iter().find(|d| d.is_error()) {
            return Err(error);
        }
        let function = typed.as_function().unwrap_or(function);
        self.module.add_function(&global, function);
        Ok(Expr::call(
            Expr::global(&global, None),
            call_args,
            None,
            None,
        ))
    }
}

/// The attributes of an outlined function. TVM sets `global_symbol`,
/// `Primitive`, `Compiler`, `Inline`; with four entries its map is a hash
/// table, which iterates (and prints) them in this order.
fn region_function_attrs(target: &str, global_symbol: &str) -> DictAttrs {
    DictAttrs::new(vec![
        ("Compiler".into(), AttrValue::Str(target.into())),
        ("Primitive".into(), AttrValue::int_imm(1, DataType::INT32)),
        ("Inline".into(), AttrValue::int_imm(1, DataType::INT32)),
        ("global_symbol".into(), AttrValue::Str(global_symbol.into())),
    ])
}

/// A constant, or a tuple of constants only (what `bind_constants` binds).
fn is_constant(expr: &Expr) -> bool {
    match expr.kind() {
        ExprKind::Constant(_) => true,
        ExprKind::Tuple(fields) => fields
            .iter()
            .all(|f| matches!(f.kind(), ExprKind::Constant(_))),
        _ => false,
    }
}

/// TVM's `GlobalVarSupply::FreshGlobal(name, false)` over the module's
/// names: dots become underscores, a taken name gets `_1`, `_2`, ….
fn fresh_global_name(module: &IRModule, name: &str) -> String {
    let base = name.replace('.', "_");
    if module.function(&base).is_none() {
        return base;
    }
    (1..)
        .map(|n| format!("{base}_{n}"))
        .find(|candidate| module.function(candidate).is_none())
        .expect("some suffix is free")
}

/// Step 4: `Compiler` functions renamed `<prefix>_<name>` (sanitised), with
/// `global_symbol` and the calls to them following.
pub fn mangle_compiler_function_names(module: IRModule, prefix: &str) -> IRModule {
    let renamed: FxMap<String, String> = module
        .functions()
        .filter(|(_, f)| f.attr("Compiler").is_some())
        .map(|(name, _)| (name.to_string(), sanitize_name(&format!("{prefix}_{name}"))))
        .collect();
    let mut mangled = module.clone();
    for (name, _) in module.functions() {
        mangled.remove_function(name);
    }
    for (name, function) in module.functions() {
        let body = rewrite_post_order(function.body(), |_old, rebuilt| {
            let Some(call) = rebuilt.as_call() else {
                return rebuilt;
            };
            let ExprKind::GlobalVar(callee) = call.callee.kind() else {
                return rebuilt;
            };
            match renamed.get(callee.name()) {
                Some(new_name) => {
                    let mut children = vec![Expr::global(new_name, call.callee.span())];
                    children.extend(call.args.iter().cloned());
                    with_children(&rebuilt, &children)
                }
                None => rebuilt,
            }
        });
        let function = function.with_body(body);
        match renamed.get(name) {
            Some(new_name) => {
                let mut data = function.data().clone();
                data.attrs
                    .set("global_symbol", AttrValue::Str(new_name.clone()));
                mangled.add_function(new_name, Function::new(data, function.expr().span()));
            }
            None => mangled.add_function(name, function),
        }
    }
    mangled
}

/// TVM's `SanitizeName`: every non-alphanumeric character becomes `_`.
pub fn sanitize_name(name: &str) -> String {
    // Byte-wise, as TVM's `std::isalnum` test runs on each byte.
    name.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                b as char
            } else {
                '_'
            }
        })
        .collect()
}

fn error(node: &Expr, message: &str) -> Diagnostic {
    Diagnostic::pass_failed_at(node, format!("PartitionGraph: {message}"))
}
