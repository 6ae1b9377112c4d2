//! Virtual devices as PlanDevices reasons about them (TVM's `VirtualDevice`,
//! `include/tvm/target/virtual_device.h`): a device type, a virtual device
//! id, a target and a memory scope, each possibly unconstrained, with
//! TVM's `Join` and `Default`.
//!
//! In the IR a virtual device is a metadata object (`meta[VirtualDevice][i]`);
//! [`DeviceIo`] reads one into a [`VirtualDevice`] (its target matched
//! structurally against the configuration's targets, as TVM's
//! `CanonicalTarget` does) and writes one back as a metadata object, the
//! same object for equal devices so the printer numbers them once.

use super::config::CompilationConfig;
use relay_ir::metadata::{subgraphs_equal, NodeRef, ObjectGraphBuilder};
use relay_ir::op::unconstrained_virtual_device;
use relay_ir::{AttrValue, MetaObject};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// A target of the [`CompilationConfig`] (index 0 is the host target).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TargetId(pub usize);

/// A virtual device; `-1`, `None` and `""` are "unconstrained".
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VirtualDevice {
    pub device_type: i64,
    pub id: i64,
    pub target: Option<TargetId>,
    pub scope: String,
}

impl VirtualDevice {
    pub fn unconstrained() -> VirtualDevice {
        VirtualDevice {
            device_type: -1,
            id: -1,
            target: None,
            scope: String::new(),
        }
    }

    pub fn is_fully_unconstrained(&self) -> bool {
        self.device_type < 0 && self.id < 0 && self.target.is_none() && self.scope.is_empty()
    }

    /// TVM's `IsFullyConstrained` (a memory scope is part of it).
    pub fn is_fully_constrained(&self) -> bool {
        self.target.is_some() && self.id != -1 && !self.scope.is_empty()
    }

    /// TVM's `VirtualDevice::Join`: field by field, `None` on a conflict.
    pub fn join(lhs: &VirtualDevice, rhs: &VirtualDevice) -> Option<VirtualDevice> {
        if lhs == rhs {
            return Some(lhs.clone());
        }
        fn pick<T: PartialEq + Clone>(l: &T, r: &T, set: impl Fn(&T) -> bool) -> Option<T> {
            if set(l) {
                (!set(r) || l == r).then(|| l.clone())
            } else {
                Some(r.clone())
            }
        }
        Some(VirtualDevice {
            device_type: pick(&lhs.device_type, &rhs.device_type, |d| *d > 0)?,
            id: pick(&lhs.id, &rhs.id, |i| *i >= 0)?,
            target: pick(&lhs.target, &rhs.target, Option::is_some)?,
            scope: pick(&lhs.scope, &rhs.scope, |s| !s.is_empty())?,
        })
    }

    /// TVM's `VirtualDevice::Default`: `lhs` with its unconstrained fields
    /// taken from `rhs` (the target only if it suits the device type).
    pub fn default_from(
        lhs: &VirtualDevice,
        rhs: &VirtualDevice,
        config: &CompilationConfig,
    ) -> VirtualDevice {
        if lhs == rhs {
            return lhs.clone();
        }
        let device_type = if lhs.device_type > 0 {
            lhs.device_type
        } else {
            rhs.device_type
        };
        let target = lhs.target.or_else(|| {
            rhs.target
                .filter(|t| config.target(*t).device_type() == device_type)
        });
        VirtualDevice {
            device_type,
            id: if lhs.id >= 0 { lhs.id } else { rhs.id },
            target,
            scope: if lhs.scope.is_empty() {
                rhs.scope.clone()
            } else {
                lhs.scope.clone()
            },
        }
    }

    /// TVM's printed form (`VirtualDevice(device_type=1, …)`), targets
    /// without their object address.
    pub fn describe(&self, config: &CompilationConfig) -> String {
        if self.is_fully_unconstrained() {
            return "VirtualDevice(?)".to_string();
        }
        let mut parts = Vec::new();
        if self.device_type > 0 {
            parts.push(format!("device_type={}", self.device_type));
        }
        if self.id >= 0 {
            parts.push(format!("virtual_device_id={}", self.id));
        }
        if let Some(t) = self.target {
            parts.push(format!(
                "target={}",
                config.target(t).describe(&config.targets()[0])
            ));
        }
        if !self.scope.is_empty() {
            parts.push(format!("memory_scope='{}'", self.scope));
        }
        let mut out = String::from("VirtualDevice(");
        let _ = write!(out, "{})", parts.join(", "));
        out
    }
}

/// Reads and writes virtual devices as IR attribute values.
pub struct DeviceIo<'c> {
    pub config: &'c CompilationConfig,
    written: HashMap<VirtualDevice, AttrValue>,
}

