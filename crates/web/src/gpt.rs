//! The tiny-GPT page: nanoGPT's architecture, character level, trained on Shakespeare on the
//! faster engine here (WebGPU on the page, or the CPU engine in its worker: WebGPU trains first,
//! the CPU engine replays its steps, and the faster one goes on, as in the Lab), three runs side
//! by side that differ only in how they divide an accumulated step's token losses. The learner predicts which run will drift, plays, and reads the answer from the
//! numbers; charts, the last step's micro-batches and samples of each run's text follow it. The
//! plays are fetched when the page opens (`shakespeare/*.txt`, copied into dist by Trunk), so no
//! other page carries them. Plain state and its tests: `gradlab_lab_state::gpt_view`.

use std::sync::Arc;

use futures_channel::mpsc::{self, UnboundedReceiver};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::browser;
use super::i18n::{msg, num, tr};
use super::lab::charts::ChartCanvas;
use super::lab::engine_loop::{adapter_label, open_webgpu, EngineBadge};
use super::lab::{run_swatch, EngineBadgeView};
use super::worker::CpuWorker;
use gradlab_cpu_worker::{FromWorker, GptBuilt, ToWorker};
use gradlab_gpu::context::GpuContext;
use gradlab_gpu::gpt::GptGpuLab;
use gradlab_gpu::ops::GpuOps;
use gradlab_i18n::Msg;
use gradlab_lab_state::controls::EngineOptions;
use gradlab_lab_state::engine_choice::{EnginePreference, GpuTrial, Verdict};
use gradlab_lab_state::gpt_controls::{self, GptControl};
use gradlab_lab_state::gpt_view::{
    memory_rows, memory_verdict, observed, trace_phases, trace_rows, trace_status, verdict, window_rows, GptChart,
    MemoryPrediction, Prediction, MEMORY_QUESTION_N,
};
use gradlab_lab_state::numbers::readable;
use gradlab_plot::ChartLook;
use gradlab_route::Route;
use gradlab_sim::gpt::lab::{GptMirror, Reduction};
use gradlab_sim::gpt::memory::GptMemoryRow;
use gradlab_sim::gpt::scenario::{GptSettings, SAMPLE_CHARS, SAMPLE_PROMPT, SAMPLE_SEED, SAMPLE_TEMPERATURE};
use gradlab_sim::gpt::text::ExampleKind;
use gradlab_sim::gpt::trace::GptStepTrace;
use gradlab_sim::optim::ScheduleSpec;

/// The plays, as `assets/text/shakespeare/` holds them.
const PLAYS: [&str; 4] = ["hamlet", "macbeth", "julius_caesar", "romeo_and_juliet"];
/// Optimizer steps per request to either engine: the page redraws after each request.
const STEPS_PER_REQUEST: u64 = 2;
/// Samples are redrawn every this many steps.
const SAMPLE_EVERY: u64 = 20;

#[derive(Debug, Clone, PartialEq)]
enum Status {
    Loading,
    Ready,
    Failed(String),
}

impl Status {
    fn id(&self) -> &'static str {
        match self {
            Status::Loading => "loading",
            Status::Ready => "ready",
            Status::Failed(_) => "failed",
        }
    }
}

enum Command {
    Play,
    Pause,
    /// Build the experiment again with these settings (another cut of the text, or the
    /// learner's own model and accumulation).
    Build(GptSettings),
    /// The memory experiment on the part shown.
    Measure,
    /// Every run's passes over the last step (the step-through).
    Trace,
}

/// Where the step-through stands: the step it shows and its passes.
#[derive(Debug, Clone, PartialEq)]
enum Traced {
    Idle,
    Working,
    Shown { step: u64, trace: GptStepTrace },
    Failed(String),
}

impl Traced {
    fn id(&self) -> &'static str {
        match self {
            Traced::Idle => "idle",
            Traced::Working => "working",
            Traced::Shown { .. } => "shown",
            Traced::Failed(_) => "failed",
        }
    }
}

/// Where the memory experiment stands.
#[derive(Debug, Clone, PartialEq)]
enum Memory {
    Idle,
    Measuring,
    Measured(Vec<GptMemoryRow>),
    Failed(String),
}

