//! The Lab page: scenario presets and the sandbox, trained live side by side. The page owns
//! signals of plain state (`lab_state`); one async task owns the engine and is driven by
//! commands, so training never holds a borrow the UI needs and never blocks the page.

pub(crate) mod charts;
pub(crate) mod controls;
mod course;
pub(crate) mod engine_loop;
mod first_screen;
mod sections;
mod step_through;
mod trainer;

use futures_channel::mpsc;
use leptos::either::Either;
use leptos::prelude::*;

use super::browser;
use super::i18n::{msg, num, tr};
use controls::ControlsPanel;
use course::{CoursePanel, CourseStore};
use engine_loop::{Command, EngineBadge, LabSignals};
use first_screen::{Introduction, LiveSummary};
use gradlab_embed::{experienced_scenario, EmbedOptions, Section};
use gradlab_i18n::Msg;
use gradlab_lab_state::controls::{Control, LabControls};
use gradlab_lab_state::engine_choice::EnginePreference;
use gradlab_lab_state::experience::ExperienceLog;
use gradlab_lab_state::session::{format_bytes, LabView, Transport};
use gradlab_lab_state::texts;
use gradlab_plot::boundary::DecisionBoundary;
use gradlab_plot::{ChartLook, LineChart, Metric};
use gradlab_route::Route;
use gradlab_scorm::data_model;
use gradlab_sim::scenario::ScenarioId;
use sections::{BoundariesPanel, ChartsArea, ExperimentHeader, ExperimentMenu, TransportBar};
use step_through::StepThroughPanel;

/// How the Lab page was asked to run, from the URL.
#[derive(Debug, Clone)]
pub struct LabOptions {
    pub controls: LabControls,
    /// Other parameters of the page's URL (`&key=value`...), kept when the Lab updates it.
    pub kept_query: String,
    pub engine: EnginePreference,
    /// Test hook: lose the WebGPU device after a few steps, to exercise the CPU fallback.
    pub simulate_gpu_loss: bool,
    /// Set when the Lab runs inside a course page.
    pub embed: Option<EmbedOptions>,
}

/// `chart` in the page's language: titles, captions and decimal commas in Spanish. Embedded,
/// the charts leave out their own legends: the run toggles above them are the legend.
fn localized(mut chart: LineChart, metric: Metric, embedded: bool) -> LineChart {
    chart.title = tr(&format!("chart-{}", metric.slug()));
    chart.look = ChartLook {
        legend: !embedded,
        decimal_comma: super::i18n::language().decimal_comma(),
    };
    chart.x_label = tr("chart-step");
    for series in &mut chart.series {
        if let Some(mark) = &mut series.diverged {
            mark.caption = msg(&Msg::new("chart-diverged").arg("step", mark.step));
        }
    }
    chart.y_label = if metric.log_scale() {
        tr("chart-error-floor")
    } else {
        chart.title.clone()
    };
    chart
}

/// The run's colour and dash pattern, as its curves are drawn.
pub(crate) fn run_swatch(style: usize) -> impl IntoView {
    let (r, g, b) = gradlab_plot::RUN_COLORS[style % gradlab_plot::RUN_COLORS.len()];
    let (dash, gap) = gradlab_plot::RUN_DASHES[style % gradlab_plot::RUN_DASHES.len()];
    let dasharray = if gap == 0 {
        "none".to_string()
    } else {
        format!("{dash} {gap}")
    };
    view! {
        <svg class="swatch" width="32" height="10" viewBox="0 0 32 10" aria-hidden="true">
            <line x1="0" y1="5" x2="32" y2="5" stroke=format!("rgb({r},{g},{b})") stroke-width="3"
                stroke-dasharray=dasharray />
        </svg>
    }
}

