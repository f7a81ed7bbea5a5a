//! Every WGSL kernel parses and validates with naga, with no GPU needed, and its Rust parameter
//! struct has the layout of the uniform it declares.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly"
)]

use gradlab::gpu::kernels;

#[test]
fn every_kernel_is_valid_wgsl_with_its_entry_points() {
    assert!(kernels::all().next().is_some());
    for kernel in kernels::all() {
        let source = kernel.wgsl();
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|e| panic!("{}: {}", kernel.name, e.emit_to_string(&source)));
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: {e:?}", kernel.name));
        assert!(
            module.entry_points.iter().any(|p| p.name == kernel.entry_point),
            "{} lacks entry point {}",
            kernel.name,
            kernel.entry_point
        );
    }
}

/// The uniform struct at `@binding(0)` as (size, [(field, offset, type)]), from naga's layout.
fn uniform_layout(source: &str) -> (u32, Vec<(String, u32, String)>) {
    let module = naga::front::wgsl::parse_str(source).unwrap();
    let (_, uniform) = module
        .global_variables
        .iter()
        .find(|(_, v)| {
            v.space == naga::AddressSpace::Uniform && v.binding.as_ref().is_some_and(|b| b.group == 0 && b.binding == 0)
        })
        .expect("a uniform at @group(0) @binding(0)");
    let naga::TypeInner::Struct { members, span } = &module.types[uniform.ty].inner else {
        panic!("the uniform is not a struct");
    };
    let fields = members
        .iter()
        .map(|m| {
            let kind = match module.types[m.ty].inner {
                naga::TypeInner::Scalar(naga::Scalar {
                    kind: naga::ScalarKind::Uint,
                    width: 4,
                }) => "u32",
                naga::TypeInner::Scalar(naga::Scalar {
                    kind: naga::ScalarKind::Float,
                    width: 4,
                }) => "f32",
                ref other => panic!("unexpected uniform field type {other:?}"),
            };
            (m.name.clone().unwrap_or_default(), m.offset, kind.to_string())
        })
        .collect();
    (*span, fields)
}

/// GpuOps sizes top_layer_and_output's dispatch and gates its widths by MAX_FUSED_TOP_WIDTH:
/// one output vec4 per invocation of a workgroup, so the kernel's workgroup size and its
/// MAX_TOP_VEC4S (the size of its workgroup memory) must both be that width over 4.
#[test]
fn the_fused_top_layer_kernel_is_as_wide_as_its_gate() {
    use gradlab::gpu::ops::MAX_FUSED_TOP_WIDTH;
    let kernel = kernels::TOP_LAYER_AND_OUTPUT.info;
    let vec4s = MAX_FUSED_TOP_WIDTH / 4;
    assert_eq!(kernel.workgroup_size, vec4s);
    assert!(
        kernel.source.contains(&format!("const MAX_TOP_VEC4S: u32 = {vec4s}u;")),
        "MAX_TOP_VEC4S of top_layer_and_output.wgsl is not {vec4s}"
    );
}

/// Nothing is read from WGSL text at run time: each kernel's workgroup size and storage
/// bindings are Rust constants, which must be what naga reads in the shader (a wrong size would
/// dispatch too few invocations; a wrong access, a bind group the pipeline refuses). Each
/// kernel's handle is its place: its family's in FAMILIES, its own in the family's list.
#[test]
fn each_kernels_workgroup_size_and_bindings_are_the_shaders() {
    let places = kernels::FAMILIES.iter().enumerate().flat_map(|(family, kernels)| {
        kernels
            .iter()
            .enumerate()
            .map(move |(index, kernel)| (family, index, kernel))
    });
    for (family, index, kernel) in places {
        assert_eq!(
            kernel.id,
            kernels::KernelId::new(family, index),
            "{}: its handle is its place",
            kernel.name
        );
        let module = naga::front::wgsl::parse_str(&kernel.wgsl()).unwrap();
        let entry = module
            .entry_points
            .iter()
            .find(|p| p.name == kernel.entry_point)
            .unwrap();
        assert_eq!([kernel.workgroup_size, 1, 1], entry.workgroup_size, "{}", kernel.name);
        let mut storage: Vec<(u32, kernels::Access)> = module
            .global_variables
            .iter()
            .filter_map(|(_, v)| match (v.space, &v.binding) {
                (naga::AddressSpace::Storage { access }, Some(b)) if b.group == 0 => {
                    let access = if access.contains(naga::StorageAccess::STORE) {
                        kernels::Access::ReadWrite
                    } else {
                        kernels::Access::Read
                    };
                    Some((b.binding, access))
                }
                _ => None,
            })
            .collect();
        storage.sort_by_key(|(binding, _)| *binding);
        let declared: Vec<(u32, kernels::Access)> = kernel
            .storage
            .iter()
            .enumerate()
            .map(|(i, a)| (i as u32 + 1, *a))
            .collect();
        assert_eq!(
            storage, declared,
            "{}: storage bindings 1.. and their access",
            kernel.name
        );
    }
}

