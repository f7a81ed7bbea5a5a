//! The browser app (wasm only). For now a minimal page; the full Lab is its own issue.

use leptos::prelude::*;

use crate::sim::lab::CpuLab;
use crate::sim::scenario::Scenario;

/// Loss after each of a few CPU steps of the scaling scenario, to show the core runs in wasm.
fn demo_losses(steps: u64) -> Result<Vec<(String, Vec<f64>)>, String> {
    let scenario = Scenario::by_id("scaling").map_err(|e| e.to_string())?;
    let mut lab = CpuLab::<f32>::cpu(scenario.config).map_err(|e| e.to_string())?;
    lab.run(steps, |_| {}).map_err(|e| e.to_string())?;
    Ok(lab
        .runs()
        .iter()
        .map(|r| (r.spec.label.clone(), r.history.iter().map(|h| h.train_loss).collect()))
        .collect())
}

#[component]
fn App() -> impl IntoView {
    let result = demo_losses(10);
    view! {
        <main class="page">
            <h1>"Gradient Accumulation Lab"</h1>
            <p class="lead">
                "Accumulating N micro-batches with the loss divided by N gives the same update as one full batch. "
                "Here are ten steps of the CPU reference engine, run in your browser:"
            </p>
            {match result {
                Ok(runs) => view! {
                    <table data-testid="demo-table">
                        <thead><tr><th scope="col">"run"</th><th scope="col">"loss after step 1"</th><th scope="col">"loss after step 10"</th></tr></thead>
                        <tbody>
                            {runs.into_iter().map(|(label, losses)| {
                                let first = losses.first().map(|l| format!("{l:.6}")).unwrap_or_default();
                                let last = losses.last().map(|l| format!("{l:.6}")).unwrap_or_default();
                                // Full precision for the test that compares wasm with native numbers.
                                let exact = losses.last().map(|l| format!("{l:e}")).unwrap_or_default();
                                view! { <tr><td>{label}</td><td>{first}</td><td data-loss=exact>{last}</td></tr> }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any(),
                Err(message) => view! { <p role="alert" class="error">{message}</p> }.into_any(),
            }}
        </main>
    }
}

/// Mounts the app on `<body>`.
pub fn start() {
    console_error_panic_hook::set_once();
    mount_to_body(App);
}
