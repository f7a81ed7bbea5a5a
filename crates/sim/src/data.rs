//! Seeded toy data sets, a train/test split and the shared order in which runs consume examples.
//!
//! An *example* is what a batch counts (B examples per optimizer step); an *item* is one row the
//! network sees and the loss is averaged over. For the point sets they are the same; for the
//! variable-length sequence set an example is a sequence and each of its tokens is an item.

use serde::{Deserialize, Serialize};

use super::rng::SeededRng;
use super::ConfigError;

/// Which generator to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DatasetKind {
    /// Three interleaved spiral arms (the canonical workload).
    #[default]
    Spiral,
    /// Two interleaving half circles.
    TwoMoons,
    /// A disc inside a ring.
    Circles,
    /// Four blobs labelled by the XOR of their quadrant signs.
    XorBlobs,
    /// Sequences of 2-D tokens whose length depends on their class.
    VariableLengthSequences,
}

impl DatasetKind {
    pub const ALL: [DatasetKind; 5] = [
        DatasetKind::Spiral,
        DatasetKind::TwoMoons,
        DatasetKind::Circles,
        DatasetKind::XorBlobs,
        DatasetKind::VariableLengthSequences,
    ];

    pub fn classes(self) -> usize {
        match self {
            DatasetKind::Spiral | DatasetKind::VariableLengthSequences => 3,
            DatasetKind::TwoMoons | DatasetKind::Circles | DatasetKind::XorBlobs => 2,
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            DatasetKind::Spiral => "spiral",
            DatasetKind::TwoMoons => "two_moons",
            DatasetKind::Circles => "circles",
            DatasetKind::XorBlobs => "xor_blobs",
            DatasetKind::VariableLengthSequences => "variable_length_sequences",
        }
    }
}

/// How to generate a data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatasetSpec {
    pub kind: DatasetKind,
    /// Examples (points, or sequences) generated per class.
    pub examples_per_class: usize,
    /// Noise level; its meaning is per generator (angle jitter, coordinate jitter).
    pub noise: f64,
    /// Fraction of examples held out for the test split.
    pub test_fraction: f64,
    pub seed: u64,
}

impl Default for DatasetSpec {
    fn default() -> Self {
        Self {
            kind: DatasetKind::Spiral,
            examples_per_class: 300,
            noise: 0.2,
            test_fraction: 0.2,
            seed: 1,
        }
    }
}

pub const INPUT_DIM: usize = 2;
pub const MAX_EXAMPLES_PER_CLASS: usize = 100_000;

impl DatasetSpec {
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        if self.examples_per_class < 2 || self.examples_per_class > MAX_EXAMPLES_PER_CLASS {
            return Err(ConfigError::new(
                format!("{field}.examples_per_class"),
                format!(
                    "must be between 2 and {MAX_EXAMPLES_PER_CLASS}, got {}",
                    self.examples_per_class
                ),
            ));
        }
        if !(0.0..=5.0).contains(&self.noise) {
            return Err(ConfigError::new(
                format!("{field}.noise"),
                format!("must be between 0 and 5, got {}", self.noise),
            ));
        }
        if !(0.05..=0.9).contains(&self.test_fraction) {
            return Err(ConfigError::new(
                format!("{field}.test_fraction"),
                format!("must be between 0.05 and 0.9, got {}", self.test_fraction),
            ));
        }
        Ok(())
    }

    /// Generates the data set and splits it. Same spec, same numbers, on every platform.
    pub fn generate(&self) -> Dataset {
        let mut rng = SeededRng::derive(self.seed, 1);
        let mut examples = match self.kind {
            DatasetKind::Spiral => spiral(&mut rng, self.examples_per_class, self.noise),
            DatasetKind::TwoMoons => two_moons(&mut rng, self.examples_per_class, self.noise),
            DatasetKind::Circles => circles(&mut rng, self.examples_per_class, self.noise),
            DatasetKind::XorBlobs => xor_blobs(&mut rng, self.examples_per_class, self.noise),
            DatasetKind::VariableLengthSequences => sequences(&mut rng, self.examples_per_class, self.noise),
        };
        let mut split_rng = SeededRng::derive(self.seed, 2);
        split_rng.shuffle(&mut examples);
        let test_count = ((examples.len() as f64) * self.test_fraction).round() as usize;
        let test_count = test_count.clamp(1, examples.len() - 1);
        let train = Split::from_examples(&examples[test_count..]);
        let test = Split::from_examples(&examples[..test_count]);
        Dataset {
            spec: self.clone(),
            input_dim: INPUT_DIM,
            classes: self.kind.classes(),
            train,
            test,
        }
    }
}

