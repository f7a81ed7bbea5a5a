//! "Inside one optimizer step": the step-through panel, a thin view over
//! `lab_state::step_through`. Opening it asks the engine to trace its steps (and takes one);
//! every number shown comes from the traces of the engine that trains.

use leptos::prelude::*;

use gradlab_lab_state::numbers::readable;

use super::super::browser;
use super::super::i18n::{msg, num, tr};
use super::engine_loop::Command;
use gradlab_i18n::Msg;
use gradlab_lab_state::session::{format_bytes, LabView};
use gradlab_lab_state::step_through::{heatmap_scale, highlighted, loss_weight, training_loop, Activity, StepThrough};
use gradlab_sim::trace::{NormStats, StepTrace};

/// Pause between phases when they play by themselves.
const PHASE_INTERVAL_MS: i32 = 900;
/// BatchNorm channels whose statistics are shown.
const CHANNELS_SHOWN: usize = 3;
/// Units of the first layer whose weight gradients the heatmaps show (big enough cells to see).
const UNITS_SHOWN: usize = 16;

fn replay_of(view: &LabView) -> Option<StepThrough> {
    StepThrough::new(view.runs.iter().map(|r| r.trace.as_ref()))
}

fn activity_text(activity: Activity) -> String {
    match activity {
        Activity::Forward => tr("step-activity-forward"),
        Activity::Loss => tr("step-activity-loss"),
        Activity::Backward => tr("step-activity-backward"),
        Activity::Waiting => tr("step-activity-waiting"),
        Activity::Clip => tr("step-activity-clip"),
        Activity::OptimizerStep => tr("step-activity-optimizer"),
        Activity::ZeroGrad => tr("step-activity-zero-grad"),
    }
}

/// Opens or closes the step-through: the engine traces its steps only while it is open, and
/// opening pauses training and takes one traced step to show.
fn toggle(open: RwSignal<bool>, send: Callback<Command>) {
    let now_open = !open.get_untracked();
    open.set(now_open);
    send.run(Command::Trace(now_open));
    if now_open {
        send.run(Command::Pause);
        send.run(Command::Step);
    }
}

/// The button that opens and closes the step-through: in its panel, or (`short`) beside the
/// transport buttons of an embedded experiment, which shows the panel only while it is open.
#[component]
pub fn StepThroughToggle(
    open: RwSignal<bool>,
    send: Callback<Command>,
    /// Whether a step can be taken now (valid settings, not finished or failed).
    can_train: Signal<bool>,
    #[prop(optional)] short: bool,
) -> impl IntoView {
    let label = move || match (open.get(), short) {
        (true, _) => tr("step-close"),
        (false, false) => tr("step-open"),
        (false, true) => tr("step-open-short"),
    };
    view! {
        <button type="button" data-testid="step-through-open" aria-expanded=move || open.get().to_string()
            aria-controls="step-through" disabled=move || !open.get() && !can_train.get()
            on:click=move |_| toggle(open, send)>
            {label}
        </button>
    }
}

