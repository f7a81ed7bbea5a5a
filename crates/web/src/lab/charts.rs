//! Canvas charts: plotters draws the plain chart data of `plot` onto a `<canvas>`, sized to its
//! container so that charts stay readable at phone width. Each can be saved as a PNG.

use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use super::super::browser;
use super::super::i18n::tr;
use gradlab_plot::boundary::{draw_decision_boundary, DecisionBoundary};
use gradlab_plot::{draw_line_chart, ChartLook, LegendLayout, LineChart, PlotFrame};

/// Sets the canvas's pixel size from its container's width: square for boundaries; for line
/// charts the plot's height plus the legend's rows under it.
fn fit(canvas: &web_sys::HtmlCanvasElement, square: bool, legend_entries: usize) {
    let width = canvas.parent_element().map_or(600, |p| p.client_width().max(200)) as u32;
    // Embedded in a course page the plot area is flatter, so the iframe stays compact.
    let compact = canvas.closest(".lab-embedded").ok().flatten().is_some();
    let (aspect, least) = if compact { (0.5, 170.0) } else { (0.55, 200.0) };
    let height = if square {
        width
    } else {
        (width as f64 * aspect).clamp(least, 320.0) as u32 + LegendLayout::for_width(width, legend_entries).height
    };
    if canvas.width() != width || canvas.height() != height {
        canvas.set_width(width);
        canvas.set_height(height);
    }
}

/// Where a drawn chart's plot area is, as fractions of its canvas (for the crosshair).
#[derive(Debug, Clone, Copy, PartialEq)]
struct DrawnFrame {
    frame: PlotFrame,
    width: f64,
    height: f64,
}

impl DrawnFrame {
    /// The step under a pointer `offset_x` CSS pixels from the canvas's left edge, among the
    /// steps `1..=last`.
    fn step_at(&self, offset_x: f64, css_width: f64, last: u64) -> Option<u64> {
        if last == 0 || css_width <= 0.0 {
            return None;
        }
        let x = self.frame.x_at(offset_x * self.width / css_width).round();
        Some((x.max(1.0) as u64).min(last))
    }

    fn percent_left(&self, step: u64) -> f64 {
        100.0 * self.frame.pixel_of(step as f64) / self.width.max(1.0)
    }
}

fn draw_chart(canvas: web_sys::HtmlCanvasElement, chart: &LineChart) -> Option<DrawnFrame> {
    let legend_entries = if chart.look.legend { chart.series.len() } else { 0 };
    fit(&canvas, false, legend_entries);
    let (width, height) = (f64::from(canvas.width()), f64::from(canvas.height()));
    let backend = CanvasBackend::with_canvas_object(canvas)?;
    let root = backend.into_drawing_area();
    if chart.bounds().is_none() {
        let _ = root.fill(&WHITE);
        return None;
    }
    match draw_line_chart(&root, chart) {
        Ok(frame) => Some(DrawnFrame { frame, width, height }),
        Err(e) => {
            web_sys::console::warn_1(&format!("chart not drawn: {e}").into());
            None
        }
    }
}

/// Draws `chart` (legend included) on a canvas off the page, as wide as the one shown, and saves it.
fn download_with_legend(shown: &web_sys::HtmlCanvasElement, chart: &LineChart, file_name: &str) -> Result<(), String> {
    let width = shown.width();
    let height = shown.height() + LegendLayout::for_width(width, chart.series.len()).height;
    let (offscreen, _) = browser::offscreen_canvas(width, height)?;
    let backend = CanvasBackend::with_canvas_object(offscreen.clone()).ok_or("no 2D canvas context")?;
    draw_line_chart(&backend.into_drawing_area(), chart).map_err(|e| e.to_string())?;
    browser::download_canvas_png(&offscreen, file_name)
}

