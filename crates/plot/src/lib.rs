//! Charts drawn with plotters against any `DrawingBackend`: the CLI draws to PNG and SVG, the
//! browser to a canvas, tests to an in-memory bitmap. Chart data are plain types built from lab
//! history, so what a chart shows is tested without drawing it.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use thiserror::Error;

use gradlab_sim::metrics::{RunHistory, StepRecord};

pub mod boundary;

#[derive(Debug, Error)]
pub enum PlotError {
    #[error("drawing failed: {0}")]
    Drawing(String),
    #[error("nothing to plot: {0}")]
    Empty(&'static str),
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for PlotError {
    fn from(error: DrawingAreaErrorKind<E>) -> Self {
        PlotError::Drawing(error.to_string())
    }
}

/// Colours from the Okabe-Ito palette, distinguishable with the common colour-vision deficiencies,
/// ordered so that the first five reach 3:1 contrast on white (WCAG 2.2 non-text contrast); the
/// palette's light orange, sky blue and yellow are darkened to reach it too.
pub const RUN_COLORS: [(u8, u8, u8); 8] = [
    (0, 114, 178),   // blue, 5.2:1
    (213, 94, 0),    // vermillion, 3.9:1
    (0, 158, 115),   // bluish green, 3.4:1
    (204, 121, 167), // reddish purple, 3.1:1
    (0, 0, 0),       // black, 21:1
    (160, 100, 0),   // orange, darkened
    (0, 90, 140),    // sky blue, darkened
    (120, 110, 0),   // yellow, darkened to olive
];

/// Each run also gets its own dash pattern (dash, gap in pixels; a zero gap is a solid line),
/// so curves stay apart without colour.
pub const RUN_DASHES: [(u32, u32); 8] = [(1, 0), (10, 6), (3, 4), (14, 4), (6, 3), (2, 8), (20, 6), (8, 8)];

/// Where a run diverged: drawn as a mark at that step (a vertical line and a cross) and named
/// in the legend, never left as a curve that silently ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// The optimizer step as shown, counted from 1.
    pub step: u64,
    /// What the legend adds to the run's label (the web page localizes it).
    pub caption: String,
}

/// One curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Index into the run palette.
    pub style: usize,
    pub diverged: Option<Divergence>,
}

/// A line chart: what to draw, independent of where.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_y: bool,
    /// What the values measure, when a chart of run histories (how a value is written).
    pub metric: Option<Metric>,
    pub series: Vec<Series>,
    pub look: ChartLook,
}

/// How a chart is drawn besides its data: whether its legend sits under the plot (a page with
/// one legend for all charts leaves it out; a downloaded PNG keeps it), and whether tick
/// labels use a decimal comma (Spanish).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChartLook {
    pub legend: bool,
    pub decimal_comma: bool,
}

impl Default for ChartLook {
    fn default() -> Self {
        Self {
            legend: true,
            decimal_comma: false,
        }
    }
}

/// `text` (a number as Rust formats it) with a decimal comma when `comma` is set.
pub fn with_decimal_comma(text: String, comma: bool) -> String {
    if comma {
        text.replace('.', ",")
    } else {
        text
    }
}

/// Which metric of a [`StepRecord`] a chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    TrainLoss,
    TestAccuracy,
    GradNorm,
    GradRelativeError,
    /// Cosine similarity of the applied gradient with the full-batch gradient.
    GradCosine,
    /// The learning rate each optimizer step used (a scheduler stepped per micro-batch shows).
    LearningRate,
    /// The factor clipping multiplied the gradient by (1 = not clipped).
    ClipFactor,
}

impl Metric {
    pub fn value(self, record: &StepRecord) -> Option<f64> {
        match self {
            Metric::TrainLoss => Some(record.train_loss),
            Metric::TestAccuracy => record.test_accuracy,
            Metric::GradNorm => Some(record.grad_norm),
            Metric::GradRelativeError => record.grad_relative_error,
            Metric::GradCosine => record.grad_cosine,
            Metric::LearningRate => Some(record.learning_rate),
            Metric::ClipFactor => record.clip_factor,
        }
    }

