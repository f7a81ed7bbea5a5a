//! A run's decision boundary over the 2-D data: the predicted class on a grid, drawn as tinted
//! cells under the training points. The grid and its classes are plain data; engines predict.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::PlotError;

/// Class colours (Okabe-Ito blue, orange, bluish green) and a distinct marker per class, so
/// classes are told apart without colour too.
pub const CLASS_COLORS: [(u8, u8, u8); 3] = [(0, 114, 178), (230, 159, 0), (0, 158, 115)];

/// Where the grid lies and how fine it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    pub x: (f64, f64),
    pub y: (f64, f64),
    pub cells: usize,
}

impl Grid {
    /// A square-celled grid covering `points` (x, y pairs) with a margin of a tenth of the span.
    pub fn covering(points: &[f64], cells: usize) -> Self {
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for p in points.chunks_exact(2) {
            x0 = x0.min(p[0]);
            x1 = x1.max(p[0]);
            y0 = y0.min(p[1]);
            y1 = y1.max(p[1]);
        }
        if x0 > x1 {
            (x0, x1, y0, y1) = (-1.0, 1.0, -1.0, 1.0);
        }
        let span = (x1 - x0).max(y1 - y0).max(1e-6) * 1.1;
        let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
        Self {
            x: (cx - span / 2.0, cx + span / 2.0),
            y: (cy - span / 2.0, cy + span / 2.0),
            cells: cells.max(2),
        }
    }

    /// Cell centres, row-major from the bottom row, as (x, y) pairs ready for `predict`.
    pub fn centres(&self) -> Vec<f64> {
        let n = self.cells;
        let (dx, dy) = ((self.x.1 - self.x.0) / n as f64, (self.y.1 - self.y.0) / n as f64);
        let mut out = Vec::with_capacity(n * n * 2);
        for row in 0..n {
            for col in 0..n {
                out.push(self.x.0 + (col as f64 + 0.5) * dx);
                out.push(self.y.0 + (row as f64 + 0.5) * dy);
            }
        }
        out
    }
}

/// The predicted class and its probability in every grid cell, and the points to draw on top.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionBoundary {
    pub title: String,
    pub grid: Grid,
    /// Per cell, in [`Grid::centres`] order: (class, probability of that class).
    pub cells: Vec<(usize, f64)>,
    /// Training points: x, y and label.
    pub points: Vec<(f64, f64, usize)>,
}

impl DecisionBoundary {
    /// From class probabilities (cells x classes, row-major) as an engine's `predict` returns them.
    pub fn from_probabilities(
        title: String,
        grid: Grid,
        probabilities: &[f64],
        classes: usize,
        points: Vec<(f64, f64, usize)>,
    ) -> Self {
        let cells = probabilities
            .chunks_exact(classes.max(1))
            .map(|p| {
                p.iter()
                    .copied()
                    .enumerate()
                    .fold((0, f64::MIN), |best, (c, v)| if v > best.1 { (c, v) } else { best })
            })
            .collect();
        Self {
            title,
            grid,
            cells,
            points,
        }
    }
}

fn tint((r, g, b): (u8, u8, u8), strength: f64) -> RGBColor {
    let mix = |c: u8| (255.0 - (255.0 - f64::from(c)) * strength).round() as u8;
    RGBColor(mix(r), mix(g), mix(b))
}

/// Draws the tinted cells (stronger where the network is surer) and the points with one marker
/// shape per class.
pub fn draw_decision_boundary<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    boundary: &DecisionBoundary,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let grid = boundary.grid;
    let mut builder = ChartBuilder::on(area);
    builder.margin(6);
    if !boundary.title.is_empty() {
        builder.caption(&boundary.title, ("sans-serif", 15));
    }
    let mut chart = builder.build_cartesian_2d(grid.x.0..grid.x.1, grid.y.0..grid.y.1)?;
    let n = grid.cells;
    let (dx, dy) = ((grid.x.1 - grid.x.0) / n as f64, (grid.y.1 - grid.y.0) / n as f64);
    chart.draw_series(boundary.cells.iter().enumerate().map(|(i, &(class, p))| {
        let (row, col) = (i / n, i % n);
        let x = grid.x.0 + col as f64 * dx;
        let y = grid.y.0 + row as f64 * dy;
        let base = CLASS_COLORS[class % CLASS_COLORS.len()];
        // Certainty 1/classes .. 1 maps to a light .. medium tint: points stay readable on top.
        let strength = 0.12 + 0.33 * p.clamp(0.0, 1.0);
        Rectangle::new([(x, y), (x + dx, y + dy)], tint(base, strength).filled())
    }))?;
    for (class, color) in CLASS_COLORS.iter().enumerate() {
        let color = RGBColor(color.0, color.1, color.2);
        let points = boundary.points.iter().filter(|p| p.2 == class).map(|p| (p.0, p.1));
        match class {
            0 => {
                chart.draw_series(points.map(|p| Circle::new(p, 3, color.filled())))?;
            }
            1 => {
                chart.draw_series(points.map(|p| TriangleMarker::new(p, 4, color.filled())))?;
            }
            _ => {
                chart.draw_series(points.map(|p| Cross::new(p, 3, color.stroke_width(2))))?;
            }
        }
    }
    area.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_the_points_with_square_cells() {
        let grid = Grid::covering(&[-1.0, 0.0, 3.0, 1.0], 10);
        assert!(grid.x.0 < -1.0 && grid.x.1 > 3.0 && grid.y.0 < 0.0 && grid.y.1 > 1.0);
        assert!(((grid.x.1 - grid.x.0) - (grid.y.1 - grid.y.0)).abs() < 1e-12);
        let centres = grid.centres();
        assert_eq!(centres.len(), 200);
        assert!(centres[0] > grid.x.0 && centres[1] > grid.y.0);
        assert!(
            centres[2] > centres[0] && centres[21] > centres[1],
            "second column, then second row"
        );
        assert_eq!(Grid::covering(&[], 1).cells, 2);
    }

    #[test]
    fn cells_take_the_most_probable_class() {
        let grid = Grid::covering(&[0.0, 0.0, 1.0, 1.0], 2);
        let probabilities = [0.7, 0.2, 0.1, 0.1, 0.1, 0.8, 0.3, 0.4, 0.3, 0.2, 0.5, 0.3];
        let boundary = DecisionBoundary::from_probabilities(String::new(), grid, &probabilities, 3, vec![]);
        assert_eq!(boundary.cells, vec![(0, 0.7), (2, 0.8), (1, 0.4), (1, 0.5)]);
        let mut pixels = vec![0u8; 120 * 120 * 3];
        {
            let root = BitMapBackend::with_buffer(&mut pixels, (120, 120)).into_drawing_area();
            draw_decision_boundary(&root, &boundary).unwrap();
        }
        assert!(pixels.iter().any(|&v| v != 255), "something was drawn");
    }
}
