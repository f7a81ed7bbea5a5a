//! The Lab page's sections, each a thin view over the page's signals: the experiment menu, the
//! experiment's header, the transport bar, the charts with their run toggles, and the decision
//! boundaries.

use leptos::prelude::*;

use super::super::i18n::{msg, tr};
use super::charts::{BoundaryCanvas, ChartCanvas};
use super::engine_loop::{Command, LabSignals};
use super::step_through::StepThroughToggle;
use super::{localized, run_swatch};
use gradlab_embed::Section;
use gradlab_i18n::Msg;
use gradlab_lab_state::controls::{Control, LabControls};
use gradlab_lab_state::session::{format_bytes, MAX_LAB_STEPS};
use gradlab_lab_state::texts;
use gradlab_plot::Metric;
use gradlab_sim::lab::LabConfig;

/// The experiments: a menu of links on the page, a list box in an embed (one line in a course
/// page). Choosing one clears a pending typo and shows that experiment.
#[component]
pub(super) fn ExperimentMenu(
    controls: RwSignal<LabControls>,
    typo: RwSignal<Option<(Control, Msg)>>,
    /// The controls the page opened with: each link keeps their seed and pace.
    opened_with: LabControls,
    embedded: bool,
    hidden: bool,
) -> impl IntoView {
    let experiment = move || controls.with(|c| c.scenario.clone());
    let choose = move |id: &str| {
        typo.set(None);
        controls.update(|c| *c = c.with_experiment(id));
    };
    if embedded {
        let choices = texts::experiment_ids()
            .into_iter()
            .map(|id| view! { <option value=id selected=move || experiment() == id>{msg(&texts::title(id))}</option> })
            .collect_view();
        view! {
            <p class="scenario-select" hidden=hidden>
                <label for="scenario-select">{tr("scenario-select-label")}</label>
                <select id="scenario-select" data-testid="scenario-select"
                    on:change=move |ev| choose(&event_target_value(&ev))>{choices}</select>
            </p>
        }
        .into_any()
    } else {
        let menu = texts::experiment_ids()
            .into_iter()
            .map(|id| {
                let href = super::super::i18n::link(opened_with.with_experiment(id).to_query());
                view! {
                    <li><a href=href aria-current=move || (experiment() == id).then_some("page")
                        data-scenario=id
                        on:click=move |ev| {
                            ev.prevent_default();
                            choose(id);
                        }>{msg(&texts::title(id))}</a></li>
                }
            })
            .collect_view();
        view! { <nav aria-label=tr("scenarios-nav") hidden=hidden><ul class="scenario-menu">{menu}</ul></nav> }
            .into_any()
    }
}

/// The experiment's title, what it sets up (before the learner's prediction) or shows, and what
/// to notice.
#[component]
pub(super) fn ExperimentHeader(
    experiment: Signal<String>,
    answer_open: Signal<bool>,
    config: Memo<Option<LabConfig>>,
    embedded: bool,
    hide_explanation: bool,
) -> impl IntoView {
    view! {
        <header class="experiment">
            <h2 data-testid="scenario-title">{move || msg(&texts::title(&experiment.get()))}</h2>
            {if embedded {
                view! {
                    <details class="about" hidden=hide_explanation>
                        <summary>{tr("embed-about")}</summary>
                        <p class="lead">{move || msg(&texts::explanation(&experiment.get()))}</p>
                    </details>
                }.into_any()
            } else {
                // Before the prediction: what the experiment sets up, not what it shows.
                view! { <p class="lead" data-testid="explanation" data-answer-open=move || answer_open.get().to_string()>
                    {move || {
                        let id = experiment.get();
                        msg(&if answer_open.get() { texts::explanation(&id) } else { texts::setup(&id) })
                    }}
                </p> }.into_any()
            }}
            <p class="notice-line" data-testid="what-to-notice">
                {move || if answer_open.get() {
                    msg(&config.with(|c| texts::what_to_notice(&experiment.get(), c.as_ref())))
                } else {
                    tr("course-predict-first")
                }}
            </p>
        </header>
    }
}

/// Play / Pause, Step, Reset (and, embedded, the step-through's toggle) and the step counter.
#[component]
pub(super) fn TransportBar(
    signals: LabSignals,
    send: Callback<Command>,
    can_train: Signal<bool>,
    valid: Signal<bool>,
    /// Restarts the experiment from step 0.
    reset: Callback<()>,
    /// Embedded, the step-through opens from here and its panel shows only while open.
    step_through_toggle: Option<RwSignal<bool>>,
) -> impl IntoView {
    let running = move || {
        signals
            .transport
            .with(|t| *t == gradlab_lab_state::session::Transport::Running)
    };
    let steps = move || signals.view.with(|v| v.steps);
    view! {
        <div class="transport" role="group" aria-label=tr("transport-label")>
            <button type="button" class="primary" data-testid="play"
                on:click=move |_| send.run(if running() { Command::Pause } else { Command::Play })
                disabled=move || !can_train.get()>
                {move || if running() { tr("button-pause") } else { tr("button-play") }}
            </button>
            <button type="button" data-testid="step" on:click=move |_| send.run(Command::Step)
                disabled=move || !can_train.get() || running()>{tr("button-step")}</button>
            <button type="button" data-testid="reset" disabled=move || !valid.get()
                on:click=move |_| reset.run(())>{tr("button-reset")}</button>
            {step_through_toggle.map(|open| view! {
                <StepThroughToggle open=open send=send can_train=can_train short=true />
            })}
            <span class="step-counter" data-testid="step-counter">{move || format!("{} / {MAX_LAB_STEPS}", steps())}</span>
        </div>
    }
}

