//! Numbers as a learner reads them, the same value the same way everywhere (the results table,
//! chart tooltips and summaries, the course's reveals, the step-through): an exact zero is "0",
//! ordinary values are plain decimals, and only a value that is truly tiny or huge is written
//! as a power of ten, `3.0 × 10⁻⁶`, never in e-notation. The page's language then turns the
//! decimal point into its own (`i18n::num`).

use gradlab_plot::{LineChart, Metric, LOG_FLOOR};

/// Plain decimals from this magnitude up to [`PLAIN_BELOW`].
const PLAIN_FROM: f64 = 1e-3;
/// Plain decimals below this magnitude.
const PLAIN_BELOW: f64 = 1e5;

/// `value` with `significant` significant digits (at least 1).
pub fn readable(value: f64, significant: usize) -> String {
    let significant = significant.max(1);
    if value == 0.0 {
        return "0".into();
    }
    if !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs();
    if (PLAIN_FROM..PLAIN_BELOW).contains(&magnitude) {
        let exponent = magnitude.log10().floor() as i64;
        let decimals = (significant as i64 - 1 - exponent).max(0) as usize;
        let text = format!("{value:.decimals$}");
        // Rounding can carry into the next power (0.99996 → "1.0000"): still plain, and right.
        return text;
    }
    let mantissa_decimals = significant - 1;
    let formatted = format!("{value:.mantissa_decimals$e}");
    let (mantissa, exponent) = formatted.split_once('e').unwrap_or((formatted.as_str(), "0"));
    format!("{mantissa} × 10{}", superscript(exponent))
}

/// A value of `metric` as the results table, the chart tooltips and the chart summaries all
/// write it.
pub fn metric_value(metric: Metric, value: f64) -> String {
    match metric {
        Metric::TrainLoss => {
            // 6 decimals, or 7 significant digits from a million on (a run on its way to
            // diverging reaches 10¹³).
            if value.abs() < 1e6 {
                format!("{value:.6}")
            } else {
                readable(value, 7)
            }
        }
        Metric::TestAccuracy => format!("{:.1} %", value * 100.0),
        Metric::GradNorm => {
            if value.abs() < PLAIN_BELOW {
                format!("{value:.4}")
            } else {
                readable(value, 5)
            }
        }
        Metric::GradRelativeError => readable(value, 3),
        Metric::GradCosine => format!("{value:.6}"),
        Metric::LearningRate => readable(value, 4),
        Metric::ClipFactor => format!("{value:.4}"),
    }
}

/// A point of `chart` as its tooltip and summary write it: the metric's own form, and on a
/// log-scale chart a point at the floor, where an exact zero is drawn, as "0".
pub fn chart_value(chart: &LineChart, value: f64) -> String {
    if chart.log_y && value <= LOG_FLOOR {
        return "0".into();
    }
    match chart.metric {
        Some(metric) => metric_value(metric, value),
        None => readable(value, 4),
    }
}

/// A multiple, as "×4.00" (the multiplication sign, not the letter x).
pub fn times(ratio: f64) -> String {
    format!("×{ratio:.2}")
}

/// The number a [`readable`] text stands for (tests read the page's numbers back with it).
pub fn parse_readable(text: &str) -> Option<f64> {
    let text = text.trim().replace(',', ".");
    let Some((mantissa, power)) = text.split_once(" × 10") else {
        return text.parse().ok();
    };
    let exponent: String = power
        .chars()
        .map(|c| match c {
            '⁻' => Some('-'),
            '⁰' => Some('0'),
            '¹' => Some('1'),
            '²' => Some('2'),
            '³' => Some('3'),
            '⁴' => Some('4'),
            '⁵' => Some('5'),
            '⁶' => Some('6'),
            '⁷' => Some('7'),
            '⁸' => Some('8'),
            '⁹' => Some('9'),
            _ => None,
        })
        .collect::<Option<String>>()?;
    format!("{mantissa}e{exponent}").parse().ok()
}