#[component]
pub(crate) fn EngineBadgeView(engine: RwSignal<EngineBadge>, cpu_in_worker: RwSignal<bool>) -> impl IntoView {
    let text = move || {
        engine.with(|e| match e {
            EngineBadge::Preparing => tr("status-preparing"),
            EngineBadge::Gpu { choosing: true, .. } => tr("engine-choosing"),
            EngineBadge::Gpu { adapter, .. } => msg(&Msg::new("engine-webgpu").arg("adapter", adapter)),
            EngineBadge::Cpu(None) => tr("engine-cpu"),
            EngineBadge::Cpu(Some(reason)) => msg(&Msg::new("engine-cpu-fallback").arg("reason", msg(reason))),
            EngineBadge::CpuFaster(why) => msg(why),
        })
    };
    let kind = move || {
        engine.with(|e| match e {
            EngineBadge::Preparing => "preparing",
            EngineBadge::Gpu { .. } => "webgpu",
            EngineBadge::Cpu(_) | EngineBadge::CpuFaster(_) => "cpu",
        })
    };
    // Where the CPU engine trains, for tests and the curious: "worker" or "page".
    let thread = move || if cpu_in_worker.get() { "worker" } else { "page" };
    let choosing = move || {
        engine
            .with(|e| matches!(e, EngineBadge::Gpu { choosing: true, .. }))
            .to_string()
    };
    view! {
        <p class="engine-badge" data-testid="engine-badge" data-engine=kind data-cpu-thread=thread data-choosing=choosing>
            <span class="badge-label">{tr("engine-label")}": "</span>{text}
        </p>
    }
}

#[component]
fn ResultsTable(view: RwSignal<LabView>, inspected: Signal<Option<u64>>, embedded: bool) -> impl IntoView {
    let rows = move || view.with(|v| v.rows_at(inspected.get()));
    let agreement_msg = move || view.with(LabView::scaled_agreement);
    let agreement = move || agreement_msg().map(|m| msg(&m));
    let ratio_note = move || view.with(LabView::ratio_note);
    // The line is green only when the losses agree; a difference or a divergence is not good news.
    let agreement_kind = move || agreement_msg().map(|m| m.id.to_string());
    let body = move || {
        rows()
            .into_iter()
            .map(|r| {
                let run = r.label.clone();
                let diverged = r.diverged.is_some();
                // A diverged run shows where it diverged, never its NaN or infinite numbers.
                let cells = match r.diverged {
                    Some(divergence) => Either::Left(view! {
                        <td class="diverged" colspan="5" data-testid="diverged">{msg(&divergence)}</td>
                    }),
                    None => Either::Right(view! {
                        <td class="num" data-label=tr("results-loss")>{num(&r.loss)}</td>
                        <td class="num" data-label=tr("results-grad-error")><span class="cell-value">
                            {r.grad_error.map_or_else(|| tr("results-none"), |e| num(&e))}
                            {r.grad_ratio.map(|ratio| view! {
                                <span class="grad-ratio" data-testid="grad-ratio">
                                    {msg(&Msg::new("results-grad-ratio").arg("ratio", ratio))}
                                </span>
                            })}
                        </span></td>
                        <td class="num" data-label=tr("results-cosine")>{r.cosine.map_or_else(|| tr("results-none"), |c| num(&c))}</td>
                        <td class="num" data-label=tr("results-grad-norm")>{num(&r.grad_norm)}</td>
                        <td class="num" data-label=tr("results-accuracy")>{r.accuracy.map_or_else(|| tr("results-none"), |a| num(&a))}</td>
                    }),
                };
                view! {
                    <tr data-run=run data-loss=format!("{:e}", r.exact_loss)
                        data-grad-error=r.exact_grad_error.map(|e| format!("{e:e}"))
                        data-diverged=diverged.to_string()>
                        <th scope="row"><span class="run-name">{run_swatch(r.style)}<span>{r.label}</span></span></th>
                        {cells}
                    </tr>
                }
            })
            .collect_view()
    };
    let steps = move || view.with(|v| v.steps);
    view! {
        <section class="results" aria-labelledby="results-title">
            <h3 id="results-title" data-testid="results-title">{move || match inspected.get() {
                Some(step) => msg(&Msg::new("results-title-inspected").arg("step", step).arg("live", steps())),
                None => msg(&Msg::new("results-title").arg("step", steps())),
            }}</h3>
            <p class="muted" hidden=move || steps() != 0>{tr("results-empty")}</p>
            <div class="table-scroll" tabindex="0" role="region" aria-labelledby="results-title">
                <table data-testid="results-table">
                    <thead><tr>
                        <th scope="col">{tr("results-run")}</th>
                        <th scope="col">{tr("results-loss")}</th>
                        // Embedded the headers stay short (the embed's height budget).
                        <th scope="col">{tr(if embedded { "results-grad-error-short" } else { "results-grad-error" })}</th>
                        <th scope="col">{tr(if embedded { "results-cosine-short" } else { "results-cosine" })}</th>
                        <th scope="col">{tr(if embedded { "results-grad-norm-short" } else { "results-grad-norm" })}</th>
                        <th scope="col">{tr("results-accuracy")}</th>
                    </tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
            <p class="muted" data-testid="ratio-note" hidden=move || ratio_note().is_none()>
                {move || ratio_note().map(|m| msg(&m))}
            </p>
            // What "same weights" means (an embed keeps its height budget: short headers, no note;
            // "Open in the full Lab" has both).
            {(!embedded).then(|| view! {
                <p class="muted" data-testid="columns-note" hidden=move || steps() == 0>{tr("results-columns-note")}</p>
            })}
            <p class="agreement" data-testid="agreement" data-agreement=agreement_kind>{agreement}</p>
        </section>
    }
}

