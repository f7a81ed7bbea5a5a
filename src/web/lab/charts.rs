//! Canvas charts: plotters draws the plain chart data of `plot` onto a `<canvas>`, sized to its
//! container so that charts stay readable at phone width. Each can be saved as a PNG.

use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use super::super::browser;
use super::super::i18n::tr;
use crate::plot::boundary::{draw_decision_boundary, DecisionBoundary};
use crate::plot::{draw_line_chart, ChartLook, LegendLayout, LineChart};

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

fn draw_chart(canvas: web_sys::HtmlCanvasElement, chart: &LineChart) {
    let legend_entries = if chart.look.legend { chart.series.len() } else { 0 };
    fit(&canvas, false, legend_entries);
    let Some(backend) = CanvasBackend::with_canvas_object(canvas) else {
        return;
    };
    let root = backend.into_drawing_area();
    if chart.bounds().is_none() {
        let _ = root.fill(&WHITE);
        return;
    }
    if let Err(e) = draw_line_chart(&root, chart) {
        web_sys::console::warn_1(&format!("chart not drawn: {e}").into());
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

/// A line chart that redraws whenever `chart` changes or the window is resized.
#[component]
pub fn ChartCanvas(
    chart: Memo<LineChart>,
    #[prop(into)] file_name: String,
    #[prop(into)] testid: String,
    resized: ReadSignal<u32>,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let pending = StoredValue::new(0u64);
    Effect::new(move |_| {
        resized.track();
        let chart = chart.get();
        if let Some(element) = canvas.get() {
            draw_soon(pending, move || draw_chart(element, &chart));
        }
    });
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
            crate::lab_state::chart_text::describe(c)
                .iter()
                .map(super::super::i18n::msg)
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    view! {
        <figure class="chart" data-testid=testid>
            <canvas node_ref=canvas role="img" aria-label=title aria-describedby=summary_id.clone()></canvas>
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
    let aria = crate::i18n::Msg::new("chart-boundary").arg("run", &label);
    view! {
        <figure class="boundary">
            <canvas node_ref=canvas role="img" aria-label=super::super::i18n::msg(&aria)></canvas>
            <figcaption>{label}</figcaption>
        </figure>
    }
}
