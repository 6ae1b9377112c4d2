//! `PassBuilder`: a pass's registry entry written as one declaration in the
//! pass's own file:
//!
//! ```
//! # use relay_ir::{Function, IRModule};
//! # use relay_pass_manager::{ParamSpec, PassContext, PassSpec};
//! let spec = PassSpec::function("SplitArgs", 1)
//!     .required(&["InferType"])
//!     .param(ParamSpec::int("max_function_args", -1, "the most arguments a kernel may take"))
//!     .doc("Split concatenates with too many inputs")
//!     .build(|args| {
//!         let _limit = args.int("max_function_args");
//!         Ok(|function: Function, _module: &IRModule, _ctx: &PassContext| Ok(function))
//!     });
//! assert_eq!(spec.params.len(), 1);
//! ```
//!
//! `build` receives the pass's arguments (defaults filled in, types and
//! ranges already checked by the registry) and returns the transformation;
//! the builder wraps it in a [`FunctionPass`], [`ModulePass`] or
//! [`Sequential`] carrying the pass's `PassInfo` and its pipeline text
//! (`FuseOps(fuse_opt_level=2)`), which it writes from the declared
//! parameters, so no factory needs the finished spec.

use crate::registry::{describe_args, ParamSpec, PassArgs, PassKind, PassSpec};
use crate::{FunctionPass, ModulePass, Pass, PassContext, PassInfo, Sequential};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::{Function, IRModule, ModuleProperty};
use std::marker::PhantomData;
use std::sync::Arc;

/// The builder's kind marker for function passes ([`PassSpec::function`]).
pub enum OnFunctions {}
/// The builder's kind marker for module passes ([`PassSpec::module`]).
pub enum OnModule {}
/// The builder's kind marker for sequences of passes ([`PassSpec::sequential`]).
pub enum OfPasses {}

/// A registry entry under construction; `build` finishes it.
#[must_use = "a pass declaration does nothing until `build` makes it a `PassSpec`"]
pub struct PassBuilder<Kind> {
    name: String,
    info: PassInfo,
    params: Vec<ParamSpec>,
    description: String,
    establishes: Option<ModuleProperty>,
    kind: PhantomData<Kind>,
}

impl PassSpec {
    /// Declares a function pass: its transformation runs on every function
    /// that may be optimised (see [`FunctionPass`]). `name` is both the
    /// constructor name in pipelines and the `PassInfo` name unless
    /// [`PassBuilder::info_name`] says otherwise.
    pub fn function(name: &str, opt_level: u32) -> PassBuilder<OnFunctions> {
        PassBuilder::new(name, opt_level)
    }

    /// Declares a module pass: its transformation gets the whole module.
    pub fn module(name: &str, opt_level: u32) -> PassBuilder<OnModule> {
        PassBuilder::new(name, opt_level)
    }

    /// Declares a pass that runs other passes in order (TVM's `Sequential`
    /// with this pass's `PassInfo`).
    pub fn sequential(name: &str, opt_level: u32) -> PassBuilder<OfPasses> {
        PassBuilder::new(name, opt_level)
    }
}

impl<Kind> PassBuilder<Kind> {
    fn new(name: &str, opt_level: u32) -> PassBuilder<Kind> {
        PassBuilder {
            name: name.into(),
            info: PassInfo::new(name, opt_level, &[]),
            params: Vec::new(),
            description: String::new(),
            establishes: None,
            kind: PhantomData,
        }
    }

    /// The passes that run before this one (its `PassInfo::required`).
    pub fn required(mut self, required: &[&str]) -> Self {
        self.info.required = required.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The name the pass's `PassInfo` carries, when it differs from the
    /// constructor's (TVM's `CombineParallelConv2D` is `CombineParallelConv2d`).
    pub fn info_name(mut self, name: &str) -> Self {
        self.info.name = name.into();
        self
    }

    /// Adds a parameter (in the order `relay passes` lists them).
    pub fn param(mut self, param: ParamSpec) -> Self {
        self.params.push(param);
        self
    }

    /// The one-line description `relay passes` and the editor show.
    pub fn doc(mut self, description: &str) -> Self {
        self.description = description.into();
        self
    }

    /// Finishes the entry with a factory that makes the pass from its
    /// arguments and its pipeline text.
    fn finish(
        self,
        kind: PassKind,
        make: impl Fn(PassInfo, String, &PassArgs) -> Result<Arc<dyn Pass>, String>
            + Send
            + Sync
            + 'static,
    ) -> PassSpec {
        let (name, info, params) = (self.name.clone(), self.info.clone(), self.params.clone());
        PassSpec {
            name: self.name,
            info: self.info,
            kind,
            params: self.params,
            description: self.description,
            factory: Arc::new(move |args| {
                make(info.clone(), describe_args(&name, &params, args), args)
            }),
        }
    }
}

impl PassBuilder<OnFunctions> {
    /// Finishes the declaration: `make` turns the arguments into the
    /// function transformation (or says why they are unusable).
    pub fn build<T>(
        self,
        make: impl Fn(&PassArgs) -> Result<T, String> + Send + Sync + 'static,
    ) -> PassSpec
    where
        T: Fn(Function, &IRModule, &PassContext) -> Result<Function, Diagnostic>
            + Send
            + Sync
            + 'static,
    {
        self.finish(PassKind::Function, move |info, description, args| {
            let pass = FunctionPass::new(info, make(args)?).with_description(description);
            Ok(Arc::new(pass))
        })
    }