impl<'c> DeviceIo<'c> {
    pub fn new(config: &'c CompilationConfig) -> DeviceIo<'c> {
        DeviceIo {
            config,
            written: HashMap::new(),
        }
    }

    /// The virtual device an attribute value holds (null: unconstrained).
    pub fn read(&self, value: Option<&AttrValue>) -> Result<VirtualDevice, String> {
        let m = match value {
            None | Some(AttrValue::Null) => return Ok(VirtualDevice::unconstrained()),
            Some(AttrValue::Meta(m)) => m,
            Some(other) => return Err(format!("expected a VirtualDevice, found {other:?}")),
        };
        let node = NodeRef::new(&m.graph, m.index).map_err(|e| e.to_string())?;
        if node.is_null() {
            return Ok(VirtualDevice::unconstrained());
        }
        if node.type_key() != "VirtualDevice" {
            return Err(format!(
                "expected a VirtualDevice, found a `{}`",
                node.type_key()
            ));
        }
        let int = |name: &str| node.int_field(name).map_err(|e| e.to_string());
        let scope = match node.opt_field("memory_scope").map_err(|e| e.to_string())? {
            Some(s) => s.as_str().map_err(|e| e.to_string())?.to_string(),
            None => String::new(),
        };
        let target = match node.opt_field("target").map_err(|e| e.to_string())? {
            None => None,
            Some(t) => Some(self.match_target(&m.graph, t.index())?),
        };
        Ok(VirtualDevice {
            device_type: int("device_type_int")?,
            id: int("virtual_device_id")?,
            target,
            scope,
        })
    }

    /// The configuration's target structurally equal to node `index`.
    fn match_target(
        &self,
        graph: &relay_ir::metadata::ObjectGraph,
        index: usize,
    ) -> Result<TargetId, String> {
        let targets = self.config.targets();
        targets
            .iter()
            .position(|t| subgraphs_equal(graph, index, &t.graph, t.graph.root))
            .map(TargetId)
            .ok_or_else(|| {
                let known = targets
                    .iter()
                    .map(|t| t.describe(&targets[0]))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(
                    "a virtual device's target is none of PlanDevices' targets ({known}); \
                     give its kind in `targets`"
                )
            })
    }

    /// `vd` as an attribute value: the same object for equal devices.
    pub fn write(&mut self, vd: &VirtualDevice) -> AttrValue {
        if vd.is_fully_unconstrained() {
            return unconstrained_virtual_device();
        }
        if let Some(v) = self.written.get(vd) {
            return v.clone();
        }
        let mut b = ObjectGraphBuilder::new();
        let target = vd.target.map(|t| self.config.build_target(&mut b, t));
        let root = b.virtual_device(vd.device_type, vd.id, target, &vd.scope);
        let graph = Arc::new(b.build(root));
        let value = AttrValue::Meta(MetaObject {
            index: graph.root,
            graph,
        });
        self.written.insert(vd.clone(), value.clone());
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vd(device_type: i64, id: i64, scope: &str) -> VirtualDevice {
        VirtualDevice {
            device_type,
            id,
            target: None,
            scope: scope.to_string(),
        }
    }

    #[test]
    fn join_and_default() {
        assert_eq!(
            VirtualDevice::join(&vd(1, -1, ""), &vd(-1, 0, "a")),
            Some(vd(1, 0, "a"))
        );
        assert_eq!(VirtualDevice::join(&vd(1, -1, ""), &vd(2, 0, "")), None);
        assert_eq!(VirtualDevice::join(&vd(1, 0, "a"), &vd(1, 0, "b")), None);
        let config = CompilationConfig::new(&["llvm".into()], None, None).unwrap();
        assert_eq!(
            VirtualDevice::default_from(&vd(-1, -1, "x"), &config.default_primitive, &config),
            VirtualDevice {
                device_type: 1,
                id: 0,
                target: config.default_primitive.target,
                scope: "x".into()
            }
        );
    }

    #[test]
    fn written_devices_read_back() {
        let config = CompilationConfig::new(&["llvm".into(), "cuda".into()], None, None).unwrap();
        let mut io = DeviceIo::new(&config);
        let gpu = config.canonical(&vd(2, 0, "")).unwrap();
        let value = io.write(&gpu);
        assert_eq!(io.read(Some(&value)).unwrap(), gpu);
        assert!(
            matches!((io.write(&gpu), value), (AttrValue::Meta(a), AttrValue::Meta(b)) if a == b)
        );
        assert!(io
            .read(Some(&unconstrained_virtual_device()))
            .unwrap()
            .is_fully_unconstrained());
    }
}