#[test]
fn every_parameter_struct_matches_its_wgsl_uniform_field_for_field() {
    for kernel in kernels::all() {
        let (size, fields) = uniform_layout(&kernel.wgsl());
        assert_eq!(size as usize, kernel.params_size, "{}: struct size", kernel.name);
        let rust: Vec<(String, u32, String)> = kernel
            .params_fields
            .iter()
            .map(|(name, offset, ty)| (name.to_string(), *offset as u32, ty.to_string()))
            .collect();
        assert_eq!(fields, rust, "{}: fields, offsets and types", kernel.name);
    }
}

#[test]
fn the_layout_check_notices_a_reordered_field() {
    let source = kernels::LINEAR_FORWARD.info.wgsl();
    let (_, fields) = uniform_layout(&source);
    let swapped = source.replacen(
        "    rows: u32,\n    fan_in: u32,",
        "    fan_in: u32,\n    rows: u32,",
        1,
    );
    assert_ne!(swapped, source, "the test edits the struct");
    let (_, swapped_fields) = uniform_layout(&swapped);
    assert_ne!(fields, swapped_fields);
}

/// One source of truth: the uniform structs, their binding and the mode codes are generated
/// from the Rust definitions (`KernelInfo::wgsl`), so no kernel's own source declares a uniform
/// or a parameter struct, or compares a mode with a bare number; every generated mode constant
/// is the Rust enum's value.
#[test]
fn no_kernel_writes_its_uniform_or_a_mode_code_by_hand() {
    let code = |line: &str| line.split("//").next().unwrap_or("").to_string();
    for kernel in kernels::all() {
        for (n, line) in kernel.source.lines().map(code).enumerate() {
            let at = format!("{} line {}: {line}", kernel.name, n + 1);
            assert!(!line.contains("var<uniform>"), "{at}: the uniform is generated");
            assert!(
                !(line.trim_start().starts_with("struct ") && line.contains("Params")),
                "{at}: parameter structs are generated"
            );
            for keyword in ["case ", "mode == ", "kind == ", "mode != ", "kind != "] {
                for (i, _) in line.match_indices(keyword) {
                    let next = line[i + keyword.len()..].trim_start().chars().next();
                    assert!(
                        !next.is_some_and(|c| c.is_ascii_digit()),
                        "{at}: a mode code written as a number"
                    );
                }
            }
        }
        let module = naga::front::wgsl::parse_str(&kernel.wgsl()).unwrap();
        for (name, value) in kernels::MODE_CONSTANTS {
            let constant = module
                .constants
                .iter()
                .find(|(_, c)| c.name.as_deref() == Some(name))
                .unwrap_or_else(|| panic!("{}: {name} is generated", kernel.name))
                .1;
            assert_eq!(
                module.global_expressions[constant.init],
                naga::Expression::Literal(naga::Literal::U32(value)),
                "{}: {name}",
                kernel.name
            );
        }
    }
}

#[test]
fn the_validator_rejects_a_broken_kernel() {
    let broken = "@compute @workgroup_size(64) fn main() { let x: f32 = 1u; }";
    let parsed = naga::front::wgsl::parse_str(broken);
    let rejected = match parsed {
        Err(_) => true,
        Ok(module) => {
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
                .validate(&module)
                .is_err()
        }
    };
    assert!(rejected);
}

#[test]
fn every_wgsl_file_is_listed_and_so_validated() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/gpu/src/kernels");
    let mut files: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            if path.extension()? != "wgsl" {
                return None;
            }
            Some(path.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    files.sort();
    let mut listed: Vec<String> = kernels::all().map(|k| k.name.to_string()).collect();
    assert!(
        folder.join("shared/activation.wgsl").exists(),
        "shared code lives in shared/"
    );
    listed.sort();
    assert_eq!(files, listed);
}