impl Memory {
    fn id(&self) -> &'static str {
        match self {
            Memory::Idle => "idle",
            Memory::Measuring => "measuring",
            Memory::Measured(_) => "measured",
            Memory::Failed(_) => "failed",
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Signals {
    status: RwSignal<Status>,
    built: RwSignal<Option<GptBuilt>>,
    mirror: RwSignal<GptMirror>,
    playing: RwSignal<bool>,
    working: RwSignal<bool>,
    samples: RwSignal<Vec<String>>,
    engine: RwSignal<EngineBadge>,
    /// The CPU engine always trains in its worker here (the badge says where).
    cpu_in_worker: RwSignal<bool>,
    memory: RwSignal<Memory>,
    traced: RwSignal<Traced>,
}

fn run_label(reduction: Reduction) -> String {
    tr(&format!("gpt-run-{}", reduction.id()))
}

#[component]
pub fn GptPage() -> impl IntoView {
    let signals = Signals {
        status: RwSignal::new(Status::Loading),
        built: RwSignal::new(None),
        mirror: RwSignal::new(GptMirror::default()),
        playing: RwSignal::new(false),
        working: RwSignal::new(true),
        samples: RwSignal::new(Vec::new()),
        engine: RwSignal::new(EngineBadge::Preparing),
        cpu_in_worker: RwSignal::new(true),
        memory: RwSignal::new(Memory::Idle),
        traced: RwSignal::new(Traced::Idle),
    };
    // What the URL asks for; the page's header lists what it could not use.
    let (initial, _) = gpt_controls::from_pairs(&browser::query_pairs());
    let settings = RwSignal::new(initial);
    let part = Signal::derive(move || settings.with(|s| s.examples));
    let prediction = RwSignal::new(None::<Prediction>);
    let (sender, receiver) = mpsc::unbounded::<Command>();
    let sender = StoredValue::new(sender);
    let send = move |command: Command| sender.with_value(|s| drop(s.unbounded_send(command)));
    spawn_local(train(receiver, signals, initial));
    // Another experiment: new runs from new weights, and the address keeps the settings.
    let rebuild = move |chosen: GptSettings| {
        settings.set(chosen);
        signals.working.set(true);
        signals.playing.set(false);
        prediction.set(None);
        browser::set_query_parameters(&gpt_controls::url_parameters(&chosen));
        send(Command::Build(chosen));
    };

    let steps = move || signals.mirror.with(|m| m.steps_taken);
    let toggle = move |_| {
        if signals.playing.get_untracked() {
            signals.playing.set(false);
            send(Command::Pause);
        } else {
            // Busy from the click on, so that nothing reads the page as settled before the
            // training task has seen the command.
            signals.working.set(true);
            signals.playing.set(true);
            send(Command::Play);
        }
    };
    let choose_part = move |chosen: ExampleKind| {
        let current = settings.get_untracked();
        if current.examples != chosen {
            rebuild(GptSettings {
                examples: chosen,
                ..current
            });
        }
    };

    view! {
        <section class="gpt" data-testid="gpt" data-status=move || signals.status.with(|s| s.id())
            data-steps=move || steps().to_string() data-working=move || signals.working.get().to_string()
            data-part=move || part.get().id()>
            <h1>{tr("gpt-title")}</h1>
            <p>{tr("gpt-intro")}</p>
            <ModelSummary signals=signals />
            <fieldset class="gpt-parts">
                <legend>{tr("gpt-part-legend")}</legend>
                {ExampleKind::ALL.into_iter().map(|p| view! {
                    <label>
                        <input type="radio" name="gpt-part" value=p.id() data-testid=format!("gpt-part-{}", p.id())
                            prop:checked=move || part.get() == p on:change=move |_| choose_part(p) />
                        {tr(&format!("gpt-part-{}", p.id()))}
                    </label>
                }).collect_view()}
            </fieldset>
            <SettingsView settings=settings apply=rebuild />
            <PredictionView signals=signals prediction=prediction part=part />
            <div class="gpt-transport">
                <button type="button" data-testid="gpt-play" on:click=toggle
                    disabled=move || signals.status.get() != Status::Ready>
                    {move || if signals.playing.get() { tr("gpt-pause") } else { tr("gpt-play") }}
                </button>
                <p role="status" data-testid="gpt-status">{move || status_text(signals, steps())}</p>
            </div>
            <EngineBadgeView engine=signals.engine cpu_in_worker=signals.cpu_in_worker />
            <RunsView signals=signals />
            <ChartsView signals=signals />
            <WindowView signals=signals />
            <TraceView signals=signals trace=move || {
                signals.traced.set(Traced::Working);
                send(Command::Trace);
            } />
            <SamplesView signals=signals />
            <MemoryView signals=signals measure=move || {
                signals.memory.set(Memory::Measuring);
                send(Command::Measure);
            } />
        </section>
    }
}

fn status_text(signals: Signals, steps: u64) -> String {
    match signals.status.get() {
        Status::Loading => tr("gpt-status-loading"),
        Status::Failed(reason) => msg(&Msg::new("gpt-status-failed").arg("reason", reason)),
        Status::Ready if signals.playing.get() => msg(&Msg::new("gpt-status-running").arg("steps", steps)),
        Status::Ready => msg(&Msg::new("gpt-status-paused").arg("steps", steps)),
    }
}

#[component]
fn ModelSummary(signals: Signals) -> impl IntoView {
    move || {
        signals.built.get().map(|b| {
            let text = msg(&Msg::new("gpt-model-summary")
                .arg("layers", b.spec.layers)
                .arg("width", b.spec.embedding)
                .arg("heads", b.spec.heads)
                .arg("context", b.spec.context)
                .arg("parameters", b.parameters)
                .arg("vocabulary", b.vocabulary)
                .arg("train", b.train_examples)
                .arg("validation", b.validation_examples)
                .arg("batch", b.batch)
                .arg("micro_batches", b.micro_batches)
                .arg("per_micro_batch", b.batch / b.micro_batches.max(1)));
            view! { <p data-testid="gpt-model">{text}</p> }
        })
    }
}

/// The sandbox: the learner's own model and accumulation. The form holds text until "Train with
/// these settings"; each control's problem is shown beside it, and nothing is rebuilt until all
/// are fixed. The Examples radio above sets the cut of the text at once.
#[component]
fn SettingsView<F>(settings: RwSignal<GptSettings>, apply: F) -> impl IntoView
where
    F: Fn(GptSettings) + Copy + Send + Sync + 'static,
{
    const CONTROLS: [GptControl; 7] = gpt_controls::FORM_CONTROLS;
    let texts_of = |s: &GptSettings| CONTROLS.map(|c| c.text_of(s));
    let texts = RwSignal::new(texts_of(&settings.get_untracked()));
    let problems = RwSignal::new(Vec::<(GptControl, Msg)>::new());
    // Settings changed elsewhere (the Examples radio, the reset) are what the form shows.
    Effect::new(move |_| {
        texts.set(texts_of(&settings.get()));
        problems.set(Vec::new());
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let texts: Vec<(GptControl, String)> = CONTROLS.into_iter().zip(texts.get_untracked()).collect();
        match gpt_controls::from_texts(&settings.get_untracked(), &texts) {
            Ok(next) => apply(next),
            Err(found) => problems.set(found),
        }
    };
    let reset = move |_| {
        let examples = settings.get_untracked().examples;
        apply(GptSettings {
            examples,
            ..GptSettings::default()
        });
    };
    let fields = CONTROLS
        .into_iter()
        .enumerate()
        .map(|(i, control)| {
            let id = format!("gpt-control-{}", control.key());
            let error_id = format!("{id}-error");
            let value = move || texts.with(|t| t[i].clone());
            let set = move |text: String| texts.update(|t| t[i] = text);
            let problem = move || problems.with(|p| p.iter().find(|(c, _)| *c == control).map(|(_, m)| msg(m)));
            let input = match control.choices() {
                Some(choices) => {
                    let items = choices
                        .into_iter()
                        .map(|choice| {
                            let (shown, label) = (choice.clone(), choice.clone());
                            view! { <option value=choice selected=move || value() == shown>{label}</option> }
                        })
                        .collect_view();
                    view! {
                        <select id=id.clone() data-testid=id.clone() aria-describedby=error_id.clone()
                            on:change=move |ev| set(event_target_value(&ev))>{items}</select>
                    }
                    .into_any()
                }
                None => view! {
                    <input id=id.clone() data-testid=id.clone() type="text" inputmode="decimal" autocomplete="off"
                        spellcheck="false" prop:value=value aria-describedby=error_id.clone()
                        aria-invalid=move || problem().is_some().to_string()
                        on:input=move |ev| set(event_target_value(&ev)) />
                }
                .into_any(),
            };
            view! {
                <div class="field" class:invalid=move || problem().is_some() data-control=control.key()>
                    <label for=id.clone()>{tr(&id)}</label>
                    {input}
                    <p id=error_id class="field-error" aria-live="polite">{problem}</p>
                </div>
            }
        })
        .collect_view();
    let preset = gradlab_sim::gpt::lab::GptLabConfig::default();
    let total_steps = match preset.schedule {
        ScheduleSpec::WarmupCosine { total_steps, .. } => total_steps,
        ScheduleSpec::Constant { .. } => 0,
    };
    let optimizer = msg(&Msg::new("gpt-settings-optimizer")
        .arg("batch", preset.batch)
        .arg("total", total_steps));
    // Open from the start on a link with a model of the learner's own (the Examples radio is
    // outside the form); after that, the learner opens and closes it.
    let own_model = settings.with_untracked(|s| {
        gpt_controls::url_parameters(s)
            .iter()
            .any(|(key, value)| *key != GptControl::Data.key() && value.is_some())
    });
    view! {
        <details class="gpt-settings controls" data-testid="gpt-settings" open=own_model>
            <summary>{tr("gpt-settings-title")}</summary>
            <p>{tr("gpt-settings-intro")}</p>
            <form on:submit=submit novalidate=true>
                <div class="field-grid">{fields}</div>
                <p class="muted">{num(&optimizer)}</p>
                <div class="gpt-transport">
                    <button type="submit" data-testid="gpt-settings-apply">{tr("gpt-settings-apply")}</button>
                    <button type="button" data-testid="gpt-settings-reset" on:click=reset>{tr("gpt-settings-reset")}</button>
                </div>
            </form>
        </details>
    }
}

#[component]
fn PredictionView(
    signals: Signals,
    prediction: RwSignal<Option<Prediction>>,
    part: Signal<ExampleKind>,
) -> impl IntoView {
    let answer = move || {
        let chosen = prediction.get()?;
        let seen = signals.mirror.with(observed)?;
        let text = msg(&verdict(chosen, &seen).arg("answer", tr(&format!("gpt-predict-{}", seen.answer.id()))));
        Some(view! { <p class="gpt-verdict" data-testid="gpt-verdict" data-answer=seen.answer.id()>{num(&text)}</p> })
    };
    view! {
        <fieldset class="gpt-predict" data-testid="gpt-predict">
            <legend>{move || tr(&format!("gpt-predict-question-{}", part.get().id()))}</legend>
            {Prediction::ALL.into_iter().map(|p| view! {
                <label>
                    <input type="radio" name="gpt-predict" value=p.id() data-testid=format!("gpt-predict-{}", p.id())
                        prop:checked=move || prediction.get() == Some(p) on:change=move |_| prediction.set(Some(p)) />
                    {tr(&format!("gpt-predict-{}", p.id()))}
                </label>
            }).collect_view()}
            <div aria-live="polite">{answer}</div>
        </fieldset>
    }
}

#[component]
fn RunsView(signals: Signals) -> impl IntoView {
    move || {
        signals.built.get().map(|b| {
            let items = b
                .reductions
                .iter()
                .enumerate()
                .map(|(style, &r)| {
                    // Each step's training loss in full, for tests that compare engines.
                    let losses = move || {
                        signals.mirror.with(|m| {
                            m.history(r)
                                .unwrap_or_default()
                                .iter()
                                .map(|record| record.train_loss.to_string())
                                .collect::<Vec<_>>()
                                .join(",")
                        })
                    };
                    view! {
                        <li data-run=r.id() data-losses=losses>{run_swatch(style)} <strong>{run_label(r)}</strong>": "
                            <code>{tr(&format!("gpt-formula-{}", r.id()))}</code></li>
                    }
                })
                .collect_view();
            view! { <ul class="gpt-runs" data-testid="gpt-runs">{items}</ul> }
        })
    }
}

#[component]
fn ChartsView(signals: Signals) -> impl IntoView {
    let (resized, set_resized) = signal(0u32);
    let _ = window_event_listener(leptos::ev::resize, move |_| set_resized.update(|n| *n += 1));
    let inspect = RwSignal::new(None::<u64>);
    let last_step = Signal::derive(move || signals.mirror.with(|m| m.steps_taken));
    let charts = GptChart::ALL
        .into_iter()
        .map(|which| {
            let chart = Memo::new(move |_| {
                // The runs' list above the charts, with each run's swatch, is their legend.
                let look = ChartLook {
                    legend: false,
                    decimal_comma: super::i18n::language().decimal_comma(),
                };
                let mut chart = signals.mirror.with(|m| which.of(m, run_label, look));
                chart.title = tr(&format!("gpt-chart-{}", which.slug()));
                chart.x_label = tr("chart-step");
                chart.y_label = if chart.log_y {
                    tr("chart-error-floor")
                } else {
                    tr("gpt-chart-nats")
                };
                chart
            });
            view! {
                <ChartCanvas chart=chart file_name=format!("gradlab-gpt-{}.png", which.slug())
                    testid=format!("gpt-chart-{}", which.slug()) resized=resized inspect=inspect last_step=last_step />
            }
        })
        .collect_view();
    view! { <div class="charts">{charts}</div> }
}

#[component]
fn WindowView(signals: Signals) -> impl IntoView {
    let rows = move || {
        signals.mirror.with(window_rows).into_iter().map(|row| {
            view! {
                <tr>
                    <th scope="row">{row.index}</th>
                    <td>{row.examples}</td>
                    <td>{row.tokens}</td>
                    <td>{row.padded_tokens}</td>
                    <td>{num(&readable(row.mean_weight, 3))}" ("{num(&readable(row.times_full_batch(), 2))}" ×)"</td>
                    <td>{num(&readable(row.window_weight, 3))}</td>
                </tr>
            }
        }).collect_view()
    };
    let empty = move || signals.mirror.with(|m| m.window.is_empty());
    view! {
        <section class="gpt-window" data-testid="gpt-window">
            <h2>{tr("gpt-window-title")}</h2>
            <p>{tr("gpt-window-intro")}</p>
            <div class="table-scroll" tabindex="0" role="region" aria-label=tr("gpt-window-title")>
                <table>
                    <thead><tr>
                        <th scope="col">{tr("gpt-window-micro-batch")}</th>
                        <th scope="col">{tr("gpt-window-examples")}</th>
                        <th scope="col">{tr("gpt-window-tokens")}</th>
                        <th scope="col">{tr("gpt-window-padded")}</th>
                        <th scope="col">{tr("gpt-window-mean-weight")}</th>
                        <th scope="col">{tr("gpt-window-window-weight")}</th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            <Show when=empty><p>{tr("gpt-window-empty")}</p></Show>
        </section>
    }
}

#[component]
fn TraceView(signals: Signals, trace: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    let phase = RwSignal::new(1usize);
    let shown = move || match signals.traced.get() {
        Traced::Shown { step, trace } => Some((step, trace)),
        _ => None,
    };
    let phases = move || {
        signals.traced.with(|t| match t {
            Traced::Shown { trace, .. } => trace_phases(trace),
            _ => 0,
        })
    };
    // A new trace starts at its first micro-batch.
    Effect::new(move |_| {
        if signals.traced.with(|t| matches!(t, Traced::Shown { .. })) {
            phase.set(1);
        }
    });
    let runs = move || {
        let (step, trace) = shown()?;
        let k = phase.get().min(trace_phases(&trace)).max(1);
        let tables = trace
            .runs
            .iter()
            .enumerate()
            .map(|(style, run)| {
                let rows = trace_rows(run, trace.window_tokens, k).into_iter().map(|row| view! {
                <tr>
                    <th scope="row">{row.index}</th>
                    <td>{row.tokens}</td>
                    <td>{num(&readable(row.loss_sum, 5))}</td>
                    <td>{num(&readable(row.token_weight, 3))}" ("{num(&readable(row.times_full_batch, 2))}" ×)"</td>
                    <td>{num(&readable(row.buffer_error, 2))}</td>
                </tr>
            }).collect_view();
                view! {
                    <figure class="gpt-trace-run" data-testid=format!("gpt-trace-{}", run.reduction.id())
                        data-status=trace_status(run, k).id.to_string()>
                        <figcaption>{run_swatch(style)}" "<strong>{run_label(run.reduction)}</strong>": "
                            <code>{tr(&format!("gpt-formula-{}", run.reduction.id()))}</code></figcaption>
                        <div class="table-scroll" tabindex="0" role="region" aria-label=run_label(run.reduction)>
                            <table>
                                <thead><tr>
                                    <th scope="col">{tr("gpt-trace-micro-batch")}</th>
                                    <th scope="col">{tr("gpt-trace-tokens")}</th>
                                    <th scope="col">{tr("gpt-trace-loss")}</th>
                                    <th scope="col">{tr("gpt-trace-weight")}</th>
                                    <th scope="col">{tr("gpt-trace-buffer")}</th>
                                </tr></thead>
                                <tbody>{rows}</tbody>
                            </table>
                        </div>
                        <p>{num(&msg(&trace_status(run, k)))}</p>
                    </figure>
                }
            })
            .collect_view();
        Some(view! {
            <p>{msg(&Msg::new("gpt-trace-at").arg("step", step))}</p>
            <div class="gpt-trace-stepper">
                <button type="button" data-testid="gpt-trace-previous" disabled={move || phase.get() <= 1}
                    on:click=move |_| phase.update(|p| *p = p.saturating_sub(1).max(1))>{tr("gpt-trace-previous")}</button>
                <p aria-live="polite" data-testid="gpt-trace-phase">
                    {move || msg(&Msg::new("gpt-trace-phase").arg("k", phase.get().min(phases())).arg("n", phases()))}</p>
                <button type="button" data-testid="gpt-trace-next" disabled={move || phase.get() >= phases()}
                    on:click=move |_| phase.update(|p| *p = (*p + 1).min(phases()))>{tr("gpt-trace-next")}</button>
            </div>
            <div class="gpt-trace-runs">{tables}</div>
        })
    };
    let note = move || match signals.traced.get() {
        Traced::Idle => Some(tr("gpt-trace-empty")),
        Traced::Working => Some(tr("gpt-trace-working")),
        Traced::Failed(reason) => Some(msg(&Msg::new("gpt-trace-failed").arg("reason", reason))),
        Traced::Shown { .. } => None,
    };
    let busy = move || {
        signals.traced.with(|t| *t == Traced::Working)
            || signals.status.get() != Status::Ready
            || signals.mirror.with(|m| m.steps_taken) == 0
    };
    view! {
        <section class="gpt-trace" data-testid="gpt-trace" data-status=move || signals.traced.with(Traced::id)
            data-phase=move || phase.get().to_string()>
            <h2>{tr("gpt-trace-title")}</h2>
            <p>{tr("gpt-trace-intro")}</p>
            <div class="gpt-transport">
                <button type="button" data-testid="gpt-trace-show" on:click=move |_| trace() disabled=busy>
                    {tr("gpt-trace-show")}
                </button>
                <p role="status">{note}</p>
            </div>
            {runs}
        </section>
    }
}

#[component]
fn MemoryView(signals: Signals, measure: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    let prediction = RwSignal::new(None::<MemoryPrediction>);
    let n = MEMORY_QUESTION_N;
    let rows = move || match signals.memory.get() {
        Memory::Measured(rows) => memory_rows(&rows),
        _ => Vec::new(),
    };
    let table = move || {
        rows()
            .into_iter()
            .map(|row| {
                let bar = format!("width: {:.1}%", 100.0 * row.of_full);
                view! {
                    <tr data-n=row.micro_batches>
                        <th scope="row">{row.micro_batches}</th>
                        <td>{row.examples_per_pass}</td>
                        <td>{row.tokens_per_pass}</td>
                        <td>{num(&row.per_token)}</td>
                        <td>{num(&row.attention)}</td>
                        <td>{num(&row.logits)}</td>
                        <td class="gpt-memory-total">{num(&row.total)}
                            <span class="gpt-memory-bar" aria-hidden="true"><span style=bar></span></span></td>
                        <td>{num(&readable(100.0 * row.of_full, 3))}" %"</td>
                        <td>{num(&readable(row.ms_per_step, 3))}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    let answer = move || {
        let chosen = prediction.get()?;
        let Memory::Measured(rows) = signals.memory.get() else {
            return None;
        };
        let (answer, text) = memory_verdict(chosen, &rows)?;
        Some(
            view! { <p class="gpt-verdict" data-testid="gpt-memory-verdict" data-answer=answer.id()>{num(&msg(&text))}</p> },
        )
    };
    let status = move || match signals.memory.get() {
        Memory::Measuring => Some(tr("gpt-memory-measuring")),
        Memory::Failed(reason) => Some(msg(&Msg::new("gpt-memory-failed").arg("reason", reason))),
        Memory::Idle | Memory::Measured(_) => None,
    };
    let busy = move || signals.memory.with(|m| *m == Memory::Measuring) || signals.status.get() != Status::Ready;
    view! {
        <section class="gpt-memory" data-testid="gpt-memory" data-status=move || signals.memory.with(Memory::id)>
            <h2>{tr("gpt-memory-title")}</h2>
            <p>{tr("gpt-memory-intro")}</p>
            <fieldset class="gpt-predict" data-testid="gpt-memory-predict">
                <legend>{msg(&Msg::new("gpt-memory-question").arg("n", n))}</legend>
                {MemoryPrediction::ALL.into_iter().map(|p| view! {
                    <label>
                        <input type="radio" name="gpt-memory-predict" value=p.id()
                            data-testid=format!("gpt-memory-predict-{}", p.id())
                            prop:checked=move || prediction.get() == Some(p) on:change=move |_| prediction.set(Some(p)) />
                        {msg(&Msg::new(format!("gpt-memory-predict-{}", p.id())).arg("n", n))}
                    </label>
                }).collect_view()}
                <div aria-live="polite">{answer}</div>
            </fieldset>
            <div class="gpt-transport">
                <button type="button" data-testid="gpt-memory-measure" on:click=move |_| measure() disabled=busy>
                    {tr("gpt-memory-measure")}
                </button>
                <p role="status">{status}</p>
            </div>
            <div class="table-scroll" tabindex="0" role="region" aria-label=tr("gpt-memory-title")>
                <table data-testid="gpt-memory-table">
                    <thead><tr>
                        <th scope="col">{tr("gpt-memory-n")}</th>
                        <th scope="col">{tr("gpt-memory-examples")}</th>
                        <th scope="col">{tr("gpt-memory-tokens")}</th>
                        <th scope="col">{tr("gpt-memory-per-token")}</th>
                        <th scope="col">{tr("gpt-memory-attention")}</th>
                        <th scope="col">{tr("gpt-memory-logits")}</th>
                        <th scope="col">{tr("gpt-memory-total")}</th>
                        <th scope="col">{tr("gpt-memory-of-full")}</th>
                        <th scope="col">{tr("gpt-memory-ms")}</th>
                    </tr></thead>
                    <tbody>{table}</tbody>
                </table>
            </div>
            <p>{tr("gpt-memory-note")}" "<a href=super::i18n::link(Route::Plan.href())>{tr("gpt-memory-planner")}</a>"."</p>
        </section>
    }
}

#[component]
fn SamplesView(signals: Signals) -> impl IntoView {
    let items = move || {
        let reductions = signals
            .built
            .with(|b| b.as_ref().map(|b| b.reductions.clone()).unwrap_or_default());
        signals.samples.with(|texts| {
            reductions
                .iter()
                .zip(texts)
                .map(|(&r, text)| {
                    view! {
                        <figure class="gpt-sample" data-testid=format!("gpt-sample-{}", r.id())>
                            <figcaption>{run_label(r)}</figcaption>
                            <pre>{format!("{SAMPLE_PROMPT}{text}")}</pre>
                        </figure>
                    }
                })
                .collect_view()
        })
    };
    view! {
        <section class="gpt-samples" data-testid="gpt-samples">
            <h2>{tr("gpt-samples-title")}</h2>
            <p>{msg(&Msg::new("gpt-samples-intro").arg("chars", SAMPLE_CHARS).arg("every", SAMPLE_EVERY))}</p>
            <div class="gpt-sample-list">{items}</div>
        </section>
    }
}

/// The four plays' texts, fetched beside the page.
pub(crate) async fn fetch_plays() -> Result<Vec<(String, String)>, String> {
    let mut plays = Vec::with_capacity(PLAYS.len());
    for name in PLAYS {
        let url = browser::api_url(&format!("shakespeare/{name}.txt"));
        let reply = browser::fetch("GET", &url, None).await?;
        if reply.status != 200 {
            return Err(format!("{url}: HTTP {}", reply.status));
        }
        plays.push((name.to_string(), reply.body));
    }
    Ok(plays)
}

async fn ask(worker: &CpuWorker, request: &ToWorker, keep_going: &dyn Fn() -> bool) -> Result<FromWorker, String> {
    match worker.request(request, keep_going).await? {
        FromWorker::Failed { message } => Err(message),
        answer => Ok(answer),
    }
}

async fn build(
    worker: &CpuWorker,
    settings: GptSettings,
    plays: &[(String, String)],
    signals: Signals,
) -> Result<(), String> {
    let _ = signals.status.try_set(Status::Loading);
    let request = ToWorker::BuildGpt {
        settings,
        plays: plays.to_vec(),
    };
    let FromWorker::GptBuilt(built) = ask(worker, &request, &|| true).await? else {
        return Err("the CPU worker answered another request".to_string());
    };
    let _ = signals.mirror.try_set(GptMirror::new(built.reductions.clone()));
    let _ = signals.built.try_set(Some(built));
    Ok(())
}

/// Each run's sample, by the worker's sampler: from its own runs, or from WebGPU's weights
/// when WebGPU trains.
async fn sample(worker: &CpuWorker, signals: Signals, gpu: Option<GpuWeights>) -> Result<(), String> {
    let weights = gpu.map(|g| g.weights);
    let request = ToWorker::SampleGpt {
        prompt: SAMPLE_PROMPT.to_string(),
        count: SAMPLE_CHARS,
        temperature: SAMPLE_TEMPERATURE,
        seed: SAMPLE_SEED,
        weights,
    };
    match ask(worker, &request, &|| true).await? {
        FromWorker::GptSampled { texts } => {
            let _ = signals.samples.try_set(texts);
            Ok(())
        }
        other => Err(format!("the CPU worker answered {other:?}")),
    }
}

/// Timed steps per N of the memory experiment.
const MEMORY_STEPS: u64 = 2;

/// The memory experiment in the worker, on the part it has built.
async fn measure_memory(worker: &CpuWorker, signals: Signals) -> Result<(), String> {
    let _ = signals.memory.try_set(Memory::Measuring);
    let request = ToWorker::MeasureGptMemory { steps: MEMORY_STEPS };
    let memory = match ask(worker, &request, &|| true).await {
        Ok(FromWorker::GptMemory { rows }) => Memory::Measured(rows),
        Ok(other) => Memory::Failed(format!("the CPU worker answered {other:?}")),
        Err(reason) => Memory::Failed(reason),
    };
    let _ = signals.memory.try_set(memory);
    Ok(())
}

/// The step-through of the last step, by the worker at the training engine's weights (WebGPU's
/// sent along when it trains, with its last step's examples).
async fn trace_step(worker: &CpuWorker, signals: Signals, gpu: Option<GpuWeights>) -> Result<(), String> {
    let _ = signals.traced.try_set(Traced::Working);
    let step = signals.mirror.with_untracked(|m| m.steps_taken);
    let (batch, weights) = match gpu {
        Some(g) => (g.batch, Some(g.weights)),
        None => (Vec::new(), None),
    };
    let traced = match ask(worker, &ToWorker::TraceGpt { batch, weights }, &|| true).await {
        Ok(FromWorker::GptTraced { trace }) => Traced::Shown { step, trace },
        Ok(other) => Traced::Failed(format!("the CPU worker answered {other:?}")),
        Err(reason) => Traced::Failed(reason),
    };
    let _ = signals.traced.try_set(traced);
    Ok(())
}

/// What the worker needs to sample or trace WebGPU's runs: each run's weights and the last
/// step's examples.
struct GpuWeights {
    batch: Vec<usize>,
    weights: Vec<Vec<f32>>,
}

/// WebGPU's weights when it trains (none when the CPU engine does). When they cannot be read
/// back, WebGPU has failed: the CPU engine replays the steps taken and trains from here on.
async fn gpu_weights(
    trainer: &mut Trainer,
    gpu: &mut Option<WebGpu>,
    worker: &CpuWorker,
    (settings, plays): (GptSettings, &[(String, String)]),
    signals: Signals,
) -> Result<Option<GpuWeights>, String> {
    let Some(lab) = gpu
        .as_ref()
        .and_then(|g| g.lab.as_ref())
        .filter(|_| *trainer != Trainer::Cpu)
    else {
        return Ok(None);
    };
    let mut weights = Vec::with_capacity(lab.run_count());
    for run in 0..lab.run_count() {
        match lab.read_parameters(run).await {
            Ok(w) => weights.push(w),
            Err(error) => {
                *trainer = Trainer::Cpu;
                *gpu = None;
                catch_up_on_cpu(worker, settings, plays, signals, error.to_string()).await?;
                return Ok(None);
            }
        }
    }
    Ok(Some(GpuWeights {
        batch: lab.last_batch().to_vec(),
        weights,
    }))
}

/// The page's training loop: build, then advance while playing, a part switch rebuilding.
async fn train(mut commands: UnboundedReceiver<Command>, signals: Signals, settings: GptSettings) {
    if let Err(reason) = training(&mut commands, signals, settings).await {
        let _ = signals.playing.try_set(false);
        let _ = signals.status.try_set(Status::Failed(reason));
    }
    let _ = signals.working.try_set(false);
}

/// Which engine trains: the CPU worker, WebGPU, or WebGPU while it is measured against the CPU
/// engine (a part switch before the race is decided starts it again on the new part; once
/// decided, it stays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trainer {
    Cpu,
    Gpu,
    Racing,
}

/// WebGPU's side of the page: its device and kernels, and the lab of the part shown.
struct WebGpu {
    context: GpuContext,
    ops: Arc<GpuOps>,
    lab: Option<GptGpuLab>,
    /// Records each run's mirror already holds.
    sent: Vec<usize>,
}

impl WebGpu {
    fn build(&mut self, settings: GptSettings, plays: &[(String, String)]) -> Result<(), String> {
        self.lab = None;
        self.sent.clear();
        let (config, corpus) = settings.lab_input(plays).map_err(|e| e.to_string())?;
        let lab = GptGpuLab::new(&self.context, self.ops.clone(), config, corpus).map_err(|e| e.to_string())?;
        self.lab = Some(lab);
        Ok(())
    }

    /// `STEPS_PER_REQUEST` steps, mirrored; the milliseconds they took.
    async fn advance(&mut self, signals: Signals) -> Result<f64, String> {
        let lab = self.lab.as_mut().ok_or("WebGPU has no tiny-GPT lab")?;
        let started = browser::now_ms();
        lab.advance(STEPS_PER_REQUEST).await.map_err(|e| e.to_string())?;
        let ms = browser::now_ms() - started;
        let update = lab.update_since(&mut self.sent);
        let _ = signals.mirror.try_update(|m| m.apply(update));
        Ok(ms)
    }
}

/// WebGPU, unless the URL asks for the CPU engine or the browser has none; the badge says which
/// and why.
async fn open_gpu(preference: EnginePreference, signals: Signals) -> (Trainer, Option<WebGpu>) {
    match open_webgpu(preference == EnginePreference::Cpu).await {
        Ok(context) => {
            let choosing = preference == EnginePreference::Faster;
            let _ = signals.engine.try_set(EngineBadge::Gpu {
                adapter: adapter_label(&context),
                choosing,
            });
            let ops = GpuOps::shared(&context);
            let trainer = if choosing { Trainer::Racing } else { Trainer::Gpu };
            let gpu = WebGpu {
                context,
                ops,
                lab: None,
                sent: Vec::new(),
            };
            (trainer, Some(gpu))
        }
        Err(reason) => {
            let _ = signals.engine.try_set(EngineBadge::Cpu(Some(reason)));
            (Trainer::Cpu, None)
        }
    }
}

/// The CPU engine (its worker's lab, just built, at step 0) replays the `steps` steps WebGPU
/// took, timed, and stops as soon as it cannot win; when it wins, its numbers for those steps.
async fn race_cpu(
    worker: &CpuWorker,
    signals: Signals,
    steps: u64,
    gpu_ms_per_step: f64,
) -> Result<(Verdict, Option<GptMirror>), String> {
    let deadline = GpuTrial::cpu_deadline_ms(gpu_ms_per_step, steps);
    let reductions = signals
        .built
        .with_untracked(|b| b.as_ref().map(|b| b.reductions.clone()))
        .unwrap_or_default();
    let mut mirror = GptMirror::new(reductions);
    let started = browser::now_ms();
    while mirror.steps_taken < steps {
        match ask(worker, &ToWorker::AdvanceGpt { steps: 1 }, &|| true).await? {
            FromWorker::GptAdvanced { update, .. } => mirror.apply(update),
            other => return Err(format!("the CPU worker answered {other:?}")),
        }
        let elapsed = browser::now_ms() - started;
        if elapsed > deadline {
            let per_step = elapsed / mirror.steps_taken.max(1) as f64;
            return Ok((Verdict::of(gpu_ms_per_step, per_step), None));
        }
    }
    let per_step = (browser::now_ms() - started) / steps.max(1) as f64;
    let verdict = Verdict::of(gpu_ms_per_step, per_step);
    Ok((verdict, verdict.uses_cpu().then_some(mirror)))
}

/// WebGPU failed while training: the CPU engine, built again, replays the steps taken, so
/// that the learner's run goes on at the same step with the same numbers.
async fn catch_up_on_cpu(
    worker: &CpuWorker,
    settings: GptSettings,
    plays: &[(String, String)],
    signals: Signals,
    reason: String,
) -> Result<(), String> {
    let steps = signals.mirror.with_untracked(|m| m.steps_taken);
    let _ = signals.engine.try_set(EngineBadge::Cpu(Some(
        Msg::new("engine-gpu-error").arg("reason", reason),
    )));
    build(worker, settings, plays, signals).await?;
    let mut mirror = signals.mirror.get_untracked();
    while mirror.steps_taken < steps {
        let request = ToWorker::AdvanceGpt {
            steps: steps - mirror.steps_taken,
        };
        match ask(worker, &request, &|| true).await? {
            FromWorker::GptAdvanced { update, .. } => mirror.apply(update),
            other => return Err(format!("the CPU worker answered {other:?}")),
        }
    }
    let _ = signals.mirror.try_set(mirror);
    let _ = signals.status.try_set(Status::Ready);
    Ok(())
}

async fn training(
    commands: &mut UnboundedReceiver<Command>,
    signals: Signals,
    mut settings: GptSettings,
) -> Result<(), String> {
    let (options, _) = EngineOptions::from_pairs(&browser::query_pairs());
    let worker = CpuWorker::spawn_gpt().await?;
    let plays = fetch_plays().await?;
    let (mut trainer, mut gpu) = open_gpu(options.engine, signals).await;
    let mut trial = GpuTrial::default();
    // The step the samples show (none yet).
    let mut sampled_at = None;
    let mut rebuild = Some(settings);
    let steps_now = || signals.mirror.try_with_untracked(|m| m.steps_taken).unwrap_or(0);
    loop {
        if let Some(chosen) = rebuild.take() {
            settings = chosen;
            let _ = signals.working.try_set(true);
            let _ = signals.status.try_set(Status::Loading);
            build(&worker, settings, &plays, signals).await?;
            if let (Trainer::Gpu | Trainer::Racing, Some(webgpu)) = (trainer, gpu.as_mut()) {
                if let Err(reason) = webgpu.build(settings, &plays) {
                    let _ = signals.engine.try_set(EngineBadge::Cpu(Some(
                        Msg::new("engine-gpu-error").arg("reason", reason),
                    )));
                    trainer = Trainer::Cpu;
                    gpu = None;
                }
            }
            // A race starts again on the new part's first steps; the memory table was the other
            // part's.
            trial = GpuTrial::default();
            let _ = signals.memory.try_set(Memory::Idle);
            let _ = signals.traced.try_set(Traced::Idle);
            sampled_at = None;
            let _ = signals.status.try_set(Status::Ready);
        }
        let shown = (settings, plays.as_slice());
        let playing = signals.playing.try_get_untracked().unwrap_or(false);
        if !playing {
            // Paused: the samples show the weights the learner is looking at.
            if sampled_at != Some(steps_now()) {
                let weights = gpu_weights(&mut trainer, &mut gpu, &worker, shown, signals).await?;
                sample(&worker, signals, weights).await?;
                sampled_at = Some(steps_now());
            }
            let _ = signals.working.try_set(false);
            match commands.recv().await {
                Ok(Command::Build(chosen)) => rebuild = Some(chosen),
                Ok(Command::Measure) => measure_memory(&worker, signals).await?,
                Ok(Command::Trace) => {
                    let weights = gpu_weights(&mut trainer, &mut gpu, &worker, shown, signals).await?;
                    trace_step(&worker, signals, weights).await?;
                }
                Ok(Command::Play | Command::Pause) => {}
                // The page is gone.
                Err(_) => return Ok(()),
            }
            continue;
        }
        // What was asked while the last request ran.
        while let Ok(command) = commands.try_recv() {
            match command {
                Command::Build(chosen) => rebuild = Some(chosen),
                Command::Measure => measure_memory(&worker, signals).await?,
                Command::Trace => {
                    let weights = gpu_weights(&mut trainer, &mut gpu, &worker, shown, signals).await?;
                    trace_step(&worker, signals, weights).await?;
                }
                Command::Play | Command::Pause => {}
            }
        }
        if rebuild.is_some() {
            continue;
        }
        let _ = signals.working.try_set(true);
        let before = steps_now();
        match (trainer, gpu.as_mut()) {
            (Trainer::Gpu | Trainer::Racing, Some(webgpu)) => match webgpu.advance(signals).await {
                Ok(ms) if trainer == Trainer::Racing => {
                    trial.record(STEPS_PER_REQUEST, ms);
                    if let Some(gpu_ms_per_step) = trial.measured() {
                        // A CPU engine that fails its replay has lost the race.
                        let raced = race_cpu(&worker, signals, steps_now(), gpu_ms_per_step).await;
                        match raced {
                            Ok((verdict, Some(mirror))) => {
                                let _ = signals.mirror.try_set(mirror);
                                let _ = signals.engine.try_set(EngineBadge::CpuFaster(verdict.message()));
                                trainer = Trainer::Cpu;
                                gpu = None;
                            }
                            Ok((_, None)) | Err(_) => {
                                let adapter = adapter_label(&webgpu.context);
                                let _ = signals.engine.try_set(EngineBadge::Gpu {
                                    adapter,
                                    choosing: false,
                                });
                                trainer = Trainer::Gpu;
                            }
                        }
                    }
                }
                Ok(_) => {}
                Err(reason) => {
                    trainer = Trainer::Cpu;
                    gpu = None;
                    catch_up_on_cpu(&worker, settings, &plays, signals, reason).await?;
                }
            },
            _ => {
                trainer = Trainer::Cpu;
                let keep_going = || signals.playing.try_get_untracked().unwrap_or(false);
                let request = ToWorker::AdvanceGpt {
                    steps: STEPS_PER_REQUEST,
                };
                match ask(&worker, &request, &keep_going).await? {
                    FromWorker::GptAdvanced { update, .. } => {
                        let _ = signals.mirror.try_update(|m| m.apply(update));
                    }
                    other => return Err(format!("the CPU worker answered {other:?}")),
                }
            }
        }
        let after = steps_now();
        if after / SAMPLE_EVERY > before / SAMPLE_EVERY {
            let weights = gpu_weights(&mut trainer, &mut gpu, &worker, shown, signals).await?;
            sample(&worker, signals, weights).await?;
            sampled_at = Some(after);
        }
    }
}