/// Runs `draw` in a task of its own (after a zero timeout), so that the charts of one update
/// are several short tasks instead of one long one and the page keeps its frames while the
/// engine trains; a later drawing of the same canvas supersedes one still waiting.
fn draw_soon(pending: StoredValue<u64>, draw: impl FnOnce() + 'static) {
    let Some(ticket) = pending.try_get_value().map(|t| t.wrapping_add(1)) else {
        return;
    };
    pending.set_value(ticket);
    leptos::task::spawn_local(async move {
        browser::yield_now().await;
        if pending.try_get_value() == Some(ticket) {
            draw();
        }
    });
}

/// A line chart that redraws whenever `chart` changes or the window is resized. Hovering it,
/// or focusing it and using the arrow keys, inspects a step: `inspect` (shared by every chart,
/// the results table and the scrubber) is set to it, every chart draws a crosshair there, and
/// this one lists each run's value.
#[component]
pub fn ChartCanvas(
    chart: Memo<LineChart>,
    #[prop(into)] file_name: String,
    #[prop(into)] testid: String,
    resized: ReadSignal<u32>,
    /// The step (1-based) being inspected on any chart or the scrubber; `None`: the live step.
    inspect: RwSignal<Option<u64>>,
    /// The latest step (1-based), the last one that can be inspected.
    last_step: Signal<u64>,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let pending = StoredValue::new(0u64);
    let drawn = RwSignal::new(None::<DrawnFrame>);
    // Whether this chart is the one being pointed at or focused (it shows the values), and the
    // step it set: leaving it returns to the live step only if nothing else inspected another
    // step since (the scrubber, another chart).
    let active = RwSignal::new(false);
    let set_here = StoredValue::new(None::<u64>);
    let inspect_here = move |step: Option<u64>| {
        set_here.set_value(step);
        inspect.set(step);
    };
    let release = move || {
        active.set(false);
        if set_here.get_value().is_some() && inspect.get_untracked() == set_here.get_value() {
            inspect.set(None);
        }
        set_here.set_value(None);
    };
    Effect::new(move |_| {
        resized.track();
        let chart = chart.get();
        if let Some(element) = canvas.get() {
            draw_soon(pending, move || {
                let frame = draw_chart(element, &chart);
                let _ = drawn.try_set(frame);
            });
        }
    });
    let point = move |ev: web_sys::PointerEvent| {
        let (Some(element), Some(frame)) = (canvas.get_untracked(), drawn.get_untracked()) else {
            return;
        };
        let step = frame.step_at(
            f64::from(ev.offset_x()),
            f64::from(element.client_width()),
            last_step.get_untracked(),
        );
        active.set(step.is_some());
        if inspect.get_untracked() != step {
            inspect_here(step);
        }
    };
    let leave = move |_| release();
    let key = move |ev: web_sys::KeyboardEvent| {
        let last = last_step.get_untracked();
        if last == 0 {
            return;
        }
        let now = inspect.get_untracked().unwrap_or(last);
        let next = match ev.key().as_str() {
            "ArrowLeft" => now.saturating_sub(1).max(1),
            "ArrowRight" => (now + 1).min(last),
            "PageUp" => now.saturating_sub(10).max(1),
            "PageDown" => (now + 10).min(last),
            "Home" => 1,
            "End" => last,
            "Escape" => {
                inspect_here(None);
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        active.set(true);
        inspect_here(Some(next));
    };
    let shown_step = move || inspect.get().filter(|&s| s <= last_step.get());
    let crosshair = move || {
        let (step, frame) = (shown_step()?, drawn.get()?);
        let style = format!(
            "left: {:.3}%; top: {:.3}%; height: {:.3}%",
            frame.percent_left(step),
            100.0 * frame.frame.top / frame.height.max(1.0),
            100.0 * (frame.frame.bottom - frame.frame.top) / frame.height.max(1.0),
        );
        Some(view! { <span class="crosshair" style=style aria-hidden="true" data-step=step.to_string()></span> })
    };
    let tooltip = move || {
        let step = shown_step().filter(|_| active.get())?;
        let frame = drawn.get()?;
        let lines = chart.with(|c| {
            c.values_at(step)
                .into_iter()
                .map(|(style, label, value)| {
                    let value = value.map_or_else(
                        || "—".to_string(),
                        |v| super::super::i18n::num(&gradlab_lab_state::numbers::chart_value(c, v)),
                    );
                    view! { <li data-style=style.to_string()>{super::run_swatch(style)}{format!("{label}: {value}")}</li> }
                })
                .collect_view()
        });
        // Right of the crosshair in the chart's left half, left of it in the right half.
        let left = frame.percent_left(step);
        let side = if left < 50.0 {
            format!("left: calc({left:.3}% + 0.5rem)")
        } else {
            format!("right: calc({:.3}% + 0.5rem)", 100.0 - left)
        };
        Some(view! {
            <div class="chart-tooltip" style=side data-testid="chart-tooltip" data-step=step.to_string()>
                <p>{super::super::i18n::msg(&gradlab_i18n::Msg::new("chart-inspect-step").arg("step", step))}</p>
                <ul>{lines}</ul>
            </div>
        })
    };
    let empty = move || chart.with(|c| c.bounds().is_none());
    let download = move |_| {
        let Some(element) = canvas.get_untracked() else {
            return;
        };
        // A chart drawn without its legend (the page shows one for all charts) is saved with
        // it: a PNG on its own must say which curve is which.
        let result = chart.with_untracked(|c| {
            if c.look.legend {
                browser::download_canvas_png(&element, &file_name)
            } else {
                let with_legend = LineChart {
                    look: ChartLook { legend: true, ..c.look },
                    ..c.clone()
                };
                download_with_legend(&element, &with_legend, &file_name)
            }
        });
        if let Err(e) = result {
            web_sys::console::warn_1(&e.into());
        }
    };
    let title = move || chart.with(|c| c.title.clone());
    // The curves in words, for screen readers (not announced on every step: not live).
    let summary_id = format!("{testid}-summary");
    let summary = move || {
        chart.with(|c| {
            gradlab_lab_state::chart_text::describe(c)
                .iter()
                .map(super::super::i18n::msg)
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    view! {
        <figure class="chart" data-testid=testid>
            <div class="chart-frame">
                <canvas node_ref=canvas role="img" aria-label=title aria-describedby=summary_id.clone()
                    tabindex="0" on:pointermove=point on:pointerleave=leave on:keydown=key
                    on:blur=move |_| release()></canvas>
                {crosshair}
                {tooltip}
            </div>
            <p class="visually-hidden" id=summary_id.clone() data-testid=summary_id>{summary}</p>
            <figcaption>
                <span class="muted" hidden=move || !empty()>{tr("chart-no-data")}</span>
                <button type="button" class="link-button" on:click=download>
                    {tr("chart-download-png")}<span class="visually-hidden">": "{title}</span>
                </button>
            </figcaption>
        </figure>
    }
}

fn draw_boundary(canvas: web_sys::HtmlCanvasElement, boundary: &DecisionBoundary) {
    fit(&canvas, true, 0);
    if let Some(backend) = CanvasBackend::with_canvas_object(canvas) {
        let root = backend.into_drawing_area();
        if let Err(e) = draw_decision_boundary(&root, boundary) {
            web_sys::console::warn_1(&format!("boundary not drawn: {e}").into());
        }
    }
}

/// One run's decision boundary.
#[component]
pub fn BoundaryCanvas(
    boundary: Signal<Option<DecisionBoundary>>,
    label: String,
    resized: ReadSignal<u32>,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let pending = StoredValue::new(0u64);
    Effect::new(move |_| {
        resized.track();
        if let (Some(b), Some(element)) = (boundary.get(), canvas.get()) {
            draw_soon(pending, move || draw_boundary(element, &b));
        }
    });
    let aria = gradlab_i18n::Msg::new("chart-boundary").arg("run", &label);
    view! {
        <figure class="boundary">
            <canvas node_ref=canvas role="img" aria-label=super::super::i18n::msg(&aria)></canvas>
            <figcaption>{label}</figcaption>
        </figure>
    }
}
