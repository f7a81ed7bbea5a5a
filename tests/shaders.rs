//! Every WGSL kernel parses and validates with naga, with no GPU needed.

use gradlab::gpu::kernels;

#[test]
fn every_kernel_is_valid_wgsl_with_its_entry_points() {
    assert!(!kernels::ALL.is_empty());
    for kernel in kernels::ALL {
        let module = naga::front::wgsl::parse_str(kernel.source)
            .unwrap_or_else(|e| panic!("{}: {}", kernel.name, e.emit_to_string(kernel.source)));
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: {e:?}", kernel.name));
        for entry in kernel.entry_points {
            assert!(
                module.entry_points.iter().any(|p| p.name == *entry),
                "{} lacks entry point {entry}",
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
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gpu/kernels");
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
    let mut listed: Vec<String> = kernels::ALL.iter().map(|k| k.name.to_string()).collect();
    listed.sort();
    assert_eq!(files, listed);
}