/// The charts the embed does not hide, each drawn only where it says something for these runs,
/// with the run toggles that are their legend. Embedded, the experiment's two key charts are
/// shown and the others folded under "More charts", so the iframe stays compact.
#[component]
pub(super) fn ChartsArea(
    signals: LabSignals,
    controls: RwSignal<LabControls>,
    experiment: Signal<String>,
    /// Sections an embed hides.
    hides: Callback<Section, bool>,
    embedded: bool,
    resized: ReadSignal<u32>,
    set_resized: WriteSignal<u32>,
    inspect: RwSignal<Option<u64>>,
    last_step: Signal<u64>,
) -> impl IntoView {
    let runs_off = Memo::new(move |_| controls.with(|c| c.runs_off.clone()));
    let visible: Vec<Metric> = Metric::ALL
        .into_iter()
        .filter(|&metric| !hides.run(Section::Chart(metric)))
        .collect();
    let in_main = move |metric: Metric| !embedded || texts::key_charts(&experiment.get()).contains(&metric);
    let chart_view = move |metric: Metric, main: bool| {
        let view = signals.view;
        let chart = Memo::new(move |_| {
            runs_off.with(|off| view.with(|v| localized(v.chart_of_runs(metric, off), metric, embedded)))
        });
        let shown = move || view.with(|v| v.shows(metric)) && in_main(metric) == main;
        let file_name = format!("gradlab-{}.png", metric.slug());
        let testid = format!("chart-{}", metric.slug());
        view! {
            <Show when=shown>
                <ChartCanvas chart=chart file_name=file_name.clone() testid=testid.clone() resized=resized
                    inspect=inspect last_step=last_step />
            </Show>
        }
    };
    let charts = visible.iter().map(|&m| chart_view(m, true)).collect_view();
    let more_charts = embedded.then(|| {
        let folded = visible.clone();
        let any_folded = move || folded.iter().any(|&m| !in_main(m) && signals.view.with(|v| v.shows(m)));
        let charts = visible.iter().map(|&m| chart_view(m, false)).collect_view();
        view! {
            <details class="more-charts" data-testid="more-charts" hidden=move || !any_folded()
                on:toggle=move |_| set_resized.update(|n| *n += 1)>
                <summary>{tr("charts-more")}</summary>
                <div class="charts">{charts}</div>
            </details>
        }
    });
    let run_toggles = move || {
        signals.view.with(|v| {
            v.runs
                .iter()
                .enumerate()
                .map(|(i, run)| {
                    let label = run.label.clone();
                    let on = move || runs_off.with(|off| !off.contains(&i));
                    view! {
                        <li><button type="button" class="run-toggle" data-run-toggle=i
                            aria-pressed=move || on().to_string()
                            on:click=move |_| controls.update(|c| c.toggle_run(i))>
                            {run_swatch(i)}<span>{label}</span>
                        </button></li>
                    }
                })
                .collect_view()
        })
    };
    view! {
        <div class="run-toggles" role="group" aria-labelledby="run-toggles-title" data-testid="run-toggles">
            <h3 id="run-toggles-title" class="run-toggles-title">{tr("charts-runs-shown")}</h3>
            <ul>{run_toggles}</ul>
        </div>
        <div class="charts">{charts}</div>
        {more_charts}
    }
}

/// Each run's decision boundary: the live one, or while a past step is inspected the nearest
/// kept snapshot, with what the kept ones cost. Embedded, folded until one click shows them.
#[component]
pub(super) fn BoundariesPanel(
    signals: LabSignals,
    inspected: Signal<Option<u64>>,
    embedded: bool,
    hidden: bool,
    resized: ReadSignal<u32>,
    set_resized: WriteSignal<u32>,
) -> impl IntoView {
    let boundaries = move || {
        let labels = signals
            .view
            .with(|v| v.runs.iter().map(|r| r.label.clone()).collect::<Vec<_>>());
        labels
            .into_iter()
            .enumerate()
            .map(|(i, label)| {
                let boundary = Signal::derive(move || match inspected.get() {
                    Some(step) => signals
                        .boundary_history
                        .with(|h| h.at(step).and_then(|(_, b)| b.get(i).cloned().flatten())),
                    None => signals.boundaries.with(|b| b.get(i).cloned().flatten()),
                });
                view! { <BoundaryCanvas boundary=boundary label=label resized=resized /> }
            })
            .collect_view()
    };
    let boundary_step = move || match inspected.get() {
        Some(step) => signals
            .boundary_history
            .with(|h| h.at(step).map_or(0, |(kept, _)| kept)),
        None => signals.view.with(|v| v.steps),
    };
    let boundary_note = move || {
        let step = inspected.get()?;
        let (kept, count, bytes) = signals
            .boundary_history
            .with(|h| (h.at(step).map_or(0, |(kept, _)| kept), h.len(), h.bytes()));
        Some(msg(&Msg::new("boundaries-snapshot")
            .arg("step", step)
            .arg("kept", kept)
            .arg("count", count)
            .arg("bytes", format_bytes(bytes as u64))))
    };
    view! {
        <details class="boundaries" open=!embedded hidden=hidden
            on:toggle=move |_| set_resized.update(|n| *n += 1)>
            <summary><h3 id="boundaries-title">{move || msg(&Msg::new("charts-boundaries").arg("step", boundary_step()))}</h3></summary>
            <p class="muted" data-testid="boundary-snapshot" hidden=move || inspected.get().is_none()>{boundary_note}</p>
            <div class="boundary-grid" data-testid="boundaries">{boundaries}</div>
        </details>
    }
}
