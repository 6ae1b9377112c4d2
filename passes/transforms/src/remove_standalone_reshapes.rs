//! `RemoveStandaloneReshapes`: after `LowerTE`, a reshape that was fused
//! alone is a `call_lowered` of a primitive function marked
//! `relay.reshape_only`; this pass replaces it by the lowered call whose
//! result it reshapes, as TVM v0.13's `remove_standalone_reshapes.cc` does
//! (the AOT executor runs it; the reshape only changes the view of a flat
//! buffer there). Functions no longer reached from `main` are then removed.
//!
//! TVM's matching, kept exactly:
//! - only the body of `main` is rewritten (closures inside it included);
//! - a `let %v = on_device(call_lowered(…), …)` remembers that `%v` is the
//!   result of that `call_lowered`;
//! - a `call_lowered(@f, (%v, …), metadata={"relay_attrs"=DictAttrs})` whose
//!   `relay_attrs` has a non-zero `relay.reshape_only`, and whose first
//!   argument is such a remembered `%v`, becomes that remembered call (so
//!   the `on_device` binding stays, the reshape's argument tuple goes);
//! - `main` is rebuilt only if something changed (TVM's `Function`
//!   constructor: the virtual device is dropped then), and
//!   `RemoveUnusedFunctions(["main"])` runs in every case.
//!
//! A `call_lowered` whose shape is not `call_lowered(@global, (args…),
//! CallLoweredAttrs)` is an error, with TVM's check message; a module without
//! `main` is an error too.
//!
//! Registered like TVM: a module pass at opt_level 0 requiring nothing.

use crate::remove_unused_functions::remove_unused_functions;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::metadata::table::NodeRef;
use relay_ir::rewrite::{post_order, rewrite_post_order};
use relay_ir::{AttrValue, Call, Expr, ExprKind, Function, FunctionData, IRModule, VarId};
use relay_pass_manager::registry::PassSpec;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("RemoveStandaloneReshapes", 0)
        .doc(
            "After LowerTE: replace a call_lowered of a reshape-only primitive by the lowered call \
             it reshapes (let-bound under on_device), then drop functions main no longer reaches",
        )
        .transform(|module, _ctx| remove_standalone_reshapes(module))
}

/// Rewrites `main`'s body and removes the functions it no longer reaches.
pub fn remove_standalone_reshapes(mut module: IRModule) -> Result<IRModule, Diagnostic> {
    let Some(main) = module.function("main").cloned() else {
        return Err(Diagnostic::pass_failed(
            "RemoveStandaloneReshapes: Cannot find global var \"main\" in the Module",
        ));
    };
    let body = rewrite_body(main.body())?;
    if !body.ptr_eq(main.body()) {
        let data = main.data();
        let rebuilt = Function::new(
            FunctionData {
                body,
                virtual_device: None,
                ..data.clone()
            },
            None,
        );
        module.add_function("main", rebuilt);
    }
    remove_unused_functions(module, &["main".to_string()])
}

/// The body with every standalone reshape replaced.
fn rewrite_body(body: &Expr) -> Result<Expr, Diagnostic> {
    // The let variables bound to each value node: a value is rewritten
    // before the let's body, so when a reshape is reached the variable it
    // reads already knows its lowered call.
    let mut let_vars_of_value: HashMap<usize, Vec<VarId>> = HashMap::default();
    for node in post_order(body) {
        if let ExprKind::Let { var, value, .. } = node.kind() {
            let_vars_of_value
                .entry(value.addr())
                .or_default()
                .push(var.id());
        }
    }
    let mut lowered_call_of_var: HashMap<VarId, Expr> = HashMap::default();
    let mut failure: Option<Diagnostic> = None;
    let rewritten = rewrite_post_order(body, |pre, post| {
        if failure.is_some() {
            return post;
        }
        if let Some(vars) = let_vars_of_value.get(&pre.addr()) {
            if let Some(lowered) = lowered_call_under_on_device(&post) {
                for var in vars {
                    lowered_call_of_var.insert(*var, lowered.clone());
                }
            }
        }
        let Some(call) = post.as_call() else {
            return post;
        };
        let props = match call_lowered_props(call) {
            Ok(Some(props)) => props,
            Ok(None) => return post,
            Err(message) => {
                failure = Some(Diagnostic::pass_failed_at(
                    pre,
                    format!("RemoveStandaloneReshapes: {message}"),
                ));
                return post;
            }
        };
        if !props.reshape_only {
            return post;
        }
        props
            .arguments
            .first()
            .and_then(Expr::as_var)
            .and_then(|var| lowered_call_of_var.get(&var.id()).cloned())
            .unwrap_or(post)
    });
    match failure {
        Some(error) => Err(error),
        None => Ok(rewritten),
    }
}

/// `call_lowered(…)` when `value` is `on_device(call_lowered(…), …)`.
fn lowered_call_under_on_device(value: &Expr) -> Option<Expr> {
    let call = value.as_call()?;
    if call.callee.as_op()?.name != "on_device" {
        return None;
    }
    let body = call.args.first()?;
    let inner = body.as_call()?;
    (inner.callee.as_op()?.name == "call_lowered").then(|| body.clone())
}

