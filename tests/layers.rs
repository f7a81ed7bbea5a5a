//! ARCHITECTURE.md's one-way layers, enforced from its own table ("What each layer may use"):
//! every module lib.rs declares has a row, and each layer's sources name only the crate modules
//! and the outside crates (Cargo.toml's dependencies) its row allows. The table is the one list;
//! nothing here repeats it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One row of the table: the crate modules and the outside crates a layer may use.
#[derive(Debug, Default)]
struct Allowed {
    modules: BTreeSet<String>,
    crates: BTreeSet<String>,
}

const TABLE_START: &str = "<!-- layers: read by tests/layers.rs -->";
const TABLE_END: &str = "<!-- /layers -->";

/// The rows of ARCHITECTURE.md's layer table, by layer.
fn layer_table(markdown: &str) -> BTreeMap<String, Allowed> {
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
            let allowed = Allowed {
                modules: list(cells[1]),
                crates: list(cells[2]),
            };
            (cells[0].trim().to_string(), allowed)
        })
        .collect()
}

/// The modules lib.rs declares (`pub mod name;`, whatever cfg they are under).
fn declared_modules() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    lib.lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .filter_map(|rest| rest.strip_suffix(';'))
        .map(String::from)
        .collect()
}

/// Every crate Cargo.toml names (dependencies and dev-dependencies, on every target), as code
/// names it (`-` as `_`).
fn dependency_names() -> BTreeSet<String> {
    let manifest: toml::Table = std::fs::read_to_string(root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let targets = manifest
        .get("target")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|targets| targets.values().filter_map(toml::Value::as_table));
    std::iter::once(&manifest)
        .chain(targets)
        .flat_map(|table| {
            ["dependencies", "dev-dependencies"]
                .into_iter()
                .filter_map(move |section| table.get(section)?.as_table())
        })
        .flat_map(|dependencies| dependencies.keys())
        .map(|name| name.replace('-', "_"))
        .collect()
}

fn sources(layer: &str) -> Vec<PathBuf> {
    let src = root().join("src");
    let file = src.join(format!("{layer}.rs"));
    if file.is_file() {
        return vec![file];
    }
    let mut found = Vec::new();
    let mut stack = vec![src.join(layer)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found
}

/// The code of a source: each line up to its comment (doc links are not dependencies); a `//`
/// inside a string literal (`"https://..."`) is not a comment.
fn code_of(text: &str) -> String {
    text.lines().map(without_comment).collect::<Vec<_>>().join("\n")
}

fn without_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let (mut in_string, mut escaped) = (false, false);
    for (i, &byte) in bytes.iter().enumerate() {
        match byte {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
    }
    line
}

fn identifier_at(text: &str) -> String {
    text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// Module names after `crate::` in code (also inside `use crate::{a, b}` lists).
fn crate_modules(code: &str) -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(list) = rest.strip_prefix('{') {
            // The list's top-level items (`crate::{a::{b, c}, d}` names a and d).
            let mut depth = 0;
            let mut at_item = true;
            for (j, c) in list.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => at_item = true,
                    c if at_item && !c.is_whitespace() => {
                        at_item = false;
                        let name = identifier_at(&list[j..]);
                        if !name.is_empty() {
                            modules.insert(name);
                        }
                    }
                    _ => {}
                }
            }
        } else {
            modules.insert(identifier_at(rest));
        }
    }
    modules
}

/// The outside crates of `dependencies` that code names: a path that starts with the crate
/// (`name::`, not `other_name::` or `self::name::`), or `use name;`.
fn outside_crates(code: &str, dependencies: &BTreeSet<String>) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for (i, _) in code.match_indices("::") {
        let before = &code[..i];
        let name: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let preceding = before[..before.len() - name.len()].chars().next_back();
        let starts_path = preceding.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
        if starts_path && dependencies.contains(&name) {
            used.insert(name);
        }
    }
    for (i, _) in code.match_indices("use ") {
        let name = identifier_at(&code[i + "use ".len()..]);
        let after = &code[i + "use ".len() + name.len()..];
        if (after.starts_with(';') || after.starts_with(" as ")) && dependencies.contains(&name) {
            used.insert(name);
        }
    }
    used
}

fn architecture_md() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap()
}

#[test]
fn every_module_has_a_row_and_every_row_is_a_module() {
    let table = layer_table(&architecture_md());
    let rows: BTreeSet<String> = table.keys().cloned().collect();
    assert_eq!(
        rows,
        declared_modules(),
        "ARCHITECTURE.md's layer table and lib.rs's modules"
    );
    let dependencies = dependency_names();
    for (layer, allowed) in &table {
        for module in &allowed.modules {
            assert!(rows.contains(module), "{layer}'s row names {module}, not a layer");
        }
        for name in &allowed.crates {
            assert!(
                dependencies.contains(name),
                "{layer}'s row names {name}, not in Cargo.toml"
            );
        }
        assert!(!sources(layer).is_empty(), "{layer} has no sources");
    }
}

#[test]
fn every_layer_uses_only_what_architecture_md_allows() {
    let dependencies = dependency_names();
    let mut violations = Vec::new();
    for (layer, allowed) in layer_table(&architecture_md()) {
        for path in sources(&layer) {
            let code = code_of(&std::fs::read_to_string(&path).unwrap());
            for module in crate_modules(&code) {
                if module != layer && !allowed.modules.contains(&module) {
                    violations.push(format!("{} uses crate::{module}", path.display()));
                }
            }
            for name in outside_crates(&code, &dependencies) {
                if !allowed.crates.contains(&name) {
                    violations.push(format!("{} uses {name}", path.display()));
                }
            }
        }
    }
    assert!(violations.is_empty(), "layer violations:\n{}", violations.join("\n"));
}

#[test]
fn the_check_sees_what_it_must() {
    let code = code_of(
        "use crate::{sim, quiz::{bank, attempt}, i18n};\nuse crate::gpu::x;\n//! see `crate::web`\n\
         let u = \"https://example.org\"; use crate::plot;",
    );
    assert_eq!(
        crate_modules(&code),
        ["gpu", "i18n", "plot", "quiz", "sim"].map(String::from).into()
    );
    let dependencies: BTreeSet<String> = ["wgpu", "time", "serde"].map(String::from).into();
    let code = code_of(
        "let d = wgpu::Device;\nlet t = std::time::Instant::now();\nuse web_time::Instant;\n\
         // serde:: in a comment",
    );
    assert_eq!(outside_crates(&code, &dependencies), ["wgpu"].map(String::from).into());
    assert!(outside_crates("use serde;", &dependencies).contains("serde"));
    assert!(outside_crates("use serde as s;", &dependencies).contains("serde"));
    assert!(outside_crates("#[derive(serde::Serialize)]", &dependencies).contains("serde"));
    let table = layer_table(&format!(
        "{TABLE_START}\n| layer | modules | crates |\n|---|---|---|\n| sim | | libm, serde |\n\
         | gpu | sim | wgpu |\n{TABLE_END}\n| web | everything | |"
    ));
    assert_eq!(table.keys().collect::<Vec<_>>(), ["gpu", "sim"]);
    assert!(table["sim"].modules.is_empty());
    assert_eq!(table["sim"].crates, ["libm", "serde"].map(String::from).into());
    assert!(table["gpu"].modules.contains("sim"));
    // The crates Cargo.toml names on every target are known, dev-only ones included.
    let names = dependency_names();
    for name in ["wgpu", "leptos", "serde_json", "naga", "proptest", "web_sys"] {
        assert!(names.contains(name), "{name}");
    }
}