    /// Every chart the Lab can show, in the order it shows them.
    pub const ALL: [Metric; 7] = [
        Metric::TrainLoss,
        Metric::GradRelativeError,
        Metric::GradCosine,
        Metric::GradNorm,
        Metric::TestAccuracy,
        Metric::LearningRate,
        Metric::ClipFactor,
    ];

    /// The chart's short name: its `hide=` key in an embed, its test id (`chart-<slug>`), its
    /// message id (`chart-<slug>`) and its PNG's file name.
    pub fn slug(self) -> &'static str {
        match self {
            Metric::TrainLoss => "loss",
            Metric::GradRelativeError => "grad-error",
            Metric::GradCosine => "cosine",
            Metric::GradNorm => "grad-norm",
            Metric::TestAccuracy => "accuracy",
            Metric::LearningRate => "learning-rate",
            Metric::ClipFactor => "clip-factor",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Metric::TrainLoss => "Training loss",
            Metric::TestAccuracy => "Test accuracy",
            Metric::GradNorm => "Gradient norm",
            Metric::GradRelativeError => "Gradient relative error vs full batch",
            Metric::GradCosine => "Cosine similarity with the full-batch gradient",
            Metric::LearningRate => "Learning rate per optimizer step",
            Metric::ClipFactor => "Clipping factor per step (1 = not clipped)",
        }
    }

    /// Relative errors span many decades (1e-8 next to 1e-1), so they are drawn on a log axis.
    pub fn log_scale(self) -> bool {
        matches!(self, Metric::GradRelativeError)
    }
}

/// How the legend under a chart is laid out: columns, rows and its height in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegendLayout {
    pub columns: u32,
    pub rows: u32,
    pub height: u32,
}

pub const LEGEND_ROW_HEIGHT: u32 = 18;

impl LegendLayout {
    /// Entries in as many columns as fit `width` (about 180 px each), under the plot so that
    /// they never hide a curve, at phone width too.
    pub fn for_width(width: u32, entries: usize) -> Self {
        let columns = (width / 180).clamp(1, 4).min(entries.max(1) as u32);
        let rows = (entries as u32).div_ceil(columns);
        Self {
            columns,
            rows,
            height: if entries == 0 { 0 } else { rows * LEGEND_ROW_HEIGHT + 8 },
        }
    }
}

/// Caption size that keeps a title of `chars` characters inside `width` pixels.
pub fn caption_size(width: u32, chars: usize) -> u32 {
    let fits = (f64::from(width) * 1.8 / chars.max(1) as f64) as u32;
    fits.clamp(11, 20)
}

/// Smallest value drawn on a log axis; exact zeros (identical gradients) sit on this floor.
pub const LOG_FLOOR: f64 = 1e-12;