/// One example before splitting: its items' inputs (row-major) and one label for all of them.
#[derive(Debug, Clone)]
struct RawExample {
    inputs: Vec<f64>,
    label: u32,
}

/// A generated data set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dataset {
    pub spec: DatasetSpec,
    pub input_dim: usize,
    pub classes: usize,
    pub train: Split,
    pub test: Split,
}

/// Items stored row-major; example `e` owns rows `example_offsets[e]..example_offsets[e + 1]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Split {
    pub inputs: Vec<f64>,
    pub labels: Vec<u32>,
    pub example_offsets: Vec<usize>,
}

impl Split {
    fn from_examples(examples: &[RawExample]) -> Self {
        let mut split = Split {
            inputs: Vec::new(),
            labels: Vec::new(),
            example_offsets: vec![0],
        };
        for example in examples {
            let rows = example.inputs.len() / INPUT_DIM;
            split.inputs.extend_from_slice(&example.inputs);
            split.labels.extend(std::iter::repeat_n(example.label, rows));
            split.example_offsets.push(split.labels.len());
        }
        split
    }

    pub fn example_count(&self) -> usize {
        self.example_offsets.len() - 1
    }

    pub fn item_count(&self) -> usize {
        self.labels.len()
    }

    pub fn items_in(&self, example: usize) -> std::ops::Range<usize> {
        self.example_offsets[example]..self.example_offsets[example + 1]
    }
}

fn spiral(rng: &mut SeededRng, per_class: usize, noise: f64) -> Vec<RawExample> {
    let mut out = Vec::with_capacity(per_class * 3);
    for class in 0..3u32 {
        for i in 0..per_class {
            let radius = i as f64 / (per_class - 1) as f64;
            let angle = f64::from(class) * 4.0 + radius * 4.0 + rng.normal() * noise;
            out.push(RawExample {
                inputs: vec![radius * libm::sin(angle), radius * libm::cos(angle)],
                label: class,
            });
        }
    }
    out
}

fn two_moons(rng: &mut SeededRng, per_class: usize, noise: f64) -> Vec<RawExample> {
    let mut out = Vec::with_capacity(per_class * 2);
    for i in 0..per_class {
        let t = std::f64::consts::PI * i as f64 / (per_class - 1) as f64;
        let (x, y) = (libm::cos(t), libm::sin(t));
        out.push(RawExample {
            inputs: vec![
                x - 0.5 + rng.normal() * noise * 0.5,
                y - 0.25 + rng.normal() * noise * 0.5,
            ],
            label: 0,
        });
        out.push(RawExample {
            inputs: vec![
                0.5 - x + rng.normal() * noise * 0.5,
                0.25 - y + rng.normal() * noise * 0.5,
            ],
            label: 1,
        });
    }
    out
}

fn circles(rng: &mut SeededRng, per_class: usize, noise: f64) -> Vec<RawExample> {
    let mut out = Vec::with_capacity(per_class * 2);
    for (label, radius) in [(0u32, 0.4), (1u32, 1.0)] {
        for _ in 0..per_class {
            let angle = rng.uniform_in(0.0, 2.0 * std::f64::consts::PI);
            let r = radius + rng.normal() * noise * 0.25;
            out.push(RawExample {
                inputs: vec![r * libm::cos(angle), r * libm::sin(angle)],
                label,
            });
        }
    }
    out
}

fn xor_blobs(rng: &mut SeededRng, per_class: usize, noise: f64) -> Vec<RawExample> {
    let mut out = Vec::with_capacity(per_class * 2);
    let centers = [
        (0.5, 0.5, 0u32),
        (-0.5, -0.5, 0u32),
        (0.5, -0.5, 1u32),
        (-0.5, 0.5, 1u32),
    ];
    for i in 0..per_class * 2 {
        let (cx, cy, label) = centers[i % 4];
        let spread = 0.1 + noise;
        out.push(RawExample {
            inputs: vec![cx + rng.normal() * spread, cy + rng.normal() * spread],
            label,
        });
    }
    out
}

/// Token counts per class: short, medium and long sequences, so that how the loss is normalized
/// over tokens changes the weight each class gets.
const SEQUENCE_LENGTHS: [(usize, usize); 3] = [(1, 3), (4, 8), (10, 20)];

