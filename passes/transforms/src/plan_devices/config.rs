//! The compilation configuration PlanDevices plans for (TVM's
//! `CompilationConfig`, `src/target/compilation_config.cc`): the host
//! target, the primitive targets (each with the host as its host), the
//! default virtual device for primitive operations and the host virtual
//! device, and the canonical form of a virtual device.
//!
//! Targets are given by kind name. Only the kinds whose `Target` object we
//! can write exactly as TVM v0.13 builds it are accepted: `llvm` (device
//! type 1, keys `cpu`) and `cuda` (device type 2, keys `cuda`, `gpu`, the
//! kind's defaults `max_num_threads=1024`, `thread_warp_size=32`, and the
//! `arch=sm_50` TVM's CUDA target parser falls back to on a machine
//! without a GPU).

use super::virtual_device::{TargetId, VirtualDevice};
use relay_ir::dtype::DataType;
use relay_ir::metadata::{ObjRef, ObjectGraph, ObjectGraphBuilder, Value};

/// A target kind we can build.
struct KindInfo {
    name: &'static str,
    device_type: i64,
    keys: &'static [&'static str],
    /// `(name, value)` of the attrs TVM's target parser sets by default.
    attrs: &'static [(&'static str, KindAttr)],
}

#[derive(Clone, Copy)]
enum KindAttr {
    Int(i64),
    Str(&'static str),
}

const KINDS: &[KindInfo] = &[
    KindInfo {
        name: "llvm",
        device_type: 1,
        keys: &["cpu"],
        attrs: &[],
    },
    KindInfo {
        name: "cuda",
        device_type: 2,
        keys: &["cuda", "gpu"],
        attrs: &[
            ("arch", KindAttr::Str("sm_50")),
            ("max_num_threads", KindAttr::Int(1024)),
            ("thread_warp_size", KindAttr::Int(32)),
        ],
    },
];

/// The target kind names PlanDevices accepts, for messages and docs.
pub fn known_kinds() -> String {
    KINDS
        .iter()
        .map(|k| format!("`{}`", k.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One target of the configuration.
pub struct TargetInfo {
    kind: &'static KindInfo,
    /// Whether it has the host target as its host (primitive targets do,
    /// the host target itself does not).
    with_host: bool,
    /// The target as a metadata object (root of its own graph), what input
    /// targets are compared with structurally.
    pub graph: ObjectGraph,
}

impl TargetInfo {
    pub fn device_type(&self) -> i64 {
        self.kind.device_type
    }

    /// TVM's `Target::ToDebugString()` without the object address.
    pub fn describe(&self, host: &TargetInfo) -> String {
        let keys = self
            .kind
            .keys
            .iter()
            .map(|k| format!("'{k}'"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut text = format!("Target(kind='{}', keys={{{keys}}}", self.kind.name);
        if self.with_host {
            text.push_str(&format!(", host={}", host.describe(host)));
        }
        text.push(')');
        text
    }
}

/// TVM's `CompilationConfig` for PlanDevices.
pub struct CompilationConfig {
    /// Index 0 is the host target; the primitive targets follow in the
    /// order given.
    targets: Vec<TargetInfo>,
    pub default_primitive: VirtualDevice,
    pub host: VirtualDevice,
}

fn kind(name: &str) -> Result<&'static KindInfo, String> {
    let name = name.trim();
    if name.split_whitespace().count() > 1 {
        return Err(format!(
            "target `{name}`: PlanDevices takes target kinds without options ({})",
            known_kinds()
        ));
    }
    KINDS.iter().find(|k| k.name == name).ok_or_else(|| {
        format!(
            "target `{name}` is not one PlanDevices can build (known: {})",
            known_kinds()
        )
    })
}

/// Adds the `Target` object of `kind` (with `host` as its host) to `b`.
fn build_target(b: &mut ObjectGraphBuilder, kind: &KindInfo, host: Option<&KindInfo>) -> ObjRef {
    let host_ref = host.map(|h| build_target(b, h, None));
    let name = b.string(kind.name);
    let key_refs: Vec<Option<ObjRef>> = kind.keys.iter().map(|k| Some(b.string(k))).collect();
    let default_keys = b.array(key_refs.clone());
    let kind_ref = b.object(
        "TargetKind",
        vec![
            ("name", Value::Obj(name)),
            ("default_device_type", Value::Int(kind.device_type)),
            ("default_keys", Value::Obj(default_keys)),
        ],
    );
    let tag = b.string("");
    let keys = b.array(key_refs);
    let attr_entries: Vec<(&str, Option<ObjRef>)> = kind
        .attrs
        .iter()
        .map(|(name, value)| {
            let v = match value {
                KindAttr::Int(i) => b.int_imm(DataType::INT32, *i),
                KindAttr::Str(s) => b.string(s),
            };
            (*name, Some(v))
        })
        .collect();
    let attrs = b.str_map(attr_entries);
    let features = b.str_map(Vec::new());
    b.object(
        "Target",
        vec![
            ("kind", Value::Obj(kind_ref)),
            ("tag", Value::Obj(tag)),
            ("keys", Value::Obj(keys)),
            ("attrs", Value::Obj(attrs)),
            ("features", Value::Obj(features)),
            ("host", host_ref.into()),
        ],
    )
}

impl CompilationConfig {
    /// TVM's `CompilationConfigNode::Init` for `targets` (kind names), an
    /// optional host kind and `relay.fallback_device_type`.
    pub fn new(
        targets: &[String],
        host: Option<&str>,
        fallback_device_type: Option<i64>,
    ) -> Result<CompilationConfig, String> {
        if targets.is_empty() {
            return Err("Require at least one target".to_string());
        }
        let kinds = targets
            .iter()
            .map(|t| kind(t))
            .collect::<Result<Vec<_>, _>>()?;
        let host_kind = match host {
            Some(h) => kind(h)?,
            // The first CPU-like target, else TVM's default CPU target.
            None => kinds
                .iter()
                .copied()
                .find(|k| k.device_type == 1)
                .unwrap_or(&KINDS[0]),
        };
        let mut seen = Vec::new();
        for k in &kinds {
            if seen.contains(&k.name) {
                return Err(format!(
                    "Multiple targets have been givenfor the same device kind '{}'",
                    k.name
                ));
            }
            seen.push(k.name);
        }
        let make = |kind: &'static KindInfo, with_host: bool| {
            let mut b = ObjectGraphBuilder::new();
            let root = build_target(&mut b, kind, with_host.then_some(host_kind));
            TargetInfo {
                kind,
                with_host,
                graph: b.build(root),
            }
        };
        let mut infos = vec![make(host_kind, false)];
        infos.extend(kinds.iter().map(|k| make(k, true)));
        let default_type = match fallback_device_type {
            Some(v) if v <= 0 => {
                return Err(format!(
                    "The 'relay.fallback_device_type' pass attribute is set to an invalid \
                     device type {v}"
                ))
            }
            Some(v) => v,
            None => {
                let mut types: Vec<i64> = kinds.iter().map(|k| k.device_type).collect();
                types.dedup();
                if types.len() == 1 {
                    types[0]
                } else {
                    1
                }
            }
        };
        let mut config = CompilationConfig {
            targets: infos,
            default_primitive: VirtualDevice::unconstrained(),
            host: VirtualDevice {
                device_type: host_kind.device_type,
                id: 0,
                target: Some(TargetId(0)),
                scope: String::new(),
            },
        };
        config.default_primitive = config.canonical(&VirtualDevice {
            device_type: default_type,
            id: 0,
            target: None,
            scope: String::new(),
        })?;
        Ok(config)
    }

    pub fn targets(&self) -> &[TargetInfo] {
        &self.targets
    }

    pub fn target(&self, id: TargetId) -> &TargetInfo {
        &self.targets[id.0]
    }

    /// TVM's `CanonicalVirtualDevice`: a device type without a target gets
    /// the first primitive target of that device type.
    pub fn canonical(&self, vd: &VirtualDevice) -> Result<VirtualDevice, String> {
        let mut out = vd.clone();
        if out.target.is_none() && out.device_type > 0 {
            let found = self
                .targets
                .iter()
                .enumerate()
                .skip(1)
                .find(|(_, t)| t.device_type() == out.device_type);
            match found {
                Some((i, _)) => out.target = Some(TargetId(i)),
                None => {
                    let mut msg = format!(
                        "No target is specified for device type {}. The available device \
                         types and targets are:\n",
                        out.device_type
                    );
                    for t in &self.targets[1..] {
                        msg.push_str(&format!(
                            "  {}-> {}\n",
                            t.device_type(),
                            t.describe(&self.targets[0])
                        ));
                    }
                    return Err(msg);
                }
            }
        }
        Ok(out)
    }

    /// Builds `vd`'s target into `b`.
    pub fn build_target(&self, b: &mut ObjectGraphBuilder, id: TargetId) -> ObjRef {
        let info = &self.targets[id.0];
        build_target(b, info.kind, info.with_host.then_some(self.targets[0].kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_tvm() {
        let both = CompilationConfig::new(&["llvm".into(), "cuda".into()], None, None).unwrap();
        // Two device types and no fallback: the CPU.
        assert_eq!(both.default_primitive.device_type, 1);
        assert_eq!(both.default_primitive.target, Some(TargetId(1)));
        let gpu = CompilationConfig::new(&["llvm".into(), "cuda".into()], None, Some(2)).unwrap();
        assert_eq!(gpu.default_primitive.target, Some(TargetId(2)));
        assert_eq!(gpu.host.target, Some(TargetId(0)));
        let only_gpu = CompilationConfig::new(&["cuda".into()], None, None).unwrap();
        assert_eq!(only_gpu.default_primitive.device_type, 2);
        let err = CompilationConfig::new(&["llvm".into()], None, Some(2))
            .err()
            .unwrap();
        assert!(
            err.starts_with("No target is specified for device type 2."),
            "{err}"
        );
        assert!(CompilationConfig::new(&["vulkan".into()], None, None).is_err());
    }
}
