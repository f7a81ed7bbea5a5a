//! Property tests over random small shapes, micro-batch counts and settings (f64 engine).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

mod common;

use common::{model, relative, small_lab};
use gradlab::sim::data::DatasetKind;
use gradlab::sim::lab::CpuLab;
use gradlab::sim::model::{Activation, Norm};
use gradlab::sim::optim::OptimizerSpec;
use gradlab::sim::regime::{LossNormalization, RegimeSpec};
use proptest::prelude::*;

fn activation() -> impl Strategy<Value = Activation> {
    prop_oneof![Just(Activation::Relu), Just(Activation::Tanh), Just(Activation::Gelu)]
}

fn per_item_norm() -> impl Strategy<Value = Norm> {
    prop_oneof![Just(Norm::None), Just(Norm::layer_norm()), Just(Norm::group_norm(2))]
}

fn optimizer() -> impl Strategy<Value = (OptimizerSpec, f64)> {
    prop_oneof![
        Just((OptimizerSpec::default(), 0.1)),
        Just((OptimizerSpec::momentum(), 0.05)),
        Just((OptimizerSpec::adam(), 0.01)),
    ]
}

fn dataset() -> impl Strategy<Value = DatasetKind> {
    prop_oneof![
        Just(DatasetKind::Spiral),
        Just(DatasetKind::TwoMoons),
        Just(DatasetKind::Circles),
        Just(DatasetKind::XorBlobs),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// For per-item norms, N micro-batches with loss / N equal one full batch, whatever the shapes.
    #[test]
    fn accumulation_matches_full_batch(
        widths in prop::collection::vec(1usize..=4, 1..=2),
        activation in activation(),
        norm in per_item_norm(),
        (optimizer, learning_rate) in optimizer(),
        kind in dataset(),
        micro_batches in 1usize..=4,
        per_micro_batch in 1usize..=6,
        init_seed in 0u64..1000,
    ) {
        let hidden: Vec<usize> = widths.iter().map(|w| 2 * w).collect();
        let batch_size = micro_batches * per_micro_batch;
        let mut config = small_lab(
            kind,
            model(hidden, activation, norm),
            optimizer,
            learning_rate,
            batch_size,
            &[("full", RegimeSpec::full_batch()), ("accumulated", RegimeSpec::accumulate(micro_batches))],
        );
        config.init_seed = init_seed;
        let mut lab = CpuLab::<f64>::cpu(config).unwrap();
        lab.run(3, |_| {}).unwrap();
        let full = lab.runs()[0].backend_parameters();
        let accumulated = lab.runs()[1].backend_parameters();
        prop_assert!(relative(&accumulated, &full) < 1e-10);
    }

    /// Item-count normalization equals the full batch for any uneven split, norm or not.
    #[test]
    fn item_count_normalization_matches_for_uneven_splits(
        width in 2usize..=8,
        micro_batches in 2usize..=5,
        batch_size in 5usize..=23,
        activation in activation(),
    ) {
        prop_assume!(micro_batches <= batch_size);
        let regime = RegimeSpec {
            micro_batches,
            allow_uneven_split: true,
            ..RegimeSpec::default()
        }
        .with_loss(LossNormalization::TotalItemCount);
        let config = small_lab(
            DatasetKind::VariableLengthSequences,
            model(vec![width], activation, Norm::None),
            OptimizerSpec::default(),
            0.1,
            batch_size,
            &[
                ("full", RegimeSpec::full_batch().with_loss(LossNormalization::TotalItemCount)),
                ("item count", regime),
            ],
        );
        let mut lab = CpuLab::<f64>::cpu(config).unwrap();
        lab.run(2, |_| {}).unwrap();
        prop_assert!(lab.runs()[1].history.iter().all(|r| r.grad_relative_error.unwrap() < 1e-10));
    }

    /// BatchNorm with a single micro-batch is the full batch; with more it is not.
    #[test]
    fn batch_norm_matches_only_without_splitting(
        width in 2usize..=8,
        micro_batches in 2usize..=4,
        per_micro_batch in 3usize..=8,
    ) {
        let config = small_lab(
            DatasetKind::Spiral,
            model(vec![width], Activation::Relu, Norm::batch_norm()),
            OptimizerSpec::default(),
            0.1,
            micro_batches * per_micro_batch,
            &[
                ("one", RegimeSpec::accumulate(1)),
                ("split", RegimeSpec::accumulate(micro_batches)),
            ],
        );
        let mut lab = CpuLab::<f64>::cpu(config).unwrap();
        lab.step().unwrap();
        prop_assert!(lab.runs()[0].history[0].grad_relative_error.unwrap() < 1e-12);
        prop_assert!(lab.runs()[1].history[0].grad_relative_error.unwrap() > 1e-6);
    }

    /// Validation never panics and either accepts or names a field.
    #[test]
    fn validation_names_a_field_or_accepts(batch_size in 0usize..2000, micro_batches in 0usize..600) {
        let config = small_lab(
            DatasetKind::Spiral,
            model(vec![4], Activation::Relu, Norm::None),
            OptimizerSpec::default(),
            0.1,
            batch_size,
            &[("run", RegimeSpec::accumulate(micro_batches))],
        );
        if let Err(error) = config.validate() {
            prop_assert!(error.field == "batch_size" || error.field.starts_with("runs[0]"));
        } else {
            prop_assert!(micro_batches >= 1 && batch_size % micro_batches == 0 && batch_size >= 1);
        }
    }
}

trait Parameters {
    fn backend_parameters(&self) -> Vec<f64>;
}

impl<B: gradlab::sim::backend::TrainingBackend> Parameters for gradlab::sim::lab::LabRun<B> {
    fn backend_parameters(&self) -> Vec<f64> {
        self.backend.parameters().unwrap()
    }
}