    /// Finishes the declaration of a pass without parameters.
    pub fn transform(
        self,
        transform: impl Fn(Function, &IRModule, &PassContext) -> Result<Function, Diagnostic>
            + Send
            + Sync
            + 'static,
    ) -> PassSpec {
        let transform = Arc::new(transform);
        self.build(move |_args| {
            let transform = Arc::clone(&transform);
            Ok(move |f: Function, m: &IRModule, ctx: &PassContext| transform(f, m, ctx))
        })
    }
}

impl PassBuilder<OnModule> {
    /// A module property the pass establishes, so that it is skipped while
    /// the module still has it (InferType and `TypeChecked`).
    pub fn establishes(mut self, property: ModuleProperty) -> Self {
        self.establishes = Some(property);
        self
    }

    /// Finishes the declaration: `make` turns the arguments into the module
    /// transformation (or says why they are unusable).
    pub fn build<T>(
        self,
        make: impl Fn(&PassArgs) -> Result<T, String> + Send + Sync + 'static,
    ) -> PassSpec
    where
        T: Fn(IRModule, &PassContext) -> Result<IRModule, Diagnostic> + Send + Sync + 'static,
    {
        let establishes = self.establishes;
        self.finish(PassKind::Module, move |info, description, args| {
            let mut pass = ModulePass::new(info, make(args)?).with_description(description);
            if let Some(property) = establishes {
                pass = pass.establishing(property);
            }
            Ok(Arc::new(pass))
        })
    }

    /// Finishes the declaration of a pass without parameters.
    pub fn transform(
        self,
        transform: impl Fn(IRModule, &PassContext) -> Result<IRModule, Diagnostic>
            + Send
            + Sync
            + 'static,
    ) -> PassSpec {
        let transform = Arc::new(transform);
        self.build(move |_args| {
            let transform = Arc::clone(&transform);
            Ok(move |m: IRModule, ctx: &PassContext| transform(m, ctx))
        })
    }
}

impl PassBuilder<OfPasses> {
    /// Finishes the declaration: `make` lists the passes to run, in order.
    pub fn build(
        self,
        make: impl Fn(&PassArgs) -> Result<Vec<Arc<dyn Pass>>, String> + Send + Sync + 'static,
    ) -> PassSpec {
        self.finish(PassKind::Sequential, move |info, _description, args| {
            Ok(Arc::new(Sequential::with_info(info, make(args)?)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;
    use crate::PipelineValue;

    #[test]
    fn the_factory_describes_the_pass_with_its_non_default_arguments() {
        let spec = PassSpec::function("Scale", 2)
            .required(&["InferType"])
            .param(ParamSpec::int("times", 1, "how often").with_range(0, 9))
            .doc("scales")
            .build(|_args| Ok(|f: Function, _m: &IRModule, _ctx: &PassContext| Ok(f)));
        assert_eq!(spec.kind, PassKind::Function);
        assert_eq!(spec.info, PassInfo::new("Scale", 2, &["InferType"]));
        assert_eq!(spec.description, "scales");
        let make = |value: i64| {
            let args = PassArgs::from_values(vec![("times".into(), PipelineValue::Int(value))]);
            (spec.factory)(&args).map(|pass| pass.describe())
        };
        assert_eq!(make(1).unwrap(), "Scale");
        assert_eq!(make(3).unwrap(), "Scale(times=3)");
    }

    #[test]
    fn the_pipeline_text_uses_the_constructor_name_not_the_info_name() {
        let spec = PassSpec::module("Renamed", 1)
            .info_name("RenamedInTvm")
            .transform(|m, _ctx| Ok(m));
        let pass = (spec.factory)(&PassArgs::default()).unwrap();
        assert_eq!(pass.info().name, "RenamedInTvm");
        assert_eq!(pass.describe(), "Renamed");
    }

    #[test]
    fn a_module_pass_can_establish_a_property() {
        let spec = PassSpec::module("Checks", 0)
            .establishes(ModuleProperty::TypeChecked)
            .transform(|m, _ctx| Ok(m));
        let pass = (spec.factory)(&PassArgs::default()).unwrap();
        assert_eq!(pass.establishes(), Some(ModuleProperty::TypeChecked));
    }

    #[test]
    fn a_factory_error_reaches_the_caller_of_create() {
        registry::register(
            PassSpec::function("RefusesOdd", 0)
                .param(ParamSpec::int("n", 0, "any even number"))
                .build(|args| match args.int("n") % 2 {
                    0 => Ok(|f: Function, _m: &IRModule, _ctx: &PassContext| Ok(f)),
                    _ => Err("n must be even".to_string()),
                }),
        );
        let odd = registry::create("RefusesOdd", &[("n".into(), PipelineValue::Int(3))]);
        assert_eq!(
            odd.err().map(|e| e.message).as_deref(),
            Some("n must be even")
        );
        let even = registry::create("RefusesOdd", &[("n".into(), PipelineValue::Int(4))]);
        assert_eq!(
            even.map(|p| p.describe()).ok().as_deref(),
            Some("RefusesOdd(n=4)")
        );
    }
}