impl LineChart {
    /// A chart of one metric for several runs' histories.
    pub fn from_histories<'a>(metric: Metric, runs: impl IntoIterator<Item = RunHistory<'a>>) -> Self {
        let series = runs
            .into_iter()
            .enumerate()
            .map(|(style, run)| Series {
                label: run.label.to_string(),
                diverged: run.diverged_at.map(|step| Divergence {
                    step: step + 1,
                    caption: format!("diverged at step {}", step + 1),
                }),
                points: run
                    .records
                    .iter()
                    .filter_map(|r| {
                        let v = metric.value(r)?;
                        let v = if metric.log_scale() { v.max(LOG_FLOOR) } else { v };
                        v.is_finite().then_some((r.step as f64 + 1.0, v))
                    })
                    .collect(),
                style,
            })
            .collect();
        Self {
            title: metric.title().to_string(),
            x_label: "optimizer step".into(),
            // The log axis says where exact zeros are drawn instead of repeating the title.
            y_label: if metric.log_scale() {
                "exact 0 is drawn at 1e-12".to_string()
            } else {
                metric.title().to_string()
            },
            log_y: metric.log_scale(),
            metric: Some(metric),
            series,
            look: ChartLook::default(),
        }
    }

    /// Each series' value at step `x` (1-based, as drawn), `None` where it has none (a run
    /// that diverged before, a metric it does not record): what a crosshair's tooltip lists.
    pub fn values_at(&self, x: u64) -> Vec<(usize, &str, Option<f64>)> {
        let x = x as f64;
        self.series
            .iter()
            .map(|s| {
                let at = s.points.partition_point(|&(px, _)| px < x);
                let value = s.points.get(at).filter(|&&(px, _)| px == x).map(|&(_, y)| y);
                (s.style, s.label.as_str(), value)
            })
            .collect()
    }

    /// The x and y ranges covering every point and every divergence mark, padded so curves do
    /// not touch the frame.
    pub fn bounds(&self) -> Option<((f64, f64), (f64, f64))> {
        let points = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        let mut any = false;
        for &(x, y) in points {
            any = true;
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        let marks = self.series.iter().filter_map(|s| s.diverged.as_ref());
        let mut any_mark = false;
        for mark in marks {
            any_mark = true;
            x0 = x0.min(mark.step as f64);
            x1 = x1.max(mark.step as f64);
        }
        if !any && !any_mark {
            return None;
        }
        if !any {
            // Only divergence marks (every run diverged at its first step): a unit y range.
            (y0, y1) = if self.log_y { (LOG_FLOOR, 1.0) } else { (0.0, 1.0) };
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if self.log_y {
            // At least six decades, so that curves at the floor (exact zeros) read as "far below
            // anything visible" rather than filling the chart.
            y0 = y0.max(LOG_FLOOR) / 2.0;
            y1 = y1.max(y0 * 4.0).max(1e-6) * 2.0;
            // Whole decades, so that even a flat series has a labelled tick at each end.
            y0 = 10f64.powf(y0.log10().floor());
            y1 = 10f64.powf(y1.log10().ceil());
        } else {
            // At least a ten-thousandth of the values' size: curves that agree to f32 rounding
            // (a cosine of 1 +- 1e-7) are drawn flat with tick labels that differ, instead of
            // blowing rounding noise up to the chart's height.
            // A series flat at zero (a loss of exactly 0) gets a unit range around it.
            let magnitude = y0.abs().max(y1.abs());
            let floor = if magnitude < 1e-9 { 1.0 } else { 1e-9 };
            let pad = ((y1 - y0) * 0.05).max(1e-4 * magnitude).max(floor);
            y0 -= pad;
            y1 += pad;
        }
        Some(((x0, x1), (y0, y1)))
    }
}

/// A linear axis's tick label: as many decimals as the range needs to tell ticks apart (a
/// cosine between 0.99998 and 1.00002), and scientific notation for values too long to fit the
/// label area (a loss of 1e13 on its way to diverging).
/// A tick on the step axis: steps are whole numbers, so a tick between two steps (plotters puts
/// some there when few steps have run) gets no label rather than a repeated one ("2 2 2").
pub fn step_label(value: f64) -> String {
    if (value - value.round()).abs() < 1e-6 {
        format!("{value:.0}")
    } else {
        String::new()
    }
}

/// At most this many labels on a linear y axis: plotters puts its ticks at "nice" steps no closer
/// than the range over this, which [`axis_label`] gives enough decimals to tell apart (with
/// plotters' default of ten, ticks 0.05 apart read "0.8, 0.8" at one decimal).
const Y_LABELS: usize = 6;

/// A linear axis's tick label: as many decimals as tell ticks [`Y_LABELS`] to the range apart.
pub fn axis_label(value: f64, (low, high): (f64, f64)) -> String {
    let largest = low.abs().max(high.abs());
    if largest >= 1e5 {
        return format!("{value:.2e}");
    }
    let step = (high - low).abs() / Y_LABELS as f64;
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize
    } else {
        1
    };
    // A tick at zero computed as -1e-17 is "0.0", not "-0.0" next to "0.0".
    let value = if value.abs() < step * 1e-6 { 0.0 } else { value };
    format!("{value:.decimals$}")
}

