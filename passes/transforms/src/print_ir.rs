//! `PrintIR(header="", show_meta_data=false)`: logs the module as text and
//! returns it unchanged (a module pass, opt_level 0, as in TVM).

use relay_ir::printer::{print_module, PrintOptions};
use relay_ir::IRModule;
use relay_pass_manager::{ParamSpec, PassContext, PassSpec};

pub(super) fn spec() -> PassSpec {
    PassSpec::module("PrintIR", 0)
        .param(ParamSpec::string(
            "header",
            "",
            "A line printed before the module.",
        ))
        .param(ParamSpec::bool(
            "show_meta_data",
            false,
            "Print the metadata section too.",
        ))
        .doc("Log the module as text (to stderr, or to the editor's log) and leave it unchanged.")
        .build(|args| {
            let header = args.string("header");
            let show_meta_data = args.bool("show_meta_data");
            Ok(move |module: IRModule, ctx: &PassContext| {
                let options = PrintOptions {
                    show_meta_data,
                    show_types: true,
                    reparseable: true,
                };
                ctx.log(&format!(
                    "PrintIR({header}):\n{}",
                    print_module(&module, &options)
                ));
                Ok(module)
            })
        })
}
