//! The Lab page for now: a scenario's runs after ten CPU steps in the browser. The interactive,
//! GPU-trained Lab replaces it (its own issue).

use leptos::prelude::*;

use crate::route::Route;
use crate::sim::lab::CpuLab;
use crate::sim::scenario::Scenario;

struct RunRow {
    label: String,
    first_loss: f64,
    last_loss: f64,
    grad_error: Option<f64>,
    accuracy: Option<f64>,
}

fn demo(scenario: &Scenario, steps: u64) -> Result<Vec<RunRow>, String> {
    let mut lab = CpuLab::<f32>::cpu(scenario.config.clone()).map_err(|e| e.to_string())?;
    lab.run(steps, |_| {}).map_err(|e| e.to_string())?;
    Ok(lab
        .runs()
        .iter()
        .map(|r| {
            let last = r.history.last().copied().unwrap_or_default();
            RunRow {
                label: r.spec.label.clone(),
                first_loss: r.history.first().map_or(f64::NAN, |h| h.train_loss),
                last_loss: last.train_loss,
                grad_error: last.grad_relative_error,
                accuracy: last.test_accuracy,
            }
        })
        .collect())
}

#[component]
pub fn LabPage(scenario: Option<String>) -> impl IntoView {
    let id = scenario.unwrap_or_else(|| "scaling".into());
    let scenarios = Scenario::all();
    let chosen = scenarios.iter().find(|s| s.id == id).or(scenarios.first()).cloned();
    let menu = scenarios
        .iter()
        .map(|s| {
            let current = s.id == id;
            view! {
                <li><a href=Route::Lab { scenario: Some(s.id.to_string()) }.query()
                    aria-current=current.then_some("page")>{s.title}</a></li>
            }
        })
        .collect_view();
    let body = chosen.map(|scenario| {
        let table = match demo(&scenario, 10) {
            Ok(rows) => view! {
                <table data-testid="demo-table">
                    <thead><tr>
                        <th scope="col">"run"</th><th scope="col">"loss after step 1"</th>
                        <th scope="col">"loss after step 10"</th><th scope="col">"gradient error vs full batch"</th>
                        <th scope="col">"test accuracy"</th>
                    </tr></thead>
                    <tbody>
                        {rows.into_iter().map(|r| {
                            // Full precision for the test that compares wasm with native numbers.
                            let exact = format!("{:e}", r.last_loss);
                            view! { <tr>
                                <td>{r.label}</td>
                                <td>{format!("{:.6}", r.first_loss)}</td>
                                <td data-loss=exact>{format!("{:.6}", r.last_loss)}</td>
                                <td>{r.grad_error.map(|e| format!("{e:.2e}")).unwrap_or_default()}</td>
                                <td>{r.accuracy.map(|a| format!("{:.1} %", a * 100.0)).unwrap_or_default()}</td>
                            </tr> }
                        }).collect_view()}
                    </tbody>
                </table>
            }
            .into_any(),
            Err(message) => view! { <p role="alert" class="error">{message}</p> }.into_any(),
        };
        view! {
            <h2 data-testid="scenario-title">{scenario.title}</h2>
            <p class="lead">{scenario.summary}"."</p>
            <p class="muted">"Ten optimizer steps of the CPU reference engine, run in your browser:"</p>
            {table}
        }
    });
    view! {
        <section class="lab">
            <nav aria-label="Scenarios"><ul class="scenario-menu">{menu}</ul></nav>
            {body}
        </section>
    }
}