fn run_color(style: usize) -> RGBColor {
    let (r, g, b) = RUN_COLORS[style % RUN_COLORS.len()];
    RGBColor(r, g, b)
}

fn draw_series<DB: DrawingBackend, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    series: &Series,
) -> Result<(), PlotError>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
    DB::ErrorType: 'static,
{
    let style = line_style(series.style);
    let (dash, gap) = RUN_DASHES[series.style % RUN_DASHES.len()];
    // A line needs two points: a lone value (a validation loss measured once) is a dot.
    if let [point] = series.points.as_slice() {
        chart.draw_series(std::iter::once(Circle::new(*point, 3, style.filled())))?;
        return Ok(());
    }
    if gap == 0 {
        chart.draw_series(LineSeries::new(series.points.iter().copied(), style))?;
    } else {
        chart.draw_series(DashedLineSeries::new(series.points.iter().copied(), dash, gap, style))?;
    }
    Ok(())
}

/// The divergence mark of `series`: a dashed vertical line at its step in the run's colour, and
/// a cross at the top of the line.
fn draw_divergence<DB: DrawingBackend, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    series: &Series,
    (y_low, y_high): (f64, f64),
) -> Result<(), PlotError>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
    DB::ErrorType: 'static,
{
    let Some(mark) = &series.diverged else {
        return Ok(());
    };
    let x = mark.step as f64;
    let style = line_style(series.style);
    chart.draw_series(DashedLineSeries::new([(x, y_low), (x, y_high)], 6, 4, style))?;
    chart.draw_series(std::iter::once(Cross::new((x, y_high), 7, style.stroke_width(3))))?;
    Ok(())
}

fn line_style(style: usize) -> ShapeStyle {
    ShapeStyle {
        color: run_color(style).to_rgba(),
        filled: false,
        stroke_width: 2,
    }
}

/// The legend under the plot: each run's line sample (colour and dash) and label.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &LineChart,
    layout: LegendLayout,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    if layout.height == 0 {
        return Ok(());
    }
    let (width, _) = area.dim_in_pixel();
    let column_width = (width / layout.columns) as i32;
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    for (i, series) in chart.series.iter().enumerate() {
        let (column, row) = (i as u32 % layout.columns, i as u32 / layout.columns);
        let x = 12 + column as i32 * column_width;
        let y = 4 + (row * LEGEND_ROW_HEIGHT) as i32 + LEGEND_ROW_HEIGHT as i32 / 2;
        let style = line_style(series.style);
        let (dash, gap) = RUN_DASHES[series.style % RUN_DASHES.len()];
        if gap == 0 {
            area.draw(&PathElement::new(vec![(x, y), (x + 28, y)], style))?;
        } else {
            area.draw(&DashedPathElement::new(
                vec![(x, y), (x + 28, y)],
                dash.min(8),
                gap.min(5),
                style,
            ))?;
        }
        let label = match &series.diverged {
            Some(mark) => format!("{} \u{2715} {}", series.label, mark.caption),
            None => series.label.clone(),
        };
        area.draw(&Text::new(label, (x + 34, y - 7), font.clone()))?;
    }
    Ok(())
}

/// Draws `chart` onto `area`, filling it.
/// Where a line chart's plot area lies on its drawing (pixels) and which steps it spans, so
/// that a pointer maps to a step and a step to a crosshair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotFrame {
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
    /// The x (step) values at `left` and `right`.
    pub x_range: (f64, f64),
}

impl PlotFrame {
    fn of(pixels: (std::ops::Range<i32>, std::ops::Range<i32>), x_range: (f64, f64)) -> Self {
        let (x, y) = pixels;
        Self {
            left: f64::from(x.start),
            right: f64::from(x.end),
            top: f64::from(y.start),
            bottom: f64::from(y.end),
            x_range,
        }
    }

    /// The x value under a pixel column.
    pub fn x_at(&self, pixel: f64) -> f64 {
        let (x0, x1) = self.x_range;
        let width = (self.right - self.left).max(1.0);
        x0 + (pixel - self.left) / width * (x1 - x0)
    }