/// Drag to any past step: every chart's crosshair, the tooltip's values and the results table
/// follow; "Live" (or the end of the range) returns to the step that trains.
#[component]
fn HistoryScrubber(inspect: RwSignal<Option<u64>>, last_step: Signal<u64>) -> impl IntoView {
    let value = move || {
        inspect
            .get()
            .filter(|&s| s <= last_step.get())
            .unwrap_or(last_step.get())
    };
    let live = move || inspect.get().is_none_or(|s| s > last_step.get());
    view! {
        <div class="scrubber" hidden=move || last_step.get() < 2>
            <label for="history-scrubber">{tr("scrubber-label")}</label>
            <input type="range" id="history-scrubber" data-testid="history-scrubber" min="1"
                max=move || last_step.get().to_string() prop:value=move || value().to_string()
                aria-valuetext=move || msg(&Msg::new("scrubber-value").arg("step", value()).arg("live", last_step.get()))
                on:input=move |ev| {
                    let step = event_target_value(&ev).parse::<u64>().ok();
                    inspect.set(step.filter(|&s| s < last_step.get_untracked()));
                } />
            <span class="scrubber-step" data-testid="scrubber-step">
                {move || if live() { tr("scrubber-live") } else { msg(&Msg::new("scrubber-at").arg("step", value())) }}
            </span>
            <button type="button" data-testid="scrubber-live" disabled=live on:click=move |_| inspect.set(None)>
                {tr("scrubber-back-to-live")}
            </button>
        </div>
    }
}

#[component]
fn RunningStats(view: RwSignal<LabView>, inspected: Signal<Option<u64>>) -> impl IntoView {
    let lines = move || view.with(LabView::running_stats);
    // Only the live step's statistics are kept: while a past step is inspected, say so.
    let live_note = move || {
        inspected
            .get()
            .map(|_| msg(&Msg::new("running-stats-live").arg("step", view.with(|v| v.steps))))
    };
    view! {
        <section class="running-stats" hidden=move || lines().is_empty() data-testid="running-stats">
            <h3>{tr("running-stats-title")}</h3>
            <p class="muted" data-testid="running-stats-live" hidden=move || inspected.with(Option::is_none)>{live_note}</p>
            <ul>{move || lines().into_iter().map(|m| view! { <li>{msg(&m)}</li> }).collect_view()}</ul>
        </section>
    }
}

