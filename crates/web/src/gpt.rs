//! The tiny-GPT page: nanoGPT's architecture, character level, trained on Shakespeare in the CPU
//! worker, three runs side by side that differ only in how they divide an accumulated step's
//! token losses. The learner predicts which run will drift, plays, and reads the answer from the
//! numbers; charts, the last step's micro-batches and samples of each run's text follow it. The
//! plays are fetched when the page opens (`shakespeare/*.txt`, copied into dist by Trunk), so no
//! other page carries them. Plain state and its tests: `gradlab_lab_state::gpt_view`.

use futures_channel::mpsc::{self, UnboundedReceiver};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::browser;
use super::i18n::{msg, num, tr};
use super::lab::charts::ChartCanvas;
use super::lab::run_swatch;
use super::worker::CpuWorker;
use gradlab_cpu_worker::{FromWorker, GptBuilt, ToWorker};
use gradlab_i18n::Msg;
use gradlab_lab_state::gpt_view::{observed, verdict, window_rows, GptChart, Prediction};
use gradlab_lab_state::numbers::readable;
use gradlab_plot::ChartLook;
use gradlab_sim::gpt::lab::{GptMirror, Reduction};
use gradlab_sim::gpt::scenario::{SAMPLE_CHARS, SAMPLE_PROMPT, SAMPLE_SEED, SAMPLE_TEMPERATURE};
use gradlab_sim::gpt::text::ExampleKind;

/// The plays, as `assets/text/shakespeare/` holds them.
const PLAYS: [&str; 4] = ["hamlet", "macbeth", "julius_caesar", "romeo_and_juliet"];
/// Optimizer steps per request to the worker: the page redraws after each request.
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
    Part(ExampleKind),
}

#[derive(Debug, Clone, Copy)]
struct Signals {
    status: RwSignal<Status>,
    built: RwSignal<Option<GptBuilt>>,
    mirror: RwSignal<GptMirror>,
    playing: RwSignal<bool>,
    working: RwSignal<bool>,
    samples: RwSignal<Vec<String>>,
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
    };
    let part = RwSignal::new(ExampleKind::Lines);
    let prediction = RwSignal::new(None::<Prediction>);
    let (sender, receiver) = mpsc::unbounded::<Command>();
    let sender = StoredValue::new(sender);
    let send = move |command: Command| sender.with_value(|s| drop(s.unbounded_send(command)));
    spawn_local(train(receiver, signals));

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
        if part.get_untracked() != chosen {
            part.set(chosen);
            signals.working.set(true);
            signals.playing.set(false);
            prediction.set(None);
            send(Command::Part(chosen));
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
            <PredictionView signals=signals prediction=prediction part=part />
            <div class="gpt-transport">
                <button type="button" data-testid="gpt-play" on:click=toggle
                    disabled=move || signals.status.get() != Status::Ready>
                    {move || if signals.playing.get() { tr("gpt-pause") } else { tr("gpt-play") }}
                </button>
                <p role="status" data-testid="gpt-status">{move || status_text(signals, steps())}</p>
            </div>
            <RunsView signals=signals />
            <ChartsView signals=signals />
            <WindowView signals=signals />
            <SamplesView signals=signals />
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

#[component]
fn PredictionView(
    signals: Signals,
    prediction: RwSignal<Option<Prediction>>,
    part: RwSignal<ExampleKind>,
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
                    view! {
                        <li>{run_swatch(style)} <strong>{run_label(r)}</strong>": "
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
async fn fetch_plays() -> Result<Vec<(String, String)>, String> {
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
    part: ExampleKind,
    plays: &[(String, String)],
    signals: Signals,
) -> Result<(), String> {
    let _ = signals.status.try_set(Status::Loading);
    let request = ToWorker::BuildGpt {
        part: part.id().to_string(),
        plays: plays.to_vec(),
    };
    let FromWorker::GptBuilt(built) = ask(worker, &request, &|| true).await? else {
        return Err("the CPU worker answered another request".to_string());
    };
    let _ = signals.mirror.try_set(GptMirror::new(built.reductions.clone()));
    let _ = signals.built.try_set(Some(built));
    sample(worker, signals).await?;
    let _ = signals.status.try_set(Status::Ready);
    Ok(())
}

async fn sample(worker: &CpuWorker, signals: Signals) -> Result<(), String> {
    let request = ToWorker::SampleGpt {
        prompt: SAMPLE_PROMPT.to_string(),
        count: SAMPLE_CHARS,
        temperature: SAMPLE_TEMPERATURE,
        seed: SAMPLE_SEED,
    };
    match ask(worker, &request, &|| true).await? {
        FromWorker::GptSampled { texts } => {
            let _ = signals.samples.try_set(texts);
            Ok(())
        }
        other => Err(format!("the CPU worker answered {other:?}")),
    }
}

/// The page's training loop: build, then advance while playing, a part switch rebuilding.
async fn train(mut commands: UnboundedReceiver<Command>, signals: Signals) {
    if let Err(reason) = training(&mut commands, signals).await {
        let _ = signals.playing.try_set(false);
        let _ = signals.status.try_set(Status::Failed(reason));
    }
    let _ = signals.working.try_set(false);
}

async fn training(commands: &mut UnboundedReceiver<Command>, signals: Signals) -> Result<(), String> {
    let worker = CpuWorker::spawn_gpt().await?;
    let plays = fetch_plays().await?;
    build(&worker, ExampleKind::Lines, &plays, signals).await?;
    // The step the samples show.
    let mut sampled_at = 0;
    let steps_now = || signals.mirror.try_with_untracked(|m| m.steps_taken).unwrap_or(0);
    loop {
        let mut rebuild = None;
        // What was asked while the last request ran; then, paused, wait for the next command.
        while let Ok(command) = commands.try_recv() {
            if let Command::Part(part) = command {
                rebuild = Some(part);
            }
        }
        if let Some(part) = rebuild {
            let _ = signals.working.try_set(true);
            build(&worker, part, &plays, signals).await?;
            sampled_at = 0;
        }
        let playing = signals.playing.try_get_untracked().unwrap_or(false);
        if !playing {
            // Paused: the samples show the weights the learner is looking at.
            if steps_now() != sampled_at {
                sample(&worker, signals).await?;
                sampled_at = steps_now();
            }
            let _ = signals.working.try_set(false);
            match commands.recv().await {
                Ok(Command::Part(part)) => {
                    let _ = signals.working.try_set(true);
                    build(&worker, part, &plays, signals).await?;
                    sampled_at = 0;
                }
                Ok(Command::Play | Command::Pause) => {}
                // The page is gone.
                Err(_) => return Ok(()),
            }
            continue;
        }
        let _ = signals.working.try_set(true);
        let keep_going = || signals.playing.try_get_untracked().unwrap_or(false);
        let before = steps_now();
        match ask(
            &worker,
            &ToWorker::AdvanceGpt {
                steps: STEPS_PER_REQUEST,
            },
            &keep_going,
        )
        .await?
        {
            FromWorker::GptAdvanced { update, .. } => {
                let _ = signals.mirror.try_update(|m| m.apply(update));
            }
            other => return Err(format!("the CPU worker answered {other:?}")),
        }
        let after = steps_now();
        if after / SAMPLE_EVERY > before / SAMPLE_EVERY {
            sample(&worker, signals).await?;
            sampled_at = after;
        }
    }
}
