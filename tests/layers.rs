//! ARCHITECTURE.md's one-way layers, enforced: each layer's sources may name only the crate
//! modules and the outside crates its row allows. A new dependency between layers fails here
//! until ARCHITECTURE.md and this table say it is intended.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// (layer: a folder or file under src/, crate modules it may use, outside crates it must not use)
const LAYERS: &[(&str, &[&str], &[&str])] = &[
    (
        "sim",
        &[],
        &[
            "wgpu",
            "leptos",
            "web_sys",
            "js_sys",
            "plotters",
            "axum",
            "sqlx",
            "tokio",
            "fluent_bundle",
        ],
    ),
    (
        "gpu",
        &["sim"],
        &[
            "leptos",
            "web_sys",
            "plotters",
            "axum",
            "sqlx",
            "tokio",
            "fluent_bundle",
        ],
    ),
    (
        "i18n",
        &[],
        &[
            "wgpu", "leptos", "web_sys", "js_sys", "plotters", "axum", "sqlx", "tokio",
        ],
    ),
    (
        "quiz",
        &["sim", "i18n"],
        &[
            "wgpu", "leptos", "web_sys", "js_sys", "plotters", "axum", "sqlx", "tokio",
        ],
    ),
    (
        "credential",
        &["quiz", "i18n"],
        &[
            "wgpu",
            "leptos",
            "web_sys",
            "js_sys",
            "plotters",
            "axum",
            "sqlx",
            "tokio",
            "getrandom",
        ],
    ),
    (
        "plot",
        &["sim"],
        &["wgpu", "leptos", "web_sys", "axum", "sqlx", "tokio"],
    ),
    (
        "route",
        &["sim", "i18n"],
        &["wgpu", "leptos", "web_sys", "axum", "sqlx", "tokio"],
    ),
    (
        "lab_state",
        &["sim", "plot", "i18n", "route"],
        &["wgpu", "leptos", "web_sys", "axum", "sqlx", "tokio"],
    ),
    (
        "embed",
        &["lab_state", "plot", "route", "i18n"],
        &["wgpu", "leptos", "web_sys", "axum", "sqlx", "tokio"],
    ),
    // Native only: the issuer service uses the quiz core and the credential layer, never the UI or the GPU.
    (
        "scorm",
        &["quiz", "i18n", "sim", "route", "embed"],
        &[
            "wgpu", "leptos", "web_sys", "js_sys", "plotters", "axum", "sqlx", "tokio",
        ],
    ),
    (
        "issuer",
        &["credential", "quiz", "i18n"],
        &["wgpu", "leptos", "web_sys", "js_sys", "plotters"],
    ),
    (
        "cli",
        &[
            "sim",
            "gpu",
            "plot",
            "lab_state",
            "quiz",
            "credential",
            "verification",
            "issuer",
            "scorm",
            "i18n",
        ],
        &["leptos", "web_sys", "js_sys"],
    ),
];

fn sources(layer: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let file = root.join(format!("{layer}.rs"));
    if file.is_file() {
        return vec![file];
    }
    let mut found = Vec::new();
    let mut stack = vec![root.join(layer)];
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

/// Module names after `crate::` in code (also inside `use crate::{a, b}` lists); comments,
/// doc links included, are not dependencies.
fn crate_modules(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let text = code.as_str();
    let mut modules = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(list) = rest.strip_prefix('{') {
            for item in list.split('}').next().unwrap_or_default().split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    modules.insert(name);
                }
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            modules.insert(name);
        }
    }
    modules
}

fn outside_crates(text: &str, forbidden: &[&str]) -> BTreeSet<String> {
    forbidden
        .iter()
        .filter(|name| {
            text.lines().any(|line| {
                let code = line.split("//").next().unwrap_or_default();
                code.contains(&format!("{name}::")) && !code.contains(&format!("_{name}::"))
            })
        })
        .map(|name| name.to_string())
        .collect()
}

#[test]
fn every_layer_uses_only_what_architecture_md_allows() {
    let mut violations = Vec::new();
    for (layer, allowed, forbidden) in LAYERS {
        for path in sources(layer) {
            let text = std::fs::read_to_string(&path).unwrap();
            for module in crate_modules(&text) {
                if module != *layer && !allowed.contains(&module.as_str()) {
                    violations.push(format!("{} uses crate::{module}", path.display()));
                }
            }
            for name in outside_crates(&text, forbidden) {
                violations.push(format!("{} uses {name}", path.display()));
            }
        }
    }
    assert!(violations.is_empty(), "layer violations:\n{}", violations.join("\n"));
}

#[test]
fn the_check_sees_what_it_must() {
    assert!(crate_modules("use crate::{sim, quiz::bank};\nuse crate::gpu::x;").contains("gpu"));
    assert!(crate_modules("use crate::{sim, quiz::bank};").contains("quiz"));
    assert!(crate_modules("//! see `crate::gpu`").is_empty());
    assert!(outside_crates("let d = wgpu::Device;", &["wgpu"]).contains("wgpu"));
    assert!(outside_crates("// wgpu:: in a comment", &["wgpu"]).is_empty());
    // Every layer named in ARCHITECTURE.md's list exists, so a renamed folder cannot pass silently.
    for (layer, ..) in LAYERS {
        assert!(!sources(layer).is_empty(), "{layer} has no sources");
    }
}