/// Bars of one measure per run, each in its run's colour; `None` leaves the bar empty.
fn run_bars(bars: Vec<(Msg, Option<String>, f64)>) -> impl IntoView {
    bars.into_iter()
        .enumerate()
        .map(|(i, (text, value, fraction))| {
            let (r, g, b) = gradlab_plot::RUN_COLORS[i % gradlab_plot::RUN_COLORS.len()];
            let bar_style = format!(
                "width: {:.1}%; background: rgb({r},{g},{b})",
                (fraction * 100.0).max(1.0)
            );
            view! {
                <li data-value=value.clone()>
                    <span class="bar-label">{msg(&text)}</span>
                    {value.is_some().then(|| view! { <span class="bar" style=bar_style aria-hidden="true"></span> })}
                </li>
            }
        })
        .collect_view()
}

/// The memory preset's two sides of the trade: activation memory falls with the micro-batches,
/// the time per optimizer step does not.
#[component]
fn MemoryBars(
    view: RwSignal<LabView>,
    in_worker: RwSignal<bool>,
    controls: RwSignal<LabControls>,
    typo: RwSignal<Option<(Control, Msg)>>,
    locked: bool,
    /// An embed's `hide=budget`.
    hidden: bool,
) -> impl IntoView {
    let plan = move || controls.with(LabControls::memory_plan_text).map(|m| msg(&m));
    let from_gpu = move || view.with(|v| v.runs.first().is_some_and(|r| r.bytes_from_gpu));
    let bytes = move || {
        let bars = view
            .with(LabView::memory_bars)
            .into_iter()
            .map(|(label, bytes, fraction)| {
                let text = Msg::new("memory-bar")
                    .arg("run", &label)
                    .arg("bytes", format_bytes(bytes));
                (text, Some(bytes.to_string()), fraction)
            });
        run_bars(bars.collect())
    };
    let times = move || {
        let bars = view
            .with(LabView::step_time_bars)
            .into_iter()
            .map(|(label, ms, fraction)| {
                let text = match ms {
                    Some(ms) => Msg::new("step-time-bar")
                        .arg("run", &label)
                        .arg("ms", format!("{ms:.2}")),
                    None => Msg::new("step-time-pending").arg("run", &label),
                };
                (text, ms.map(|ms| format!("{ms}")), fraction)
            });
        run_bars(bars.collect())
    };
    let time_source = move || {
        let steps = gradlab_sim::step_time::RECENT_STEPS;
        let untimed = view.with(|v| v.steps > 0 && v.runs.iter().all(|r| r.step_times.mean_ms().is_none()));
        if from_gpu() && untimed {
            tr("step-time-gpu-none")
        } else if from_gpu() {
            msg(&Msg::new("step-time-gpu-source").arg("steps", steps))
        } else if in_worker.get() {
            msg(&Msg::new("step-time-cpu-worker-source").arg("steps", steps))
        } else {
            msg(&Msg::new("step-time-cpu-page-source").arg("steps", steps))
        }
    };
    view! {
        <section class="memory" aria-labelledby="memory-title" data-testid="memory-bars">
            <h3 id="memory-title">{tr("memory-title")}</h3>
            <p class="muted">{move || if from_gpu() { tr("memory-gpu-source") } else { tr("memory-model-source") }}</p>
            <ul class="bars">{bytes}</ul>
            {(!hidden).then(|| view! {
                <div class="memory-budget" data-testid="memory-budget">
                    <controls::Field control=Control::MemoryBudget controls=controls typo=typo locked=locked />
                    <p data-testid="memory-budget-plan" hidden=move || plan().is_none()>{plan}</p>
                    <p class="muted">{tr("memory-budget-hint")}</p>
                </div>
            })}
        </section>
        <section class="memory" aria-labelledby="step-time-title" data-testid="step-time-bars">
            <h3 id="step-time-title">{tr("step-time-title")}</h3>
            <p class="muted">{time_source}</p>
            <ul class="bars">{times}</ul>
            <p>{tr("step-time-lesson")}</p>
        </section>
    }
}