/// What TVM's `GetCallLoweredProps` and `IsReshapeOnly` read from a call.
struct CallLoweredProps<'a> {
    arguments: &'a [Expr],
    reshape_only: bool,
}

/// `Ok(None)` for a call of anything but `call_lowered`; an error with
/// TVM's check message for a `call_lowered` of another shape.
fn call_lowered_props(call: &Call) -> Result<Option<CallLoweredProps<'_>>, String> {
    if call.callee.as_op().map(|op| op.name.as_str()) != Some("call_lowered") {
        return Ok(None);
    }
    if call.args.len() != 2 {
        return Err("Expected call_lowered to have 2 arguments.".into());
    }
    if !matches!(call.args[0].kind(), ExprKind::GlobalVar(_)) {
        return Err("Expected first arg to call_lowered to be a GlobalVar.".into());
    }
    let ExprKind::Tuple(arguments) = call.args[1].kind() else {
        return Err("Expected second arg to call_lowered to be a Tuple of input arguments.".into());
    };
    let Some(attrs) = &call.attrs else {
        return Err("Expecting call_lowered to have attributes.".into());
    };
    if attrs.type_key() != "relay.attrs.CallLoweredAttrs" {
        return Err(format!(
            "Expected call_lowered op to have CallLoweredAttrs, but found {}",
            attrs.type_key()
        ));
    }
    let reshape_only = attrs
        .get("metadata")
        .is_some_and(metadata_marks_reshape_only);
    Ok(Some(CallLoweredProps {
        arguments,
        reshape_only,
    }))
}

/// Whether the `metadata` map's `relay_attrs` (a `DictAttrs`) holds a
/// non-zero `relay.reshape_only`, as TVM's `HasNonzeroAttr` reads it.
fn metadata_marks_reshape_only(metadata: &AttrValue) -> bool {
    const KEY: &str = "relay.reshape_only";
    match metadata {
        AttrValue::Map(entries) => entries
            .iter()
            .find(|(key, _)| key == "relay_attrs")
            .is_some_and(|(_, relay_attrs)| match relay_attrs {
                AttrValue::Map(dict) => dict
                    .iter()
                    .any(|(key, value)| key == KEY && value.as_int().is_some_and(|v| v != 0)),
                AttrValue::Meta(object) => NodeRef::new(&object.graph, object.index)
                    .is_ok_and(|node| dict_attrs_flag(node, KEY)),
                _ => false,
            }),
        AttrValue::Meta(object) => {
            let Ok(map) = NodeRef::new(&object.graph, object.index) else {
                return false;
            };
            map_value(map, "relay_attrs").is_some_and(|node| dict_attrs_flag(node, KEY))
        }
        _ => false,
    }
}

/// The value of `key` in a metadata `Map` node.
fn map_value<'g>(map: NodeRef<'g>, key: &str) -> Option<NodeRef<'g>> {
    use relay_ir::metadata::table::MapKey;
    map.map_entries().ok()?.into_iter().find_map(|(k, value)| {
        let name = match k {
            MapKey::Str(s) => Some(s),
            MapKey::Node(node) => node.as_str().ok(),
        };
        (name == Some(key)).then_some(value)
    })
}

/// Whether a metadata `DictAttrs` node has a non-zero integer at `key`.
fn dict_attrs_flag(dict_attrs: NodeRef<'_>, key: &str) -> bool {
    if dict_attrs.type_key() != "DictAttrs" {
        return false;
    }
    let Some(value) = dict_attrs
        .field("__dict__")
        .ok()
        .and_then(|dict| map_value(dict, key))
    else {
        return false;
    };
    match value.type_key() {
        "IntImm" => value.int_field("value").is_ok_and(|v| v != 0),
        "runtime.Bool" | "Bool" => value.int_field("value").is_ok_and(|v| v != 0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::build::op_call;
    use relay_ir::Attrs;

    fn lowered_attrs(relay_attrs: Vec<(String, AttrValue)>) -> Attrs {
        Attrs::new(
            "relay.attrs.CallLoweredAttrs",
            vec![(
                "metadata".into(),
                AttrValue::Map(vec![("relay_attrs".into(), AttrValue::Map(relay_attrs))]),
            )],
        )
    }

    #[test]
    fn the_flag_is_read_from_an_in_memory_map_too() {
        let flagged = lowered_attrs(vec![("relay.reshape_only".into(), AttrValue::Int(1))]);
        let zero = lowered_attrs(vec![("relay.reshape_only".into(), AttrValue::Int(0))]);
        assert!(metadata_marks_reshape_only(
            flagged.get("metadata").unwrap()
        ));
        assert!(!metadata_marks_reshape_only(zero.get("metadata").unwrap()));
    }

    #[test]
    fn a_malformed_call_lowered_fails_with_tvms_check_message() {
        let global = Expr::global("f", None);
        let not_a_tuple = op_call("call_lowered", vec![global.clone(), global]);
        let call = not_a_tuple.as_call().unwrap();
        assert_eq!(
            call_lowered_props(call).err().unwrap(),
            "Expected second arg to call_lowered to be a Tuple of input arguments."
        );
    }
}
