//! ARCHITECTURE.md's layer table ("What each layer may use") is true of the workspace: every
//! crate under `crates/` has a row and every row a crate, and each crate's Cargo.toml names
//! exactly the layers and the outside crates its row names. Cargo itself enforces the rules (a
//! crate cannot use what its Cargo.toml does not name); this test keeps the document that
//! explains them from drifting. The table is the one list; nothing here repeats it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One row of the table, or what one crate's Cargo.toml names: the layers (crates of this
/// workspace) and the outside crates, as code names them (`-` as `_`).
#[derive(Debug, Default, PartialEq, Eq)]
struct Uses {
    layers: BTreeSet<String>,
    crates: BTreeSet<String>,
}

const TABLE_START: &str = "<!-- layers: read by tests/layers.rs -->";
const TABLE_END: &str = "<!-- /layers -->";
/// The prefix of every layer crate's package name (`gradlab-lab-state` is layer `lab_state`).
const LAYER_PREFIX: &str = "gradlab_";

/// The rows of ARCHITECTURE.md's layer table, by layer.
fn layer_table(markdown: &str) -> BTreeMap<String, Uses> {
    let start = markdown.find(TABLE_START).expect("ARCHITECTURE.md has the layer table") + TABLE_START.len();
    let end = start + markdown[start..].find(TABLE_END).expect("the layer table ends");
    let list = |cell: &str| -> BTreeSet<String> {
        cell.split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(String::from)
            .collect()
    };
    markdown[start..end]
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with('|'))
        // The header and the separator row.
        .skip(2)
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
            assert_eq!(cells.len(), 3, "a layer row has three cells: {line}");
            let uses = Uses {
                layers: list(cells[1]),
                crates: list(cells[2]),
            };
            (cells[0].trim().to_string(), uses)
        })
        .collect()
}

/// The dependency tables of a manifest named `section` (`dependencies`, `dev-dependencies`), on
/// every target.
fn dependency_tables<'a>(manifest: &'a toml::Table, section: &'a str) -> impl Iterator<Item = &'a toml::Table> + 'a {
    let targets = manifest
        .get("target")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|targets| targets.values().filter_map(toml::Value::as_table));
    std::iter::once(manifest)
        .chain(targets)
        .filter_map(move |table| table.get(section)?.as_table())
}

/// What a crate's Cargo.toml names: its layers from `[dependencies]` (a layer that only its
/// tests use, for a test-support feature, is not a dependency of the layer), its outside crates
/// from both `[dependencies]` and `[dev-dependencies]` (the table names the crates tests use).
fn manifest_uses(manifest: &toml::Table) -> Uses {
    let names = |section| -> BTreeSet<String> {
        dependency_tables(manifest, section)
            .flat_map(|table| table.keys())
            .map(|name| name.replace('-', "_"))
            .collect()
    };
    let (normal, dev) = (names("dependencies"), names("dev-dependencies"));
    let layer = |name: &String| name.strip_prefix(LAYER_PREFIX).map(String::from);
    Uses {
        layers: normal.iter().filter_map(layer).collect(),
        crates: normal
            .union(&dev)
            .filter(|name| layer(name).is_none())
            .cloned()
            .collect(),
    }
}

/// Every crate under `crates/`, by layer (its folder's name), with what its Cargo.toml names.
fn workspace_crates() -> BTreeMap<String, Uses> {
    std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .map(|path| {
            let manifest: toml::Table = std::fs::read_to_string(path.join("Cargo.toml"))
                .unwrap()
                .parse()
                .unwrap();
            let layer = path.file_name().unwrap().to_string_lossy().into_owned();
            let package = manifest["package"]["name"].as_str().unwrap().replace('-', "_");
            assert_eq!(
                package,
                format!("{LAYER_PREFIX}{layer}"),
                "crates/{layer} is named after its layer"
            );
            (layer, manifest_uses(&manifest))
        })
        .collect()
}

fn architecture_md() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap()
}

#[test]
fn every_crate_has_a_row_and_every_row_is_a_crate() {
    let table = layer_table(&architecture_md());
    let crates = workspace_crates();
    let rows: BTreeSet<&String> = table.keys().collect();
    let folders: BTreeSet<&String> = crates.keys().collect();
    assert_eq!(
        rows, folders,
        "ARCHITECTURE.md's layer table and crates/ list the same layers"
    );
}

#[test]
fn every_crate_names_what_its_row_names() {
    let table = layer_table(&architecture_md());
    for (layer, uses) in workspace_crates() {
        let Some(row) = table.get(&layer) else { continue };
        assert_eq!(
            uses.layers, row.layers,
            "crates/{layer}/Cargo.toml depends on other layers than its row in ARCHITECTURE.md names"
        );
        assert_eq!(
            uses.crates, row.crates,
            "crates/{layer}/Cargo.toml names other outside crates than its row in ARCHITECTURE.md"
        );
    }
}

#[test]
fn the_layers_point_one_way() {
    // Each layer uses only layers that come before it in the table: no cycle, and the order of
    // the rows is an order in which the crates can be built.
    let table = layer_table(&architecture_md());
    let order: Vec<&String> = {
        let markdown = architecture_md();
        let start = markdown.find(TABLE_START).unwrap();
        let mut rows: Vec<(usize, &String)> = table
            .keys()
            .map(|layer| (markdown[start..].find(&format!("| {layer} |")).unwrap(), layer))
            .collect();
        rows.sort();
        rows.into_iter().map(|(_, layer)| layer).collect()
    };
    for (place, layer) in order.iter().enumerate() {
        for used in &table[*layer].layers {
            let used_place = order.iter().position(|l| *l == used);
            assert!(
                used_place.is_some_and(|p| p < place),
                "layer {layer} uses {used}, which is not a layer above it in the table"
            );
        }
    }
}

#[test]
fn the_check_sees_what_it_must() {
    let manifest: toml::Table = r#"
        [package]
        name = "gradlab-example"
        [dependencies]
        gradlab-sim.workspace = true
        serde.workspace = true
        [target.'cfg(not(target_arch = "wasm32"))'.dependencies]
        web-time.workspace = true
        [dev-dependencies]
        gradlab-quiz.workspace = true
        tempfile.workspace = true
    "#
    .parse()
    .unwrap();
    let uses = manifest_uses(&manifest);
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(uses.layers, set(&["sim"]));
    assert_eq!(uses.crates, set(&["serde", "web_time", "tempfile"]));
    let table = layer_table(&format!(
        "{TABLE_START}\n| layer | layers | crates |\n|---|---|---|\n| example | sim | serde, web_time, tempfile |\n{TABLE_END}"
    ));
    assert_eq!(table["example"], uses);
}
