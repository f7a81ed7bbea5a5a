//! The text alternative of a line chart: what a sighted learner reads off the curves, in words
//! (each run's latest value and the shape of its recent curve, which runs lie on top of each
//! other, where one diverged), for screen readers and for anyone who cannot see the canvas.

use gradlab_i18n::Msg;
use gradlab_plot::LineChart;

/// Points of the recent curve whose shape is described.
const RECENT_POINTS: usize = 20;
/// Curves lie on top of each other where they differ by less than this share of the chart's
/// height (well under a pixel), or by float rounding.
const OVERLAP_OF_RANGE: f64 = 1e-3;
/// Changes smaller than this (relative) are rounding: a flat curve.
const OVERLAP: f64 = crate::session::F32_ROUNDING;

/// The shape of a curve's recent points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Flat,
    Rising,
    Falling,
    /// Up and down: at least three reversals, a third or more of its moves.
    Oscillating,
}

impl Shape {
    pub fn of(values: &[f64]) -> Shape {
        let (Some(&first), Some(&last)) = (values.first(), values.last()) else {
            return Shape::Flat;
        };
        let (low, high) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
        let scale = low.abs().max(high.abs());
        let spread = high - low;
        if spread.is_nan() || spread <= OVERLAP * scale {
            return Shape::Flat;
        }
        // Moves smaller than a thousandth of the range are rounding, not a change of direction.
        let moves: Vec<f64> = values
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|d| d.abs() > 1e-3 * (high - low))
            .collect();
        let reversals = moves.windows(2).filter(|m| m[0].signum() != m[1].signum()).count();
        if reversals >= 3 && 3 * reversals >= moves.len() {
            Shape::Oscillating
        } else if last > first {
            Shape::Rising
        } else {
            Shape::Falling
        }
    }

    /// The selector the message's `$shape` variants are keyed by.
    pub fn key(self) -> &'static str {
        match self {
            Shape::Flat => "flat",
            Shape::Rising => "rising",
            Shape::Falling => "falling",
            Shape::Oscillating => "oscillating",
        }
    }
}

/// Whether two curves of the same steps agree at every step, within `tolerance` or rounding.
fn overlap(a: &[(f64, f64)], b: &[(f64, f64)], tolerance: f64) -> bool {
    !a.is_empty()
        && a.len() == b.len()
        && a.iter().zip(b).all(|(p, q)| {
            let close = tolerance.max(OVERLAP * p.1.abs().max(q.1.abs()));
            p.0 == q.0 && (p.1 - q.1).abs() <= close
        })
}

/// The sentences describing `chart`; empty before the first step.
pub fn describe(chart: &LineChart) -> Vec<Msg> {
    let mut sentences = Vec::new();
    let drawn: Vec<_> = chart.series.iter().filter(|s| !s.points.is_empty()).collect();
    let (low, high) = drawn
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let tolerance = if high > low {
        OVERLAP_OF_RANGE * (high - low)
    } else {
        0.0
    };
    let mut grouped = vec![false; drawn.len()];
    for i in 0..drawn.len() {
        if grouped[i] {
            continue;
        }
        let group: Vec<usize> = (i..drawn.len())
            .filter(|&j| !grouped[j] && overlap(&drawn[i].points, &drawn[j].points, tolerance))
            .collect();
        if group.len() > 1 {
            for &j in &group {
                grouped[j] = true;
            }
            let runs: Vec<&str> = group.iter().map(|&j| drawn[j].label.as_str()).collect();
            sentences.push(Msg::new("chart-summary-overlap").arg("runs", runs.join(", ")));
        }
    }
    for series in &drawn {
        let Some(&(step, last)) = series.points.last() else {
            continue;
        };
        let recent: Vec<f64> = series.points[series.points.len().saturating_sub(RECENT_POINTS)..]
            .iter()
            .map(|p| p.1)
            .collect();
        sentences.push(
            Msg::new("chart-summary-series")
                .arg("run", &series.label)
                .arg("value", super::numbers::chart_value(chart, last))
                .arg("step", step)
                .arg("shape", Shape::of(&recent).key()),
        );
        if let Some(mark) = &series.diverged {
            sentences.push(
                Msg::new("chart-summary-diverged")
                    .arg("run", &series.label)
                    .arg("step", mark.step),
            );
        }
    }
    sentences
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_plot::Series;

    fn series(label: &str, values: &[f64]) -> Series {
        Series {
            label: label.into(),
            points: values.iter().enumerate().map(|(i, &v)| ((i + 1) as f64, v)).collect(),
            style: 0,
            diverged: None,
        }
    }

    #[test]
    fn shapes_read_as_a_person_would() {
        assert_eq!(Shape::of(&[1.0, 0.8, 0.7, 0.65, 0.6]), Shape::Falling);
        assert_eq!(Shape::of(&[0.1, 0.2, 0.4, 0.5]), Shape::Rising);
        assert_eq!(Shape::of(&[1.0, 1.0, 1.0]), Shape::Flat);
        assert_eq!(Shape::of(&[1.0, 1.0 + 1e-9, 1.0]), Shape::Flat, "rounding is flat");
        assert_eq!(Shape::of(&[1.0, 2.0, 0.5, 2.5, 0.4, 2.2, 0.6]), Shape::Oscillating);
        assert_eq!(
            Shape::of(&[1.0, 0.9, 0.91, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3]),
            Shape::Falling,
            "one bump is not an oscillation"
        );
    }

    #[test]
    fn curves_on_top_of_each_other_are_named_together() {
        let chart = LineChart {
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            log_y: false,
            metric: None,
            look: gradlab_plot::ChartLook::default(),
            series: vec![
                series("full batch", &[1.0, 0.8, 0.6]),
                series("loss / 4", &[1.0, 0.8 + 1e-5, 0.6]),
                series("unscaled", &[1.0, 1.6, 0.3]),
            ],
        };
        let text = describe(&chart);
        assert_eq!(text[0].id, "chart-summary-overlap");
        assert!(text[0].args.contains(&("runs", "full batch, loss / 4".to_string())));
        assert_eq!(text.len(), 4, "the overlap (1e-5 of a range of 1.3), then one per run");
        assert!(text[3].args.contains(&("value", "0.3000".to_string())));
        assert!(text[3].args.contains(&("step", "3".to_string())));
        let empty = LineChart {
            series: vec![series("full batch", &[])],
            ..chart
        };
        assert!(describe(&empty).is_empty());
    }
}
