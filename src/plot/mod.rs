//! Charts drawn with plotters against any `DrawingBackend`: the CLI draws to PNG and SVG, the
//! browser to a canvas, tests to an in-memory bitmap. Chart data are plain types built from lab
//! history, so what a chart shows is tested without drawing it.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use thiserror::Error;

use crate::sim::metrics::StepRecord;

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

/// One curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Index into the run palette.
    pub style: usize,
}

/// A line chart: what to draw, independent of where.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_y: bool,
    pub series: Vec<Series>,
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
}

impl Metric {
    pub fn value(self, record: &StepRecord) -> Option<f64> {
        match self {
            Metric::TrainLoss => Some(record.train_loss),
            Metric::TestAccuracy => record.test_accuracy,
            Metric::GradNorm => Some(record.grad_norm),
            Metric::GradRelativeError => record.grad_relative_error,
            Metric::GradCosine => record.grad_cosine,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Metric::TrainLoss => "Training loss",
            Metric::TestAccuracy => "Test accuracy",
            Metric::GradNorm => "Gradient norm",
            Metric::GradRelativeError => "Gradient relative error vs full batch",
            Metric::GradCosine => "Cosine similarity with the full-batch gradient",
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
    pub fn from_histories<'a>(metric: Metric, runs: impl IntoIterator<Item = (&'a str, &'a [StepRecord])>) -> Self {
        let series = runs
            .into_iter()
            .enumerate()
            .map(|(style, (label, history))| Series {
                label: label.to_string(),
                points: history
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
            series,
        }
    }

    /// The x and y ranges covering every point, padded so curves do not touch the frame.
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
        if !any {
            return None;
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if self.log_y {
            // At least six decades, so that curves at the floor (exact zeros) read as "far below
            // anything visible" rather than filling the chart.
            y0 = y0.max(LOG_FLOOR) / 2.0;
            y1 = y1.max(y0 * 4.0).max(1e-6) * 2.0;
        } else {
            let pad = ((y1 - y0) * 0.05).max(1e-9);
            y0 -= pad;
            y1 += pad;
        }
        Some(((x0, x1), (y0, y1)))
    }
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
    if gap == 0 {
        chart.draw_series(LineSeries::new(series.points.iter().copied(), style))?;
    } else {
        chart.draw_series(DashedLineSeries::new(series.points.iter().copied(), dash, gap, style))?;
    }
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
        area.draw(&Text::new(series.label.clone(), (x + 34, y - 7), font.clone()))?;
    }
    Ok(())
}

/// Draws `chart` onto `area`, filling it.
pub fn draw_line_chart<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, chart: &LineChart) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let ((x0, x1), (y0, y1)) = chart.bounds().ok_or(PlotError::Empty("no finite points"))?;
    let (width, height) = area.dim_in_pixel();
    let legend = LegendLayout::for_width(width, chart.series.len());
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
    if chart.log_y {
        let mut ctx = builder.build_cartesian_2d(x0..x1, (y0..y1).log_scale())?;
        ctx.configure_mesh()
            .x_desc(chart.x_label.as_str())
            .y_desc(chart.y_label.as_str())
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        for series in &chart.series {
            draw_series(&mut ctx, series)?;
        }
    } else {
        let mut ctx = builder.build_cartesian_2d(x0..x1, y0..y1)?;
        ctx.configure_mesh()
            .x_desc(chart.x_label.as_str())
            .x_label_formatter(&|v| format!("{v:.0}"))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        for series in &chart.series {
            draw_series(&mut ctx, series)?;
        }
    }
    draw_legend(&legend_area, chart, legend)?;
    area.present()?;
    Ok(())
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

    #[test]
    fn chart_series_follow_history() {
        let a = [record(0, 1.0, Some(0.0)), record(1, 0.5, Some(1e-7))];
        let b = [record(0, 1.1, None), record(1, f64::NAN, None)];
        let chart = LineChart::from_histories(Metric::TrainLoss, [("a", &a[..]), ("b", &b[..])]);
        assert_eq!(chart.series[0].points, vec![(1.0, 1.0), (2.0, 0.5)]);
        assert_eq!(
            chart.series[1].points,
            vec![(1.0, 1.1)],
            "non-finite values are dropped"
        );
        let rel = LineChart::from_histories(Metric::GradRelativeError, [("a", &a[..])]);
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
        let empty = LineChart::from_histories(Metric::TestAccuracy, [("a", &[][..])]);
        assert!(empty.bounds().is_none());
        let one = [record(0, 2.0, None)];
        let chart = LineChart::from_histories(Metric::TrainLoss, [("a", &one[..])]);
        let ((x0, x1), (y0, y1)) = chart.bounds().unwrap();
        assert!(x1 > x0 && y0 < 2.0 && y1 > 2.0);
    }
}