fn sequences(rng: &mut SeededRng, per_class: usize, noise: f64) -> Vec<RawExample> {
    let mut out = Vec::with_capacity(per_class * 3);
    for (class, &(shortest, longest)) in SEQUENCE_LENGTHS.iter().enumerate() {
        let angle = 2.0 * std::f64::consts::PI * class as f64 / 3.0;
        let (cx, cy) = (0.6 * libm::cos(angle), 0.6 * libm::sin(angle));
        for _ in 0..per_class {
            let length = shortest + rng.below(longest - shortest + 1);
            let mut inputs = Vec::with_capacity(length * INPUT_DIM);
            for _ in 0..length {
                inputs.push(cx + rng.normal() * (0.15 + noise));
                inputs.push(cy + rng.normal() * (0.15 + noise));
            }
            out.push(RawExample {
                inputs,
                label: class as u32,
            });
        }
    }
    out
}

/// The order in which training examples are consumed: one seeded permutation per epoch.
/// Every run of a lab draws from one stream, so all runs see the same B examples at each step.
#[derive(Debug, Clone)]
pub struct DataOrder {
    seed: u64,
    example_count: usize,
    epoch: u64,
    permutation: Vec<usize>,
    position: usize,
}

impl DataOrder {
    pub fn new(seed: u64, example_count: usize) -> Self {
        let mut order = Self {
            seed,
            example_count,
            epoch: 0,
            permutation: Vec::new(),
            position: 0,
        };
        order.reshuffle();
        order
    }

    fn reshuffle(&mut self) {
        self.permutation = (0..self.example_count).collect();
        SeededRng::derive(self.seed, 1000 + self.epoch).shuffle(&mut self.permutation);
        self.position = 0;
    }

    /// The next `batch_size` example indices; a batch that crosses an epoch end continues in the next epoch.
    pub fn next_batch(&mut self, batch_size: usize) -> Vec<usize> {
        let mut batch = Vec::with_capacity(batch_size);
        while batch.len() < batch_size {
            if self.position == self.permutation.len() {
                self.epoch += 1;
                self.reshuffle();
            }
            batch.push(self.permutation[self.position]);
            self.position += 1;
        }
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_generates_a_usable_split() {
        for kind in DatasetKind::ALL {
            let spec = DatasetSpec {
                kind,
                examples_per_class: 50,
                ..DatasetSpec::default()
            };
            let data = spec.generate();
            let total = data.train.example_count() + data.test.example_count();
            assert_eq!(total, 50 * kind.classes(), "{kind:?}");
            assert_eq!(data.train.inputs.len(), data.train.item_count() * INPUT_DIM);
            assert!(data.train.labels.iter().all(|&l| (l as usize) < kind.classes()));
            assert!(data.train.inputs.iter().all(|v| v.is_finite()));
            for class in 0..kind.classes() as u32 {
                assert!(
                    data.train.labels.contains(&class),
                    "{kind:?} lacks class {class} in train"
                );
            }
        }
    }

    #[test]
    fn same_seed_same_bits_other_seed_other_data() {
        let spec = DatasetSpec::default();
        assert_eq!(spec.generate(), spec.generate());
        let other = DatasetSpec {
            seed: 2,
            ..spec.clone()
        };
        assert_ne!(spec.generate().train.inputs, other.generate().train.inputs);
    }

    #[test]
    fn sequences_have_class_dependent_lengths() {
        let data = DatasetSpec {
            kind: DatasetKind::VariableLengthSequences,
            examples_per_class: 40,
            ..DatasetSpec::default()
        }
        .generate();
        for e in 0..data.train.example_count() {
            let items = data.train.items_in(e);
            let label = data.train.labels[items.start] as usize;
            let (lo, hi) = SEQUENCE_LENGTHS[label];
            assert!((lo..=hi).contains(&items.len()));
            assert!(data.train.labels[items].iter().all(|&l| l as usize == label));
        }
        assert!(data.train.item_count() > data.train.example_count() * 3);
    }

    #[test]
    fn data_order_is_a_permutation_per_epoch() {
        let mut order = DataOrder::new(5, 10);
        let mut first_epoch = order.next_batch(10);
        first_epoch.sort_unstable();
        assert_eq!(first_epoch, (0..10).collect::<Vec<_>>());
        let crossing = order.next_batch(15);
        assert_eq!(crossing.len(), 15);
        let mut again = DataOrder::new(5, 10);
        again.next_batch(10);
        assert_eq!(again.next_batch(15), crossing);
    }

    #[test]
    fn validation_names_the_field() {
        let spec = DatasetSpec {
            examples_per_class: 1,
            ..DatasetSpec::default()
        };
        let err = spec.validate("dataset").unwrap_err();
        assert_eq!(err.field, "dataset.examples_per_class");
    }
}
