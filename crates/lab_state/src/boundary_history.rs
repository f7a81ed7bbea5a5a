//! Decision boundaries of past steps, for the history scrubber: a bounded number of snapshots
//! spread over the whole run. When it is full it is thinned to snapshots evenly spaced from the
//! first step to the newest, so the whole run stays reachable, not only its latest steps.

use gradlab_plot::boundary::DecisionBoundary;

/// At most this many snapshots are kept (each holds every run's boundary).
pub const MAX_BOUNDARY_SNAPSHOTS: usize = 24;

/// Every run's boundary (`None` where a run has none) after each kept step (1-based).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoundaryHistory {
    snapshots: Vec<(u64, Vec<Option<DecisionBoundary>>)>,
}

impl BoundaryHistory {
    /// Keeps the boundaries drawn after step `step`; a later drawing of the same step replaces it.
    pub fn push(&mut self, step: u64, boundaries: Vec<Option<DecisionBoundary>>) {
        self.snapshots.retain(|(s, _)| *s < step);
        self.snapshots.push((step, boundaries));
        if self.snapshots.len() > MAX_BOUNDARY_SNAPSHOTS {
            // Keep the first, the newest, and between them one snapshot at least every
            // (run length / half the capacity) steps: evenly spread, about half full again.
            let first = self.snapshots[0].0;
            let spacing = (step - first).div_ceil(MAX_BOUNDARY_SNAPSHOTS as u64 / 2).max(1);
            let newest = self.snapshots.len() - 1;
            let mut last_kept: Option<u64> = None;
            let mut index = 0;
            self.snapshots.retain(|(s, _)| {
                let keep = index == newest || last_kept.is_none_or(|last| *s >= last + spacing);
                if keep {
                    last_kept = Some(*s);
                }
                index += 1;
                keep
            });
        }
    }

    pub fn clear(&mut self) {
        self.snapshots.clear();
    }

    pub fn len(&self) -> usize {
        self.snapshots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.snapshots.is_empty()
    }

    /// The latest kept snapshot at or before `step`, with the step it was drawn after.
    pub fn at(&self, step: u64) -> Option<(u64, &[Option<DecisionBoundary>])> {
        let after = self.snapshots.partition_point(|(s, _)| *s <= step);
        let (kept, boundaries) = self.snapshots.get(after.checked_sub(1)?)?;
        Some((*kept, boundaries))
    }

    /// Bytes the kept boundaries hold (cells and training points), as the page states them.
    pub fn bytes(&self) -> usize {
        let cell = size_of::<(usize, f64)>();
        let point = size_of::<(f64, f64, usize)>();
        self.snapshots
            .iter()
            .flat_map(|(_, runs)| runs.iter().flatten())
            .map(|b| b.cells.len() * cell + b.points.len() * point)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_plot::boundary::Grid;

    fn boundary(class: usize) -> Option<DecisionBoundary> {
        let grid = Grid::covering(&[0.0, 0.0, 1.0, 1.0], 4);
        let cells = grid.centres().len() / 2;
        let probabilities: Vec<f64> = (0..cells).flat_map(|_| [1.0 - class as f64, class as f64]).collect();
        Some(DecisionBoundary::from_probabilities(
            String::new(),
            grid,
            &probabilities,
            2,
            vec![(0.5, 0.5, 0)],
        ))
    }

    #[test]
    fn keeps_a_bounded_spread_of_snapshots_and_finds_the_nearest_earlier() {
        let mut history = BoundaryHistory::default();
        assert!(history.at(10).is_none());
        for step in 1..=200u64 {
            history.push(step, vec![boundary((step % 2) as usize)]);
            assert!(history.len() <= MAX_BOUNDARY_SNAPSHOTS);
        }
        let (first, _) = history.at(1).expect("the first is kept");
        assert_eq!(first, 1);
        let (latest, _) = history.at(200).expect("the newest is kept");
        assert_eq!(latest, 200);
        // Spread over the run: some snapshot in each quarter of it.
        for quarter in 0..4u64 {
            let (kept, _) = history.at(50 * (quarter + 1)).expect("kept");
            assert!(kept > 50 * quarter, "quarter {quarter}: nearest kept {kept}");
        }
        let (kept, boundaries) = history.at(120).expect("kept");
        assert!(kept <= 120);
        assert_eq!(boundaries.len(), 1);
        let one = boundary(0).expect("boundary");
        let each = one.cells.len() * 16 + one.points.len() * 24;
        assert_eq!(history.bytes(), history.len() * each);
        history.push(200, vec![None]);
        assert_eq!(history.at(200).map(|(s, b)| (s, b.len())), Some((200, 1)));
        history.clear();
        assert!(history.is_empty());
    }
}
