//! `PrintIR(header="", show_meta_data=false)`: logs the module as text and
//! returns it unchanged (a module pass, opt_level 0, as in TVM).

use relay_ir::printer::{print_module, PrintOptions};
use relay_pass_manager::registry::{describe_args, ParamSpec, ParamType};
use relay_pass_manager::{ModulePass, PassInfo, PassKind, PassSpec, PipelineValue};
use std::sync::Arc;

pub(super) fn specs() -> Vec<PassSpec> {
    let params = vec![
        ParamSpec::new(
            "header",
            ParamType::String,
            PipelineValue::Str(String::new()),
            "A line printed before the module.",
        ),
        ParamSpec::new(
            "show_meta_data",
            ParamType::Bool,
            PipelineValue::Bool(false),
            "Print the metadata section too.",
        ),
    ];
    let described = params.clone();
    vec![PassSpec {
        name: "PrintIR".into(),
        info: PassInfo::new("PrintIR", 0, &[]),
        kind: PassKind::Module,
        params,
        description:
            "Log the module as text (to stderr, or to the editor's log) and leave it unchanged."
                .into(),
        factory: Arc::new(move |args| {
            let header = args.string("header");
            let show_meta_data = args.bool("show_meta_data");
            let pass = ModulePass::new(PassInfo::new("PrintIR", 0, &[]), move |module, ctx| {
                let options = PrintOptions {
                    show_meta_data,
                    show_types: true,
                };
                ctx.log(&format!(
                    "PrintIR({header}):\n{}",
                    print_module(&module, &options)
                ));
                Ok(module)
            });
            Ok(Arc::new(pass.with_description(describe_args(
                "PrintIR", &described, args,
            ))))
        }),
    }]
}