#[component]
pub fn LabPage(options: LabOptions) -> impl IntoView {
    let controls = RwSignal::new(options.controls.clone());
    let typo = RwSignal::new(None::<(Control, Msg)>);
    let signals = LabSignals {
        view: RwSignal::new(LabView::default()),
        transport: RwSignal::new(Transport::Preparing),
        engine: RwSignal::new(EngineBadge::Preparing),
        engine_notice: RwSignal::new(None),
        boundaries: RwSignal::new(Vec::<Option<DecisionBoundary>>::new()),
        boundary_history: RwSignal::new(Default::default()),
        first_step_ms: RwSignal::new(None),
        working: RwSignal::new(false),
        steps_per_frame: RwSignal::new(options.controls.steps_per_frame),
        cpu_in_worker: RwSignal::new(false),
        held_at_step: RwSignal::new(None),
    };
    let (resized, set_resized) = signal(0u32);
    let _ = window_event_listener(leptos::ev::resize, move |_| set_resized.update(|n| *n += 1));

    let (sender, receiver) = mpsc::unbounded::<Command>();
    let sender = StoredValue::new(sender);
    let send = Callback::new(move |command: Command| {
        sender.with_value(|s| {
            let _ = s.unbounded_send(command);
        });
    });
    leptos::task::spawn_local(engine_loop::run(
        receiver,
        signals,
        options.engine,
        options.simulate_gpu_loss,
    ));

    let valid = Signal::derive(move || typo.with(Option::is_none) && controls.with(|c| c.validate().is_empty()));
    let config = Memo::new(move |_| controls.with(|c| c.validate().is_empty().then(|| c.lab_config())));
    // The steps trained of the experiment on the page (0 until the engine has built its view):
    // what reports an experiment as trained, or observed, reads this and never the view's steps.
    let shown_steps = Memo::new(move |_| config.with(|c| signals.view.with(|v| v.steps_of(c.as_ref()))));
    // The address bar always reproduces the experiment on the page.
    let kept_query = options.kept_query.clone();
    Effect::new(move |_| {
        let query = controls.with(LabControls::to_query);
        browser::replace_query(&format!("{query}{kept_query}"));
        signals.steps_per_frame.set(controls.with(|c| c.steps_per_frame));
    });
    // A new experiment (or new settings, or Reset) restarts training from step 0.
    let reset = Callback::new(move |()| {
        if let Some(config) = config.get_untracked() {
            let experiment = controls.with_untracked(|c| c.scenario.clone());
            let labels = texts::run_labels(&experiment, &config).iter().map(msg).collect();
            send.run(Command::Reset { config, labels });
        }
    });
    Effect::new(move |_| {
        config.track();
        reset.run(());
    });

    let experiment = Signal::derive(move || controls.with(|c| c.scenario.clone()));
    report_experiences(experiment, shown_steps.into());
    let embed = options.embed.clone();
    let hides = Callback::new(move |section: Section| embed.as_ref().is_some_and(|e| e.hides_section(section)));
    let hide_settings = hides.run(Section::Settings);
    let hide_step_through = hides.run(Section::StepThrough);
    let step_through_open = RwSignal::new(false);
    let embedded = options.embed.is_some();

    // The course (not in an embed): a preset's explanation, what to notice and Play wait for
    // the learner's prediction (or "Just show me").
    let course = CourseStore::load();
    let answer_open = Signal::derive(move || embedded || course.progress.with(|p| p.answer_open(&experiment.get())));
    let transport = signals.transport;
    let can_train = Signal::derive(move || valid.get() && transport.with(Transport::can_step) && answer_open.get());
    // Why Play, Step and the step-through are disabled, where it is not obvious.
    let train_blocked = Signal::derive(move || {
        if can_train.get() {
            None
        } else if !answer_open.get() {
            Some(tr("course-play-after-predicting"))
        } else if !valid.get() {
            Some(tr("controls-invalid"))
        } else {
            transport.with(|t| match t {
                Transport::Finished | Transport::Diverged | Transport::Failed(_) => {
                    Some(msg(&t.status(signals.view.with_untracked(|v| v.steps), false)))
                }
                _ => None,
            })
        }
    });
    let working = signals.working;
    let status = move || msg(&transport.with(|t| t.status(signals.view.with(|v| v.steps), working.get())));
    let steps = move || signals.view.with(|v| v.steps);

    // The step a chart's crosshair or the scrubber inspects (1-based); `None`: the live step.
    let inspect = RwSignal::new(None::<u64>);
    let last_step = Signal::derive(move || signals.view.with(|v| v.steps));
    let inspected = Signal::derive(move || inspect.get().filter(|&s| s <= last_step.get()));
    // Another experiment (or a reset) shows its live step, not a step inspected in the last one.
    Effect::new(move |_| {
        config.track();
        inspect.set(None);
    });
    let download_csv = move |_| {
        let csv = signals.view.with(LabView::csv);
        let name = format!(
            "gradlab-{}-metrics.csv",
            controls.with_untracked(|c| c.scenario.clone())
        );
        if let Err(e) = browser::download_text(&name, "text/csv", &csv) {
            web_sys::console::warn_1(&e.into());
        }
    };
    let embed_controls =
        |pick: fn(&EmbedOptions) -> &Vec<Control>| options.embed.as_ref().map(|e| pick(e).clone()).unwrap_or_default();
    let hidden_controls = embed_controls(|e| &e.hidden_controls);
    let locked_controls = embed_controls(|e| &e.locked_controls);
    let copy_to_sandbox = Callback::new(move |()| {
        controls.update(|c| *c = c.sandbox_from(&c.lab_config()));
    });
    let go_to = Callback::new(move |id: &'static str| {
        typo.set(None);
        controls.update(|c| *c = c.with_experiment(id));
    });
    let is_memory = move || controls.with(|c| c.preset() == Some(ScenarioId::Memory));
    let first_step = move || signals.first_step_ms.get().map(|ms| format!("{ms:.0}"));

    view! {
        <section class="lab" class:lab-no-side=hide_settings class:lab-embedded=embedded data-testid="lab" data-first-step-ms=first_step data-steps=steps>
            <ExperimentMenu controls=controls typo=typo opened_with=options.controls.clone() embedded=embedded
                hidden=hides.run(Section::Menu) />
            {(!embedded).then(|| view! {
                <Introduction start_course=Callback::new(move |()| go_to.run(ScenarioId::ALL[0].id())) />
            })}
            <ExperimentHeader experiment=experiment answer_open=answer_open config=config embedded=embedded
                hide_explanation=hides.run(Section::Explanation) />
            // The presets as a course (not in an embed, which shows one experiment).
            {(!embedded).then(|| view! {
                <CoursePanel store=course experiment=experiment view=signals.view steps=shown_steps.into() go_to=go_to />
            })}
            <EngineBadgeView engine=signals.engine cpu_in_worker=signals.cpu_in_worker />
            <p class="notice" role="status" data-testid="engine-notice"
                hidden=move || signals.engine_notice.with(Option::is_none)>
                {move || signals.engine_notice.get().map(|m| msg(&m))}
            </p>
            <TransportBar signals=signals send=send can_train=can_train valid=valid reset=reset
                step_through_toggle=(embedded && !hide_step_through).then_some(step_through_open) />
            <p class="muted" data-testid="play-gate" hidden=answer_open>{tr("course-play-after-predicting")}</p>
            // An embed shows its table right below; the full page's table is below the fold.
            {(!embedded).then(|| view! { <LiveSummary view=signals.view /> })}
            <p class="status" role="status" aria-live="polite" data-testid="status" hidden=move || !answer_open.get()
                data-transport=move || transport.with(Transport::kind)
                data-working=move || working.get().to_string()
                data-held-at-step=move || signals.held_at_step.get().map(|step| step.to_string())>{status}</p>
            <p class="field-error" role="alert" hidden=valid>{tr("controls-invalid")}</p>
            <div class="lab-grid">
                <div class="lab-main">
                    <div hidden=hides.run(Section::Table)><ResultsTable view=signals.view inspected=inspected embedded=embedded /></div>
                    <HistoryScrubber inspect=inspect last_step=last_step />
                    // Closed until opened, so an embed stays compact; `hide=step-through` drops it.
                    {(!hide_step_through).then(|| view! {
                        <StepThroughPanel view=signals.view send=send can_train=can_train
                            open=step_through_open compact=embedded blocked=train_blocked />
                    })}
                    <RunningStats view=signals.view inspected=inspected />
                    <div hidden=move || !is_memory() || !answer_open.get()>
                        <MemoryBars view=signals.view in_worker=signals.cpu_in_worker controls=controls typo=typo
                            locked=locked_controls.contains(&Control::MemoryBudget)
                            hidden=hidden_controls.contains(&Control::MemoryBudget) />
                        <p><a data-testid="plan-link" href=super::i18n::link(Route::Plan.href())>{tr("memory-plan-link")}</a></p>
                    </div>
                    <ChartsArea signals=signals controls=controls experiment=experiment hides=hides embedded=embedded
                        resized=resized set_resized=set_resized inspect=inspect last_step=last_step />
                    <p><button type="button" data-testid="download-csv" on:click=download_csv
                        disabled=move || steps() == 0>{tr("download-csv")}</button></p>
                    <BoundariesPanel signals=signals inspected=inspected embedded=embedded
                        hidden=hides.run(Section::Boundaries) resized=resized set_resized=set_resized />
                </div>
                <aside class="lab-side" hidden=hide_settings>
                    // Embedded, the settings start folded (a preset fixes most of them anyway).
                    <details class="settings-fold" open=!embedded>
                        <summary>{tr("embed-settings")}</summary>
                        <ControlsPanel controls=controls typo=typo copy_to_sandbox=copy_to_sandbox
                            hidden=hidden_controls locked=locked_controls />
                    </details>
                </aside>
            </div>
        </section>
    }
}