#[component]
pub fn StepThroughPanel(
    view: RwSignal<LabView>,
    send: Callback<Command>,
    /// Whether a step can be taken now (valid settings, not finished or failed).
    can_train: Signal<bool>,
    /// Whether the step-through is open (shared with a [`StepThroughToggle`] elsewhere).
    open: RwSignal<bool>,
    /// Embedded: the panel shows only while open, its toggle sitting with the transport buttons.
    #[prop(optional)]
    compact: bool,
    /// Why no step can be taken now (the run finished, the prediction comes first, ...): said
    /// beside the disabled button.
    #[prop(into)]
    blocked: Signal<Option<String>>,
) -> impl IntoView {
    let replay = RwSignal::new(None::<StepThrough>);
    let playing = RwSignal::new(false);
    let selected = RwSignal::new(1usize);
    // A new trace (another step, another experiment) restarts the replay; the same one keeps
    // its phase.
    Effect::new(move |_| {
        let next = view.with(replay_of);
        if let Some(replaced) = replay.with_untracked(|current| StepThrough::replacing(current.as_ref(), next)) {
            replay.set(replaced);
        }
    });
    // Closing stops phases that play by themselves.
    Effect::new(move |_| {
        if !open.get() {
            playing.set(false);
        }
    });
    let next_step = move |_| {
        playing.set(false);
        send.run(Command::Pause);
        send.run(Command::Step);
    };
    let move_phase = move |forward: bool| {
        replay.update(|r| {
            if let Some(r) = r {
                if forward {
                    r.forward();
                } else {
                    r.back();
                }
            }
        });
    };
    let play_phases = move |_| {
        if playing.get_untracked() {
            playing.set(false);
            return;
        }
        if replay.with_untracked(|r| r.as_ref().is_some_and(StepThrough::at_end)) {
            replay.update(|r| {
                if let Some(r) = r {
                    while r.back() {}
                }
            });
        }
        playing.set(true);
        leptos::task::spawn_local(async move {
            loop {
                browser::sleep_ms(PHASE_INTERVAL_MS).await;
                if !playing.get_untracked() {
                    break;
                }
                let moved = replay
                    .try_update(|r| r.as_mut().is_some_and(StepThrough::forward))
                    .unwrap_or(false);
                let at_end = replay.with_untracked(|r| r.as_ref().is_none_or(StepThrough::at_end));
                if !moved || at_end {
                    let _ = playing.try_set(false);
                    break;
                }
            }
        });
    };
    let at_start = move || replay.with(|r| r.as_ref().is_none_or(StepThrough::at_start));
    let at_end = move || replay.with(|r| r.as_ref().is_none_or(StepThrough::at_end));
    let phase_line = move || {
        replay.with(|r| match r {
            Some(r) => format!("{} {}", msg(&r.announcement()), msg(&r.phase().name())),
            None => tr("step-waiting"),
        })
    };
    let step_line = move || {
        replay.with(|r| {
            r.as_ref()
                .map(|r| msg(&Msg::new("step-of-step").arg("step", r.step() + 1)))
        })
    };

    let memory = move || {
        let r = replay.get()?;
        let series: Vec<(usize, Vec<usize>)> = view.with(|v| {
            v.runs
                .iter()
                .enumerate()
                .filter_map(|(i, run)| run.trace.as_ref().map(|t| (i, r.memory_timeline(t))))
                .collect()
        });
        Some(view! { <MemoryTimeline series=series current=r.index() phases=r.len() /> })
    };

    view! {
        <section class="step-through-section" aria-labelledby="step-through-title" hidden=move || compact && !open.get()>
            <h3 id="step-through-title">{tr("step-title")}</h3>
            <p class="muted">{tr("step-intro")}</p>
            {(!compact).then(|| view! { <StepThroughToggle open=open send=send can_train=can_train /> })}
            <p class="muted" data-testid="step-through-why" hidden=move || open.get() || blocked.with(Option::is_none)>
                {move || blocked.get()}
            </p>
            <div id="step-through" class="step-through" data-testid="step-through" hidden=move || !open.get()
                data-step=move || replay.with(|r| r.as_ref().map(|r| r.step().to_string()))
                data-phase-index=move || replay.with(|r| r.as_ref().map(|r| r.index().to_string()))>
                <div class="phase-controls" role="group" aria-label=tr("step-controls")>
                    <button type="button" data-testid="phase-previous" disabled=at_start
                        on:click=move |_| { playing.set(false); move_phase(false) }>{tr("step-previous")}</button>
                    <button type="button" class="primary" data-testid="phase-next" disabled=at_end
                        on:click=move |_| { playing.set(false); move_phase(true) }>{tr("step-next")}</button>
                    <button type="button" data-testid="phase-play" aria-pressed=move || playing.get().to_string()
                        disabled=move || replay.with(Option::is_none) on:click=play_phases>
                        {move || if playing.get() { tr("step-play-stop") } else { tr("step-play") }}
                    </button>
                    <button type="button" data-testid="phase-next-step" disabled=move || !can_train.get()
                        on:click=next_step>{tr("step-next-step")}</button>
                </div>
                <p class="phase-line" role="status" aria-live="polite" data-testid="phase-name">
                    <span class="muted">{step_line}</span>" "{phase_line}
                </p>
                <StepTable view=view replay=replay selected=selected />
                {memory}
                <StepDetail view=view replay=replay selected=selected />
            </div>
        </section>
    }
}