    /// The pixel column of an x value.
    pub fn pixel_of(&self, x: f64) -> f64 {
        let (x0, x1) = self.x_range;
        let span = if x1 > x0 { x1 - x0 } else { 1.0 };
        self.left + (x - x0) / span * (self.right - self.left)
    }
}

/// Draws `chart` and returns where its plot area lies.
pub fn draw_line_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &LineChart,
) -> Result<PlotFrame, PlotError>
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let ((x0, x1), (y0, y1)) = chart.bounds().ok_or(PlotError::Empty("no finite points"))?;
    let (width, height) = area.dim_in_pixel();
    let entries = if chart.look.legend { chart.series.len() } else { 0 };
    let legend = LegendLayout::for_width(width, entries);
    let comma = chart.look.decimal_comma;
    let (plot_area, legend_area) = area.split_vertically(height.saturating_sub(legend.height));
    let mut builder = ChartBuilder::on(&plot_area);
    builder
        .caption(
            &chart.title,
            ("sans-serif", caption_size(width, chart.title.chars().count())),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64);
    let frame;
    if chart.log_y {
        let mut ctx = builder.build_cartesian_2d(x0..x1, (y0..y1).log_scale())?;
        frame = PlotFrame::of(ctx.plotting_area().get_pixel_range(), (x0, x1));
        ctx.configure_mesh()
            .x_desc(chart.x_label.as_str())
            .y_desc(chart.y_label.as_str())
            .x_label_formatter(&|v| step_label(*v))
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        // The mark spans the plot: from just above the bottom to just below the top, on a
        // log axis as on a linear one.
        let span = (y0 * (y1 / y0).powf(0.02), y0 * (y1 / y0).powf(0.96));
        for series in &chart.series {
            draw_series(&mut ctx, series)?;
            draw_divergence(&mut ctx, series, span)?;
        }
    } else {
        let mut ctx = builder.build_cartesian_2d(x0..x1, y0..y1)?;
        frame = PlotFrame::of(ctx.plotting_area().get_pixel_range(), (x0, x1));
        ctx.configure_mesh()
            .x_desc(chart.x_label.as_str())
            .x_label_formatter(&|v| step_label(*v))
            .y_labels(Y_LABELS)
            .y_label_formatter(&|v| with_decimal_comma(axis_label(*v, (y0, y1)), comma))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        let span = (y0 + 0.02 * (y1 - y0), y0 + 0.96 * (y1 - y0));
        for series in &chart.series {
            draw_series(&mut ctx, series)?;
            draw_divergence(&mut ctx, series, span)?;
        }
    }
    if chart.look.legend {
        draw_legend(&legend_area, chart, legend)?;
    }
    area.present()?;
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(step: u64, loss: f64, rel: Option<f64>) -> StepRecord {
        StepRecord {
            step,
            train_loss: loss,
            grad_relative_error: rel,
            ..StepRecord::default()
        }
    }

    fn run<'a>(label: &'a str, records: &'a [StepRecord]) -> RunHistory<'a> {
        RunHistory {
            label,
            records,
            diverged_at: None,
        }
    }

    #[test]
    fn chart_series_follow_history() {
        let a = [record(0, 1.0, Some(0.0)), record(1, 0.5, Some(1e-7))];
        let b = [record(0, 1.1, None), record(1, f64::NAN, None)];
        let diverged = RunHistory {
            diverged_at: Some(1),
            ..run("b", &b)
        };
        let chart = LineChart::from_histories(Metric::TrainLoss, [run("a", &a), diverged]);
        assert_eq!(chart.series[0].points, vec![(1.0, 1.0), (2.0, 0.5)]);
        assert_eq!(chart.series[0].diverged, None);
        assert_eq!(
            chart.series[1].points,
            vec![(1.0, 1.1)],
            "a non-finite value is not a point"
        );
        assert_eq!(
            chart.series[1].diverged,
            Some(Divergence {
                step: 2,
                caption: "diverged at step 2".into()
            }),
            "but a mark at the step"
        );
        let rel = LineChart::from_histories(Metric::GradRelativeError, [run("a", &a)]);
        assert!(rel.log_y);
        assert_eq!(rel.series[0].points, vec![(1.0, LOG_FLOOR), (2.0, 1e-7)]);
    }

    /// WCAG relative luminance and contrast against white.
    fn contrast_on_white((r, g, b): (u8, u8, u8)) -> f64 {
        let channel = |c: u8| {
            let v = f64::from(c) / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        let luminance = 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
        1.05 / (luminance + 0.05)
    }

    #[test]
    fn every_run_colour_reaches_non_text_contrast_and_has_its_own_dash() {
        for color in RUN_COLORS {
            assert!(
                contrast_on_white(color) >= 3.0,
                "{color:?}: {:.2}",
                contrast_on_white(color)
            );
        }
        let mut dashes = RUN_DASHES.to_vec();
        dashes.sort();
        dashes.dedup();
        assert_eq!(dashes.len(), RUN_DASHES.len());
    }

    #[test]
    fn the_legend_fits_its_width_and_the_caption_shrinks() {
        assert_eq!(
            LegendLayout::for_width(900, 6),
            LegendLayout {
                columns: 4,
                rows: 2,
                height: 2 * LEGEND_ROW_HEIGHT + 8
            }
        );
        assert_eq!(LegendLayout::for_width(360, 6).columns, 2);
        assert_eq!(LegendLayout::for_width(150, 3).columns, 1);
        assert_eq!(LegendLayout::for_width(900, 2).columns, 2);
        assert_eq!(LegendLayout::for_width(900, 0).height, 0);
        assert_eq!(caption_size(900, 20), 20);
        assert!(caption_size(360, 48) < 14);
    }

    #[test]
    fn bounds_pad_and_handle_empty() {
        let empty = LineChart::from_histories(Metric::TestAccuracy, [run("a", &[])]);
        assert!(empty.bounds().is_none());
        let one = [record(0, 2.0, None)];
        let chart = LineChart::from_histories(Metric::TrainLoss, [run("a", &one)]);
        let ((x0, x1), (y0, y1)) = chart.bounds().unwrap();
        assert!(x1 > x0 && y0 < 2.0 && y1 > 2.0);
        let noisy = [record(0, 1.0, None), record(1, 1.0 + 1e-7, None)];
        let ((_, _), (y0, y1)) = LineChart::from_histories(Metric::TrainLoss, [run("a", &noisy)])
            .bounds()
            .unwrap();
        assert!(y1 - y0 >= 2e-4, "rounding noise is not stretched to the chart's height");
        assert_ne!(axis_label(y0, (y0, y1)), axis_label(y1, (y0, y1)));
        let nan = [record(0, f64::NAN, None)];
        let only_mark = RunHistory {
            diverged_at: Some(0),
            ..run("a", &nan)
        };
        let chart = LineChart::from_histories(Metric::TrainLoss, [only_mark]);
        let ((x0, x1), (y0, y1)) = chart.bounds().expect("the mark alone is drawn");
        assert!(x0 <= 1.0 && x1 > x0 && y1 > y0, "{x0} {x1} {y0} {y1}");
    }

    #[test]
    fn step_ticks_are_whole_steps_only() {
        assert_eq!(step_label(3.0), "3");
        assert_eq!(step_label(2.5), "");
        assert_eq!(step_label(1.75), "");
        let labels: Vec<String> = [1.0, 1.5, 2.0, 2.5, 3.0].iter().map(|&v| step_label(v)).collect();
        let shown: Vec<&String> = labels.iter().filter(|l| !l.is_empty()).collect();
        assert_eq!(shown, ["1", "2", "3"], "no label twice");
    }

    #[test]
    fn axis_labels_tell_ticks_apart_and_fit() {
        assert_eq!(axis_label(0.5, (0.0, 2.5)), "0.5");
        assert_eq!(axis_label(1.0, (0.0, 2.5)), "1.0");
        assert_eq!(axis_label(0.99998, (0.99996, 1.00004)), "0.99998");
        assert_eq!(axis_label(1.00002, (0.99996, 1.00004)), "1.00002");
        assert_eq!(axis_label(40.0, (0.0, 100.0)), "40");
        assert_eq!(axis_label(1.2327e13, (0.0, 1.3e13)), "1.23e13");
        assert_eq!(axis_label(0.0, (0.0, 1.3e13)), "0.00e0");
        assert_eq!(axis_label(3.0, (3.0, 3.0)), "3.0");
    }

    /// Text needs a font natively (the browser has its own); the CLI bundles this one.
    fn register_test_font() {
        plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            include_bytes!("../../../assets/fonts/DejaVuSans.ttf"),
        )
        .map_err(|_| "font")
        .unwrap();
    }

    #[test]
    fn the_look_leaves_the_legend_out_and_writes_decimal_commas() {
        register_test_font();
        let steps: Vec<StepRecord> = (0..10).map(|s| record(s, 0.5 + 0.1 * s as f64, None)).collect();
        let draw = |look: ChartLook| {
            let mut chart = LineChart::from_histories(Metric::TrainLoss, [run("legend-entry", &steps)]);
            chart.look = look;
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (500, 300)).into_drawing_area();
                draw_line_chart(&root, &chart).unwrap();
            }
            svg
        };
        let plain = draw(ChartLook::default());
        let has_line = |svg: &str, text: &str| svg.lines().any(|l| l.trim() == text);
        assert!(
            plain.contains("legend-entry") && has_line(&plain, "0.8"),
            "English ticks: {plain}"
        );
        let spanish = draw(ChartLook {
            legend: false,
            decimal_comma: true,
        });
        assert!(!spanish.contains("legend-entry"));
        assert!(
            has_line(&spanish, "0,8") && !has_line(&spanish, "0.8"),
            "decimal comma ticks"
        );
        assert_eq!(with_decimal_comma("4.00".into(), true), "4,00");
        assert_eq!(with_decimal_comma("4.00".into(), false), "4.00");
    }

    #[test]
    fn a_lone_value_is_drawn_as_a_dot() {
        register_test_font();
        let draw = |steps: u64| {
            let records: Vec<StepRecord> = (0..steps).map(|s| record(s, 0.5, None)).collect();
            let chart = LineChart::from_histories(Metric::TrainLoss, [run("run", &records)]);
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (500, 300)).into_drawing_area();
                draw_line_chart(&root, &chart).unwrap();
            }
            svg
        };
        assert!(draw(1).contains("<circle"), "one point: a dot");
        assert!(!draw(3).contains("<circle"), "a line otherwise");
    }

    /// The y axis's tick labels of `chart` drawn as SVG, top to bottom.
    fn y_tick_labels(chart: &LineChart) -> Vec<String> {
        register_test_font();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (500, 300)).into_drawing_area();
            draw_line_chart(&root, chart).unwrap();
        }
        // Tick labels are <text> elements right-aligned in the label area (x below 64 px).
        let mut labels = Vec::new();
        let mut lines = svg.lines();
        while let Some(line) = lines.next() {
            if line.contains("<text") && line.contains("text-anchor=\"end\"") {
                if let Some(text) = lines.next() {
                    labels.push(text.trim().to_string());
                }
            }
        }
        labels
    }

    /// The frame a drawing returns maps pixels to steps and back, inside the drawing; a
    /// crosshair's tooltip reads each run's value at a step (none where a run has none).
    #[test]
    fn the_frame_maps_pixels_to_steps_and_values_are_read_at_a_step() {
        register_test_font();
        let long: Vec<StepRecord> = (0..20).map(|s| record(s, 1.0 + s as f64, None)).collect();
        let short: Vec<StepRecord> = (0..5).map(|s| record(s, 2.0, None)).collect();
        let chart = LineChart::from_histories(Metric::TrainLoss, [run("long", &long), run("short", &short)]);
        let mut svg = String::new();
        let frame = {
            let root = SVGBackend::with_string(&mut svg, (500, 300)).into_drawing_area();
            draw_line_chart(&root, &chart).unwrap()
        };
        assert!(0.0 < frame.left && frame.left < frame.right && frame.right <= 500.0);
        assert!(0.0 <= frame.top && frame.top < frame.bottom && frame.bottom <= 300.0);
        for step in [1.0, 7.0, 20.0] {
            let pixel = frame.pixel_of(step);
            assert!(frame.left <= pixel && pixel <= frame.right);
            assert!((frame.x_at(pixel) - step).abs() < 1e-9);
        }
        assert_eq!(
            chart.values_at(3),
            vec![(0, "long", Some(3.0)), (1, "short", Some(2.0))]
        );
        assert_eq!(chart.values_at(12), vec![(0, "long", Some(12.0)), (1, "short", None)]);
    }

    /// A flat series (every cosine exactly 1) or a nearly flat one gets ticks that differ, not
    /// "1.0" ten times; a flat log series too.
    #[test]
    fn flat_and_nearly_flat_series_get_distinct_ticks() {
        type Case = (Metric, fn(u64) -> StepRecord);
        let cases: [Case; 6] = [
            // A loss falling from 1.0 to 0.5 (ticks every 0.05 would read "0.8, 0.8" at one
            // decimal), and a test accuracy climbing from 0.45 to 0.95.
            (Metric::TrainLoss, |s| record(s, 1.0 - 0.5 * s as f64 / 29.0, None)),
            (Metric::TrainLoss, |s| record(s, 0.45 + 0.5 * s as f64 / 29.0, None)),
            (Metric::GradCosine, |s| StepRecord {
                grad_cosine: Some(1.0),
                ..record(s, 1.0, None)
            }),
            (Metric::GradCosine, |s| StepRecord {
                grad_cosine: Some(1.0 - 1e-9 * s as f64),
                ..record(s, 1.0, None)
            }),
            (Metric::TrainLoss, |s| record(s, 0.0, None)),
            (Metric::GradRelativeError, |s| record(s, 1.0, Some(3.0))),
        ];
        for (metric, make) in cases {
            let steps: Vec<StepRecord> = (0..30).map(make).collect();
            let chart = LineChart::from_histories(metric, [run("a", &steps)]);
            let labels = y_tick_labels(&chart);
            assert!(labels.len() >= 2, "{metric:?}: {labels:?}");
            let mut unique = labels.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(
                unique.len(),
                labels.len(),
                "{metric:?}: repeated tick labels {labels:?}"
            );
        }
    }

    /// Draws charts into a bitmap and counts pixels of the run's colour in the column of the
    /// step where it diverged: the mark is really drawn, on a linear and a log axis.
    #[test]
    fn a_divergence_is_drawn_as_a_mark_at_its_step() {
        let steady: Vec<StepRecord> = (0..10).map(|s| record(s, 1.0 / (s + 1) as f64, Some(1e-3))).collect();
        let mut broken: Vec<StepRecord> = steady[..5].to_vec();
        broken.push(record(5, f64::NAN, Some(f64::NAN)));
        let diverged = RunHistory {
            diverged_at: Some(5),
            ..run("b", &broken)
        };
        register_test_font();
        for metric in [Metric::TrainLoss, Metric::GradRelativeError] {
            let (width, height) = (400u32, 300u32);
            let mut pixels = vec![0u8; (width * height * 3) as usize];
            let chart = LineChart::from_histories(metric, [run("a", &steady), diverged]);
            {
                let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
                draw_line_chart(&root, &chart).unwrap();
            }
            let (r, g, b) = RUN_COLORS[1];
            let coloured = |x: u32| {
                (0..height)
                    .filter(|&y| {
                        let i = ((y * width + x) * 3) as usize;
                        pixels[i..i + 3] == [r, g, b]
                    })
                    .count()
            };
            let columns: Vec<usize> = (0..width).map(coloured).collect();
            let tallest = columns.iter().copied().max().unwrap();
            assert!(
                tallest > (height / 3) as usize,
                "{metric:?}: no vertical mark in the run's colour ({tallest} pixels at most)"
            );
        }
    }
}