fn superscript(exponent: &str) -> String {
    exponent
        .chars()
        .filter_map(|c| match c {
            '-' => Some('⁻'),
            '0' => Some('⁰'),
            '1' => Some('¹'),
            '2' => Some('²'),
            '3' => Some('³'),
            '4' => Some('⁴'),
            '5' => Some('⁵'),
            '6' => Some('⁶'),
            '7' => Some('⁷'),
            '8' => Some('⁸'),
            '9' => Some('⁹'),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learners_read_plain_decimals_and_powers_of_ten_never_e_notation() {
        assert_eq!(readable(0.0, 3), "0");
        assert_eq!(readable(-0.0, 3), "0");
        assert_eq!(readable(0.17534, 3), "0.175");
        assert_eq!(readable(3.0, 3), "3.00");
        assert_eq!(readable(1.8223, 5), "1.8223");
        assert_eq!(readable(1234.6, 3), "1235");
        assert_eq!(readable(0.001, 2), "0.0010");
        assert_eq!(readable(3.04e-6, 2), "3.0 × 10⁻⁶");
        assert_eq!(readable(-1.25e-7, 3), "-1.25 × 10⁻⁷");
        assert_eq!(readable(2.5e13, 2), "2.5 × 10¹³");
        assert_eq!(readable(1.0e5, 1), "1 × 10⁵");
        assert_eq!(readable(f64::INFINITY, 3), "inf");
        for value in [1e-12, 3.3e-7, 0.5, 12.0, 7e9] {
            let text = readable(value, 3);
            assert!(!text.contains('e'), "{value}: {text}");
        }
        assert_eq!(metric_value(Metric::TestAccuracy, 0.9), "90.0 %");
        assert_eq!(metric_value(Metric::TrainLoss, 1.0986123), "1.098612");
        assert_eq!(metric_value(Metric::TrainLoss, 12_327_108_739_072.0), "1.232711 × 10¹³");
        assert_eq!(metric_value(Metric::GradRelativeError, 0.0), "0");
        assert_eq!(times(4.0), "×4.00");
        for value in [0.0, 0.175, 3.0e-6, -1.25e-7, 2.5e13, 1234.0] {
            let back = parse_readable(&readable(value, 3)).unwrap();
            assert!((back - value).abs() <= 0.01 * value.abs(), "{value} -> {back}");
        }
        assert_eq!(parse_readable("3,0 × 10⁻⁶"), Some(3.0e-6), "a decimal comma");
        assert_eq!(parse_readable("1.0 × 10x"), None);
    }

    /// The table, a tooltip and a chart summary write one value the same way: the chart of a
    /// metric formats its points as the table formats that metric, and an exact zero drawn at
    /// a log chart's floor reads "0", not "1.000e-12".
    #[test]
    fn a_chart_writes_its_values_as_the_table_does() {
        use gradlab_sim::metrics::{RunHistory, StepRecord};
        let records: Vec<StepRecord> = [0.0, 3.0, 2.5e-7]
            .into_iter()
            .enumerate()
            .map(|(step, error)| StepRecord {
                step: step as u64,
                grad_relative_error: Some(error),
                test_accuracy: Some(0.9),
                ..StepRecord::default()
            })
            .collect();
        let history = || RunHistory {
            label: "run",
            records: &records,
            diverged_at: None,
        };
        let errors = LineChart::from_histories(Metric::GradRelativeError, [history()]);
        let shown: Vec<String> = errors.series[0]
            .points
            .iter()
            .map(|&(_, v)| chart_value(&errors, v))
            .collect();
        let table: Vec<String> = [0.0, 3.0, 2.5e-7]
            .into_iter()
            .map(|e| metric_value(Metric::GradRelativeError, e))
            .collect();
        assert_eq!(shown, table);
        assert_eq!(shown, ["0", "3.00", "2.50 × 10⁻⁷"]);
        let accuracy = LineChart::from_histories(Metric::TestAccuracy, [history()]);
        assert_eq!(chart_value(&accuracy, accuracy.series[0].points[0].1), "90.0 %");
    }
}