/// Where each run stands at the replay's phase: what it is doing, what its buffer holds, the
/// micro-batch's loss weight, and how far the partial sum is from the full batch's gradient.
#[component]
fn StepTable(
    view: RwSignal<LabView>,
    replay: RwSignal<Option<StepThrough>>,
    selected: RwSignal<usize>,
) -> impl IntoView {
    let rows = move || {
        let Some(r) = replay.get() else {
            return Vec::new();
        };
        view.with(|v| {
            v.runs
                .iter()
                .enumerate()
                .filter_map(|(i, run)| run.trace.as_ref().map(|t| (i, run, t)))
                .map(|(i, run, trace)| {
                    let at = r.run_at(trace);
                    let error = at.partial.map(|p| format!("{:e}", p.relative_error)).unwrap_or_default();
                    let ratio = at
                        .partial
                        .map(|p| p.norm / trace.full_batch_norm.max(f64::MIN_POSITIVE));
                    let weight = at
                        .micro_batch
                        .map(|k| msg(&loss_weight(&run.spec, trace, k)))
                        .unwrap_or_else(|| "—".into());
                    let shown = |value: Option<String>| value.unwrap_or_else(|| "—".into());
                    view! {
                        <tr data-run=run.label.clone() data-micro-batch=at.accumulated.to_string()
                            data-partial-error=error data-norm-ratio=ratio.map(|x| format!("{x:e}")).unwrap_or_default()
                            data-activity=format!("{:?}", at.activity).to_lowercase()
                            class:selected=move || selected.get() == i>
                            <th scope="row">{super::run_swatch(i)}" "{run.label.clone()}</th>
                            <td data-label=tr("step-col-doing")>{activity_text(at.activity)}</td>
                            <td data-label=tr("step-col-accumulated")>{msg(&Msg::new(if at.holds_earlier_steps { "step-accumulated-stale" } else { "step-accumulated" }).arg("k", at.in_buffer).arg("n", at.micro_batches))}</td>
                            <td data-label=tr("step-col-weight")>{weight}</td>
                            <td data-label=tr("step-col-ratio")>{shown(ratio.map(|x| num(&format!("{x:.3}"))))}</td>
                            <td data-label=tr("step-col-error")>{shown(at.partial.map(|p| num(&readable(p.relative_error, 3))))}</td>
                            <td data-label=tr("step-col-cosine")>{shown(at.partial.map(|p| num(&format!("{:.4}", p.cosine))))}</td>
                            <td data-label=tr("step-col-memory")>{num(&format_bytes(at.activation_bytes as u64))}</td>
                        </tr>
                    }
                })
                .collect::<Vec<_>>()
        })
    };

    view! {
        <div class="table-scroll" tabindex="0" role="region" aria-label=tr("step-table-caption")>
            <table class="step-table">
                <caption class="visually-hidden">{tr("step-table-caption")}</caption>
                <thead><tr>
                    <th scope="col">{tr("results-run")}</th>
                    <th scope="col">{tr("step-col-doing")}</th>
                    <th scope="col">{tr("step-col-accumulated")}</th>
                    <th scope="col">{tr("step-col-weight")}</th>
                    <th scope="col">{tr("step-col-ratio")}</th>
                    <th scope="col">{tr("step-col-error")}</th>
                    <th scope="col">{tr("step-col-cosine")}</th>
                    <th scope="col">{tr("step-col-memory")}</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// One run in detail at the replay's phase: its training loop with the line running, its
/// micro-batch's points, the first layer's gradient against the full batch's, and BatchNorm's
/// statistics where it has them.
#[component]
fn StepDetail(
    view: RwSignal<LabView>,
    replay: RwSignal<Option<StepThrough>>,
    selected: RwSignal<usize>,
) -> impl IntoView {
    let run_choices = move || {
        view.with(|v| {
            v.runs
                .iter()
                .enumerate()
                .filter(|(_, run)| run.trace.is_some())
                .map(|(i, run)| {
                    view! { <option value=i.to_string() selected=move || selected.get() == i>{run.label.clone()}</option> }
                })
                .collect_view()
        })
    };
    // The selected run's trace (the first traced one when the selection has none).
    let selected_trace = Memo::new(move |_| {
        view.with(|v| {
            let wanted = selected.get();
            v.runs
                .get(wanted)
                .and_then(|r| r.trace.clone().map(|t| (wanted, r.spec.clone(), t)))
                .or_else(|| {
                    v.runs
                        .iter()
                        .enumerate()
                        .find_map(|(i, r)| r.trace.clone().map(|t| (i, r.spec.clone(), t)))
                })
        })
    });
    let code = move || {
        let (Some((_, spec, trace)), Some(r)) = (selected_trace.get(), replay.get()) else {
            return None;
        };
        let activity = r.run_at(&trace).activity;
        let lines = training_loop(&spec)
            .into_iter()
            .map(|line| {
                let current = highlighted(line.role, activity);
                let comment = line.comment.map(|c| format!("  # {}", msg(&c))).unwrap_or_default();
                view! {
                    <span class="code-line" class:current=current aria-current=current.then_some("step")
                        data-role=format!("{:?}", line.role)>
                        <span class="marker" aria-hidden="true">{if current { "▶ " } else { "  " }}</span>
                        {"    ".repeat(line.indent)}{line.code}<span class="comment">{comment}</span>
                    </span>
                }
            })
            .collect_view();
        Some(
            view! { <pre class="training-loop" data-testid="step-code" tabindex="0" role="region" aria-label=tr("step-code-label")><code>{lines}</code></pre> },
        )
    };
    let heatmaps = move || {
        let (Some((_, _, trace)), Some(r)) = (selected_trace.get(), replay.get()) else {
            return None;
        };
        let at = r.run_at(&trace);
        let fan_in = trace.first_layer_fan_in;
        let empty = vec![0.0; trace.full_batch_first_layer.len()];
        let partial = at.partial.map_or(empty, |p| p.first_layer.clone());
        let scale = heatmap_scale(&trace.full_batch_first_layer);
        Some(view! {
            <div class="heatmaps">
                <Heatmap values=partial fan_in=fan_in scale=scale title=tr("step-heatmap-accumulated") />
                <Heatmap values=trace.full_batch_first_layer.clone() fan_in=fan_in scale=scale title=tr("step-heatmap-full") />
            </div>
        })
    };
    let data_plot = move || {
        let (Some((_, _, trace)), Some(r)) = (selected_trace.get(), replay.get()) else {
            return None;
        };
        let at = r.run_at(&trace);
        // The micro-batch being processed, or the last one added to the buffer.
        let current = at.micro_batch.or(at.accumulated.checked_sub(1));
        Some(view! { <MicroBatchPlot trace=trace current=current /> })
    };
    let batch_norm = move || {
        let (Some((_, _, trace)), Some(r)) = (selected_trace.get(), replay.get()) else {
            return None;
        };
        let at = r.run_at(&trace);
        let full = trace.full_batch_norm_stats.clone()?;
        let k = at.micro_batch.or(at.accumulated.checked_sub(1))?;
        let used = trace.micro_batches.get(k)?.batch_norm.clone()?;
        Some(view! { <BatchNormTable used=used full=full k=k /> })
    };
    view! {
        <div class="step-detail">
            <p>
                <label for="step-run">{tr("step-run-label")}</label>" "
                <select id="step-run" data-testid="step-run" on:change=move |ev| {
                    if let Ok(i) = event_target_value(&ev).parse() {
                        selected.set(i);
                    }
                }>{run_choices}</select>
            </p>
            {code}
            <div class="step-figures">{data_plot}{heatmaps}</div>
            {batch_norm}
        </div>
    }
}

/// A weight gradient as coloured cells (inputs by units), blue negative and red positive,
/// scaled by `scale`; the numbers are in each cell's title.
#[component]
fn Heatmap(values: Vec<f64>, fan_in: usize, scale: f64, title: String) -> impl IntoView {
    // The first layer's weights are `width x fan_in`; cells go one column per unit.
    let fan_in = fan_in.max(1);
    let units = (values.len() / fan_in).min(UNITS_SHOWN);
    let cells = (0..fan_in)
        .flat_map(|input| (0..units).map(move |unit| (input, unit)))
        .map(|(input, unit)| {
            let v = values.get(unit * fan_in + input).copied().unwrap_or(0.0);
            let t = (v / scale).clamp(-1.0, 1.0);
            let fade = |c: f64| (255.0 - (255.0 - c) * t.abs()).round();
            let (r, g, b) = if t >= 0.0 {
                (fade(200.0), fade(40.0), fade(40.0))
            } else {
                (fade(30.0), fade(90.0), fade(200.0))
            };
            view! { <span class="cell" style=format!("background: rgb({r},{g},{b})") title=num(&readable(v, 4))></span> }
        })
        .collect_view();
    view! {
        <figure class="heatmap">
            <div class="cells" role="img" aria-label=title.clone()
                style=format!("grid-template-columns: repeat({}, 1fr)", units.max(1))>{cells}</div>
            <figcaption>{title}</figcaption>
        </figure>
    }
}

#[component]
fn BatchNormTable(used: NormStats, full: NormStats, k: usize) -> impl IntoView {
    let rows = (0..CHANNELS_SHOWN.min(used.mean.len()).min(full.mean.len()))
        .map(|c| {
            let cell = |v: f64| num(&format!("{v:.4}"));
            view! {
                <tr data-channel=c.to_string()>
                    <th scope="row">{c + 1}</th>
                    <td data-testid="bn-micro-mean">{cell(used.mean[c])}</td>
                    <td data-testid="bn-batch-mean">{cell(full.mean[c])}</td>
                    <td>{cell(used.variance.get(c).copied().unwrap_or(0.0))}</td>
                    <td>{cell(full.variance.get(c).copied().unwrap_or(0.0))}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-scroll" tabindex="0" role="region" aria-label=tr("step-bn-region")>
            <table class="bn-table" data-testid="step-batch-norm">
                <caption>{msg(&Msg::new("step-bn-caption").arg("k", k + 1))}</caption>
                <thead><tr>
                    <th scope="col">{tr("step-bn-channel")}</th>
                    <th scope="col">{tr("step-bn-micro-mean")}</th>
                    <th scope="col">{tr("step-bn-batch-mean")}</th>
                    <th scope="col">{tr("step-bn-micro-variance")}</th>
                    <th scope="col">{tr("step-bn-batch-variance")}</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// The step's items on the data plot, the micro-batch `current` (0-based) highlighted: the
/// examples it holds are the ones its forward and backward see.
#[component]
fn MicroBatchPlot(trace: StepTrace, current: Option<usize>) -> impl IntoView {
    const SIZE: f64 = 220.0;
    let all: Vec<(f64, f64, u32)> = trace
        .micro_batches
        .iter()
        .flat_map(|m| m.points.iter().copied())
        .collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y, _) in &all {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    let span = (x1 - x0).max(y1 - y0).max(f64::MIN_POSITIVE);
    let place = move |x: f64, y: f64| {
        (
            8.0 + (x - x0) / span * (SIZE - 16.0),
            SIZE - 8.0 - (y - y0) / span * (SIZE - 16.0),
        )
    };
    let dot = move |(x, y, label): (f64, f64, u32), highlighted: bool| {
        let (cx, cy) = place(x, y);
        let (r, g, b) =
            gradlab_plot::boundary::CLASS_COLORS[label as usize % gradlab_plot::boundary::CLASS_COLORS.len()];
        let fill = if highlighted {
            format!("rgb({r},{g},{b})")
        } else {
            "#c9d0d9".to_string()
        };
        view! {
            <circle cx=format!("{cx:.1}") cy=format!("{cy:.1}") r=if highlighted { "3.6" } else { "2.2" } fill=fill
                stroke=if highlighted { "#1b1f24" } else { "none" } stroke-width="0.6" />
        }
    };
    let others = trace
        .micro_batches
        .iter()
        .enumerate()
        .filter(|(k, _)| Some(*k) != current)
        .flat_map(|(_, m)| m.points.iter().copied())
        .map(move |p| dot(p, false))
        .collect_view();
    let highlighted = current
        .and_then(|k| trace.micro_batches.get(k))
        .map(|m| m.points.iter().copied().map(move |p| dot(p, true)).collect_view());
    let items = current.and_then(|k| trace.micro_batches.get(k)).map_or(0, |m| m.items);
    let caption = match current {
        Some(k) => msg(&Msg::new("step-data-caption")
            .arg("total", all.len())
            .arg("k", k + 1)
            .arg("items", items)),
        None => msg(&Msg::new("step-data-caption-none").arg("total", all.len())),
    };
    view! {
        <figure class="micro-batch-plot" data-testid="micro-batch-plot" data-highlighted=items.to_string()>
            <svg viewBox=format!("0 0 {SIZE} {SIZE}") role="img" aria-label=caption.clone()>{others}{highlighted}</svg>
            <figcaption>{caption}</figcaption>
        </figure>
    }
}

/// Activation bytes of each run over the phases of the step, a marker at the current phase.
#[component]
fn MemoryTimeline(series: Vec<(usize, Vec<usize>)>, current: usize, phases: usize) -> impl IntoView {
    const WIDTH: f64 = 600.0;
    const HEIGHT: f64 = 120.0;
    let most = series
        .iter()
        .flat_map(|(_, s)| s.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let x = move |i: usize| WIDTH * i as f64 / phases.max(1) as f64;
    let y = move |bytes: usize| HEIGHT - 4.0 - (HEIGHT - 8.0) * bytes as f64 / most;
    let lines = series
        .iter()
        .map(|(style, bytes)| {
            let (r, g, b) = gradlab_plot::RUN_COLORS[style % gradlab_plot::RUN_COLORS.len()];
            let (dash, gap) = gradlab_plot::RUN_DASHES[style % gradlab_plot::RUN_DASHES.len()];
            let dasharray = if gap == 0 {
                "none".to_string()
            } else {
                format!("{dash} {gap}")
            };
            // Each phase holds its bytes for its whole width: steps, not slopes.
            let points = bytes
                .iter()
                .enumerate()
                .flat_map(|(i, &b)| [(x(i), y(b)), (x(i + 1), y(b))])
                .map(|(px, py)| format!("{px:.1},{py:.1}"))
                .collect::<Vec<_>>()
                .join(" ");
            view! {
                <polyline points=points fill="none" stroke=format!("rgb({r},{g},{b})") stroke-width="2.5"
                    stroke-dasharray=dasharray vector-effect="non-scaling-stroke" />
            }
        })
        .collect_view();
    let marker = x(current) + WIDTH / phases.max(1) as f64 / 2.0;
    let peak = format_bytes(most as u64);
    view! {
        <figure class="memory-timeline" data-testid="memory-timeline">
            <svg viewBox=format!("0 0 {WIDTH} {HEIGHT}") preserveAspectRatio="none" role="img"
                aria-label=msg(&Msg::new("step-memory-label").arg("bytes", peak.clone()))>
                <line x1=format!("{marker:.1}") x2=format!("{marker:.1}") y1="0" y2=HEIGHT.to_string()
                    class="marker-line" />
                {lines}
            </svg>
            <figcaption>{msg(&Msg::new("step-memory-caption").arg("bytes", peak))}</figcaption>
        </figure>
    }
}