/// Inside an LMS the Lab is a SCO: incomplete at launch (an earlier completion is never undone),
/// completed once an experiment has been experienced; launched by LTI, that completion goes to
/// the course's gradebook through the server. Embedded or in an LMS, an experiment
/// trained far enough is reported once, with the time it took.
fn report_experiences(experiment: Signal<String>, shown_steps: Signal<u64>) {
    let lms = super::scorm::version();
    if let Some(version) = lms {
        let status = super::scorm::get(version.completion_element()).unwrap_or_default();
        let (elements, finished) = data_model::lab_launch(version, &status);
        super::scorm::save(&elements, finished);
    }
    let log = StoredValue::new(ExperienceLog::new(browser::now_ms()));
    Effect::new(move |_| {
        let id = experiment.get();
        let steps = shown_steps.get();
        let launched = super::lti::launched();
        if !(super::embed::is_active() || lms.is_some() || launched) {
            return;
        }
        let Some(seconds) = log
            .try_update_value(|l| l.observe(&id, steps, browser::now_ms()))
            .flatten()
        else {
            return;
        };
        if let Some(version) = lms {
            super::scorm::save(&data_model::lab_elements(version, true), true);
        }
        if launched {
            super::lti::report_completion(&id);
        }
        let language = super::i18n::language().tag();
        super::embed::report(&experienced_scenario(
            &id,
            &msg(&texts::title(&id)),
            language,
            steps,
            seconds,
        ));
    });
}
